#![allow(missing_docs)] // criterion_group! generates an undocumented `pub fn`.

//! One turn of a long conversation: what a turn costs at 10, 1,000, 10,000 and 100,000 prior
//! turns, with the default config (compaction keeps a request to 92,000 tokens), over an
//! in-memory model.
//!
//! - `text`: each prior turn is a question and an answer; the turn measured is one too.
//! - `tools`: each prior turn also calls a tool and reads its result; so does the turn measured.
//!
//! Each sample times the *second* turn after the conversation is loaded (`from_parts`, as a
//! store would load it): the first counts the loaded log, once. After criterion's report, the
//! bench prints the bytes the conversation holds per log entry (its log and its ledger), as a
//! counting allocator sees them.

use std::alloc::{GlobalAlloc, Layout, System};
use std::hint::black_box;
use std::sync::atomic::{AtomicIsize, Ordering};
use std::time::{Duration, Instant};

use agentix::{
    Agent, AssistantMessage, Config, Conversation, Entry, Message, Model, ToolCall, ToolResult,
    conversation::TurnRef,
    message::Role,
    model::{ModelError, ModelRequest, ModelResponse},
    scope::Scope,
};
use criterion::{BenchmarkId, Criterion, criterion_group};
use futures::executor::block_on;
use serde_json::json;
use tests::Weather;

/// The bytes allocated and not yet freed, by every thread.
static HELD: AtomicIsize = AtomicIsize::new(0);

struct Counting;

// SAFETY: forwards every call to the system allocator unchanged; only counts.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        HELD.fetch_add(layout.size() as isize, Ordering::Relaxed);
        // SAFETY: same contract as the caller's.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        HELD.fetch_sub(layout.size() as isize, Ordering::Relaxed);
        // SAFETY: same contract as the caller's.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        HELD.fetch_add(new_size as isize - layout.size() as isize, Ordering::Relaxed);
        // SAFETY: same contract as the caller's.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

const PRIOR_TURNS: [u64; 4] = [10, 1_000, 10_000, 100_000];

/// What a user asks, about 60 characters.
fn question(n: u64) -> String {
    format!("Question {n}: what is the weather like in Oslo this week?")
}

/// What the model answers, about 100 characters.
fn answer(n: u64) -> String {
    format!(
        "Answer {n}: sunny on Monday and Tuesday, rain from Wednesday on, cooler at the weekend."
    )
}

/// Answers with a tool call when asked to and the request does not end with a tool's result;
/// otherwise with text.
struct LongModel {
    tools: bool,
}

impl Model for LongModel {
    async fn complete(&self, request: &ModelRequest) -> Result<ModelResponse, ModelError> {
        black_box(request.messages.len());
        let answered = request.messages.last().is_some_and(|message| message.role == Role::Tool);
        let message = if self.tools && !answered {
            AssistantMessage::default().with_tool_call(ToolCall::new(
                "c1",
                "get_weather",
                json!({ "city": "Oslo" }),
            ))
        } else {
            AssistantMessage::text(answer(0))
        };
        Ok(message.into())
    }
}

/// The log of `turns` prior turns, each a question, an answer, and (with `tools`) a tool call
/// and its result between them.
fn prior_log(turns: u64, tools: bool) -> Vec<Entry> {
    let mut log = Vec::new();
    for n in 1..=turns {
        let turn = TurnRef(n);
        log.push(Entry::User { turn, message: Message::user(question(n)), task: None });
        if tools {
            let call = ToolCall::new(format!("c{n}"), "get_weather", json!({ "city": "Oslo" }));
            let result = ToolResult::success(&call, "sunny in Oslo, 21C, wind 3 m/s from the west");
            let message = AssistantMessage::default().with_tool_call(call);
            log.push(Entry::Assistant { turn, message });
            log.push(Entry::ToolResults { turn, results: vec![result] });
        }
        log.push(Entry::Assistant { turn, message: AssistantMessage::text(answer(n)) });
    }
    log
}

/// Runs one turn.
type RunTurn<'a> = &'a dyn Fn(&mut Conversation);

/// The conversation as a store loads it, with one turn run on it: its log counted.
fn loaded(log: &[Entry], turns: u64, turn: RunTurn<'_>) -> Conversation {
    let mut conversation =
        Conversation::from_parts(Config::default(), log.to_vec(), turns, Scope::default()).unwrap();
    turn(&mut conversation);
    conversation
}

fn long_conversation(c: &mut Criterion) {
    let text_agent = Agent::builder(LongModel { tools: false }).build();
    let tools_agent = Agent::builder(LongModel { tools: true }).tool(Weather::default()).build();
    let text_turn = |conversation: &mut Conversation| {
        black_box(block_on(text_agent.run(conversation, "And next week?")).unwrap());
    };
    let tools_turn = |conversation: &mut Conversation| {
        black_box(block_on(tools_agent.run(conversation, "And next week?")).unwrap());
    };
    let variants: [(&str, bool, RunTurn<'_>); 2] =
        [("text", false, &text_turn), ("tools", true, &tools_turn)];
    let mut group = c.benchmark_group("long_conversation");
    group.sample_size(10).warm_up_time(Duration::from_millis(500));
    for (variant, tools, turn) in variants {
        for turns in PRIOR_TURNS {
            let log = prior_log(turns, tools);
            group.bench_function(BenchmarkId::new(variant, turns), |b| {
                b.iter_custom(|iters| {
                    let mut spent = Duration::ZERO;
                    for _ in 0..iters {
                        let mut conversation = loaded(&log, turns, turn);
                        let start = Instant::now();
                        turn(&mut conversation);
                        spent += start.elapsed();
                    }
                    spent
                });
            });
        }
    }
    group.finish();
    memory(variants);
}

/// The bytes a loaded conversation holds per log entry, its ledger counted, at each length.
fn memory(variants: [(&str, bool, RunTurn<'_>); 2]) {
    println!("\nbytes held per log entry (the log and its ledger, after a turn):");
    println!("{:>8}  {:>12}  {:>12}", "turns", variants[0].0, variants[1].0);
    for turns in PRIOR_TURNS {
        let mut row = format!("{turns:>8}");
        for (_, tools, turn) in variants {
            let log = prior_log(turns, tools);
            let before = HELD.load(Ordering::Relaxed);
            let conversation = loaded(&log, turns, turn);
            let held = HELD.load(Ordering::Relaxed) - before;
            row += &format!("  {:>12.1}", held as f64 / conversation.log().len() as f64);
        }
        println!("{row}");
    }
}

criterion_group!(benches, long_conversation);

fn main() {
    benches();
    Criterion::default().configure_from_args().final_summary();
}
