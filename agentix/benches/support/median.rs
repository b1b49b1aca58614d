//! What the timed benches share: a turn to run, and the median of many.

use std::time::{Duration, Instant};

use tokio::runtime::Runtime;

/// One turn of an agent, on the bench's runtime.
pub type RunTurn = Box<dyn Fn(&Runtime)>;

/// The median latency of `turns` turns.
pub fn median(run: &RunTurn, runtime: &Runtime, turns: usize) -> Duration {
    let mut times: Vec<Duration> = (0..turns)
        .map(|_| {
            let started = Instant::now();
            run(runtime);
            started.elapsed()
        })
        .collect();
    times.sort_unstable();
    times[turns / 2]
}
