//! Rule 16: every session event takes a `#[hook]` function (with its value and the session, or
//! fewer parameters) and a `SessionHook` method, with the verdicts its contract has: REJECT at
//! `task_start`, `step_start` and `plan_submit`, ESCALATE at `step_start`, ENQUEUE at
//! `all_tasks_complete`, HALT everywhere.

use std::future::IntoFuture;
use std::sync::atomic::{AtomicUsize, Ordering};

use agentix::event::{AllTasksComplete, PlanSubmit, TaskStart, StepStart};
use agentix::session::{
    Plan, PlanReport, QueuedTask, Session, SessionHook, SessionState, Task, TaskReport, TaskStatus,
};
use agentix::{Agent, ScriptedModel, Turn, Verdict, hook};

static SEEN: AtomicUsize = AtomicUsize::new(0);

#[hook(session_start)]
async fn started(session: &SessionState) {
    assert_eq!(session.queue().len(), 1);
    SEEN.fetch_add(1, Ordering::Relaxed);
}

#[hook(task_start, name = "no_secrets", timeout = "1s")]
async fn refuse_secrets(task: &mut QueuedTask, _session: &SessionState) -> Verdict<TaskStart> {
    if task.task.prompt.contains("secret") { Verdict::reject("not that") } else { Verdict::Continue }
}

#[hook(step_start)]
async fn bounded(turn: &Turn) -> Verdict<StepStart> {
    if turn.task_step_index() > 3 { Verdict::escalate("long task") } else { Verdict::Continue }
}

/// Turin's word for the same event, as the seed fixes it.
#[hook(turn_start)]
async fn bounded_as_turin_says(turn: &Turn) -> Verdict<StepStart> {
    if turn.task_step_index() > 5 { Verdict::reject("too long") } else { Verdict::Continue }
}

#[hook(plan_submit)]
async fn titled(plan: &mut Plan) -> Result<Verdict<PlanSubmit>, std::fmt::Error> {
    plan.title.get_or_insert_with(|| "untitled".to_owned());
    Ok(Verdict::Continue)
}

#[hook(task_complete)]
async fn reported(report: &TaskReport, session: &SessionState) {
    assert!(session.completed().contains(report));
}

#[hook(plan_complete)]
async fn planned(_plan: &PlanReport) {}

#[hook(all_tasks_complete)]
async fn once_more(session: &SessionState) -> Verdict<AllTasksComplete> {
    if session.follow_ups() == 0 { Verdict::enqueue(["follow up"]) } else { Verdict::Continue }
}

#[hook(session_end)]
async fn ended() {
    SEEN.fetch_add(1, Ordering::Relaxed);
}

/// A struct on several session events.
struct Tally;

impl SessionHook for Tally {
    async fn task_start(&self, _task: &mut QueuedTask, _session: &SessionState) -> Verdict<TaskStart> {
        Verdict::Continue
    }

    async fn step_start(&self, _turn: &mut Turn, _session: &SessionState) -> Verdict<StepStart> {
        Verdict::Continue
    }
}

fn main() {
    let model = ScriptedModel::new().text("one").text("two").text("three");
    let agent = Agent::builder(&model).build();
    let mut session = Session::builder(&agent)
        .hook(started)
        .hook(refuse_secrets)
        .hook(bounded)
        .hook(bounded_as_turin_says)
        .hook(titled)
        .hook(reported)
        .hook(planned)
        .hook(once_more)
        .hook(ended)
        .hook(Tally)
        .build();
    session.enqueue(Task::new("one")).unwrap();
    session.submit_plan(Plan::new(["two", "the secret"])).unwrap();
    // A hook's timeout needs tokio's time driver.
    let runtime = tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap();
    let reports = runtime.block_on(session.run().into_future()).unwrap();
    let statuses: Vec<TaskStatus> = reports.iter().map(|report| report.status).collect();
    assert_eq!(
        statuses,
        [TaskStatus::Success, TaskStatus::Success, TaskStatus::Rejected, TaskStatus::Success]
    );
    assert_eq!(session.state().plans().next().unwrap().title.as_deref(), Some("untitled"));
    assert_eq!(SEEN.load(Ordering::Relaxed), 2);
}
