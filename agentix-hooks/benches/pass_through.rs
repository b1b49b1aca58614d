#![allow(missing_docs)] // criterion_group! generates an undocumented `pub fn`.

//! What the ready-made hooks cost a turn that does not need them: the bare turn of the turn
//! benchmark (a tool call, then an answer, over an in-memory model) with `Retry`, with
//! `ModelFallback`, with both, with neither, and with a `wrap_model` hook that only passes the
//! call on (what a layer of the onion costs itself) — every call answering, so each hook only
//! passes its two model calls through; and with `ApproveByPattern` on a pattern its one tool
//! call does not match; with a model call limit, a tool call limit and a usage limit far from
//! reached; with old tool results cleared, fewer than it keeps; and with a tool filter that
//! hides nothing; with a tool retry whose call succeeds; and with PII redaction that finds
//! nothing.
//!
//! Timed by criterion; counted with `AGENTIX_HOOKS=variant:turns`, which runs that many turns
//! for `scripts/hook-instructions.sh` to count the instructions of each under valgrind.

use std::hint::black_box;

use agentix::{
    Agent, Conversation, Turn,
    model::{ModelError, ModelRequest, ModelResponse},
};
use agentix_hooks::{
    ApproveByPattern, Budget, ClearToolResults, ModelCallLimit, ModelFallback, Pii, Price, Prices,
    Reached, Retry, ToolCallLimit, ToolFilter, ToolRetry, UsageLimit,
};
use criterion::{Criterion, criterion_group};
use futures::executor::block_on;

// The turn benchmark's model and tool: the same bare turn as the cost gate's.
#[allow(dead_code)]
#[path = "../../agentix/benches/turn/fixture.rs"]
mod fixture;

use fixture::{BenchModel, Weather};

/// A `wrap_model` hook that only passes the call on: what a layer of the onion costs itself.
struct Pass;

impl agentix::on::WrapModel for Pass {
    async fn wrap_model(
        &self,
        request: &ModelRequest,
        _turn: &Turn,
        next: &impl agentix::model::NextModel,
    ) -> Result<ModelResponse, ModelError> {
        next.call(request).await
    }
}

const VARIANTS: [&str; 13] = [
    "none",
    "pass",
    "retry",
    "fallback",
    "both",
    "approve",
    "model_limit",
    "tool_limit",
    "usage_limit",
    "clear",
    "filter",
    "tool_retry",
    "pii",
];

/// Gives `use_it` a turn of the agent `variant` names, on a new conversation each time.
fn with_agent(variant: &str, use_it: &mut dyn FnMut(&dyn Fn() -> agentix::Outcome)) {
    let ask = "Weather in Oslo?";
    match variant {
        "none" => {
            let agent = Agent::builder(BenchModel::new(None)).tool(Weather).build();
            use_it(&|| block_on(agent.run(&mut Conversation::new(), ask)));
        }
        "pass" => {
            let agent = Agent::builder(BenchModel::new(None)).tool(Weather).hook(Pass).build();
            use_it(&|| block_on(agent.run(&mut Conversation::new(), ask)));
        }
        "retry" => {
            let agent =
                Agent::builder(BenchModel::new(None)).tool(Weather).hook(Retry::new()).build();
            use_it(&|| block_on(agent.run(&mut Conversation::new(), ask)));
        }
        "fallback" => {
            let fallback = ModelFallback::to(["backup"]);
            let agent = Agent::builder(BenchModel::new(None)).tool(Weather).hook(fallback).build();
            use_it(&|| block_on(agent.run(&mut Conversation::new(), ask)));
        }
        "both" => {
            let agent = Agent::builder(BenchModel::new(None))
                .tool(Weather)
                .hook(ModelFallback::to(["backup"]))
                .hook(Retry::new())
                .build();
            use_it(&|| block_on(agent.run(&mut Conversation::new(), ask)));
        }
        "approve" => {
            // A pattern the turn's one tool call does not match: it goes on untouched.
            let ask = ApproveByPattern::tools(["*delete*"]).expect("a pattern");
            let agent = Agent::builder(BenchModel::new(None)).tool(Weather).hook(ask).build();
            use_it(&|| block_on(agent.run(&mut Conversation::new(), "Weather in Oslo?")));
        }
        "model_limit" => {
            // Far from reached: each model call is counted, in the conversation's scope.
            let limit = ModelCallLimit::new().per_turn(10).per_conversation(1_000);
            let agent = Agent::builder(BenchModel::new(None)).tool(Weather).hook(limit).build();
            use_it(&|| block_on(agent.run(&mut Conversation::new(), ask)));
        }
        "tool_limit" => {
            // Far from reached: each message is checked, the one call counted.
            let limit = ToolCallLimit::of("get_weather").expect("a pattern").per_turn(5);
            let limit = limit.when_reached(Reached::Error);
            let agent = Agent::builder(BenchModel::new(None)).tool(Weather).hook(limit).build();
            use_it(&|| block_on(agent.run(&mut Conversation::new(), ask)));
        }
        "usage_limit" => {
            // Far from reached: each request estimated, each answer priced and counted.
            let prices = Prices::new().default_model(Price::per_million(3.0, 15.0));
            let budget = Budget::new().input_tokens(1_000_000).cost(100.0);
            let limit = UsageLimit::new(prices).per_turn(budget).per_conversation(budget);
            let agent = Agent::builder(BenchModel::new(None)).tool(Weather).hook(limit).build();
            use_it(&|| block_on(agent.run(&mut Conversation::new(), ask)));
        }
        "clear" => {
            // Fewer results than it keeps: each request's results counted, none cleared.
            let clear = ClearToolResults::keep(5);
            let agent = Agent::builder(BenchModel::new(None)).tool(Weather).hook(clear).build();
            use_it(&|| block_on(agent.run(&mut Conversation::new(), ask)));
        }
        "filter" => {
            // Keeps every tool: each asked, nothing hidden, the call checked.
            let filter = ToolFilter::new(|tool, _turn| !tool.name.starts_with("write_"));
            let agent = Agent::builder(BenchModel::new(None)).tool(Weather).hook(filter).build();
            use_it(&|| block_on(agent.run(&mut Conversation::new(), ask)));
        }
        "tool_retry" => {
            // The call succeeds: passed through once.
            let retry = ToolRetry::new();
            let agent = Agent::builder(BenchModel::new(None)).tool(Weather).hook(retry).build();
            use_it(&|| block_on(agent.run(&mut Conversation::new(), ask)));
        }
        "pii" => {
            // Nothing to find: each request, answer and result searched, nothing changed.
            let pii = Pii::new();
            let agent = Agent::builder(BenchModel::new(None)).tool(Weather).hook(pii).build();
            use_it(&|| block_on(agent.run(&mut Conversation::new(), ask)));
        }
        other => panic!("no variant {other}: {VARIANTS:?}"),
    }
}

fn pass_through(c: &mut Criterion) {
    let mut group = c.benchmark_group("pass_through");
    for variant in VARIANTS {
        with_agent(variant, &mut |turn| {
            group.bench_function(variant, |b| b.iter(|| black_box(turn().unwrap())));
        });
    }
    group.finish();
}

criterion_group!(benches, pass_through);

fn main() {
    if let Ok(spec) = std::env::var("AGENTIX_HOOKS") {
        let (variant, count) = spec.split_once(':').expect("AGENTIX_HOOKS is variant:turns");
        let count: usize = count.parse().expect("a turn count");
        with_agent(variant, &mut |turn| (0..count).for_each(|_| drop(black_box(turn().unwrap()))));
        return;
    }
    benches();
    Criterion::default().configure_from_args().final_summary();
}
