#![allow(missing_docs)]
// criterion_group! generates an undocumented `pub fn`.
// Twenty `Hook` structs are twenty layers of each wrap onion: proving the turn's future `Send`
// goes deeper than the default limit of 128, as the compiler's error says.
#![recursion_limit = "256"]

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
use std::time::Instant;

use agentix::event::{AfterModel, AfterTool, BeforeFinal, BeforeModel, BeforeTool, Post, Pre};
use agentix::{
    Agent, AssistantMessage, Config, Conversation, Entry, Message, Model, Outcome, Part, Tool,
    ToolCall, ToolResult, Turn, Verdict,
    context::{CharsPerToken, TokenCounter},
    hook,
    message::{Role, ToolFailure},
    model::ModelRequest,
    tool::ToolSpec,
};
use criterion::{Criterion, criterion_group};

mod fixture;
mod shape;

use fixture::{BenchModel, City, Recorder, Weather, work};
use futures::executor::block_on;
use serde::Deserialize;

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
    agent: &Agent<BenchModel, agentix::tool::Toolbox<agentix::tool::NoTools, Weather>, P>,
) -> Transcript {
    let mut conversation = Conversation::new();
    let outcome = block_on(agent.run(&mut conversation, "What is the weather in Oslo?"));
    Transcript { answer: outcome.map_err(|error| error.to_string()), log: Log::Agent(conversation) }
}

/// A `Hook` struct doing the light work at one event, `SPREAD[E]`, and keeping the default
/// name: it defines the seven methods, and continues at the six events not its own.
struct LightStruct<const E: usize>;

#[hook]
impl<const E: usize> agentix::Hook for LightStruct<E> {
    async fn pre(&self, turn: &mut Turn) -> Verdict<Pre> {
        if E == 0 {
            work(&turn.user_message().text());
        }
        Verdict::Continue
    }

    async fn before_model(&self, request: &mut ModelRequest, _: &mut Turn) -> Verdict<BeforeModel> {
        if E == 1 {
            work(
                request
                    .messages
                    .last()
                    .map_or("", |m| m.content.first().and_then(Part::as_text).unwrap_or("")),
            );
        }
        Verdict::Continue
    }

    async fn after_model(
        &self,
        message: &mut AssistantMessage,
        _: &mut Turn,
    ) -> Verdict<AfterModel> {
        if E == 2 {
            work(&message.joined_text());
        }
        Verdict::Continue
    }

    async fn before_tool(&self, call: &mut ToolCall, _: &mut Turn) -> Verdict<BeforeTool> {
        if E == 3 {
            work(&call.name);
        }
        Verdict::Continue
    }

    async fn after_tool(&self, result: &mut ToolResult, _: &mut Turn) -> Verdict<AfterTool> {
        if E == 4 {
            work(&result.output);
        }
        Verdict::Continue
    }

    async fn before_final(
        &self,
        message: &mut AssistantMessage,
        _: &mut Turn,
    ) -> Verdict<BeforeFinal> {
        if E == 5 {
            work(&message.joined_text());
        }
        Verdict::Continue
    }

    async fn post(&self, outcome: &Outcome, _: &mut Turn) -> Verdict<Post> {
        if E == 6 {
            work(
                outcome
                    .as_ref()
                    .map_or("", |m| m.content.first().and_then(Part::as_text).unwrap_or("")),
            );
        }
        Verdict::Continue
    }
}

/// The agent with `hooks` hook structs, spread over the events as the `#[hook]` ones are. Every
/// `Hook` struct is a layer of both wrap onions: twenty of them nest twenty futures deep in each,
/// past rustc's default recursion limit for proving the turn `Send` (raised above).
fn struct_agent(model: BenchModel, hooks: usize) -> Option<RunTurn> {
    macro_rules! structs {
        ($($e:literal),*) => {{
            let agent = Agent::builder(model).tool(Weather)$(.hook(LightStruct::<$e>))*.build();
            Some(Box::new(move || one_turn(&agent)) as RunTurn)
        }};
    }
    match hooks {
        0 => structs!(),
        1 => structs!(0),
        5 => structs!(0, 1, 2, 3, 4),
        20 => structs!(0, 1, 2, 3, 4, 5, 6, 0, 1, 2, 3, 4, 5, 6, 0, 1, 2, 3, 4, 5),
        _ => None,
    }
}

macro_rules! agent_with {
    ($model:expr; $($hook:ident),*) => {
        Agent::builder($model).tool(Weather)$(.hook($hook))*.build()
    };
}

/// Where the hand-written loop calls hooks: inline in (b), through `Vec<Arc<dyn DynHook>>` in (c).
trait Sites {
    async fn pre(&self, user: &Message);
    async fn before_model(&self, request: &ModelRequest);
    async fn after_model(&self, message: &AssistantMessage);
    async fn before_tool(&self, call: &ToolCall);
    async fn after_tool(&self, result: &ToolResult);
    async fn before_final(&self, message: &AssistantMessage);
    async fn post(&self, message: &AssistantMessage);
}

/// (b): each hook's work, written inline at its event: `counts[e]` hooks at `SPREAD[e]`.
struct Inline {
    counts: [usize; 7],
}

impl Inline {
    fn new(hooks: usize) -> Self {
        let mut counts = [0; 7];
        for hook in 0..hooks {
            counts[hook % 7] += 1;
        }
        Inline { counts }
    }
}

fn last_text(request: &ModelRequest) -> &str {
    request.messages.last().map_or("", |m| m.content.first().and_then(Part::as_text).unwrap_or(""))
}

impl Sites for Inline {
    async fn pre(&self, user: &Message) {
        for _ in 0..self.counts[0] {
            work(&user.text());
        }
    }
    async fn before_model(&self, request: &ModelRequest) {
        for _ in 0..self.counts[1] {
            work(last_text(request));
        }
    }
    async fn after_model(&self, message: &AssistantMessage) {
        for _ in 0..self.counts[2] {
            work(&message.joined_text());
        }
    }
    async fn before_tool(&self, call: &ToolCall) {
        for _ in 0..self.counts[3] {
            work(&call.name);
        }
    }
    async fn after_tool(&self, result: &ToolResult) {
        for _ in 0..self.counts[4] {
            work(&result.output);
        }
    }
    async fn before_final(&self, message: &AssistantMessage) {
        for _ in 0..self.counts[5] {
            work(&message.joined_text());
        }
    }
    async fn post(&self, message: &AssistantMessage) {
        for _ in 0..self.counts[6] {
            work(&message.joined_text());
        }
    }
}

/// What the agent fixes at build, the hand-written loop fixes once too: the tool specs, and
/// the tokens they take in every request.
struct Fixed {
    tools: Arc<[ToolSpec]>,
    tool_tokens: usize,
}

impl Fixed {
    fn new() -> Self {
        let tools: Arc<[ToolSpec]> = vec![ToolSpec::of(&Weather)].into();
        let tool_tokens = tools.iter().map(|spec| CharsPerToken::default().count_tool(spec)).sum();
        Fixed { tools, tool_tokens }
    }
}

/// The agent's turn, written by hand: the same requests (kept within the same token budget),
/// the same tool dispatch, the same log and the same answer as the agent's, which
/// [`same_work`] checks before anything is timed. `sites` calls the hooks.
async fn plain_loop(
    model: &BenchModel,
    fixed: &Fixed,
    sites: &impl Sites,
) -> (Result<AssistantMessage, String>, Vec<Message>) {
    let counter = CharsPerToken::default();
    let config = Config::default();
    let budget = config.context_budget - config.injection_reserve;
    let user = Message::user("What is the weather in Oslo?");
    sites.pre(&user).await;
    let mut tokens = fixed.tool_tokens + counter.count_message(&user);
    // Room for the whole turn up front: grown from one message, the log's buffer ends the turn
    // in a size of chunk whose free sends glibc's allocator down its slow path (consolidating
    // the heap: some 1 700 instructions a turn), which a limit should not pay.
    let mut log = Vec::with_capacity(4);
    log.push(user);
    for _ in 0..config.max_steps {
        if tokens > budget {
            return (Err(format!("{tokens} tokens is over the budget of {budget}")), log);
        }
        let request = ModelRequest {
            messages: log.clone(),
            tools: fixed.tools.clone(),
            ..ModelRequest::default()
        };
        sites.before_model(&request).await;
        let message = match model.complete(&request).await {
            Ok(response) => response.message,
            Err(error) => return (Err(error.to_string()), log),
        };
        sites.after_model(&message).await;
        if message.calls_tools() {
            let mut results = Vec::new();
            for call in message.tool_calls() {
                sites.before_tool(call).await;
                let result = if call.name == Weather::NAME {
                    match City::deserialize(&call.arguments) {
                        Ok(City { city }) => ToolResult::success(call, format!("sunny in {city}")),
                        Err(error) => ToolResult::failure(
                            call,
                            ToolFailure::InvalidArguments { message: error.to_string() },
                        ),
                    }
                } else {
                    let available = vec![Weather::NAME.to_owned()];
                    ToolResult::failure(call, ToolFailure::UnknownTool { available })
                };
                sites.after_tool(&result).await;
                results.push(Part::ToolResult(result));
            }
            let step = [Message::from(message), Message { role: Role::Tool, content: results }];
            tokens += step.iter().map(|message| counter.count_message(message)).sum::<usize>();
            log.extend(step);
            continue;
        }
        sites.before_final(&message).await;
        log.push(message.clone().into());
        sites.post(&message).await;
        return (Ok(message), log);
    }
    (Err(format!("no answer within {} steps", config.max_steps)), log)
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
                work(last_text(request))
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

/// (c): every hook of the `Vec` called at every event, each call a boxed future.
struct Dynamic(Vec<Arc<dyn DynHook>>);

impl Sites for Dynamic {
    async fn pre(&self, user: &Message) {
        for hook in &self.0 {
            hook.pre(user).await;
        }
    }
    async fn before_model(&self, request: &ModelRequest) {
        for hook in &self.0 {
            hook.before_model(request).await;
        }
    }
    async fn after_model(&self, message: &AssistantMessage) {
        for hook in &self.0 {
            hook.after_model(message).await;
        }
    }
    async fn before_tool(&self, call: &ToolCall) {
        for hook in &self.0 {
            hook.before_tool(call).await;
        }
    }
    async fn after_tool(&self, result: &ToolResult) {
        for hook in &self.0 {
            hook.after_tool(result).await;
        }
    }
    async fn before_final(&self, message: &AssistantMessage) {
        for hook in &self.0 {
            hook.before_final(message).await;
        }
    }
    async fn post(&self, message: &AssistantMessage) {
        for hook in &self.0 {
            hook.post(message).await;
        }
    }
}

fn dyn_hooks(count: usize) -> Vec<Arc<dyn DynHook>> {
    (0..count).map(|i| Arc::new(Light(SPREAD[i % 7])) as Arc<dyn DynHook>).collect()
}

/// What one turn left: its answer, and the log.
struct Transcript {
    answer: Result<AssistantMessage, String>,
    log: Log,
}

enum Log {
    Agent(Conversation),
    Plain(Vec<Message>),
}

impl Transcript {
    /// The log as the messages it renders to, for comparing the agent's with the loop's.
    fn messages(&self) -> Vec<Message> {
        match &self.log {
            Log::Agent(conversation) => {
                conversation.log().iter().filter_map(Entry::to_message).collect()
            }
            Log::Plain(log) => log.clone(),
        }
    }
}

/// One turn of one variant.
type RunTurn = Box<dyn Fn() -> Transcript>;

/// Every variant at one hook count: the three compared in the ratio table, then agentix with
/// `Hook` structs in place of `#[hook]` functions (`hook_structs`).
fn all_variants(hooks: usize, recorder: Option<&Recorder>) -> Vec<(&'static str, RunTurn)> {
    let mut all: Vec<(&'static str, RunTurn)> = variants(hooks, recorder).into();
    if let Some(run) = struct_agent(BenchModel::new(recorder.cloned()), hooks) {
        all.push(("hook_structs", run));
    }
    all
}

/// The three variants at one hook count, as closures that run one turn; `recorder` keeps the
/// requests each variant's model received.
fn variants(hooks: usize, recorder: Option<&Recorder>) -> [(&'static str, RunTurn); 3] {
    let model = || BenchModel::new(recorder.cloned());
    let a: RunTurn = match hooks {
        0 => {
            let agent = agent_with!(model(););
            Box::new(move || one_turn(&agent))
        }
        1 => {
            let agent = agent_with!(model(); h00);
            Box::new(move || one_turn(&agent))
        }
        5 => {
            let agent = agent_with!(model(); h00, h01, h02, h03, h04);
            Box::new(move || one_turn(&agent))
        }
        20 => {
            let agent = agent_with!(model();
                h00, h01, h02, h03, h04, h05, h06, h07, h08, h09, h10, h11, h12, h13, h14, h15, h16, h17, h18, h19);
            Box::new(move || one_turn(&agent))
        }
        other => panic!("the bench has agents with 0, 1, 5 and 20 hooks, not {other}"),
    };
    let b = plain(model(), Inline::new(hooks));
    let c = plain(model(), Dynamic(dyn_hooks(hooks)));
    [("agentix", a), ("hand_written", b), ("dynamic", c)]
}

/// (b) or (c): the hand-written loop, calling hooks through `sites`.
fn plain(model: BenchModel, sites: impl Sites + 'static) -> RunTurn {
    let fixed = Fixed::new();
    Box::new(move || {
        let (answer, log) = block_on(plain_loop(&model, &fixed, &sites));
        Transcript { answer, log: Log::Plain(log) }
    })
}

/// The three variants do the same work: the same requests reach the model, and the turn ends
/// with the same answer and the same log. Checked before anything is timed (and by
/// `cargo test --benches`), so the comparison stays honest as the agent changes.
fn same_work() {
    for hooks in HOOK_COUNTS {
        let recorder = Recorder::default();
        let mut seen = Vec::new();
        for (name, run) in all_variants(hooks, Some(&recorder)) {
            let transcript = run();
            let requests = std::mem::take(&mut *recorder.lock().unwrap());
            seen.push((name, transcript.answer.clone(), transcript.messages(), requests));
        }
        let (_, answer, log, requests) = &seen[0];
        assert!(answer.is_ok(), "the agent's turn failed: {answer:?}");
        assert_eq!(log.len(), 4, "user, tool call, tool result, answer");
        for (name, other_answer, other_log, other_requests) in &seen[1..] {
            assert_eq!(
                other_answer, answer,
                "{name} answered otherwise than agentix ({hooks} hooks)"
            );
            assert_eq!(other_log, log, "{name} logged otherwise than agentix ({hooks} hooks)");
            assert_eq!(
                other_requests, requests,
                "{name} asked the model otherwise ({hooks} hooks)"
            );
        }
    }
}

const HOOK_COUNTS: [usize; 4] = [0, 1, 5, 20];

fn turns(c: &mut Criterion) {
    for hooks in HOOK_COUNTS {
        let mut group = c.benchmark_group(format!("turn/{hooks}_hooks"));
        for (name, run) in all_variants(hooks, None) {
            group.bench_function(name, |bencher| bencher.iter(|| drop(black_box(run()))));
        }
        group.finish();
    }
}

/// Rounds of the interleaved measurement, and turns per batch.
const ROUNDS: usize = 1001;
const BATCH: usize = 50;

/// Prints the ratios the issue asks for. The machine's speed drifts (on a shared VM, by up to
/// 2× within seconds), so the variants are interleaved batch by batch: each round times one
/// batch of each, in a rotating order, and each variant's figure is the median over the
/// rounds — the three see the same spread of the machine's states.
fn ratios() {
    println!(
        "\nhooks  agentix (a)  by hand (b)  dynamic (c)   a/b     c/a    (a-b)   (c-b)   (c-b)/(a-b)"
    );
    for hooks in HOOK_COUNTS {
        let runs = variants(hooks, None);
        let mut times: [Vec<f64>; 3] = Default::default();
        for round in 0..ROUNDS {
            for offset in 0..3 {
                let variant = (round + offset) % 3;
                let run = &runs[variant].1;
                let started = Instant::now();
                for _ in 0..BATCH {
                    drop(black_box(run()));
                }
                times[variant].push(started.elapsed().as_secs_f64() * 1e9 / BATCH as f64);
            }
        }
        let [a, b, c] = times.map(|mut times| {
            times.sort_unstable_by(f64::total_cmp);
            times[times.len() / 2]
        });
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

/// The shape users write (`shape.rs`): each variant at 0, 1, 5 and 20 bundles.
fn shapes(c: &mut Criterion) {
    for bundles in [0].into_iter().chain(shape::BUNDLES) {
        let mut group = c.benchmark_group(format!("shape/{bundles}_bundles"));
        for (name, run) in shape::variants(bundles) {
            group.bench_function(name, |bencher| bencher.iter(|| drop(black_box(run()))));
        }
        group.finish();
    }
}

criterion_group!(benches, turns, shapes);

fn main() {
    // `AGENTIX_TURNS=variant:hooks:turns` runs just that many turns of one variant, for an
    // instruction count under `valgrind --tool=callgrind`.
    if let Ok(spec) = std::env::var("AGENTIX_TURNS") {
        let [variant, hooks, turns] = spec.split(':').collect::<Vec<_>>()[..] else {
            panic!("AGENTIX_TURNS is variant:hooks:turns, e.g. agentix:5:1000");
        };
        let hooks: usize = hooks.parse().expect("a hook count");
        let turns: usize = turns.parse().expect("a turn count");
        // The shape's variants (`shape_lean`, `shape_fns`, …) take a bundle count.
        let run = match variant.strip_prefix("shape_") {
            Some(variant) => shape::variant(variant, hooks),
            None => all_variants(hooks, None)
                .into_iter()
                .find(|(name, _)| *name == variant)
                .map(|(_, run)| run),
        };
        let run = run
            .expect("agentix, hand_written, dynamic, hook_structs or shape_lean, shape_lean_direct, shape_fns, shape_structs");
        for _ in 0..turns {
            drop(black_box(run()));
        }
        return;
    }
    same_work();
    shape::same_work();
    benches();
    criterion::Criterion::default().configure_from_args().final_summary();
    // The table is for `cargo bench` (under `cargo test --benches` criterion runs each
    // benchmark once), and profiling one benchmark (`--profile-time`) profiles only that one.
    let args: Vec<String> = std::env::args().collect();
    if args.iter().any(|arg| arg == "--bench") && !args.iter().any(|arg| arg == "--profile-time") {
        ratios();
    }
}
