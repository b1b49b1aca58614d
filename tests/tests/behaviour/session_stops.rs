//! A session's run dropped at every await point, then run again, and a session stopped at
//! each of its events: every task still ends exactly once, and its report tells the truth.

use agentix::event::{
    AllTasksComplete, EventKind, PlanComplete, PlanSubmit, SessionEnd, SessionStart, StepStart,
    TaskComplete, TaskStart,
};
use agentix::session::{
    Plan, PlanReport, QueuedTask, Session, SessionHook, SessionState, TaskReport, TaskStatus,
};
use agentix::{Agent, Conversation, Entry, Error, ScriptedModel, Turn, Verdict};
use serde_json::json;
use std::future::IntoFuture;
use tests::session::{Trace, TurnWatch, Watch, poll_then_drop, weather_loop};
use tests::{Weather, Yields, assert_log_consistent, validate_entries};

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
        let second = futures::executor::block_on(session.run().into_future());
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

    async fn step_start(&self, turn: &mut Turn, _: &SessionState) -> Verdict<StepStart> {
        self.around(format!("step_start {}", turn.task_id().unwrap().get())).await;
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
        let second = futures::executor::block_on(session.run().into_future());
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
                let started = trace.of(&format!("+step_start {id}")).len();
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
            return Verdict::Halt(agentix::verdict::Halt::failure(message));
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
