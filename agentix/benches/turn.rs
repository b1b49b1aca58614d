#![allow(missing_docs)] // criterion_group! generates an undocumented `pub fn`.

//! What hooks cost on a whole turn (a tool call, then an answer, over an in-memory model):
//!
//! - (a) agentix, with 0, 1, 5 and 20 `#[hook]` functions spread over the events;
//! - (b) the same work written by hand into a plain loop — the limit;
//! - (c) the design most peers use: hooks in a `Vec<Arc<dyn Hook>>`, every hook called at every
//!   event through a boxed future (rig's `HookStack`, Patinox's `Vec<Arc<dyn AgentLifecycle>>`).
//!
//! Each hook does light work at its event: a counter update and a string check on the value.
//! After criterion's report, the bench prints per hook count the ratios a/b and c/a, and the
//! overheads over (b).

use std::future::Future;
use std::hint::black_box;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use agentix::{
    Agent, AssistantMessage, Conversation, Message, Model, ModelError, ModelRequest, ModelResponse,
    Outcome, Part, Role, Tool, ToolCall, ToolResult, ToolSpec, Turn, hook,
};
use criterion::{Criterion, criterion_group};
use futures::executor::block_on;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

static COUNTER: AtomicU64 = AtomicU64::new(0);

/// The light work each hook does: a counter update and a string check.
fn work(text: &str) {
    COUNTER.fetch_add(1, Ordering::Relaxed);
    black_box(text.contains("needle"));
}

/// Answers with a tool call, then — once it sees the tool's result — with text.
struct BenchModel {
    call: AssistantMessage,
    answer: AssistantMessage,
}

impl BenchModel {
    fn new() -> Self {
        BenchModel {
            call: AssistantMessage::default().with_tool_call(ToolCall::new(
                "c1",
                "get_weather",
                json!({ "city": "Oslo" }),
            )),
            answer: AssistantMessage::text("It is sunny in Oslo."),
        }
    }

    fn respond(&self, request: &ModelRequest) -> ModelResponse {
        let answered = request.messages.last().is_some_and(|message| message.role == Role::Tool);
        if answered { self.answer.clone() } else { self.call.clone() }.into()
    }
}

impl Model for BenchModel {
    async fn complete(&self, request: &ModelRequest) -> Result<ModelResponse, ModelError> {
        Ok(self.respond(request))
    }
}

#[derive(Deserialize, JsonSchema)]
struct City {
    city: String,
}

struct Weather;

impl Tool for Weather {
    const NAME: &'static str = "get_weather";
    type Args = City;
    type Output = String;
    type Error = std::convert::Infallible;

    fn description(&self) -> &str {
        "Current weather for a city."
    }

    async fn call(&self, args: City, _turn: &Turn) -> Result<String, Self::Error> {
        Ok(format!("sunny in {}", args.city))
    }
}

/// The events hooks are spread over, in this order: hook `i` goes to `SPREAD[i % 7]`.
const SPREAD: [&str; 7] =
    ["pre", "before_model", "after_model", "before_tool", "after_tool", "before_final", "post"];

macro_rules! light_hooks {
    ($($name:ident: $event:ident;)*) => {$(
        light_hooks!(@one $name $event);
    )*};
    (@one $name:ident pre) => {
        #[hook(pre)]
        async fn $name(turn: &Turn) { work(&turn.user_message().text()); }
    };
    (@one $name:ident before_model) => {
        #[hook(before_model)]
        async fn $name(request: &ModelRequest) { work(request.messages.last().map_or("", |m| m.content.first().and_then(Part::as_text).unwrap_or(""))); }
    };
    (@one $name:ident after_model) => {
        #[hook(after_model)]
        async fn $name(message: &AssistantMessage) { work(&message.joined_text()); }
    };
    (@one $name:ident before_tool) => {
        #[hook(before_tool)]
        async fn $name(call: &ToolCall) { work(&call.name); }
    };
    (@one $name:ident after_tool) => {
        #[hook(after_tool)]
        async fn $name(result: &ToolResult) { work(&result.output); }
    };
    (@one $name:ident before_final) => {
        #[hook(before_final)]
        async fn $name(message: &AssistantMessage) { work(&message.joined_text()); }
    };
    (@one $name:ident post) => {
        #[hook(post)]
        async fn $name(outcome: &Outcome) { work(outcome.as_ref().map_or("", |m| m.content.first().and_then(Part::as_text).unwrap_or(""))); }
    };
}

light_hooks! {
    h00: pre; h01: before_model; h02: after_model; h03: before_tool; h04: after_tool; h05: before_final; h06: post;
    h07: pre; h08: before_model; h09: after_model; h10: before_tool; h11: after_tool; h12: before_final; h13: post;
    h14: pre; h15: before_model; h16: after_model; h17: before_tool; h18: after_tool; h19: before_final;
}

/// (a): one turn on an agentix agent.
fn one_turn<P: agentix::pipeline::Pipeline>(
    agent: &Agent<BenchModel, agentix::Toolbox<agentix::NoTools, Weather>, P>,
) {
    let mut conversation = Conversation::new();
    drop(black_box(block_on(agent.run(&mut conversation, "What is the weather in Oslo?"))));
}

macro_rules! agent_with {
    ($model:expr; $($hook:ident),*) => {
        Agent::builder($model).tool(Weather)$(.hook($hook))*.build()
    };
}

/// (b): the same turn, written by hand: render, call, run the tool, log, with each hook's work
/// inline at its event.
async fn hand_written(
    model: &BenchModel,
    tools: &Arc<[ToolSpec]>,
    hooks: usize,
) -> AssistantMessage {
    let at = |event: &str| (0..hooks).filter(|i| SPREAD[i % 7] == event).count();
    let (pre, before_model, after_model, before_tool, after_tool, before_final, post) = (
        at("pre"),
        at("before_model"),
        at("after_model"),
        at("before_tool"),
        at("after_tool"),
        at("before_final"),
        at("post"),
    );
    let user = Message::user("What is the weather in Oslo?");
    let mut log = vec![user.clone()];
    for _ in 0..pre {
        work(&user.text());
    }
    loop {
        let request =
            ModelRequest { messages: log.clone(), tools: tools.clone(), ..ModelRequest::default() };
        for _ in 0..before_model {
            work(
                request
                    .messages
                    .last()
                    .map_or("", |m| m.content.first().and_then(Part::as_text).unwrap_or("")),
            );
        }
        let message = model.complete(&request).await.expect("the bench model answers").message;
        for _ in 0..after_model {
            work(&message.joined_text());
        }
        if message.calls_tools() {
            let mut results = Vec::new();
            for call in message.tool_calls() {
                for _ in 0..before_tool {
                    work(&call.name);
                }
                let args = City::deserialize(&call.arguments).expect("valid arguments");
                let result = ToolResult::success(call, format!("sunny in {}", args.city));
                for _ in 0..after_tool {
                    work(&result.output);
                }
                results.push(Part::ToolResult(result));
            }
            log.push(message.into());
            log.push(Message { role: Role::Tool, content: results });
            continue;
        }
        for _ in 0..before_final {
            work(&message.joined_text());
        }
        log.push(message.clone().into());
        for _ in 0..post {
            work(&message.joined_text());
        }
        return message;
    }
}

type BoxFuture<'a> = Pin<Box<dyn Future<Output = ()> + Send + 'a>>;

/// (c): a hook in the peers' design: one method per event, each returning a boxed future.
trait DynHook: Send + Sync {
    fn pre<'a>(&'a self, _user: &'a Message) -> BoxFuture<'a> {
        Box::pin(async {})
    }
    fn before_model<'a>(&'a self, _request: &'a ModelRequest) -> BoxFuture<'a> {
        Box::pin(async {})
    }
    fn after_model<'a>(&'a self, _message: &'a AssistantMessage) -> BoxFuture<'a> {
        Box::pin(async {})
    }
    fn before_tool<'a>(&'a self, _call: &'a ToolCall) -> BoxFuture<'a> {
        Box::pin(async {})
    }
    fn after_tool<'a>(&'a self, _result: &'a ToolResult) -> BoxFuture<'a> {
        Box::pin(async {})
    }
    fn before_final<'a>(&'a self, _message: &'a AssistantMessage) -> BoxFuture<'a> {
        Box::pin(async {})
    }
    fn post<'a>(&'a self, _message: &'a AssistantMessage) -> BoxFuture<'a> {
        Box::pin(async {})
    }
}

/// A dynamic hook doing the light work at one event.
struct Light(&'static str);

impl DynHook for Light {
    fn pre<'a>(&'a self, user: &'a Message) -> BoxFuture<'a> {
        Box::pin(async move {
            if self.0 == "pre" {
                work(&user.text())
            }
        })
    }
    fn before_model<'a>(&'a self, request: &'a ModelRequest) -> BoxFuture<'a> {
        Box::pin(async move {
            if self.0 == "before_model" {
                work(
                    request
                        .messages
                        .last()
                        .map_or("", |m| m.content.first().and_then(Part::as_text).unwrap_or("")),
                )
            }
        })
    }
    fn after_model<'a>(&'a self, message: &'a AssistantMessage) -> BoxFuture<'a> {
        Box::pin(async move {
            if self.0 == "after_model" {
                work(&message.joined_text())
            }
        })
    }
    fn before_tool<'a>(&'a self, call: &'a ToolCall) -> BoxFuture<'a> {
        Box::pin(async move {
            if self.0 == "before_tool" {
                work(&call.name)
            }
        })
    }
    fn after_tool<'a>(&'a self, result: &'a ToolResult) -> BoxFuture<'a> {
        Box::pin(async move {
            if self.0 == "after_tool" {
                work(&result.output)
            }
        })
    }
    fn before_final<'a>(&'a self, message: &'a AssistantMessage) -> BoxFuture<'a> {
        Box::pin(async move {
            if self.0 == "before_final" {
                work(&message.joined_text())
            }
        })
    }
    fn post<'a>(&'a self, message: &'a AssistantMessage) -> BoxFuture<'a> {
        Box::pin(async move {
            if self.0 == "post" {
                work(&message.joined_text())
            }
        })
    }
}

/// (c): the hand-written loop, with every hook of the `Vec` called at every event.
async fn dynamic(
    model: &BenchModel,
    tools: &Arc<[ToolSpec]>,
    hooks: &[Arc<dyn DynHook>],
) -> AssistantMessage {
    let user = Message::user("What is the weather in Oslo?");
    let mut log = vec![user.clone()];
    for hook in hooks {
        hook.pre(&user).await;
    }
    loop {
        let request =
            ModelRequest { messages: log.clone(), tools: tools.clone(), ..ModelRequest::default() };
        for hook in hooks {
            hook.before_model(&request).await;
        }
        let message = model.complete(&request).await.expect("the bench model answers").message;
        for hook in hooks {
            hook.after_model(&message).await;
        }
        if message.calls_tools() {
            let mut results = Vec::new();
            for call in message.tool_calls() {
                for hook in hooks {
                    hook.before_tool(call).await;
                }
                let args = City::deserialize(&call.arguments).expect("valid arguments");
                let result = ToolResult::success(call, format!("sunny in {}", args.city));
                for hook in hooks {
                    hook.after_tool(&result).await;
                }
                results.push(Part::ToolResult(result));
            }
            log.push(message.into());
            log.push(Message { role: Role::Tool, content: results });
            continue;
        }
        for hook in hooks {
            hook.before_final(&message).await;
        }
        log.push(message.clone().into());
        for hook in hooks {
            hook.post(&message).await;
        }
        return message;
    }
}

fn dyn_hooks(count: usize) -> Vec<Arc<dyn DynHook>> {
    (0..count).map(|i| Arc::new(Light(SPREAD[i % 7])) as Arc<dyn DynHook>).collect()
}

fn specs() -> Arc<[ToolSpec]> {
    vec![ToolSpec::of(&Weather)].into()
}

/// One turn of one variant.
type RunTurn = Box<dyn Fn()>;

/// The three variants at one hook count, as closures that run one turn.
fn variants(hooks: usize) -> [(&'static str, RunTurn); 3] {
    let tools = specs();
    let dynamic_hooks = dyn_hooks(hooks);
    let a: RunTurn = match hooks {
        0 => {
            let agent = agent_with!(BenchModel::new(););
            Box::new(move || one_turn(&agent))
        }
        1 => {
            let agent = agent_with!(BenchModel::new(); h00);
            Box::new(move || one_turn(&agent))
        }
        5 => {
            let agent = agent_with!(BenchModel::new(); h00, h01, h02, h03, h04);
            Box::new(move || one_turn(&agent))
        }
        _ => {
            let agent = agent_with!(BenchModel::new();
                h00, h01, h02, h03, h04, h05, h06, h07, h08, h09, h10, h11, h12, h13, h14, h15, h16, h17, h18, h19);
            Box::new(move || one_turn(&agent))
        }
    };
    let model_b = BenchModel::new();
    let tools_b = tools.clone();
    let b: RunTurn =
        Box::new(move || drop(black_box(block_on(hand_written(&model_b, &tools_b, hooks)))));
    let model_c = BenchModel::new();
    let c: RunTurn =
        Box::new(move || drop(black_box(block_on(dynamic(&model_c, &tools, &dynamic_hooks)))));
    [("agentix", a), ("hand_written", b), ("dynamic", c)]
}

const HOOK_COUNTS: [usize; 4] = [0, 1, 5, 20];

fn turns(c: &mut Criterion) {
    for hooks in HOOK_COUNTS {
        let mut group = c.benchmark_group(format!("turn/{hooks}_hooks"));
        for (name, run) in variants(hooks) {
            group.bench_function(name, |bencher| bencher.iter(&run));
        }
        group.finish();
    }
}

/// The median time of one turn over `samples` batches of `batch` turns.
fn median(run: &dyn Fn(), samples: usize, batch: usize) -> Duration {
    let mut times: Vec<Duration> = (0..samples)
        .map(|_| {
            let started = Instant::now();
            for _ in 0..batch {
                run();
            }
            started.elapsed() / batch as u32
        })
        .collect();
    times.sort_unstable();
    times[samples / 2]
}

/// Prints the ratios the issue asks for, interleaving the variants so that drift on the
/// machine affects them alike.
fn ratios() {
    println!(
        "\nhooks  agentix (a)  by hand (b)  dynamic (c)   a/b     c/a    (a-b)   (c-b)   (c-b)/(a-b)"
    );
    for hooks in HOOK_COUNTS {
        let [(_, a), (_, b), (_, c)] = variants(hooks);
        let (mut ta, mut tb, mut tc) = (Vec::new(), Vec::new(), Vec::new());
        for _ in 0..9 {
            ta.push(median(&a, 15, 200));
            tb.push(median(&b, 15, 200));
            tc.push(median(&c, 15, 200));
        }
        let mid = |times: &mut Vec<Duration>| {
            times.sort_unstable();
            times[times.len() / 2].as_secs_f64() * 1e9
        };
        let (a, b, c) = (mid(&mut ta), mid(&mut tb), mid(&mut tc));
        println!(
            "{hooks:>5}  {a:>9.0}ns  {b:>9.0}ns  {c:>9.0}ns  {:>6.3}  {:>6.3}  {:>6.0}ns {:>6.0}ns  {:>8.1}",
            a / b,
            c / a,
            a - b,
            c - b,
            (c - b) / (a - b).max(1.0),
        );
    }
}

criterion_group!(benches, turns);

fn main() {
    // `AGENTIX_TURNS=variant:hooks:turns` runs just that many turns of one variant, for an
    // instruction count under `valgrind --tool=callgrind`.
    if let Ok(spec) = std::env::var("AGENTIX_TURNS") {
        let [variant, hooks, turns] = spec.split(':').collect::<Vec<_>>()[..] else {
            panic!("AGENTIX_TURNS is variant:hooks:turns, e.g. agentix:5:1000");
        };
        let hooks: usize = hooks.parse().expect("a hook count");
        let turns: usize = turns.parse().expect("a turn count");
        let run = variants(hooks)
            .into_iter()
            .find(|(name, _)| *name == variant)
            .map(|(_, run)| run)
            .expect("agentix, hand_written or dynamic");
        for _ in 0..turns {
            run();
        }
        return;
    }
    benches();
    criterion::Criterion::default().configure_from_args().final_summary();
    // Profiling one benchmark (`--profile-time`) should profile only that one.
    if !std::env::args().any(|arg| arg == "--profile-time") {
        ratios();
    }
}
