//! Sessions, plans and tasks: each session event fires exactly once per its unit, in order, on
//! every path a task can end by — run directly and streamed, and with the run dropped at every
//! await point.

use std::pin::pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use agentix::event::{
    AllTasksComplete, BeforeModel, EventKind, PlanComplete, PlanSubmit, Post, Pre, SessionEnd,
    SessionStart, TaskComplete, TaskStart, TurnStart,
};
use agentix::session::{
    Plan, PlanReport, QueuedTask, Session, SessionEvent, SessionHook, SessionState, Task,
    TaskReport, TaskStatus,
};
use agentix::{
    Agent, Approval, Approver, Conversation, Entry, Error, Escalation, Hook, ModelError,
    ModelRequest, Outcome, ScriptedModel, StreamEvent, ToolCall, Turn, Verdict, hook,
};
use futures::{Stream, StreamExt};
use serde_json::json;
use tests::{Weather, Yields, assert_log_consistent, validate_entries};

/// Which way a session runs: its `run` future, or its stream. Both run the same loop.
#[derive(Clone, Copy, Debug)]
enum Path {
    Direct,
    Streamed,
}

const PATHS: [Path; 2] = [Path::Direct, Path::Streamed];

/// Runs the session on `path`; a stream's result is its last item.
async fn run_session<R, S>(
    session: &mut Session<R, S>,
    path: Path,
) -> Result<Vec<TaskReport>, Error>
where
    R: agentix::session::TaskRunner,
    S: agentix::session::SessionChain,
{
    match path {
        Path::Direct => session.run().await,
        Path::Streamed => {
            let events: Vec<StreamEvent> = session.run_stream().collect().await;
            match events.last() {
                Some(StreamEvent::Session(SessionEvent::RunEnded { result })) => result.clone(),
                other => panic!("a session's stream ends with the run's result, not {other:?}"),
            }
        }
    }
}

/// Tests that run `on(path)` on both paths, direct and streamed.
macro_rules! on_both_paths {
    ($($name:ident => $on:ident;)*) => {$(
        #[tokio::test]
        async fn $name() {
            for path in PATHS {
                $on(path).await;
            }
        }
    )*};
}

on_both_paths! {
    two_tasks_fire_every_event_once_in_order_and_carry_their_task_into_the_log => two_tasks_fire_every_event_once_in_order_and_carry_their_task_into_the_log_on;
    a_turn_start_reject_stops_the_task_before_the_model_call_and_the_session_goes_on => a_turn_start_reject_stops_the_task_before_the_model_call_and_the_session_goes_on_on;
    a_turn_start_escalation_asks_the_approver_which_lets_the_task_go_on_or_rejects_it => a_turn_start_escalation_asks_the_approver_which_lets_the_task_go_on_or_rejects_it_on;
    a_task_ends_at_its_max_turns_and_each_status_has_its_path => a_task_ends_at_its_max_turns_and_each_status_has_its_path_on;
    a_session_hooks_halt_or_panic_ends_the_session_and_every_task_left_ends_cancelled => a_session_hooks_halt_or_panic_ends_the_session_and_every_task_left_ends_cancelled_on;
    plan_counters_hold_when_a_plans_tasks_end_in_mixed_states => plan_counters_hold_when_a_plans_tasks_end_in_mixed_states_on;
    all_tasks_complete_enqueues_work_that_runs_and_its_limit_ends_the_session => all_tasks_complete_enqueues_work_that_runs_and_its_limit_ends_the_session_on;
    the_model_submits_a_plan_through_the_tool_and_its_tasks_run_after_the_task => the_model_submits_a_plan_through_the_tool_and_its_tasks_run_after_the_task_on;
    a_plan_that_clears_existing_cancels_the_queued_tasks_once => a_plan_that_clears_existing_cancels_the_queued_tasks_once_on;
    a_session_runs_on_a_boxed_agent_with_its_turn_start_hooks => a_session_runs_on_a_boxed_agent_with_its_turn_start_hooks_on;
}

/// What fired, in order, as `event detail` lines.
#[derive(Clone, Default)]
struct Trace(Arc<Mutex<Vec<String>>>);

impl Trace {
    fn push(&self, line: impl Into<String>) {
        self.0.lock().unwrap().push(line.into());
    }

    fn lines(&self) -> Vec<String> {
        self.0.lock().unwrap().clone()
    }

    /// The lines starting with `prefix`.
    fn of(&self, prefix: &str) -> Vec<String> {
        self.lines().into_iter().filter(|line| line.starts_with(prefix)).collect()
    }
}

/// Records every session event, yielding `yields` times at each: an await point per event.
struct Watch {
    trace: Trace,
    yields: usize,
}

impl SessionHook for Watch {
    async fn session_start(&self, _session: &SessionState) -> Verdict<SessionStart> {
        Yields(self.yields).await;
        self.trace.push("session_start");
        Verdict::Continue
    }

    async fn task_start(
        &self,
        task: &mut QueuedTask,
        _session: &SessionState,
    ) -> Verdict<TaskStart> {
        Yields(self.yields).await;
        self.trace.push(format!("task_start {}", task.id().get()));
        Verdict::Continue
    }

    async fn turn_start(&self, turn: &mut Turn, _session: &SessionState) -> Verdict<TurnStart> {
        Yields(self.yields).await;
        let task = turn.task_id().map_or(0, |task| task.get());
        self.trace.push(format!("turn_start {task}.{}", turn.task_turn_index()));
        Verdict::Continue
    }

    async fn plan_submit(&self, plan: &mut Plan, _session: &SessionState) -> Verdict<PlanSubmit> {
        Yields(self.yields).await;
        self.trace.push(format!("plan_submit {}", plan.tasks.len()));
        Verdict::Continue
    }

    async fn task_complete(
        &self,
        report: &TaskReport,
        _session: &SessionState,
    ) -> Verdict<TaskComplete> {
        Yields(self.yields).await;
        self.trace.push(format!("task_complete {} {}", report.task.id().get(), report.status));
        Verdict::Continue
    }

    async fn plan_complete(
        &self,
        plan: &PlanReport,
        _session: &SessionState,
    ) -> Verdict<PlanComplete> {
        Yields(self.yields).await;
        self.trace.push(format!(
            "plan_complete {} {}/{} ok {}",
            plan.id.get(),
            plan.completed,
            plan.total,
            plan.succeeded
        ));
        Verdict::Continue
    }

    async fn all_tasks_complete(&self, _session: &SessionState) -> Verdict<AllTasksComplete> {
        Yields(self.yields).await;
        self.trace.push("all_tasks_complete");
        Verdict::Continue
    }

    async fn session_end(&self, _session: &SessionState) -> Verdict<SessionEnd> {
        Yields(self.yields).await;
        self.trace.push("session_end");
        Verdict::Continue
    }
}

/// Records the turn's `pre`, `before_model` and `post` between the session's events.
struct TurnWatch {
    trace: Trace,
    yields: usize,
}

impl Hook for TurnWatch {
    async fn pre(&self, turn: &mut Turn) -> Verdict<Pre> {
        Yields(self.yields).await;
        self.trace.push(format!("pre {}", turn.task_id().map_or(0, |task| task.get())));
        Verdict::Continue
    }

    async fn before_model(
        &self,
        _request: &mut ModelRequest,
        turn: &mut Turn,
    ) -> Verdict<BeforeModel> {
        Yields(self.yields).await;
        self.trace.push(format!(
            "before_model {} turn_index {}",
            turn.task_id().map_or(0, |task| task.get()),
            turn.turn_index()
        ));
        Verdict::Continue
    }

    async fn post(&self, outcome: &Outcome, _turn: &mut Turn) -> Verdict<Post> {
        Yields(self.yields).await;
        self.trace.push(format!("post {}", if outcome.is_ok() { "ok" } else { "err" }));
        Verdict::Continue
    }
}

fn lines(expected: &[&str]) -> Vec<String> {
    expected.iter().map(|line| (*line).to_owned()).collect()
}

async fn two_tasks_fire_every_event_once_in_order_and_carry_their_task_into_the_log_on(path: Path) {
    let trace = Trace::default();
    let model = ScriptedModel::new()
        .tool_call("get_weather", json!({ "city": "Oslo" }))
        .text("Sunny in Oslo.")
        .text("Done.");
    let agent = Agent::builder(model)
        .tool(Weather::default())
        .hook(TurnWatch { trace: trace.clone(), yields: 0 })
        .build();
    let mut session =
        Session::builder(&agent).hook(Watch { trace: trace.clone(), yields: 0 }).build();
    let first = session.enqueue("Weather in Oslo?").unwrap();
    let second = session.enqueue(Task::new("Summarize.").titled("summary")).unwrap();
    let reports = run_session(&mut session, path).await.unwrap();

    assert_eq!(
        trace.lines(),
        lines(&[
            "session_start",
            "task_start 1",
            "pre 1",
            "turn_start 1.0",
            "before_model 1 turn_index 0",
            "turn_start 1.1",
            "before_model 1 turn_index 1",
            "post ok",
            "task_complete 1 success",
            "task_start 2",
            "pre 2",
            "turn_start 2.0",
            "before_model 2 turn_index 2",
            "post ok",
            "task_complete 2 success",
            "all_tasks_complete",
            "session_end",
        ])
    );
    assert_eq!(reports.len(), 2);
    assert_eq!((reports[0].task.id(), reports[0].steps), (first, 2));
    assert_eq!(reports[0].answer.as_ref().unwrap().joined_text(), "Sunny in Oslo.");
    assert_eq!((reports[1].task.id(), reports[1].steps), (second, 1));
    assert_eq!(reports[1].task.task.title.as_deref(), Some("summary"));
    assert_eq!(session.state().steps(), 3);
    assert!(session.state().has_ended());

    // Every entry belongs to the task of its turn.
    let conversation = session.conversation();
    let tasks: Vec<u64> = (0..conversation.log().len())
        .map(|index| conversation.task_of(index).unwrap().task.get())
        .collect();
    assert_eq!(tasks, [1, 1, 1, 1, 2, 2]);
    assert!(conversation.task_of(6).is_none());
    let walked: Vec<u64> =
        conversation.log_with_tasks().map(|(_, task)| task.unwrap().task.get()).collect();
    assert_eq!(walked, tasks);
    // ...and keeps it through serde.
    let revived: Conversation =
        serde_json::from_str(&serde_json::to_string(conversation).unwrap()).unwrap();
    assert_eq!(revived.task_of(5).unwrap().task, second);

    // An ended session runs no more.
    assert_eq!(run_session(&mut session, path).await.unwrap_err(), Error::SessionEnded);
    assert_eq!(trace.of("session_").len(), 2, "no second start or end");
}

/// Rejects a task's step `at` (0-based) with a reason, or escalates it.
struct StepGuard {
    at: u32,
    escalate: bool,
}

impl SessionHook for StepGuard {
    async fn turn_start(&self, turn: &mut Turn, _session: &SessionState) -> Verdict<TurnStart> {
        match turn.task_turn_index() == self.at {
            false => Verdict::Continue,
            true if self.escalate => Verdict::escalate("one more call?"),
            true => Verdict::reject("enough steps"),
        }
    }
}

fn weather_loop(calls: usize) -> ScriptedModel {
    let mut model = ScriptedModel::new();
    for _ in 0..calls {
        model = model.tool_call("get_weather", json!({ "city": "Oslo" }));
    }
    model
}

async fn a_turn_start_reject_stops_the_task_before_the_model_call_and_the_session_goes_on_on(
    path: Path,
) {
    let trace = Trace::default();
    let model = weather_loop(1).text("Second task's answer.");
    let agent = Agent::builder(&model).tool(Weather::default()).build();
    let mut session = Session::builder(&agent)
        .hook(Watch { trace: trace.clone(), yields: 0 })
        .hook(StepGuard { at: 1, escalate: false })
        .build();
    session.enqueue("loop").unwrap();
    session.enqueue("answer").unwrap();
    let reports = run_session(&mut session, path).await.unwrap();

    assert_eq!(reports[0].status, TaskStatus::Rejected);
    assert_eq!(
        reports[0].reason.as_deref(),
        Some("turn_start hook `StepGuard` rejected the task: enough steps")
    );
    assert_eq!(reports[0].steps, 2, "the rejected step counts as started");
    assert_eq!(reports[1].status, TaskStatus::Success);
    assert_eq!(model.calls(), 2, "the rejected step called no model");
    assert_eq!(
        trace.of("task_complete"),
        lines(&["task_complete 1 rejected", "task_complete 2 success"])
    );
    // The log says where the task stopped, and stays valid.
    let log = session.conversation().log();
    assert!(log.iter().any(|entry| matches!(
        entry,
        Entry::Halted { event: agentix::event::EventKind::TurnStart, hook, .. } if hook == "StepGuard"
    )));
    assert_log_consistent(log);
    validate_entries(log, session.conversation().turns()).unwrap();
}

/// Approves or rejects escalated steps, counting them.
#[derive(Clone, Default)]
struct StepApprover {
    approve: bool,
    asked: Arc<Mutex<Vec<String>>>,
}

impl Approver for StepApprover {
    async fn review(&self, _call: &ToolCall, _escalation: &Escalation, _turn: &Turn) -> Approval {
        Approval::Approve
    }

    async fn review_turn(&self, escalation: &Escalation, turn: &Turn) -> Approval {
        self.asked.lock().unwrap().push(format!(
            "{} {}",
            turn.task_id().unwrap().get(),
            escalation.reason
        ));
        if self.approve { Approval::Approve } else { Approval::Reject("not now".into()) }
    }
}

async fn a_turn_start_escalation_asks_the_approver_which_lets_the_task_go_on_or_rejects_it_on(
    path: Path,
) {
    for approve in [true, false] {
        let approver = StepApprover { approve, ..StepApprover::default() };
        let model = weather_loop(1).text("Sunny.");
        let agent =
            Agent::builder(&model).tool(Weather::default()).approver(approver.clone()).build();
        let mut session =
            Session::builder(&agent).hook(StepGuard { at: 1, escalate: true }).build();
        session.enqueue("weather").unwrap();
        let reports = run_session(&mut session, path).await.unwrap();
        assert_eq!(*approver.asked.lock().unwrap(), ["1 one more call?"]);
        if approve {
            assert_eq!(reports[0].status, TaskStatus::Success);
            assert_eq!(model.calls(), 2);
        } else {
            assert_eq!(reports[0].status, TaskStatus::Rejected);
            assert_eq!(
                reports[0].reason.as_deref(),
                Some("turn_start hook `StepGuard` rejected the task: not now")
            );
            assert_eq!(model.calls(), 1);
        }
    }
}

#[tokio::test]
async fn an_approver_for_tool_calls_only_turns_a_step_escalation_down() {
    let model = weather_loop(1).text("Sunny.");
    let agent = Agent::builder(&model)
        .tool(Weather::default())
        .approver(|_: ToolCall, _: Escalation| async { Approval::Approve })
        .build();
    let mut session = Session::builder(&agent).hook(StepGuard { at: 0, escalate: true }).build();
    session.enqueue("weather").unwrap();
    let reports = session.run().await.unwrap();
    assert_eq!(reports[0].status, TaskStatus::Rejected);
    assert!(reports[0].reason.as_ref().unwrap().contains("reviews tool calls only"));
    assert_eq!(model.calls(), 0);
}

async fn a_task_ends_at_its_max_turns_and_each_status_has_its_path_on(path: Path) {
    let trace = Trace::default();
    // Task 1 loops past its max_turns; task 2 meets a model error; task 3's `pre` hook halts;
    // task 4 succeeds.
    let model = weather_loop(3).error(ModelError::Transport("reset".into())).text("Fine.");
    let agent = Agent::builder(&model).tool(Weather::default()).hook(HaltOn("halt me")).build();
    let mut session =
        Session::builder(&agent).hook(Watch { trace: trace.clone(), yields: 0 }).build();
    session.enqueue(Task::new("loop").max_turns(3)).unwrap();
    session.enqueue("fail").unwrap();
    session.enqueue("halt me").unwrap();
    session.enqueue("fine").unwrap();
    let reports = run_session(&mut session, path).await.unwrap();
    let statuses: Vec<TaskStatus> = reports.iter().map(|report| report.status).collect();
    assert_eq!(
        statuses,
        [TaskStatus::MaxTurns, TaskStatus::Error, TaskStatus::Rejected, TaskStatus::Success]
    );
    assert_eq!(
        reports[0].reason.as_deref(),
        Some("the turn reached its limit of 3 steps without a final answer")
    );
    assert_eq!(reports[0].steps, 3);
    assert_eq!(reports[1].reason.as_deref(), Some("model call failed: transport error: reset"));
    assert_eq!(reports[2].reason.as_deref(), Some("pre hook `HaltOn` halted the turn: no"));
    assert_eq!(reports[2].steps, 0, "a turn halted at `pre` makes no model call");
    assert_eq!(trace.of("turn_start 1.").len(), 3, "one turn_start per step, none past the limit");
    assert_eq!(trace.of("task_complete").len(), 4);
    assert_eq!(trace.of("session_end").len(), 1);
    assert_log_consistent(session.conversation().log());
    validate_entries(session.conversation().log(), 4).unwrap();
}

/// Halts any turn whose message is `.0`.
struct HaltOn(&'static str);

impl Hook for HaltOn {
    async fn pre(&self, turn: &mut Turn) -> Verdict<Pre> {
        if turn.user_message().text() == self.0 { Verdict::halt("no") } else { Verdict::Continue }
    }
}

/// Halts the session at one of its events.
enum SessionHalt {
    TaskStart(u64),
    TurnStart(u64),
    TaskComplete(u64),
    Panic(u64),
}

impl SessionHook for SessionHalt {
    async fn task_start(
        &self,
        task: &mut QueuedTask,
        _session: &SessionState,
    ) -> Verdict<TaskStart> {
        match self {
            SessionHalt::TaskStart(id) if task.id().get() == *id => Verdict::halt("stop here"),
            _ => Verdict::Continue,
        }
    }

    async fn turn_start(&self, turn: &mut Turn, _session: &SessionState) -> Verdict<TurnStart> {
        let task = turn.task_id().unwrap().get();
        match self {
            SessionHalt::TurnStart(id) if task == *id => Verdict::halt("stop here"),
            SessionHalt::Panic(id) if task == *id => panic!("the guard broke"),
            _ => Verdict::Continue,
        }
    }

    async fn task_complete(
        &self,
        report: &TaskReport,
        _session: &SessionState,
    ) -> Verdict<TaskComplete> {
        match self {
            SessionHalt::TaskComplete(id) if report.task.id().get() == *id => {
                Verdict::halt("stop here")
            }
            _ => Verdict::Continue,
        }
    }
}

async fn a_session_hooks_halt_or_panic_ends_the_session_and_every_task_left_ends_cancelled_on(
    path: Path,
) {
    let cases = [
        (SessionHalt::TaskStart(2), "task_start hook `SessionHalt` halted the session: stop here"),
        (SessionHalt::TurnStart(2), "turn_start hook `SessionHalt` halted the session: stop here"),
        (
            SessionHalt::TaskComplete(2),
            "task_complete hook `SessionHalt` halted the session: stop here",
        ),
        (SessionHalt::Panic(2), "turn_start hook `SessionHalt` panicked: the guard broke"),
    ];
    for (halt, error) in cases {
        let trace = Trace::default();
        let model = ScriptedModel::new().text("one").text("two").text("three");
        let agent = Agent::builder(&model).build();
        let completes_task_2 = matches!(halt, SessionHalt::TaskComplete(_));
        let mut session = Session::builder(&agent)
            .hook(Watch { trace: trace.clone(), yields: 0 })
            .hook(halt)
            .build();
        session.submit_plan(Plan::new(["one", "two", "three"])).unwrap();
        let stopped = run_session(&mut session, path).await.unwrap_err();
        assert_eq!(stopped.to_string(), error);
        let second = if completes_task_2 { "success" } else { "cancelled" };
        assert_eq!(
            trace.of("task_complete"),
            lines(&[
                "task_complete 1 success",
                &format!("task_complete 2 {second}"),
                "task_complete 3 cancelled"
            ]),
            "{error}"
        );
        assert_eq!(trace.of("task_start"), lines(&["task_start 1", "task_start 2"]));
        let succeeded = if completes_task_2 { 2 } else { 1 };
        assert_eq!(trace.of("plan_complete"), [format!("plan_complete 1 3/3 ok {succeeded}")]);
        assert_eq!(trace.of("all_tasks_complete").len(), 0, "a halted session is not complete");
        assert_eq!(trace.of("session_end").len(), 1);
        let cancelled = &session.state().completed()[2];
        assert!(
            cancelled.reason.as_ref().unwrap().starts_with("the session ended before the task ran")
        );
        assert_log_consistent(session.conversation().log());
        validate_entries(session.conversation().log(), session.conversation().turns()).unwrap();
    }
}

/// Counts statuses into a plan; rewrites submitted plans by adding a review task.
#[hook(plan_submit)]
async fn add_review(plan: &mut Plan) {
    plan.tasks.push(Task::new("Review the work.").titled("review"));
}

#[hook(plan_submit)]
async fn refuse_empty_titles(plan: &Plan, _session: &SessionState) -> Verdict<PlanSubmit> {
    if plan.title.is_none() { Verdict::reject("a plan needs a title") } else { Verdict::Continue }
}

async fn plan_counters_hold_when_a_plans_tasks_end_in_mixed_states_on(path: Path) {
    let trace = Trace::default();
    let model = ScriptedModel::new()
        .text("done")
        .error(ModelError::Transport("down".into()))
        .text("reviewed");
    let agent = Agent::builder(&model).hook(HaltOn("refuse")).build();
    let mut session = Session::builder(&agent)
        .hook(Watch { trace: trace.clone(), yields: 0 })
        .hook(refuse_empty_titles)
        .hook(add_review)
        .build();
    session.submit_plan(Plan::new(["untitled"])).unwrap();
    session.submit_plan(Plan::new(["work", "refuse", "fail"]).titled("the plan")).unwrap();
    run_session(&mut session, path).await.unwrap();

    assert_eq!(
        trace.lines(),
        lines(&[
            "session_start",
            "plan_submit 1",
            "plan_submit 3",
            "task_start 1",
            "turn_start 1.0",
            "task_complete 1 success",
            "task_start 2",
            "task_complete 2 rejected",
            "task_start 3",
            "turn_start 3.0",
            "task_complete 3 error",
            "task_start 4",
            "turn_start 4.0",
            "task_complete 4 success",
            "plan_complete 1 4/4 ok 2",
            "all_tasks_complete",
            "session_end",
        ])
    );
    let plan = session.state().plans().next().unwrap();
    assert_eq!((plan.total, plan.completed, plan.succeeded, plan.pending()), (4, 4, 2, 0));
    assert_eq!(plan.title.as_deref(), Some("the plan"));
    assert_eq!(session.state().completed()[3].task.task.title.as_deref(), Some("review"));
}

/// Enqueues one follow-up the first time the queue empties; or, with `always`, every time.
struct FollowUps {
    always: bool,
}

impl SessionHook for FollowUps {
    async fn all_tasks_complete(&self, session: &SessionState) -> Verdict<AllTasksComplete> {
        if self.always || session.follow_ups() == 0 {
            Verdict::enqueue([Task::new("follow up")])
        } else {
            Verdict::Continue
        }
    }
}

async fn all_tasks_complete_enqueues_work_that_runs_and_its_limit_ends_the_session_on(path: Path) {
    let trace = Trace::default();
    let model = ScriptedModel::new().text("first").text("followed up");
    let agent = Agent::builder(&model).build();
    let mut session = Session::builder(&agent)
        .hook(Watch { trace: trace.clone(), yields: 0 })
        .hook(FollowUps { always: false })
        .build();
    session.enqueue("first").unwrap();
    let reports = run_session(&mut session, path).await.unwrap();
    assert_eq!(reports.len(), 2);
    assert_eq!(reports[1].answer.as_ref().unwrap().joined_text(), "followed up");
    assert_eq!(
        trace.of("all_tasks_complete").len(),
        2,
        "once when the first task ended, once when the follow-up did"
    );
    assert_eq!(trace.lines().last().map(String::as_str), Some("session_end"));

    let model = ScriptedModel::new().text("a").text("b").text("c").text("d");
    let agent = Agent::builder(&model).build();
    let mut session =
        Session::builder(&agent).hook(FollowUps { always: true }).max_follow_ups(2).build();
    session.enqueue("start").unwrap();
    let error = run_session(&mut session, path).await.unwrap_err();
    assert_eq!(error, Error::FollowUpLimit { hook: "FollowUps", limit: 2 });
    assert_eq!(session.state().completed().len(), 3, "the first task and two follow-ups ran");
    assert!(session.state().has_ended());
}

async fn the_model_submits_a_plan_through_the_tool_and_its_tasks_run_after_the_task_on(path: Path) {
    let trace = Trace::default();
    let plan = json!({
        "title": "trip",
        "tasks": [{ "prompt": "Book a flight." }, { "prompt": "Book a hotel.", "title": "hotel" }],
    });
    let model = ScriptedModel::new()
        .tool_call("submit_plan", plan)
        .text("Planned.")
        .text("Flight booked.")
        .text("Hotel booked.")
        .text("Reviewed.");
    let agent = Agent::builder(&model).submit_plan().build();
    let mut session = Session::builder(&agent)
        .hook(Watch { trace: trace.clone(), yields: 0 })
        .hook(add_review)
        .build();
    session.enqueue("Plan a trip.").unwrap();
    let reports = run_session(&mut session, path).await.unwrap();
    let answers: Vec<String> = reports
        .iter()
        .map(|report| report.answer.as_ref().unwrap().joined_text().into_owned())
        .collect();
    assert_eq!(answers, ["Planned.", "Flight booked.", "Hotel booked.", "Reviewed."]);
    assert_eq!(reports[0].task.plan(), None);
    assert!(reports[1..].iter().all(|report| report.task.plan().is_some()));
    // The plan is reviewed after the turn that submitted it, before that task completes.
    assert_eq!(
        &trace.lines()[..6],
        lines(&[
            "session_start",
            "task_start 1",
            "turn_start 1.0",
            "turn_start 1.1",
            "plan_submit 2",
            "task_complete 1 success",
        ])
    );
    assert_eq!(trace.of("plan_complete"), lines(&["plan_complete 1 3/3 ok 3"]));
    // The model read that its plan was received.
    let requests = model.requests();
    let result = &tests::tool_results(&requests[1])[0];
    assert!(result.error.is_none());
    assert!(result.output.starts_with("Plan received (2 tasks)"), "{}", result.output);
}

#[tokio::test]
async fn submit_plan_outside_a_session_or_with_no_task_fails_as_a_tool_call() {
    let model = ScriptedModel::new()
        .tool_call("submit_plan", json!({ "tasks": [] }))
        .tool_call("submit_plan", json!({ "tasks": [{ "prompt": "x" }] }))
        .text("ok");
    let agent = Agent::builder(&model).submit_plan().build();
    let mut conversation = Conversation::new();
    agent.run(&mut conversation, "plan").await.unwrap();
    let requests = model.requests();
    let results: Vec<agentix::ToolResult> = requests[1..]
        .iter()
        .map(|request| tests::tool_results(request).last().unwrap().clone())
        .collect();
    assert!(results.iter().all(|result| result.error.is_some()));
    assert!(results[0].output.contains("a plan needs at least one task"), "{}", results[0].output);
    assert!(
        results[1].output.contains("submit_plan works only in a session"),
        "{}",
        results[1].output
    );
}

async fn a_plan_that_clears_existing_cancels_the_queued_tasks_once_on(path: Path) {
    let trace = Trace::default();
    let model = ScriptedModel::new().text("new");
    let agent = Agent::builder(&model).build();
    let mut session =
        Session::builder(&agent).hook(Watch { trace: trace.clone(), yields: 0 }).build();
    session.enqueue("old one").unwrap();
    session.enqueue("old two").unwrap();
    session.submit_plan(Plan::new(["new"]).clearing_existing()).unwrap();
    run_session(&mut session, path).await.unwrap();
    assert_eq!(
        trace.lines(),
        lines(&[
            "session_start",
            "plan_submit 1",
            "task_complete 1 cancelled",
            "task_complete 2 cancelled",
            "task_start 3",
            "turn_start 3.0",
            "task_complete 3 success",
            "plan_complete 1 1/1 ok 1",
            "all_tasks_complete",
            "session_end",
        ])
    );
    assert_eq!(
        session.state().completed()[0].reason.as_deref(),
        Some("plan 1 replaced the tasks queued before it")
    );
}

/// The session's event lines a streamed run reported, as the hooks' trace writes them.
fn streamed_lines(events: &[StreamEvent]) -> Vec<String> {
    events
        .iter()
        .filter_map(|event| match event {
            StreamEvent::Session(SessionEvent::TaskStarted { task }) => {
                Some(format!("task_start {}", task.id().get()))
            }
            StreamEvent::Session(SessionEvent::TaskCompleted { report }) => {
                Some(format!("task_complete {} {}", report.task.id().get(), report.status))
            }
            StreamEvent::Session(SessionEvent::Started) => Some("session_start".to_owned()),
            StreamEvent::Session(SessionEvent::Ended) => Some("session_end".to_owned()),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn a_streamed_session_runs_the_same_events_and_reports_them_between_the_turns_events() {
    let trace = Trace::default();
    let model = weather_loop(1).text("Sunny.").text("Two.");
    let agent = Agent::builder(&model).tool(Weather::default()).build();
    let mut session =
        Session::builder(&agent).hook(Watch { trace: trace.clone(), yields: 1 }).build();
    session.enqueue("one").unwrap();
    session.enqueue("two").unwrap();
    let events: Vec<StreamEvent> = session.run_stream().collect().await;
    let session_lines: Vec<String> = trace
        .lines()
        .into_iter()
        .filter(|line| !line.starts_with("turn_start") && !line.starts_with("all_tasks"))
        .collect();
    assert_eq!(streamed_lines(&events), session_lines);
    // Each turn's own events are in the stream, inside its task.
    let finished = events.iter().filter(|event| matches!(event, StreamEvent::Finished(_))).count();
    assert_eq!(finished, 2);
    let turn_starts = events
        .iter()
        .filter(|event| {
            matches!(event, StreamEvent::Event { event: agentix::event::EventKind::TurnStart, .. })
        })
        .count();
    assert_eq!(turn_starts, 3);
    match events.last() {
        Some(StreamEvent::Session(SessionEvent::RunEnded { result: Ok(reports) })) => {
            assert_eq!(reports.len(), 2)
        }
        other => panic!("the stream ends with the run's result, not {other:?}"),
    }
}

/// Polls the session's run (or its stream) `polls` times with a waker that does nothing, then
/// drops it; whether it finished first.
fn poll_then_drop<R, S>(session: &mut Session<R, S>, polls: usize, streamed: bool) -> bool
where
    R: agentix::session::TaskRunner,
    S: agentix::session::SessionChain,
{
    let waker = futures::task::noop_waker();
    let mut cx = Context::from_waker(&waker);
    if streamed {
        let mut stream = pin!(session.run_stream());
        (0..polls).any(|_| matches!(stream.as_mut().poll_next(&mut cx), Poll::Ready(None)))
    } else {
        let mut run = pin!(session.run());
        (0..polls).any(|_| run.as_mut().poll(&mut cx).is_ready())
    }
}

/// A session of three tasks with hooks on every event and every turn event, each awaiting
/// twice: dropping its run after `polls` polls, then running it again to the end.
fn run_dropped_after(polls: usize, streamed: bool) -> (Trace, Vec<TaskReport>, Conversation, bool) {
    let trace = Trace::default();
    let model = weather_loop(1).text("one").text("two").text("three").text("four");
    let agent = Agent::builder(&model)
        .tool(Weather::default())
        .hook(TurnWatch { trace: trace.clone(), yields: 2 })
        .build();
    let mut session =
        Session::builder(&agent).hook(Watch { trace: trace.clone(), yields: 2 }).build();
    session.enqueue("one").unwrap();
    session.submit_plan(Plan::new(["two", "three"])).unwrap();
    let finished = poll_then_drop(&mut session, polls, streamed);
    // Dropped: the log must read as a valid conversation, and the queue hold what is left.
    assert_log_consistent(session.conversation().log());
    validate_entries(session.conversation().log(), session.conversation().turns()).unwrap();
    let ended = session.state().completed().len();
    let waiting = session.state().queue().len() + usize::from(session.state().running().is_some());
    let planned = session.state().plans().map(|plan| plan.total as usize).sum::<usize>();
    // Every task queued so far is ended, waiting, or running — never lost.
    assert_eq!(ended + waiting, 1 + planned, "after {polls} polls");
    // A stream dropped after the session ended, before it yielded its last items, needs no
    // second run.
    if !session.state().has_ended() {
        let second = futures::executor::block_on(session.run());
        assert!(second.is_ok(), "{second:?}");
    }
    let reports = session.state().completed().to_vec();
    (trace, reports, session.into_conversation(), finished)
}

#[test]
fn dropping_the_run_at_every_await_point_leaves_the_log_and_queue_whole_and_reports_the_task_cancelled_once()
 {
    for streamed in [false, true] {
        let mut polls = 0;
        loop {
            let (trace, reports, conversation, finished) = run_dropped_after(polls, streamed);
            // Each task ended exactly once, whatever point the first run was dropped at.
            let ids: Vec<u64> = reports.iter().map(|report| report.task.id().get()).collect();
            assert_eq!(ids, [1, 2, 3], "after {polls} polls");
            assert_eq!(trace.of("task_complete").len(), 3, "after {polls} polls");
            assert_eq!(trace.of("session_start").len(), 1);
            assert_eq!(trace.of("session_end").len(), 1);
            assert_eq!(trace.of("plan_complete").len(), 1);
            let cancelled =
                reports.iter().filter(|report| report.status == TaskStatus::Cancelled).count();
            assert!(cancelled <= 1, "after {polls} polls: {reports:?}");
            // A task cancelled mid-turn left its turn's cancellation in the log.
            if let Some(report) =
                reports.iter().find(|report| report.status == TaskStatus::Cancelled)
                && let Some(turn) = report.turn
            {
                assert!(conversation.log().iter().any(|entry| matches!(
                    entry,
                    Entry::Failed { turn: failed, error } if *failed == turn && error.contains("cancelled")
                )));
            }
            if finished {
                assert_eq!(cancelled, 0);
                break;
            }
            polls += 1;
        }
        assert!(polls > 40, "the session has many await points: {polls}");
    }
}

async fn a_session_runs_on_a_boxed_agent_with_its_turn_start_hooks_on(path: Path) {
    let trace = Trace::default();
    let model = Arc::new(weather_loop(1).text("Second."));
    let agent = Agent::builder(Arc::clone(&model))
        .tool(Weather::default())
        .hook(TurnWatch { trace: trace.clone(), yields: 1 })
        .build()
        .boxed();
    let mut session = Session::builder(&agent)
        .hook(Watch { trace: trace.clone(), yields: 1 })
        .hook(StepGuard { at: 1, escalate: false })
        .build();
    session.enqueue("loop").unwrap();
    session.enqueue("answer").unwrap();
    let reports = run_session(&mut session, path).await.unwrap();
    let statuses: Vec<TaskStatus> = reports.iter().map(|report| report.status).collect();
    assert_eq!(statuses, [TaskStatus::Rejected, TaskStatus::Success]);
    assert_eq!(
        trace.of("turn_start"),
        lines(&["turn_start 1.0", "turn_start 1.1", "turn_start 2.0"])
    );
    assert_eq!(
        trace.of("before_model"),
        lines(&["before_model 1 turn_index 0", "before_model 2 turn_index 2"])
    );
    assert_eq!(model.calls(), 2);
}

/// Records each session event's start and end (`+event`, `-event`), awaiting between: a drop
/// in between leaves a start without an end, and the next run fires the event again.
struct Brackets {
    trace: Trace,
}

impl Brackets {
    async fn around(&self, line: String) {
        self.trace.push(format!("+{line}"));
        Yields(1).await;
        self.trace.push(format!("-{line}"));
    }
}

impl SessionHook for Brackets {
    async fn session_start(&self, _: &SessionState) -> Verdict<SessionStart> {
        self.around("session_start".into()).await;
        Verdict::Continue
    }

    async fn task_start(&self, task: &mut QueuedTask, _: &SessionState) -> Verdict<TaskStart> {
        self.around(format!("task_start {}", task.id().get())).await;
        Verdict::Continue
    }

    async fn turn_start(&self, turn: &mut Turn, _: &SessionState) -> Verdict<TurnStart> {
        self.around(format!("turn_start {}", turn.task_id().unwrap().get())).await;
        Verdict::Continue
    }

    async fn plan_submit(&self, plan: &mut Plan, _: &SessionState) -> Verdict<PlanSubmit> {
        self.around(format!("plan_submit {}", plan.tasks.len())).await;
        // The model's plan replaces what was queued before it.
        plan.clear_existing = true;
        Verdict::Continue
    }

    async fn task_complete(&self, report: &TaskReport, _: &SessionState) -> Verdict<TaskComplete> {
        self.around(format!("task_complete {}", report.task.id().get())).await;
        Verdict::Continue
    }

    async fn plan_complete(&self, plan: &PlanReport, _: &SessionState) -> Verdict<PlanComplete> {
        self.around(format!("plan_complete {}", plan.id.get())).await;
        Verdict::Continue
    }

    async fn all_tasks_complete(&self, session: &SessionState) -> Verdict<AllTasksComplete> {
        self.around("all_tasks_complete".into()).await;
        if session.follow_ups() == 0 { Verdict::enqueue(["follow up"]) } else { Verdict::Continue }
    }

    async fn session_end(&self, _: &SessionState) -> Verdict<SessionEnd> {
        self.around("session_end".into()).await;
        Verdict::Continue
    }
}

/// Task 1's turn submits a plan of two through the tool (its review clears task 2, queued
/// before), the plan's tasks run (the first with a tool step), and one follow-up: dropped after
/// `polls` polls, then run again to its end. Returns the trace, the reports, the conversation
/// and whether the first run finished.
fn plan_session_dropped_after(
    polls: usize,
    streamed: bool,
) -> (Trace, Vec<TaskReport>, u64, Conversation, bool) {
    let trace = Trace::default();
    let plan = json!({ "tasks": [{ "prompt": "step one" }, { "prompt": "step two" }] });
    let model = ScriptedModel::new()
        .tool_call("submit_plan", plan)
        .text("planned")
        .tool_call("get_weather", json!({ "city": "Oslo" }))
        .text("one done")
        .text("two done")
        .text("followed up");
    let agent = Agent::builder(&model)
        .submit_plan()
        .tool(Weather::default())
        .hook(TurnWatch { trace: trace.clone(), yields: 1 })
        .build();
    let mut session = Session::builder(&agent).hook(Brackets { trace: trace.clone() }).build();
    session.enqueue("make a plan").unwrap();
    session.enqueue("cleared by the plan").unwrap();
    let finished = poll_then_drop(&mut session, polls, streamed);
    assert_log_consistent(session.conversation().log());
    validate_entries(session.conversation().log(), session.conversation().turns()).unwrap();
    if !session.state().has_ended() {
        let second = futures::executor::block_on(session.run());
        // A dropped run returns nothing: the next returns every task that ended since.
        let returned = second.unwrap_or_else(|error| panic!("after {polls} polls: {error}"));
        assert_eq!(returned.len(), session.state().completed().len(), "after {polls} polls");
    }
    let steps = session.state().steps();
    let reports = session.state().completed().to_vec();
    (trace, reports, steps, session.into_conversation(), finished)
}

#[test]
fn a_plan_session_dropped_at_every_await_point_ends_each_task_once_with_the_truth() {
    for streamed in [false, true] {
        let mut refired = 0;
        let mut polls = 0;
        loop {
            let (trace, reports, steps, conversation, finished) =
                plan_session_dropped_after(polls, streamed);
            let at = format!("after {polls} polls (streamed: {streamed})");
            // Every task ended exactly once: the two queued, the plan's two, the follow-up.
            let mut ids: Vec<u64> = reports.iter().map(|report| report.task.id().get()).collect();
            ids.sort_unstable();
            assert_eq!(ids, [1, 2, 3, 4, 5], "{at}: {reports:#?}");
            // Each event's hooks ran to their end once per unit, whatever was re-fired.
            let ended = |event: &str| trace.of(&format!("-{event}")).len();
            assert_eq!(ended("task_complete"), 5, "{at}");
            assert_eq!(ended("plan_complete"), 1, "{at}");
            assert_eq!(ended("session_start"), 1, "{at}");
            assert_eq!(ended("session_end"), 1, "{at}");
            assert_eq!(ended("plan_submit"), 1, "{at}");
            let started = |event: &str| trace.of(&format!("+{event}")).len();
            refired += started("task_complete") - 5 + started("plan_submit") - 1;
            // When task 1's turn made the plan, the plan cleared task 2 before it ever ran (a
            // drop that cut task 1 short left the plan to task 2's turn).
            let status = |id: u64| reports.iter().find(|r| r.task.id().get() == id).unwrap();
            if status(1).status == TaskStatus::Success {
                assert_eq!(status(2).status, TaskStatus::Cancelled, "{at}");
                assert_eq!(status(2).turn, None, "{at}");
            }
            // A report tells the truth about its turn: success exactly when the log holds its
            // final answer and no failure (a turn dropped in its `post` hooks has an answer and
            // records that it was cancelled before it ended).
            for report in &reports {
                let Some(turn) = report.turn else { continue };
                let of_turn = || conversation.log().iter().filter(|entry| entry.turn() == turn);
                let answered = of_turn().any(|entry| {
                    matches!(entry, Entry::Assistant { message, .. } if !message.calls_tools())
                });
                let failed = of_turn().any(|entry| matches!(entry, Entry::Failed { .. }));
                let succeeded = report.status == TaskStatus::Success;
                assert_eq!(succeeded, answered && !failed, "{at}: {report:#?}");
            }
            // Every step started is counted once, in the task that started it.
            let counted: u64 = reports.iter().map(|report| u64::from(report.steps)).sum();
            assert_eq!(counted, steps, "{at}");
            for report in &reports {
                let id = report.task.id().get();
                let started = trace.of(&format!("+turn_start {id}")).len();
                assert_eq!(report.steps as usize, started, "{at}: {report:#?}");
            }
            let cancelled =
                reports.iter().filter(|report| report.status == TaskStatus::Cancelled).count();
            assert!(cancelled <= 2, "{at}: the cleared task, and at most the one cut short");
            if finished {
                assert_eq!(cancelled, 1, "{at}");
                assert_eq!(
                    steps, 6,
                    "two steps for the plan, two for the first planned task, one, one"
                );
                break;
            }
            polls += 1;
        }
        assert!(refired > 0, "some drops interrupted a task_complete or plan_submit hook");
        assert!(polls > 25, "the session has many await points: {polls}");
    }
}

/// Halts a `task_complete` for a task the session cancelled as it wound down: a second stop.
struct HaltsWindDown;

impl SessionHook for HaltsWindDown {
    async fn task_complete(&self, report: &TaskReport, _: &SessionState) -> Verdict<TaskComplete> {
        if report.status == TaskStatus::Cancelled {
            Verdict::halt("a second stop")
        } else {
            Verdict::Continue
        }
    }
}

/// Stops the session at one event, by a halt, an error or a timeout.
#[derive(Clone, Copy, Debug)]
enum Stop {
    Halt(EventKind),
    Err(EventKind),
    Slow(EventKind),
}

struct Stopper(Stop);

impl Stopper {
    async fn at(&self, event: EventKind) -> Result<(), String> {
        match self.0 {
            Stop::Err(at) if at == event => Err("it broke".to_owned()),
            Stop::Slow(at) if at == event => {
                tokio::time::sleep(std::time::Duration::from_secs(60)).await;
                Ok(())
            }
            _ => Ok(()),
        }
    }

    fn halts(&self, event: EventKind) -> bool {
        matches!(self.0, Stop::Halt(at) if at == event)
    }
}

/// One verdict per event, from the stop: halt, a failure from an `Err`, or continue.
macro_rules! stop_verdict {
    ($self:ident, $event:ident) => {{
        let kind = EventKind::$event;
        if let Err(message) = $self.at(kind).await {
            return Verdict::Halt(agentix::Halt::failure(message));
        }
        if $self.halts(kind) { Verdict::halt("stop here") } else { Verdict::Continue }
    }};
}

impl SessionHook for Stopper {
    const TIMEOUT: Option<std::time::Duration> = Some(std::time::Duration::from_millis(50));

    async fn session_start(&self, _: &SessionState) -> Verdict<SessionStart> {
        stop_verdict!(self, SessionStart)
    }
    async fn plan_submit(&self, _: &mut Plan, _: &SessionState) -> Verdict<PlanSubmit> {
        stop_verdict!(self, PlanSubmit)
    }
    async fn task_complete(&self, _: &TaskReport, _: &SessionState) -> Verdict<TaskComplete> {
        stop_verdict!(self, TaskComplete)
    }
    async fn plan_complete(&self, _: &PlanReport, _: &SessionState) -> Verdict<PlanComplete> {
        stop_verdict!(self, PlanComplete)
    }
    async fn all_tasks_complete(&self, _: &SessionState) -> Verdict<AllTasksComplete> {
        stop_verdict!(self, AllTasksComplete)
    }
    async fn session_end(&self, _: &SessionState) -> Verdict<SessionEnd> {
        stop_verdict!(self, SessionEnd)
    }
}

#[tokio::test]
async fn a_halt_error_or_timeout_at_any_session_event_ends_the_session_with_every_task_reported() {
    use EventKind::*;
    let events =
        [SessionStart, PlanSubmit, TaskComplete, PlanComplete, AllTasksComplete, SessionEnd];
    for event in events {
        for stop in [Stop::Halt(event), Stop::Err(event), Stop::Slow(event)] {
            let trace = Trace::default();
            let model = ScriptedModel::new().text("a").text("b").text("c");
            let agent = Agent::builder(&model).build();
            let mut session = Session::builder(&agent)
                .hook(Watch { trace: trace.clone(), yields: 0 })
                .hook(Stopper(stop))
                // A second stop while the session winds down is not its cause.
                .hook(HaltsWindDown)
                .build();
            session.enqueue("ad hoc").unwrap();
            session.submit_plan(Plan::new(["one", "two"])).unwrap();
            let error = session.run().await.unwrap_err();
            let expected = match stop {
                Stop::Halt(_) => format!("{event} hook `Stopper` halted the session: stop here"),
                Stop::Err(_) => format!("{event} hook `Stopper` failed: it broke"),
                Stop::Slow(_) => format!("{event} hook `Stopper` timed out after 50ms"),
            };
            assert_eq!(error.to_string(), expected, "{stop:?}");
            // `session_end`'s failure is the run's error; the session had not stopped early.
            let early = (event != SessionEnd).then_some(&error);
            assert_eq!(session.state().stopped(), early, "{stop:?}");
            // Whatever stopped it, each task queued ended once, and the session ended once.
            // A stop at `session_start` or `plan_submit` leaves the plan unaccepted.
            let queued = if matches!(event, SessionStart | PlanSubmit) { 1 } else { 3 };
            let reports = session.state().completed();
            assert_eq!(reports.len(), queued, "{stop:?}: {reports:#?}");
            assert_eq!(trace.of("task_complete").len(), queued, "{stop:?}");
            assert_eq!(trace.of("session_end").len(), 1, "{stop:?}");
            assert!(session.state().has_ended());
            assert_eq!(session.enqueue("more").unwrap_err(), Error::SessionEnded);
        }
    }
}

/// Overwrites the task about to run with another queued one: the session keeps the queue's
/// identity and runs the edited work under it.
struct SwapsIdentity;

impl SessionHook for SwapsIdentity {
    async fn task_start(
        &self,
        task: &mut QueuedTask,
        session: &SessionState,
    ) -> Verdict<TaskStart> {
        if let Some(other) = session.queue().next() {
            let prompt = format!("{} (edited)", task.task.prompt);
            *task = other.clone();
            task.task.prompt = prompt;
        }
        Verdict::Continue
    }
}

#[tokio::test]
async fn a_task_start_hook_edits_the_work_but_not_the_tasks_identity() {
    let model = ScriptedModel::new().text("a").text("b").text("c");
    let agent = Agent::builder(&model).build();
    let mut session = Session::builder(&agent).hook(SwapsIdentity).build();
    session.enqueue("ad hoc").unwrap();
    session.submit_plan(Plan::new(["one", "two"])).unwrap();
    let reports = session.run().await.unwrap();
    let ran: Vec<(u64, Option<u64>, &str)> = reports
        .iter()
        .map(|report| {
            let task = &report.task;
            (task.id().get(), task.plan().map(|plan| plan.get()), task.task.prompt.as_str())
        })
        .collect();
    assert_eq!(
        ran,
        [(1, None, "ad hoc (edited)"), (2, Some(1), "one (edited)"), (3, Some(1), "two")]
    );
    let plan = session.state().plans().next().unwrap();
    assert_eq!((plan.completed, plan.total), (2, 2));
    let tags: Vec<u64> = session
        .conversation()
        .log_with_tasks()
        .filter(|(entry, _)| matches!(entry, Entry::User { .. }))
        .map(|(_, task)| task.unwrap().task.get())
        .collect();
    assert_eq!(tags, [1, 2, 3]);
}

#[tokio::test]
async fn an_observer_that_panics_ends_the_session_as_it_ends_a_turn() {
    let model = ScriptedModel::new().text("a").text("b").text("c");
    let agent = Agent::builder(&model).build();
    let mut session = Session::builder(&agent).build();
    session.enqueue("one").unwrap();
    session.enqueue("two").unwrap();
    session.enqueue("three").unwrap();
    let observer = |observation: &agentix::Observation<'_>| {
        if let agentix::Observation::Session(SessionEvent::TaskStarted { task }) = observation
            && task.id().get() == 2
        {
            panic!("the observer broke");
        }
    };
    let error = session.run_observed(&observer).await.unwrap_err();
    assert_eq!(error.to_string(), "the observer panicked: the observer broke");
    let statuses: Vec<TaskStatus> =
        session.state().completed().iter().map(|report| report.status).collect();
    // Task 2 was already under way: it ends as its turn did; task 3 never starts.
    assert_eq!(statuses, [TaskStatus::Success, TaskStatus::Success, TaskStatus::Cancelled]);
    assert!(session.state().has_ended());
}
