#![allow(missing_docs)] // criterion_group! generates an undocumented `pub fn`.

//! A step's tool calls running together. Timed: a step of three calls of a tool that waits
//! 200 ms (a lookup over the network), run together (`Config::tool_concurrency`, default 8), one
//! at a time (`tool_concurrency = 1`) and through a sequential tool (`#[tool(sequential)]`);
//! after criterion's report, each one's median step against the 200 ms of one call.
//!
//! Counted: `AGENTIX_CALLS=together|one_at_a_time:calls:turns` runs that many turns of a step of
//! `calls` calls of an instant tool, for `scripts/tool-call-instructions.sh` to count the
//! instructions each call costs under valgrind.

#[path = "support/median.rs"]
mod support;

use std::hint::black_box;
use std::time::Duration;

use agentix::{
    Agent, AssistantMessage, Config, Conversation, Model, Part, Tool, ToolCall, Turn,
    model::{ModelError, ModelRequest, ModelResponse},
};
use criterion::{Criterion, criterion_group};
use serde_json::{Value, json};
use support::{RunTurn, median};
use tokio::runtime::Runtime;

/// What one call of the slow tools waits.
const CALL: Duration = Duration::from_millis(200);

/// Calls `tool` `calls` times in one step, then answers once it has their results.
struct Step {
    tool: &'static str,
    calls: usize,
}

impl Model for Step {
    async fn complete(&self, request: &ModelRequest) -> Result<ModelResponse, ModelError> {
        let answered = request
            .messages
            .iter()
            .any(|message| message.content.iter().any(|part| matches!(part, Part::ToolResult(_))));
        if answered {
            return Ok(AssistantMessage::text("done").into());
        }
        let message = (0..self.calls).fold(AssistantMessage::default(), |message, n| {
            message.with_tool_call(ToolCall::new(format!("call_{n}"), self.tool, json!({})))
        });
        Ok(message.into())
    }
}

/// A lookup that waits [`CALL`].
struct Lookup;

impl Tool for Lookup {
    const NAME: &'static str = "lookup";
    type Args = Value;
    type Output = &'static str;
    type Error = std::convert::Infallible;

    fn description(&self) -> &str {
        "Looks something up."
    }

    async fn call(&self, _: Value, _: &Turn) -> Result<&'static str, Self::Error> {
        tokio::time::sleep(CALL).await;
        Ok("found")
    }
}

/// The same lookup, each call run alone.
struct LookupAlone;

impl Tool for LookupAlone {
    const NAME: &'static str = "lookup_alone";
    const SEQUENTIAL: bool = true;
    type Args = Value;
    type Output = &'static str;
    type Error = std::convert::Infallible;

    fn description(&self) -> &str {
        "Looks something up, alone."
    }

    async fn call(&self, _: Value, _: &Turn) -> Result<&'static str, Self::Error> {
        tokio::time::sleep(CALL).await;
        Ok("found")
    }
}

/// A tool that answers at once: what a call costs beyond its tool.
struct Immediate;

impl Tool for Immediate {
    const NAME: &'static str = "instant";
    type Args = Value;
    type Output = &'static str;
    type Error = std::convert::Infallible;

    fn description(&self) -> &str {
        "Answers at once."
    }

    async fn call(&self, _: Value, _: &Turn) -> Result<&'static str, Self::Error> {
        Ok("done")
    }
}

fn config(concurrency: usize) -> Config {
    Config { tool_concurrency: concurrency, ..Config::default() }
}

/// A turn whose step calls the 200 ms lookup three times: `how` they run.
fn three_lookups(how: &str) -> RunTurn {
    let (concurrency, alone) = match how {
        "together" => (8, false),
        "one_at_a_time" => (1, false),
        _ => (8, true),
    };
    macro_rules! turn_of {
        ($tool:expr, $name:expr) => {{
            let agent = Agent::builder(Step { tool: $name, calls: 3 }).tool($tool).build();
            Box::new(move |runtime: &Runtime| {
                let mut conversation = Conversation::with_config(config(concurrency));
                let outcome = runtime.block_on(agent.run(&mut conversation, "Look it up"));
                black_box(outcome.expect("the turn completes"));
            })
        }};
    }
    if alone { turn_of!(LookupAlone, "lookup_alone") } else { turn_of!(Lookup, "lookup") }
}

/// A turn whose step calls the instant tool `calls` times, `how` they run.
fn instant_calls(how: &str, calls: usize) -> RunTurn {
    let concurrency = if how == "together" { 8 } else { 1 };
    let agent = Agent::builder(Step { tool: "instant", calls }).tool(Immediate).build();
    Box::new(move |runtime: &Runtime| {
        let mut conversation = Conversation::with_config(config(concurrency));
        let outcome = runtime.block_on(agent.run(&mut conversation, "Do it"));
        black_box(outcome.expect("the turn completes"));
    })
}

fn runtime() -> Runtime {
    tokio::runtime::Builder::new_current_thread().enable_time().build().expect("a runtime")
}

const WAYS: [&str; 3] = ["together", "one_at_a_time", "sequential_tool"];

fn tool_calls(c: &mut Criterion) {
    let runtime = runtime();
    let mut group = c.benchmark_group("three_200ms_calls");
    group.sample_size(10);
    for how in WAYS {
        let run = three_lookups(how);
        group.bench_function(how, |bencher| bencher.iter(|| run(&runtime)));
    }
    group.finish();
    let mut group = c.benchmark_group("instant_calls");
    for calls in [1, 8] {
        for how in ["together", "one_at_a_time"] {
            let run = instant_calls(how, calls);
            group
                .bench_function(format!("{calls}_{how}"), |bencher| bencher.iter(|| run(&runtime)));
        }
    }
    group.finish();
}

/// Prints each way's median turn against one call's 200 ms.
fn steps() {
    let runtime = runtime();
    println!("\n  three 200 ms calls   median turn   turn / one call");
    for how in WAYS {
        let turn = median(&three_lookups(how), &runtime, 7);
        println!(
            "  {how:<18} {:>9.1}ms   {:>15.2}",
            turn.as_secs_f64() * 1e3,
            turn.as_secs_f64() / CALL.as_secs_f64()
        );
    }
}

criterion_group!(benches, tool_calls);

fn main() {
    // `AGENTIX_CALLS=how:calls:turns` runs just that many turns, for an instruction count.
    if let Ok(spec) = std::env::var("AGENTIX_CALLS") {
        let [how, calls, turns] = spec.split(':').collect::<Vec<_>>()[..] else {
            panic!("AGENTIX_CALLS is how:calls:turns, e.g. together:8:100");
        };
        let run = instant_calls(how, calls.parse().expect("a call count"));
        let runtime = runtime();
        for _ in 0..turns.parse::<usize>().expect("a turn count") {
            run(&runtime);
        }
        return;
    }
    benches();
    criterion::Criterion::default().configure_from_args().final_summary();
    // Under `cargo test --benches` criterion runs each benchmark once; the table is for
    // `cargo bench`.
    if std::env::args().any(|arg| arg == "--bench") {
        steps();
    }
}
