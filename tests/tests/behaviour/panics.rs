//! A panicking hook ends the turn with an error naming it; the log stays intact and the
//! conversation goes on.

use std::sync::Arc;

use agentix::event::EventKind::{self, *};
use agentix::event::EventSet;
use agentix::on::ParallelPre;
use agentix::{
    Agent, Conversation, Entry, Error, Hook, Part, ScriptedModel, ToolCall, ToolResult, Turn, hook,
    message::ToolFailure,
    model::{ModelError, ModelRequest, ModelResponse, NextModel},
    tool::NextTool,
};
use serde_json::json;
use tests::{Action, Explode, Probe, Record, Weather, assert_log_consistent, tool_results};

fn model() -> ScriptedModel {
    ScriptedModel::new()
        .tool_calls([("get_weather", json!({ "city": "Oslo" })), ("no_such_tool", json!({}))])
        .text("done")
        .text("second turn")
}

#[tokio::test]
async fn a_panicking_hook_at_any_event_is_named_and_the_next_turn_runs() {
    // (A `before_tool` hook's panic refuses the call instead: `failure_policy.rs`.)
    for event in [Pre, BeforeModel, AfterModel, AfterTool, ToolError, BeforeFinal, Post] {
        let record = Record::new();
        let model = Arc::new(model());
        let agent = Agent::builder(model.clone())
            .tool(Weather::default())
            .hook(Probe::new("calm", &record))
            .hook(Probe::new("bomb", &record).on(event, Action::Panic(format!("bomb at {event}"))))
            .build();
        let mut conversation = Conversation::new();
        let error = agent.run(&mut conversation, "first").await.unwrap_err();
        assert_eq!(
            error,
            Error::HookPanicked { event, hook: "bomb", message: format!("bomb at {event}") }
        );
        assert_log_consistent(conversation.log());
        assert!(
            matches!(conversation.log().last(), Some(Entry::Failed { error, .. }) if error.contains("`bomb` panicked")),
            "{event}: {:?}",
            conversation.log().last()
        );
        let before = conversation.log().to_vec();

        let reply = agent.run(&mut conversation, "second").await.unwrap();
        // The second turn reads the script from where the first one stopped.
        let expected = match event {
            Pre | BeforeModel | AfterModel | AfterTool | ToolError => "done",
            _ => "second turn",
        };
        assert_eq!(reply.joined_text(), expected, "{event}");
        assert_eq!(
            conversation.log()[..before.len()],
            before[..],
            "the failed turn's entries are kept as they were"
        );
        assert_log_consistent(conversation.log());
    }
}

/// Panics inside the wrap chain.
struct PanicInWrap;

#[hook]
impl Hook for PanicInWrap {
    const EVENTS: EventSet = EventSet::of(EventKind::WrapModel).with(EventKind::WrapTool);

    fn name(&self) -> &'static str {
        "wrap_bomb"
    }

    async fn wrap_model(
        &self,
        _: &ModelRequest,
        _: &Turn,
        _: &impl NextModel,
    ) -> Result<ModelResponse, ModelError> {
        panic!("wrap_model exploded")
    }

    async fn wrap_tool(&self, _: &ToolCall, _: &Turn, _: &impl NextTool) -> ToolResult {
        panic!("wrap_tool exploded")
    }
}

/// Retries the rest of the chain forever unless told the call was abandoned.
struct Persistent;

#[hook]
impl Hook for Persistent {
    const EVENTS: EventSet = EventSet::of(EventKind::WrapModel);

    async fn wrap_model(
        &self,
        request: &ModelRequest,
        _: &Turn,
        next: &impl NextModel,
    ) -> Result<ModelResponse, ModelError> {
        loop {
            match next.call(request).await {
                Err(ModelError::Aborted) => return Err(ModelError::Aborted),
                Err(_) => continue,
                ok => return ok,
            }
        }
    }
}

#[tokio::test]
async fn a_panic_inside_the_wrap_chain_is_named_even_under_an_outer_wrap() {
    let model = ScriptedModel::new().text("unreachable");
    let agent = Agent::builder(&model).hook(Persistent).hook(PanicInWrap).build();
    let mut conversation = Conversation::new();
    let error = agent.run(&mut conversation, "hi").await.unwrap_err();
    assert_eq!(
        error,
        Error::HookPanicked {
            event: WrapModel,
            hook: "wrap_bomb",
            message: "wrap_model exploded".into()
        }
    );
    assert_eq!(model.calls(), 0);
    assert_log_consistent(conversation.log());
}

#[tokio::test]
async fn a_panic_in_wrap_tool_answers_the_call_and_ends_the_turn() {
    let model = ScriptedModel::new()
        .tool_call("get_weather", json!({ "city": "Oslo" }))
        .text("second turn");
    let agent =
        Agent::builder(&model).tool(Weather::default()).hook(OnlyTools(PanicInWrap)).build();
    let mut conversation = Conversation::new();
    let error = agent.run(&mut conversation, "hi").await.unwrap_err();
    assert_eq!(
        error,
        Error::HookPanicked {
            event: WrapTool,
            hook: "wrap_bomb",
            message: "wrap_tool exploded".into()
        }
    );
    assert_log_consistent(conversation.log());
    assert!(
        matches!(&conversation.log()[2], Entry::ToolResults { results, .. } if matches!(results[0].error, Some(ToolFailure::NotRun { .. })))
    );
    assert_eq!(agent.run(&mut conversation, "again").await.unwrap().joined_text(), "second turn");
}

/// Panics over the tool's result, after `next` ran it.
#[hook(wrap_tool)]
async fn panics_after(call: &ToolCall, next: &impl NextTool) -> ToolResult {
    let result = next.call(call).await;
    panic!("audit failed over {}", result.output)
}

#[tokio::test]
async fn a_wrap_tool_panic_after_next_ran_the_tool_logs_the_call_as_run_with_its_output() {
    let model = ScriptedModel::new()
        .tool_call("get_weather", json!({ "city": "Oslo" }))
        .text("second turn");
    let weather = Weather::default();
    let ran = Arc::clone(&weather.calls);
    let agent = Agent::builder(&model).tool(weather).hook(panics_after).build();
    let mut conversation = Conversation::new();
    let error = agent.run(&mut conversation, "hi").await.unwrap_err();
    assert_eq!(
        error,
        Error::HookPanicked {
            event: WrapTool,
            hook: "panics_after",
            message: "audit failed over sunny in Oslo".into()
        }
    );
    assert_eq!(*ran.lock().unwrap(), ["Oslo"]);
    let Entry::ToolResults { results, .. } = &conversation.log()[2] else {
        panic!("{:#?}", conversation.log());
    };
    assert_eq!((results[0].output.as_str(), &results[0].error), ("sunny in Oslo", &None));
    // The hook's failure is recorded beside it, as the turn's end.
    assert!(
        matches!(&conversation.log()[3], Entry::Failed { error, .. } if error.contains("panics_after"))
    );
    conversation.validate().unwrap();
    assert_eq!(agent.run(&mut conversation, "again").await.unwrap().joined_text(), "second turn");
}

/// Delegates only `wrap_tool`.
struct OnlyTools<H>(H);

#[hook]
impl<H: Hook> Hook for OnlyTools<H> {
    const EVENTS: EventSet = EventSet::of(EventKind::WrapTool);

    fn name(&self) -> &'static str {
        self.0.name()
    }

    fn wrap_tool(
        &self,
        call: &ToolCall,
        turn: &Turn,
        next: &impl NextTool,
    ) -> impl Future<Output = ToolResult> + Send {
        self.0.wrap_tool(call, turn, next)
    }
}

struct Docs;
struct Broken;

impl ParallelPre for Docs {
    async fn pre(&self, _: &Turn) -> Vec<Part> {
        vec![Part::text("docs")]
    }
}

impl ParallelPre for Broken {
    fn name(&self) -> &'static str {
        "broken_retrieval"
    }

    async fn pre(&self, _: &Turn) -> Vec<Part> {
        panic!("index offline")
    }
}

#[tokio::test]
async fn a_panicking_parallel_hook_is_named() {
    let model = ScriptedModel::new().text("unreachable");
    let agent = Agent::builder(&model).hook(Docs).hook(Broken).build();
    let error = agent.run(&mut Conversation::new(), "hi").await.unwrap_err();
    assert_eq!(
        error,
        Error::HookPanicked {
            event: Pre,
            hook: "broken_retrieval",
            message: "index offline".into()
        }
    );
    assert_eq!(model.calls(), 0);
}

#[tokio::test]
async fn a_panicking_tool_is_a_tool_error_not_a_turn_error() {
    let model =
        ScriptedModel::new().tool_call("explode", json!({ "city": "Oslo" })).text("recovered");
    let record = Record::new();
    let agent = Agent::builder(&model).tool(Explode).hook(Probe::new("watch", &record)).build();
    let reply = agent.run(&mut Conversation::new(), "hi").await.unwrap();
    assert_eq!(reply.joined_text(), "recovered");
    assert_eq!(record.count(ToolError, "watch"), 1);
    let result = &tool_results(&model.requests()[1])[0];
    assert_eq!(result.error, Some(ToolFailure::Panicked { message: "boom in Oslo".into() }));
}

/// Panics in the method itself, before it returns a future: possible for a hand-written hook.
struct EagerPanic;

#[hook]
impl Hook for EagerPanic {
    fn after_model(
        &self,
        _: &mut agentix::AssistantMessage,
        _: &mut Turn,
    ) -> impl Future<Output = agentix::Verdict<AfterModelEvent>> + Send {
        if true {
            panic!("before any future");
        }
        std::future::ready(agentix::Verdict::Continue)
    }
}

use agentix::event::AfterModel as AfterModelEvent;

#[tokio::test]
async fn a_hook_that_panics_before_returning_its_future_is_caught_and_named() {
    let record = Record::new();
    let probe = Probe::new("witness", &record);
    let outcomes = probe.outcomes();
    let agent =
        Agent::builder(ScriptedModel::new().text("hi")).hook(EagerPanic).hook(probe).build();
    let mut conversation = Conversation::new();
    let error = agent.run(&mut conversation, "x").await.unwrap_err();
    let expected = Error::HookPanicked {
        event: AfterModel,
        hook: "EagerPanic",
        message: "before any future".into(),
    };
    assert_eq!(error, expected);
    assert_eq!(outcomes.lock().unwrap().as_slice(), [Err(expected)], "post still ran");
    assert_log_consistent(conversation.log());
}

/// A tool set whose `call` panics before returning a future.
struct EagerTools;

impl agentix::ToolSet for EagerTools {
    fn specs(&self, _: &mut Vec<agentix::tool::ToolSpec>) {}

    fn call(&self, _: &ToolCall, _: &Turn) -> impl Future<Output = Option<ToolResult>> + Send {
        if true {
            panic!("tool set exploded");
        }
        std::future::ready(None)
    }
}

/// A model whose `complete` panics before returning a future.
struct EagerModel;

impl agentix::Model for EagerModel {
    fn complete(
        &self,
        _: &ModelRequest,
    ) -> impl Future<Output = Result<ModelResponse, ModelError>> + Send {
        if true {
            panic!("model exploded");
        }
        std::future::ready(Err(ModelError::Aborted))
    }
}

#[tokio::test]
async fn eager_panics_in_a_model_or_a_tool_set_become_errors() {
    let error =
        Agent::builder(EagerModel).build().run(&mut Conversation::new(), "x").await.unwrap_err();
    assert_eq!(error, Error::Model(ModelError::Other("the model panicked: model exploded".into())));

    let model = ScriptedModel::new().tool_call("anything", json!({})).text("recovered");
    let agent = Agent::builder(&model).tools(EagerTools).build();
    assert_eq!(agent.run(&mut Conversation::new(), "x").await.unwrap().joined_text(), "recovered");
    let result = &tool_results(&model.requests()[1])[0];
    assert_eq!(result.error, Some(ToolFailure::Panicked { message: "tool set exploded".into() }));
}

/// A panic guard (the turn's, or a tool event's own) blames the hook marked running: a panic
/// outside any hook (here, an observer's, reporting a hook's decision) is no hook's to answer
/// for. It is the observer's: the turn ends naming it, and nothing unwinds.
#[tokio::test]
async fn an_observer_panic_is_not_blamed_on_a_hook() {
    let record = Record::default();
    let agent =
        Agent::builder(ScriptedModel::new().text("hi")).hook(Probe::new("calm", &record)).build();
    // Only once: a guard that blamed the hook would report its "panic" to this observer too.
    let down = std::sync::atomic::AtomicBool::new(false);
    let observer = |observation: &agentix::observe::Observation<'_>| {
        let hook = matches!(observation, agentix::observe::Observation::Hook { .. });
        if hook && !down.swap(true, std::sync::atomic::Ordering::Relaxed) {
            panic!("observer down");
        }
    };
    let mut conversation = Conversation::new();
    let error = agent.turn(&mut conversation, "hi").observe(&observer).await.unwrap_err();
    assert_eq!(
        error,
        Error::ComponentPanicked {
            component: agentix::error::Component::Observer,
            message: "observer down".into()
        }
    );
}

/// The observer hears a hook's panic as that hook's decision at its event, whichever guard
/// caught it: the turn's (`before_model`) or the tool event's own (`after_tool`).
#[tokio::test]
async fn the_observer_hears_a_panic_as_the_hooks_decision() {
    for event in [BeforeModel, AfterTool] {
        let record = Record::new();
        let agent = Agent::builder(model())
            .tool(Weather::default())
            .hook(Probe::new("bomb", &record).on(event, Action::Panic("boom".into())))
            .build();
        let heard = std::sync::Mutex::new(Vec::new());
        let observer = |observation: &agentix::observe::Observation<'_>| {
            if let agentix::observe::Observation::Hook { event, hook, decision } = observation
                && matches!(decision, agentix::observe::Decision::Panicked { .. })
            {
                heard.lock().unwrap().push(format!("{event} {hook}: {decision}"));
            }
        };
        let error = agent.turn(&mut Conversation::new(), "hi").observe(&observer).await;
        let expected = Error::HookPanicked { event, hook: "bomb", message: "boom".into() };
        assert_eq!(error.unwrap_err(), expected);
        assert_eq!(heard.into_inner().unwrap(), [format!("{event} bomb: panicked (boom)")]);
    }
}

/// Bumps nothing, reads nothing, and panics: an in-place hook the turn is not lent to.
#[hook(after_model)]
async fn bare_bomb() {
    panic!("bare bomb");
}

/// Reads the message only, and injects nothing.
#[hook(after_model)]
async fn reader(message: &agentix::AssistantMessage) {
    let _ = message.joined_text();
}

/// Injects: the turn is lent to it.
#[hook(pre)]
async fn injector(turn: &mut Turn) {
    turn.inject("from the injector");
}

/// A `Hook` struct whose methods name neither value nor turn, and whose `before_final` panics.
struct Quiet;

#[hook]
impl Hook for Quiet {
    async fn pre(&self, _: &mut Turn) -> agentix::Verdict<agentix::event::Pre> {
        agentix::Verdict::Continue
    }

    async fn before_final(
        &self,
        _: &mut agentix::AssistantMessage,
        _: &mut Turn,
    ) -> agentix::Verdict<agentix::event::BeforeFinal> {
        panic!("quiet bomb")
    }
}

/// A hook lent neither the value nor the turn is marked nowhere before it runs: its panic is
/// still named, by the event it ran at — a function's and a struct's alike — and what a later
/// hook injects is still attributed to that hook, not to one that ran before it.
#[tokio::test]
async fn hooks_lent_nothing_are_named_when_they_panic_and_injections_keep_their_hook() {
    let agent = Agent::builder(ScriptedModel::new().text("done"))
        .hook(Quiet)
        .hook(injector)
        .hook(reader)
        .hook(bare_bomb)
        .build();
    let mut conversation = Conversation::new();
    let error = agent.run(&mut conversation, "hi").await.unwrap_err();
    assert_eq!(
        error,
        Error::HookPanicked { event: AfterModel, hook: "bare_bomb", message: "bare bomb".into() }
    );

    let model = ScriptedModel::new().text("done");
    let agent = Agent::builder(&model).hook(Quiet).hook(injector).hook(reader).build();
    let mut conversation = Conversation::new();
    let error = agent.run(&mut conversation, "hi").await.unwrap_err();
    assert_eq!(
        error,
        Error::HookPanicked { event: BeforeFinal, hook: "Quiet", message: "quiet bomb".into() }
    );
    let request = &model.requests()[0];
    let injected = request.messages.last().unwrap();
    assert_eq!(injected.text(), "from the injector", "{request:#?}");

    // A panic in no hook, after hooks ran and returned, is not blamed on the last of them.
    let agent = Agent::builder(PanickingModel).hook(Quiet).hook(reader).build();
    let error = agent.run(&mut Conversation::new(), "hi").await.unwrap_err();
    assert!(
        matches!(&error, Error::Model(error) if error.to_string().contains("the model panicked")),
        "{error:?}"
    );
}

/// A model that panics when called.
struct PanickingModel;

impl agentix::Model for PanickingModel {
    async fn complete(&self, _: &ModelRequest) -> Result<ModelResponse, ModelError> {
        panic!("the model fell over")
    }
}
