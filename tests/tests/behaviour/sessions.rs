//! Sessions, plans and tasks: each session event fires exactly once per its unit, in order, on
//! every path a task can end by, run directly and streamed. (`session_stops.rs`: runs dropped
//! at every await point, and a session stopped at each of its events.)

use std::sync::{Arc, Mutex};

use agentix::event::{AllTasksComplete, PlanSubmit, Pre, StepStart, TaskComplete, TaskStart};
use agentix::session::{
    Plan, QueuedTask, Session, SessionEvent, SessionHook, SessionState, Task, TaskReport,
    TaskStatus,
};
use agentix::{
    Agent, Conversation, Entry, Error, Hook, ScriptedModel, StreamEvent, ToolCall, Turn, Verdict,
    approval::{Approval, Approver},
    hook,
    model::ModelError,
    verdict::Escalation,
};
use futures::StreamExt;
use serde_json::json;
use tests::on_both_paths;
use tests::session::{Path, Trace, TurnWatch, Watch, lines, run_session, weather_loop};
use tests::{Weather, assert_log_consistent, validate_entries};

on_both_paths! {
    two_tasks_fire_every_event_once_in_order_and_carry_their_task_into_the_log => two_tasks_fire_every_event_once_in_order_and_carry_their_task_into_the_log_on;
    a_step_start_reject_stops_the_task_before_the_model_call_and_the_session_goes_on => a_step_start_reject_stops_the_task_before_the_model_call_and_the_session_goes_on_on;
    a_step_start_escalation_asks_the_approver_which_lets_the_task_go_on_or_rejects_it => a_step_start_escalation_asks_the_approver_which_lets_the_task_go_on_or_rejects_it_on;
    a_task_ends_at_its_max_steps_and_each_status_has_its_path => a_task_ends_at_its_max_steps_and_each_status_has_its_path_on;
    a_session_hooks_halt_or_panic_ends_the_session_and_every_task_left_ends_cancelled => a_session_hooks_halt_or_panic_ends_the_session_and_every_task_left_ends_cancelled_on;
    plan_counters_hold_when_a_plans_tasks_end_in_mixed_states => plan_counters_hold_when_a_plans_tasks_end_in_mixed_states_on;
    all_tasks_complete_enqueues_work_that_runs_and_its_limit_ends_the_session => all_tasks_complete_enqueues_work_that_runs_and_its_limit_ends_the_session_on;
    the_model_submits_a_plan_through_the_tool_and_its_tasks_run_after_the_task => the_model_submits_a_plan_through_the_tool_and_its_tasks_run_after_the_task_on;
    a_plan_that_clears_existing_cancels_the_queued_tasks_once => a_plan_that_clears_existing_cancels_the_queued_tasks_once_on;
    a_session_runs_on_a_boxed_agent_with_its_step_start_hooks => a_session_runs_on_a_boxed_agent_with_its_step_start_hooks_on;
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
            "step_start 1.0",
            "before_model 1 step_index 0",
            "step_start 1.1",
            "before_model 1 step_index 1",
            "post ok",
            "task_complete 1 success",
            "task_start 2",
            "pre 2",
            "step_start 2.0",
            "before_model 2 step_index 2",
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
        conversation.log_with_tasks(0).map(|(_, task)| task.unwrap().task.get()).collect();
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
    async fn step_start(&self, turn: &mut Turn, _session: &SessionState) -> Verdict<StepStart> {
        match turn.task_step_index() == self.at {
            false => Verdict::Continue,
            true if self.escalate => Verdict::escalate("one more call?"),
            true => Verdict::reject("enough steps"),
        }
    }
}

async fn a_step_start_reject_stops_the_task_before_the_model_call_and_the_session_goes_on_on(
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
        Some("step_start hook `StepGuard` rejected the task: enough steps")
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
        Entry::Halted { event: agentix::event::EventKind::StepStart, hook, .. } if hook == "StepGuard"
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

    async fn review_step(&self, escalation: &Escalation, turn: &Turn) -> Approval {
        self.asked.lock().unwrap().push(format!(
            "{} {}",
            turn.task_id().unwrap().get(),
            escalation.reason
        ));
        if self.approve { Approval::Approve } else { Approval::Reject("not now".into()) }
    }
}

async fn a_step_start_escalation_asks_the_approver_which_lets_the_task_go_on_or_rejects_it_on(
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
                Some("step_start hook `StepGuard` rejected the task: not now")
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

async fn a_task_ends_at_its_max_steps_and_each_status_has_its_path_on(path: Path) {
    let trace = Trace::default();
    // Task 1 loops past its max_steps; task 2 meets a model error; task 3's `pre` hook halts;
    // task 4 succeeds.
    let model = weather_loop(3).error(ModelError::Transport("reset".into())).text("Fine.");
    let agent = Agent::builder(&model).tool(Weather::default()).hook(HaltOn("halt me")).build();
    let mut session =
        Session::builder(&agent).hook(Watch { trace: trace.clone(), yields: 0 }).build();
    session.enqueue(Task::new("loop").max_steps(3)).unwrap();
    session.enqueue("fail").unwrap();
    session.enqueue("halt me").unwrap();
    session.enqueue("fine").unwrap();
    let reports = run_session(&mut session, path).await.unwrap();
    let statuses: Vec<TaskStatus> = reports.iter().map(|report| report.status).collect();
    assert_eq!(
        statuses,
        [TaskStatus::MaxSteps, TaskStatus::Error, TaskStatus::Rejected, TaskStatus::Success]
    );
    assert_eq!(
        reports[0].reason.as_deref(),
        Some("the turn reached its limit of 3 steps without a final answer")
    );
    assert_eq!(reports[0].steps, 3);
    assert_eq!(reports[1].reason.as_deref(), Some("model call failed: transport error: reset"));
    assert_eq!(reports[2].reason.as_deref(), Some("pre hook `HaltOn` halted the turn: no"));
    assert_eq!(reports[2].steps, 0, "a turn halted at `pre` makes no model call");
    assert_eq!(trace.of("step_start 1.").len(), 3, "one step_start per step, none past the limit");
    assert_eq!(trace.of("task_complete").len(), 4);
    assert_eq!(trace.of("session_end").len(), 1);
    assert_log_consistent(session.conversation().log());
    validate_entries(session.conversation().log(), 4).unwrap();
}

/// Halts any turn whose message is `.0`.
struct HaltOn(&'static str);

#[hook]
impl Hook for HaltOn {
    async fn pre(&self, turn: &mut Turn) -> Verdict<Pre> {
        if turn.user_message().text() == self.0 { Verdict::halt("no") } else { Verdict::Continue }
    }
}

/// Halts the session at one of its events.
enum SessionHalt {
    TaskStart(u64),
    StepStart(u64),
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

    async fn step_start(&self, turn: &mut Turn, _session: &SessionState) -> Verdict<StepStart> {
        let task = turn.task_id().unwrap().get();
        match self {
            SessionHalt::StepStart(id) if task == *id => Verdict::halt("stop here"),
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
        (SessionHalt::StepStart(2), "step_start hook `SessionHalt` halted the session: stop here"),
        (
            SessionHalt::TaskComplete(2),
            "task_complete hook `SessionHalt` halted the session: stop here",
        ),
        (SessionHalt::Panic(2), "step_start hook `SessionHalt` panicked: the guard broke"),
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
            "step_start 1.0",
            "task_complete 1 success",
            "task_start 2",
            "task_complete 2 rejected",
            "task_start 3",
            "step_start 3.0",
            "task_complete 3 error",
            "task_start 4",
            "step_start 4.0",
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
            "step_start 1.0",
            "step_start 1.1",
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
            "step_start 3.0",
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
    let events: Vec<StreamEvent> = session.run().stream().collect().await;
    let session_lines: Vec<String> = trace
        .lines()
        .into_iter()
        .filter(|line| !line.starts_with("step_start") && !line.starts_with("all_tasks"))
        .collect();
    assert_eq!(streamed_lines(&events), session_lines);
    // Each turn's own events are in the stream, inside its task.
    let finished = events.iter().filter(|event| matches!(event, StreamEvent::Finished(_))).count();
    assert_eq!(finished, 2);
    let step_starts = events
        .iter()
        .filter(|event| {
            matches!(event, StreamEvent::Event { event: agentix::event::EventKind::StepStart, .. })
        })
        .count();
    assert_eq!(step_starts, 3);
    match events.last() {
        Some(StreamEvent::Session(SessionEvent::RunEnded { result: Ok(reports) })) => {
            assert_eq!(reports.len(), 2)
        }
        other => panic!("the stream ends with the run's result, not {other:?}"),
    }
}

async fn a_session_runs_on_a_boxed_agent_with_its_step_start_hooks_on(path: Path) {
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
        trace.of("step_start"),
        lines(&["step_start 1.0", "step_start 1.1", "step_start 2.0"])
    );
    assert_eq!(
        trace.of("before_model"),
        lines(&["before_model 1 step_index 0", "before_model 2 step_index 2"])
    );
    assert_eq!(model.calls(), 2);
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
        .log_with_tasks(0)
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
    let observer = |observation: &agentix::observe::Observation<'_>| {
        if let agentix::observe::Observation::Session(SessionEvent::TaskStarted { task }) =
            observation
            && task.id().get() == 2
        {
            panic!("the observer broke");
        }
    };
    let error = session.run().observe(&observer).await.unwrap_err();
    assert_eq!(error.to_string(), "the observer panicked: the observer broke");
    let statuses: Vec<TaskStatus> =
        session.state().completed().iter().map(|report| report.status).collect();
    // Task 2 was already under way: it ends as its turn did; task 3 never starts.
    assert_eq!(statuses, [TaskStatus::Success, TaskStatus::Success, TaskStatus::Cancelled]);
    assert!(session.state().has_ended());
}
