//! The shape users write, as measured from outside: bundles of six parameterless `#[hook]`
//! functions that never await — `pre`, `before_model`, `after_model`, `before_tool`,
//! `after_tool`, `post` — each bumping a static counter, or the same six events as one `Hook`
//! struct per bundle; against a lean hand-written loop on agentix's types (request → model →
//! tool → log, nothing more), bare or calling the same functions directly at the same places.
//!
//! A turn of the bench model is two steps and one tool call: each bundle's hooks run eight
//! times a turn (`before_model` and `after_model` twice).

use std::hint::black_box;
use std::sync::atomic::{AtomicU64, Ordering};

use agentix::event::{AfterModel, AfterTool, BeforeModel, BeforeTool, Post, Pre};
use agentix::{
    Agent, AssistantMessage, Conversation, Message, Model, Outcome, Part, Tool, ToolCall,
    ToolResult, Turn, Verdict, hook,
    message::{Role, ToolFailure},
    model::ModelRequest,
    tool::ToolSpec,
};
use futures::executor::block_on;
use serde::Deserialize;

use super::fixture::{BenchModel, City, Weather};
use super::{Log, RunTurn, Transcript};

/// What every hook of the shape does: one increment of a static counter.
pub(crate) static TICKS: AtomicU64 = AtomicU64::new(0);

#[inline(always)]
fn tick() {
    TICKS.fetch_add(1, Ordering::Relaxed);
}

/// The invocations of one bundle's hooks in a turn.
pub(crate) const INVOCATIONS_PER_BUNDLE: u64 = 8;

macro_rules! bundles {
    ($($bundle:ident)*) => {$(
        /// One bundle: a parameterless `#[hook]` function on each of six events.
        #[allow(non_camel_case_types)]
        pub(crate) mod $bundle {
            use agentix::hook;

            #[hook(pre)]
            pub(crate) async fn pre() {
                super::tick();
            }
            #[hook(before_model)]
            pub(crate) async fn before_model() {
                super::tick();
            }
            #[hook(after_model)]
            pub(crate) async fn after_model() {
                super::tick();
            }
            #[hook(before_tool)]
            pub(crate) async fn before_tool() {
                super::tick();
            }
            #[hook(after_tool)]
            pub(crate) async fn after_tool() {
                super::tick();
            }
            #[hook(post)]
            pub(crate) async fn post() {
                super::tick();
            }
        }
    )*};
}

bundles!(b00 b01 b02 b03 b04 b05 b06 b07 b08 b09 b10 b11 b12 b13 b14 b15 b16 b17 b18 b19);

/// The six hooks of one bundle as one `Hook` struct.
pub(crate) struct Bundle<const K: usize>;

#[hook]
impl<const K: usize> agentix::Hook for Bundle<K> {
    async fn pre(&self, _: &mut Turn) -> Verdict<Pre> {
        tick();
        Verdict::Continue
    }

    async fn before_model(&self, _: &mut ModelRequest, _: &mut Turn) -> Verdict<BeforeModel> {
        tick();
        Verdict::Continue
    }

    async fn after_model(&self, _: &mut AssistantMessage, _: &mut Turn) -> Verdict<AfterModel> {
        tick();
        Verdict::Continue
    }

    async fn before_tool(&self, _: &mut ToolCall, _: &mut Turn) -> Verdict<BeforeTool> {
        tick();
        Verdict::Continue
    }

    async fn after_tool(&self, _: &mut ToolResult, _: &mut Turn) -> Verdict<AfterTool> {
        tick();
        Verdict::Continue
    }

    async fn post(&self, _: &Outcome, _: &mut Turn) -> Verdict<Post> {
        tick();
        Verdict::Continue
    }
}

/// One turn of an agent.
fn one_turn<A: agentix::AnyAgent>(agent: &A) -> Transcript {
    turn_within(agent, agentix::Config::default())
}

/// One turn of an agent, on a conversation of `config`.
fn turn_within<A: agentix::AnyAgent>(agent: &A, config: agentix::Config) -> Transcript {
    let mut conversation = Conversation::with_config(config);
    let outcome = block_on(agent.run(&mut conversation, "What is the weather in Oslo?"));
    let answer = outcome.map_err(|error| error.to_string());
    Transcript { answer, log: Log::Agent(conversation) }
}

/// The agent with each bundle's six functions.
macro_rules! fn_agent {
    ($($bundle:ident),*) => {{
        let agent = Agent::builder(BenchModel::new(None)).tool(Weather)
            $(.hook($bundle::pre).hook($bundle::before_model).hook($bundle::after_model)
              .hook($bundle::before_tool).hook($bundle::after_tool).hook($bundle::post))*
            .build();
        Box::new(move || one_turn(&agent)) as RunTurn
    }};
}

/// The agent with one `Hook` struct per bundle.
macro_rules! struct_agent {
    ($($k:literal),*) => {{
        let agent = Agent::builder(BenchModel::new(None)).tool(Weather)$(.hook(Bundle::<$k>))*.build();
        Box::new(move || one_turn(&agent)) as RunTurn
    }};
}

/// Where the lean loop calls hooks: nowhere, or each bundle's functions directly.
trait LeanSites {
    fn pre(&self);
    fn before_model(&self);
    fn after_model(&self);
    fn before_tool(&self);
    fn after_tool(&self);
    fn post(&self);
}

impl LeanSites for () {
    fn pre(&self) {}
    fn before_model(&self) {}
    fn after_model(&self) {}
    fn before_tool(&self) {}
    fn after_tool(&self) {}
    fn post(&self) {}
}

/// The lean loop's sites for the first `N` bundles: each calls the same functions the agent's
/// hooks are, in place, one after another.
macro_rules! direct_sites {
    ($name:ident: $($bundle:ident),*) => {
        struct $name;

        impl LeanSites for $name {
            fn pre(&self) { $($bundle::pre::call_in_place();)* }
            fn before_model(&self) { $($bundle::before_model::call_in_place();)* }
            fn after_model(&self) { $($bundle::after_model::call_in_place();)* }
            fn before_tool(&self) { $($bundle::before_tool::call_in_place();)* }
            fn after_tool(&self) { $($bundle::after_tool::call_in_place();)* }
            fn post(&self) { $($bundle::post::call_in_place();)* }
        }
    };
}

direct_sites!(Direct1: b00);
direct_sites!(Direct5: b00, b01, b02, b03, b04);
direct_sites!(Direct20: b00, b01, b02, b03, b04, b05, b06, b07, b08, b09, b10, b11, b12, b13, b14, b15, b16, b17, b18, b19);

/// The lean hand-written loop: the user's message, then per step a request of the log so far
/// and the tool's spec, the model's answer, the tool it asks for, and the log — nothing more
/// (no token budget, no record of the turn but the messages).
async fn lean_loop(
    model: &BenchModel,
    tools: &std::sync::Arc<[ToolSpec]>,
    sites: &impl LeanSites,
) -> (Result<AssistantMessage, String>, Vec<Message>) {
    let mut log = Vec::with_capacity(4);
    log.push(Message::user("What is the weather in Oslo?"));
    sites.pre();
    loop {
        let request =
            ModelRequest { messages: log.clone(), tools: tools.clone(), ..ModelRequest::default() };
        sites.before_model();
        let message = match model.complete(&request).await {
            Ok(response) => response.message,
            Err(error) => return (Err(error.to_string()), log),
        };
        sites.after_model();
        if !message.calls_tools() {
            log.push(message.clone().into());
            sites.post();
            return (Ok(message), log);
        }
        let mut results = Vec::with_capacity(1);
        for call in message.tool_calls() {
            sites.before_tool();
            let result = match City::deserialize(&call.arguments) {
                Ok(City { city }) if call.name == Weather::NAME => {
                    ToolResult::success(call, format!("sunny in {city}"))
                }
                Ok(_) => ToolResult::failure(
                    call,
                    ToolFailure::UnknownTool { available: vec![Weather::NAME.to_owned()] },
                ),
                Err(error) => ToolResult::failure(
                    call,
                    ToolFailure::InvalidArguments { message: error.to_string() },
                ),
            };
            sites.after_tool();
            results.push(Part::ToolResult(result));
        }
        log.push(Message::from(message));
        log.push(Message { role: Role::Tool, content: results });
    }
}

fn lean(sites: impl LeanSites + 'static) -> RunTurn {
    let model = BenchModel::new(None);
    let tools: std::sync::Arc<[ToolSpec]> = vec![ToolSpec::of(&Weather)].into();
    Box::new(move || {
        let (answer, log) = block_on(lean_loop(&model, &tools, &sites));
        Transcript { answer, log: Log::Plain(black_box(log)) }
    })
}

/// The bundle counts the shape is measured at.
pub(crate) const BUNDLES: [usize; 3] = [1, 5, 20];

/// The shape's variants at `bundles` bundles (0: the bare ones): `lean`, `lean_direct` (the lean
/// loop calling the bundles' functions), `fns` (the agent with the bundles' functions) and
/// `structs` (the agent with one `Hook` struct per bundle); and the bare agent on a conversation
/// with no context budget (`unbounded`).
pub(crate) const VARIANTS: [&str; 5] = ["lean", "lean_direct", "fns", "structs", "unbounded"];

/// One variant at `bundles` bundles, built alone (an instruction count under valgrind sees the
/// heap as this variant leaves it, not as every variant's building would); `None` where the
/// shape has none (`lean_direct` of no bundle is `lean`, `lean` of some is `lean_direct`).
pub(crate) fn variant(name: &str, bundles: usize) -> Option<RunTurn> {
    Some(match (name, bundles) {
        ("lean", 0) => lean(()),
        ("lean_direct", 1) => lean(Direct1),
        ("lean_direct", 5) => lean(Direct5),
        ("lean_direct", 20) => lean(Direct20),
        ("fns", 0) => fn_agent!(),
        // The bare agent on a conversation with no budget: what the lean loop does, no more.
        ("unbounded", 0) => {
            let agent = Agent::builder(BenchModel::new(None)).tool(Weather).build();
            let unbounded = agentix::Config {
                context_budget: agentix::Config::UNBOUNDED,
                ..Default::default()
            };
            Box::new(move || turn_within(&agent, unbounded.clone())) as RunTurn
        }
        ("fns", 1) => fn_agent!(b00),
        ("fns", 5) => fn_agent!(b00, b01, b02, b03, b04),
        ("fns", 20) => fn_agent!(
            b00, b01, b02, b03, b04, b05, b06, b07, b08, b09, b10, b11, b12, b13, b14, b15, b16,
            b17, b18, b19
        ),
        ("structs", 0) => struct_agent!(),
        ("structs", 1) => struct_agent!(0),
        ("structs", 5) => struct_agent!(0, 1, 2, 3, 4),
        ("structs", 20) => {
            struct_agent!(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19)
        }
        _ => return None,
    })
}

/// Every variant the shape has at `bundles` bundles.
pub(crate) fn variants(bundles: usize) -> Vec<(&'static str, RunTurn)> {
    VARIANTS.iter().filter_map(|name| Some((*name, variant(name, bundles)?))).collect()
}

/// Each variant does the same work: the same answer and log as the bare agent's, and — hooks
/// or not — the same number of ticks a turn: none bare, eight a bundle.
pub(crate) fn same_work() {
    for bundles in [0].into_iter().chain(BUNDLES) {
        let reference = variant("fns", 0).expect("the bare agent")();
        for (name, run) in variants(bundles) {
            let before = TICKS.load(Ordering::Relaxed);
            let transcript = run();
            let ticks = TICKS.load(Ordering::Relaxed) - before;
            assert_eq!(ticks, INVOCATIONS_PER_BUNDLE * bundles as u64, "{name} at {bundles}");
            assert_eq!(transcript.answer, reference.answer, "{name} at {bundles}");
            assert_eq!(transcript.messages(), reference.messages(), "{name} at {bundles}");
        }
    }
}
