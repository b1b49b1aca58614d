//! A session's run is `Send`: spawned on a multi-thread runtime, with hooks on session events
//! that await, over an agent shared in an `Arc` and over a boxed one.

use std::sync::Arc;

use agentix::event::StepStart;
use agentix::session::{Session, SessionState, TaskReport, TaskStatus};
use agentix::{Agent, ScriptedModel, Turn, Verdict, hook};

#[hook(step_start)]
async fn pace(turn: &Turn) -> Verdict<StepStart> {
    tokio::task::yield_now().await;
    if turn.task_step_index() > 4 { Verdict::reject("too long") } else { Verdict::Continue }
}

#[hook(task_complete)]
async fn report(report: &TaskReport, _session: &SessionState) {
    tokio::task::yield_now().await;
    assert_eq!(report.status, TaskStatus::Success);
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let agent = Arc::new(Agent::builder(ScriptedModel::new().text("one").text("two")).build());
    let typed = tokio::spawn(async move {
        let mut session = Session::builder(agent).hook(pace).hook(report).build();
        session.enqueue("one").unwrap();
        session.enqueue("two").unwrap();
        session.run().await
    });
    assert_eq!(typed.await.unwrap().unwrap().len(), 2);

    let boxed = Agent::builder(ScriptedModel::new().text("three")).build().boxed();
    let streamed = tokio::spawn(async move {
        use futures::StreamExt;
        let mut session = Session::builder(boxed).hook(pace).build();
        session.enqueue("three").unwrap();
        session.run().stream().count().await
    });
    assert!(streamed.await.unwrap() > 3);
}
