//! Compile-pass and compile-fail cases of the `#[hook]` contract rules; see `tests/ui.rs`.

/// Runs one turn of `$agent` each way a turn can run — awaited, observed and streamed
/// read to its end — each in a `'static` task spawned on a multi-thread tokio runtime, one after
/// the other, and returns the three results: `(Outcome, Outcome, Vec<StreamEvent>)`.
///
/// A macro, not a function: it expands where the agent is built, so `tokio::spawn` checks that
/// the turn of that concrete agent type is `Send`, not a generic bound.
#[macro_export]
macro_rules! spawn_each_run {
    ($agent:expr) => {{
        use ::std::sync::Arc;
        use ::std::sync::atomic::{AtomicUsize, Ordering};

        let agent = Arc::new($agent);
        let runtime = ::tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("a multi-thread runtime");
        runtime.block_on(async move {
            let task = Arc::clone(&agent);
            let run = ::tokio::spawn(async move {
                let mut conversation = ::agentix::Conversation::new();
                task.run(&mut conversation, "run").await
            });
            let run = run.await.expect("the spawned `run` task");

            let task = Arc::clone(&agent);
            let observed = ::tokio::spawn(async move {
                let mut conversation = ::agentix::Conversation::new();
                let seen = AtomicUsize::new(0);
                let observer = |_: &::agentix::observe::Observation<'_>| {
                    seen.fetch_add(1, Ordering::Relaxed);
                };
                let outcome = task.turn(&mut conversation, "observed").observe(&observer).await;
                assert!(seen.load(Ordering::Relaxed) > 0, "the observer saw nothing");
                outcome
            });
            let observed = observed.await.expect("the spawned observed turn");

            let task = Arc::clone(&agent);
            let streamed = ::tokio::spawn(async move {
                use ::futures::StreamExt as _;
                let mut conversation = ::agentix::Conversation::new();
                let mut stream =
                    ::std::pin::pin!(task.turn(&mut conversation, "streamed").stream());
                let mut events = ::std::vec::Vec::new();
                while let Some(event) = stream.next().await {
                    events.push(event);
                }
                events
            });
            let streamed = streamed.await.expect("the spawned streamed turn");
            (run, observed, streamed)
        })
    }};
}

/// The outcome a stream ended with: its last event, `Finished`.
pub fn finished(events: &[agentix::StreamEvent]) -> &agentix::Outcome {
    match events.last() {
        Some(agentix::StreamEvent::Finished(outcome)) => outcome,
        other => panic!("a stream must end with `Finished`, not {other:?}"),
    }
}

/// A tool that answers "noon", after letting other tasks run.
pub struct Clock;

impl agentix::Tool for Clock {
    const NAME: &'static str = "clock";
    type Args = serde_json::Value;
    type Output = String;
    type Error = std::convert::Infallible;

    fn description(&self) -> &str {
        "The time."
    }

    async fn call(
        &self,
        _args: serde_json::Value,
        _turn: &agentix::Turn,
    ) -> Result<String, Self::Error> {
        tokio::task::yield_now().await;
        Ok("noon".into())
    }
}
