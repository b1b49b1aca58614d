//! Hook dispatch allocates nothing, and hooks that continue change nothing: the same turn
//! allocates the same count, and produces the same log and requests, with 0 and with 5 no-op
//! hooks — but for the one copy of each tool result that `wrap_tool` hooks cost by design,
//! counted exactly.
//!
//! A counting global allocator counts this thread's allocations; the turn runs on this thread
//! with `futures::executor::block_on`.
//!
//! Twenty `Hook` impls that override both wraps nest twenty coroutines deep in both onions,
//! past the depth rustc lays out a future at by default (ten such layers fit): the crate that
//! builds such an agent raises the limit, as the compiler's error says to.
#![recursion_limit = "256"]

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::future::IntoFuture;

use agentix::event::{
    self, AfterModel, AfterTool, BeforeFinal, BeforeModel, BeforeTool, Post, Pre, ToolError,
};
use agentix::session::{Plan, PlanReport, QueuedTask, Session, SessionState, TaskReport};
use agentix::{
    Agent, AssistantMessage, Config, Conversation, Entry, Hook, Message, Outcome, ScriptedModel,
    ToolCall, ToolResult, Turn, Verdict,
    conversation::TurnRef,
    model::{ModelError, ModelRequest, ModelResponse, NextModel},
    scope::Scope,
    tool::NextTool,
};
use serde_json::json;
use tests::Weather;

struct Counting;

thread_local! {
    static ALLOCATIONS: Cell<u64> = const { Cell::new(0) };
}

// SAFETY: forwards every call to the system allocator unchanged; only counts.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let _ = ALLOCATIONS.try_with(|count| count.set(count.get() + 1));
        // SAFETY: same contract as the caller's.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: same contract as the caller's.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let _ = ALLOCATIONS.try_with(|count| count.set(count.get() + 1));
        // SAFETY: same contract as the caller's.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn allocations() -> u64 {
    ALLOCATIONS.with(Cell::get)
}

/// A hook on every event that continues, with a real (non-default) future at each.
struct Noop;

#[agentix::hook]
impl Hook for Noop {
    async fn pre(&self, _: &mut Turn) -> Verdict<Pre> {
        Verdict::Continue
    }
    async fn before_model(&self, _: &mut ModelRequest, _: &mut Turn) -> Verdict<BeforeModel> {
        Verdict::Continue
    }
    async fn wrap_model(
        &self,
        request: &ModelRequest,
        _: &Turn,
        next: &impl NextModel,
    ) -> Result<ModelResponse, ModelError> {
        next.call(request).await
    }
    async fn after_model(&self, _: &mut AssistantMessage, _: &mut Turn) -> Verdict<AfterModel> {
        Verdict::Continue
    }
    async fn before_tool(&self, _: &mut ToolCall, _: &mut Turn) -> Verdict<BeforeTool> {
        Verdict::Continue
    }
    async fn wrap_tool(&self, call: &ToolCall, _: &Turn, next: &impl NextTool) -> ToolResult {
        next.call(call).await
    }
    async fn after_tool(&self, _: &mut ToolResult, _: &mut Turn) -> Verdict<AfterTool> {
        Verdict::Continue
    }
    async fn tool_error(&self, _: &mut ToolResult, _: &mut Turn) -> Verdict<ToolError> {
        Verdict::Continue
    }
    async fn before_final(&self, _: &mut AssistantMessage, _: &mut Turn) -> Verdict<BeforeFinal> {
        Verdict::Continue
    }
    async fn post(&self, _: &Outcome, _: &mut Turn) -> Verdict<Post> {
        Verdict::Continue
    }
}

/// One single-event hook per event (and a parallel `pre` one), each continuing.
struct OnPre;

impl agentix::on::Pre for OnPre {
    async fn pre(&self, _: &mut Turn) -> Verdict<Pre> {
        Verdict::Continue
    }
}
struct OnParallelPre;

impl agentix::on::ParallelPre for OnParallelPre {
    async fn pre(&self, _: &Turn) -> Vec<agentix::Part> {
        Vec::new()
    }
}

macro_rules! single_noop {
    ($($name:ident: $trait:ident, $method:ident($value:ty) -> $event:ty;)*) => {$(
        struct $name;
        impl agentix::on::$trait for $name {
            async fn $method(&self, _: $value, _: &mut Turn) -> Verdict<$event> {
                Verdict::Continue
            }
        }
    )*};
}

single_noop! {
    OnBeforeModel: BeforeModel, before_model(&mut ModelRequest) -> BeforeModel;
    OnAfterModel: AfterModel, after_model(&mut AssistantMessage) -> AfterModel;
    OnBeforeTool: BeforeTool, before_tool(&mut ToolCall) -> BeforeTool;
    OnAfterTool: AfterTool, after_tool(&mut ToolResult) -> AfterTool;
    OnToolError: ToolError, tool_error(&mut ToolResult) -> ToolError;
    OnBeforeFinal: BeforeFinal, before_final(&mut AssistantMessage) -> BeforeFinal;
    OnPost: Post, post(&Outcome) -> Post;
}

struct OnWrapModel;
impl agentix::on::WrapModel for OnWrapModel {
    async fn wrap_model(
        &self,
        request: &ModelRequest,
        _: &Turn,
        next: &impl NextModel,
    ) -> Result<ModelResponse, ModelError> {
        next.call(request).await
    }
}

struct OnWrapTool;
impl agentix::on::WrapTool for OnWrapTool {
    async fn wrap_tool(&self, call: &ToolCall, _: &Turn, next: &impl NextTool) -> ToolResult {
        next.call(call).await
    }
}

/// A hook that relies on every default method.
struct Defaults;

#[agentix::hook]
impl Hook for Defaults {}

fn model() -> ScriptedModel {
    ScriptedModel::new()
        .tool_calls([("get_weather", json!({ "city": "Oslo" })), ("no_such_tool", json!({}))])
        .text("done")
}

/// Runs one turn of a fresh agent on a fresh conversation; returns the turn's allocations, the
/// log and the requests the model saw.
fn measure<M, T, P, A>(
    agent: &Agent<M, T, P, A>,
    model: &ScriptedModel,
) -> (u64, Conversation, Vec<ModelRequest>)
where
    M: agentix::Model,
    T: agentix::ToolSet,
    P: agentix::pipeline::Pipeline,
    A: agentix::approval::Approver,
{
    let mut conversation = Conversation::new();
    let before = allocations();
    let reply = futures::executor::block_on(agent.run(&mut conversation, "weather?"));
    let counted = allocations() - before;
    assert_eq!(reply.unwrap().joined_text(), "done");
    (counted, conversation, model.requests())
}

/// What a `wrap_tool` hook costs beyond dispatch, by design: a copy of each tool result's output
/// and failure while the hooks hold it, so that a hook that panics or times out after `next`
/// returned cannot lose what the tool did (the README's failure policy). Counted by making the
/// same copies of the results in `log`.
fn kept_results(log: &[Entry]) -> i64 {
    let before = allocations();
    for entry in log {
        if let Entry::ToolResults { results, .. } = entry {
            for result in results {
                std::hint::black_box((result.output.clone(), result.error.clone()));
            }
        }
    }
    (allocations() - before) as i64
}

/// Runs the same turn on an agent without hooks and on `hooked` (built over `hooked_model`);
/// returns how many more allocations the hooked turn made than the bare one and than keeping
/// its tool results costs when it has `wrap_tool` hooks ([`kept_results`]), after checking both
/// turns left the same log and sent the same requests.
fn extra_allocations<M, T, P, A>(hooked: &Agent<M, T, P, A>, hooked_model: &ScriptedModel) -> i64
where
    M: agentix::Model,
    T: agentix::ToolSet,
    P: agentix::pipeline::Pipeline,
    A: agentix::approval::Approver,
{
    let bare_model = model();
    let bare = Agent::builder(&bare_model).tool(Weather::default()).build();
    // Warm up lazily initialised state (thread-locals, schema caches) outside the measurement.
    let _ = measure(&Agent::builder(model()).tool(Weather::default()).build(), &model());

    let (bare_count, bare_log, bare_requests) = measure(&bare, &bare_model);
    let (hooked_count, hooked_log, hooked_requests) = measure(hooked, hooked_model);
    assert!(bare_count > 0, "the counter counts");
    assert_eq!(hooked_log.log(), bare_log.log(), "hooks that continue changed the log");
    assert_eq!(hooked_requests, bare_requests, "hooks that continue changed what the model saw");
    let wraps_tools = std::mem::size_of::<P::Kept>() > 0;
    let kept = if wraps_tools { kept_results(bare_log.log()) } else { 0 };
    assert!(!wraps_tools || kept > 0, "the turn's tool results were counted");
    hooked_count as i64 - bare_count as i64 - kept
}

#[test]
fn hook_dispatch_allocates_nothing_and_changes_nothing() {
    let hooked_model = model();
    let hooked = Agent::builder(&hooked_model)
        .tool(Weather::default())
        .hook(Noop)
        .hook(Defaults)
        .hook(Noop)
        .hook(Defaults)
        .hook(Noop)
        .build();
    assert_eq!(
        extra_allocations(&hooked, &hooked_model),
        0,
        "5 no-op hooks on every event allocated"
    );
}

#[test]
fn single_event_hooks_on_every_event_allocate_nothing() {
    let hooked_model = model();
    let hooked = Agent::builder(&hooked_model)
        .tool(Weather::default())
        .hook(OnPre)
        .hook(OnParallelPre)
        .hook(OnBeforeModel)
        .hook(OnWrapModel)
        .hook(OnAfterModel)
        .hook(OnBeforeTool)
        .hook(OnWrapTool)
        .hook(OnAfterTool)
        .hook(OnToolError)
        .hook(OnBeforeFinal)
        .hook(OnPost)
        .build();
    assert_eq!(extra_allocations(&hooked, &hooked_model), 0);
}

/// Allocates one box per `after_model` call: the control that shows the count sees hooks.
struct Allocating;

#[agentix::hook]
impl Hook for Allocating {
    async fn after_model(
        &self,
        message: &mut AssistantMessage,
        _: &mut Turn,
    ) -> Verdict<AfterModel> {
        let boxed = std::hint::black_box(Box::new(message.content.len()));
        drop(boxed);
        Verdict::Continue
    }
}

#[test]
fn the_count_sees_a_hook_that_allocates() {
    let hooked_model = model();
    let hooked = Agent::builder(&hooked_model).tool(Weather::default()).hook(Allocating).build();
    assert_eq!(
        extra_allocations(&hooked, &hooked_model),
        2,
        "one box per model response, two responses"
    );
}

/// `#[hook]` functions on every event, each continuing.
mod hook_functions {
    use agentix::{
        AssistantMessage, Outcome, Part, ToolCall, ToolResult, Turn, hook,
        model::{ModelError, ModelRequest, ModelResponse, NextModel},
        tool::NextTool,
    };

    #[hook(pre)]
    pub async fn pre(_turn: &mut Turn) {}
    #[hook(pre, parallel)]
    pub async fn parallel(_turn: &Turn) -> Vec<Part> {
        Vec::new()
    }
    #[hook(before_model)]
    pub async fn before_model(_request: &mut ModelRequest) {}
    #[hook(wrap_model)]
    pub async fn wrap_model(
        request: &ModelRequest,
        next: &impl NextModel,
    ) -> Result<ModelResponse, ModelError> {
        next.call(request).await
    }
    #[hook(after_model)]
    pub async fn after_model(_message: &AssistantMessage) {}
    #[hook(before_tool)]
    pub async fn before_tool(_call: &ToolCall) {}
    #[hook(wrap_tool)]
    pub async fn wrap_tool(call: &ToolCall, next: &impl NextTool) -> ToolResult {
        next.call(call).await
    }
    #[hook(after_tool)]
    pub async fn after_tool(_result: &ToolResult) {}
    #[hook(tool_error)]
    pub async fn tool_error(_result: &ToolResult) {}
    #[hook(before_final)]
    pub async fn before_final(_message: &AssistantMessage) {}
    #[hook(post)]
    pub async fn post(_outcome: &Outcome) {}
}

#[test]
fn hook_functions_on_every_event_allocate_nothing() {
    use hook_functions::*;
    let hooked_model = model();
    let hooked = Agent::builder(&hooked_model)
        .tool(Weather::default())
        .hook(pre)
        .hook(parallel)
        .hook(before_model)
        .hook(wrap_model)
        .hook(after_model)
        .hook(before_tool)
        .hook(wrap_tool)
        .hook(after_tool)
        .hook(tool_error)
        .hook(before_final)
        .hook(post)
        .build();
    assert_eq!(extra_allocations(&hooked, &hooked_model), 0);
}

#[test]
fn twenty_hooks_on_every_event_allocate_nothing() {
    // Twenty is past the 16 a pipeline chunk holds: the nesting allocates nothing either.
    let hooked_model = model();
    let hooked = Agent::builder(&hooked_model)
        .tool(Weather::default())
        .hook(Noop)
        .hook(Noop)
        .hook(Noop)
        .hook(Noop)
        .hook(Noop)
        .hook(Noop)
        .hook(Noop)
        .hook(Noop)
        .hook(Noop)
        .hook(Noop)
        .hook(Noop)
        .hook(Noop)
        .hook(Noop)
        .hook(Noop)
        .hook(Noop)
        .hook(Noop)
        .hook(Noop)
        .hook(Noop)
        .hook(Noop)
        .hook(Noop)
        .build();
    assert_eq!(
        extra_allocations(&hooked, &hooked_model),
        0,
        "20 hooks, each on all ten events, allocated"
    );
}

/// A struct on every event but the wraps, each method continuing without awaiting: `#[hook]`
/// on its impl makes it no layer of either onion, so no tool result is kept for it.
struct EveryStep;

#[agentix::hook]
impl Hook for EveryStep {
    async fn pre(&self, _: &mut Turn) -> Verdict<Pre> {
        Verdict::Continue
    }
    async fn before_model(&self, _: &mut ModelRequest, _: &mut Turn) -> Verdict<BeforeModel> {
        Verdict::Continue
    }
    async fn after_model(&self, _: &mut AssistantMessage, _: &mut Turn) -> Verdict<AfterModel> {
        Verdict::Continue
    }
    async fn before_tool(&self, _: &mut ToolCall, _: &mut Turn) -> Verdict<BeforeTool> {
        Verdict::Continue
    }
    async fn after_tool(&self, _: &mut ToolResult, _: &mut Turn) -> Verdict<AfterTool> {
        Verdict::Continue
    }
    async fn tool_error(&self, _: &mut ToolResult, _: &mut Turn) -> Verdict<ToolError> {
        Verdict::Continue
    }
    async fn before_final(&self, _: &mut AssistantMessage, _: &mut Turn) -> Verdict<BeforeFinal> {
        Verdict::Continue
    }
    async fn post(&self, _: &Outcome, _: &mut Turn) -> Verdict<Post> {
        Verdict::Continue
    }
}

#[test]
fn twenty_hook_structs_without_wraps_allocate_nothing_not_even_a_kept_result() {
    let hooked_model = model();
    macro_rules! twenty {
        ($builder:expr) => {
            $builder
                .hook(EveryStep)
                .hook(EveryStep)
                .hook(EveryStep)
                .hook(EveryStep)
                .hook(EveryStep)
                .hook(EveryStep)
                .hook(EveryStep)
                .hook(EveryStep)
                .hook(EveryStep)
                .hook(EveryStep)
                .hook(EveryStep)
                .hook(EveryStep)
                .hook(EveryStep)
                .hook(EveryStep)
                .hook(EveryStep)
                .hook(EveryStep)
                .hook(EveryStep)
                .hook(EveryStep)
                .hook(EveryStep)
                .hook(EveryStep)
        };
    }
    let hooked = twenty!(Agent::builder(&hooked_model).tool(Weather::default())).build();
    let bare_model = model();
    let bare = Agent::builder(&bare_model).tool(Weather::default()).build();
    let _ = measure(&Agent::builder(model()).tool(Weather::default()).build(), &model());
    // Counted as they are: no kept tool result is subtracted, as none may be made.
    let (bare_count, bare_log, _) = measure(&bare, &bare_model);
    let (hooked_count, hooked_log, _) = measure(&hooked, &hooked_model);
    assert_eq!(hooked_log.log(), bare_log.log(), "hooks that continue changed the log");
    assert_eq!(hooked_count, bare_count, "20 structs on 8 events allocated");
}

/// A tool beside `get_weather`, with a per-tool hook on each event that has them: the turn's
/// calls are all of other tools.
mod per_tool {
    use agentix::{hook, tool};

    /// Sends an email.
    #[tool]
    pub async fn send_email(
        /// To whom.
        to: String,
    ) -> String {
        format!("sent to {to}")
    }

    /// Keeps email inside the company.
    #[hook(before_tool, tool = send_email)]
    pub async fn internal_only(args: &mut SendEmailArgs) {
        args.to = "me@example.com".to_owned();
    }

    /// Shortens the receipt.
    #[hook(after_tool, tool = send_email)]
    pub async fn short_receipt(receipt: &mut String) {
        receipt.truncate(4);
    }

    /// Never seen: `send_email` cannot fail.
    #[hook(tool_error, tool = send_email)]
    pub async fn never(error: &mut std::convert::Infallible) {
        let _ = error;
    }
}

#[test]
fn per_tool_hooks_cost_other_tools_calls_no_allocation() {
    let run = |hooked: bool| {
        let model = model();
        let with_tools = Agent::builder(&model).tool(Weather::default()).tool(per_tool::send_email);
        let (count, log, requests) = if hooked {
            let agent = with_tools
                .hook(per_tool::internal_only)
                .hook(per_tool::short_receipt)
                .hook(per_tool::never)
                .build();
            measure(&agent, &model)
        } else {
            measure(&with_tools.build(), &model)
        };
        (count, log.log().to_vec(), requests)
    };
    let _ = run(false);
    let (bare, bare_log, bare_requests) = run(false);
    let (hooked, hooked_log, hooked_requests) = run(true);
    assert_eq!((hooked_log, hooked_requests), (bare_log, bare_requests));
    assert_eq!(hooked, bare, "hooks on send_email made get_weather's and an unknown call allocate");
}

/// A conversation of `turns` prior turns, each a question and an answer of fixed lengths, with
/// room in its log for the turns to come: the log's own growth is the caller's, not the turn's.
fn long_conversation(turns: u64, config: &Config) -> Conversation {
    let mut log = Vec::with_capacity(2 * turns as usize + 64);
    for n in 1..=turns {
        let turn = TurnRef(n);
        log.push(Entry::User {
            turn,
            message: Message::user("What is the weather in Oslo?"),
            task: None,
        });
        let message = AssistantMessage::text("Sunny in Oslo today, rain from tomorrow on.");
        log.push(Entry::Assistant { turn, message });
    }
    Conversation::from_parts(config.clone(), log, turns, Scope::default()).unwrap()
}

/// A turn's allocations do not grow with the log: at 10 and at 10,000 prior turns, a turn
/// allocates the same. The budget keeps about five turns, so both requests carry the same
/// window. (The ledger's vectors grow by doubling, as the log's do: at these lengths the
/// turn measured doubles none of them, at either size.)
#[test]
fn a_turns_allocations_do_not_grow_with_the_log() {
    let config = Config { context_budget: 250, injection_reserve: 100, ..Config::default() };
    let measured = [10, 10_000].map(|turns| {
        let model = ScriptedModel::new().text("first").text("second");
        let agent = Agent::builder(&model).build();
        let mut conversation = long_conversation(turns, &config);
        // The first turn after loading counts the log, once.
        futures::executor::block_on(agent.run(&mut conversation, "And tomorrow?")).unwrap();
        let before = allocations();
        let reply = futures::executor::block_on(agent.run(&mut conversation, "And tomorrow?"));
        let counted = allocations() - before;
        assert_eq!(reply.unwrap().joined_text(), "second");
        let sent = model.requests().last().unwrap().messages.len();
        (counted, sent)
    });
    assert_eq!(measured[0].1, measured[1].1, "the same window: {measured:?}");
    assert!(measured[0].1 < 20, "compaction kept a window, not the log: {measured:?}");
    assert_eq!(measured[0].0, measured[1].0, "allocations at 10 and 10,000 prior turns");
}

/// A hook on every session event that continues, with a real future at each.
struct SessionNoop;

impl agentix::session::SessionHook for SessionNoop {
    async fn session_start(&self, _: &SessionState) -> Verdict<event::SessionStart> {
        Verdict::Continue
    }
    async fn task_start(&self, _: &mut QueuedTask, _: &SessionState) -> Verdict<event::TaskStart> {
        Verdict::Continue
    }
    async fn step_start(&self, _: &mut Turn, _: &SessionState) -> Verdict<event::StepStart> {
        Verdict::Continue
    }
    async fn plan_submit(&self, _: &mut Plan, _: &SessionState) -> Verdict<event::PlanSubmit> {
        Verdict::Continue
    }
    async fn task_complete(
        &self,
        _: &TaskReport,
        _: &SessionState,
    ) -> Verdict<event::TaskComplete> {
        Verdict::Continue
    }
    async fn plan_complete(
        &self,
        _: &PlanReport,
        _: &SessionState,
    ) -> Verdict<event::PlanComplete> {
        Verdict::Continue
    }
    async fn all_tasks_complete(&self, _: &SessionState) -> Verdict<event::AllTasksComplete> {
        Verdict::Continue
    }
    async fn session_end(&self, _: &SessionState) -> Verdict<event::SessionEnd> {
        Verdict::Continue
    }
}

#[agentix::hook(task_complete)]
async fn noop_task_complete(_report: &TaskReport) {}

#[agentix::hook(step_start)]
async fn noop_step_start(_turn: &Turn, _session: &SessionState) {}

/// Runs a session of a plan of two tasks (the first with a tool step); returns its
/// allocations (from building the session to its end) and its log.
fn measure_session<S, F>(build: F) -> (u64, Vec<Entry>)
where
    S: agentix::session::SessionChain,
    F: for<'a> FnOnce(
        agentix::session::SessionBuilder<
            &'a Agent<&'a ScriptedModel, agentix::tool::Toolbox<agentix::tool::NoTools, Weather>>,
        >,
    ) -> agentix::session::Session<
        &'a Agent<&'a ScriptedModel, agentix::tool::Toolbox<agentix::tool::NoTools, Weather>>,
        S,
    >,
{
    let model = ScriptedModel::new()
        .tool_call("get_weather", json!({ "city": "Oslo" }))
        .text("sunny")
        .text("done");
    let agent = Agent::builder(&model).tool(Weather::default()).build();
    let before = allocations();
    let mut session = build(Session::builder(&agent));
    session.submit_plan(Plan::new(["weather?", "summary?"])).unwrap();
    let reports = futures::executor::block_on(session.run().into_future()).unwrap();
    let counted = allocations() - before;
    assert_eq!(reports.len(), 2);
    (counted, session.conversation().log().to_vec())
}

#[test]
fn hooks_on_every_session_event_allocate_nothing() {
    // The first run in the process allocates what is made once (lazily initialized statics).
    measure_session(|builder| builder.build());
    let (bare, bare_log) = measure_session(|builder| builder.build());
    let (hooked, hooked_log) = measure_session(|builder| {
        builder.hook(SessionNoop).hook(noop_task_complete).hook(noop_step_start).build()
    });
    assert_eq!(hooked, bare, "session hooks that continue allocate nothing");
    assert_eq!(hooked_log, bare_log);
}
