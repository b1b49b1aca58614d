//! Helpers for the session tests: both ways of running a session, hooks that trace every
//! session and turn event, and dropping a run midway.

use std::future::IntoFuture;
use std::pin::pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use agentix::event::{
    AllTasksComplete, BeforeModel, PlanComplete, PlanSubmit, Post, Pre, SessionEnd, SessionStart,
    StepStart, TaskComplete, TaskStart,
};
use agentix::session::{
    Plan, PlanReport, QueuedTask, Session, SessionEvent, SessionHook, SessionState, TaskReport,
};
use agentix::{
    Error, Hook, Outcome, ScriptedModel, StreamEvent, Turn, Verdict, model::ModelRequest,
};
use futures::{Stream, StreamExt};
use serde_json::json;

use crate::Yields;

/// Which way a session runs: its `run` future, or its stream. Both run the same loop.
#[derive(Clone, Copy, Debug)]
pub enum Path {
    Direct,
    Streamed,
}

pub const PATHS: [Path; 2] = [Path::Direct, Path::Streamed];

/// Runs the session on `path`; a stream's result is its last item.
pub async fn run_session<R, S>(
    session: &mut Session<R, S>,
    path: Path,
) -> Result<Vec<TaskReport>, Error>
where
    R: agentix::AnyAgent,
    S: agentix::session::SessionChain,
{
    match path {
        Path::Direct => session.run().await,
        Path::Streamed => {
            let events: Vec<StreamEvent> = session.run().stream().collect().await;
            match events.last() {
                Some(StreamEvent::Session(SessionEvent::RunEnded { result })) => result.clone(),
                other => panic!("a session's stream ends with the run's result, not {other:?}"),
            }
        }
    }
}

/// What fired, in order, as `event detail` lines.
#[derive(Clone, Default)]
pub struct Trace(Arc<Mutex<Vec<String>>>);

impl Trace {
    pub fn push(&self, line: impl Into<String>) {
        self.0.lock().unwrap().push(line.into());
    }

    pub fn lines(&self) -> Vec<String> {
        self.0.lock().unwrap().clone()
    }

    /// The lines starting with `prefix`.
    pub fn of(&self, prefix: &str) -> Vec<String> {
        self.lines().into_iter().filter(|line| line.starts_with(prefix)).collect()
    }
}

/// Records every session event, yielding `yields` times at each: an await point per event.
pub struct Watch {
    pub trace: Trace,
    pub yields: usize,
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

    async fn step_start(&self, turn: &mut Turn, _session: &SessionState) -> Verdict<StepStart> {
        Yields(self.yields).await;
        let task = turn.task_id().map_or(0, |task| task.get());
        self.trace.push(format!("step_start {task}.{}", turn.task_step_index()));
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
pub struct TurnWatch {
    pub trace: Trace,
    pub yields: usize,
}

#[agentix::hook]
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
            "before_model {} step_index {}",
            turn.task_id().map_or(0, |task| task.get()),
            turn.step_index()
        ));
        Verdict::Continue
    }

    async fn post(&self, outcome: &Outcome, _turn: &mut Turn) -> Verdict<Post> {
        Yields(self.yields).await;
        self.trace.push(format!("post {}", if outcome.is_ok() { "ok" } else { "err" }));
        Verdict::Continue
    }
}

pub fn lines(expected: &[&str]) -> Vec<String> {
    expected.iter().map(|line| (*line).to_owned()).collect()
}

pub fn weather_loop(calls: usize) -> ScriptedModel {
    let mut model = ScriptedModel::new();
    for _ in 0..calls {
        model = model.tool_call("get_weather", json!({ "city": "Oslo" }));
    }
    model
}

/// Polls the session's run (or its stream) `polls` times with a waker that does nothing, then
/// drops it; whether it finished first.
pub fn poll_then_drop<R, S>(session: &mut Session<R, S>, polls: usize, streamed: bool) -> bool
where
    R: agentix::AnyAgent,
    S: agentix::session::SessionChain,
{
    let waker = futures::task::noop_waker();
    let mut cx = Context::from_waker(&waker);
    if streamed {
        let mut stream = pin!(session.run().stream());
        (0..polls).any(|_| matches!(stream.as_mut().poll_next(&mut cx), Poll::Ready(None)))
    } else {
        let mut run = pin!(session.run().into_future());
        (0..polls).any(|_| run.as_mut().poll(&mut cx).is_ready())
    }
}
