//! Wrap hooks own the call: `next` may be called zero times (cache), once, or many times
//! (retry, fallback). The first wrap declared is the outermost.

use std::sync::{Arc, Mutex};

use agentix::event::{EventKind, EventSet};
use agentix::{
    Agent, AssistantMessage, Conversation, Hook, Model, ScriptedModel, ToolCall, ToolResult, Turn,
    model::{ModelError, ModelRequest, ModelResponse, NextModel},
    tool::NextTool,
};
use serde_json::json;
use tests::{Flaky, Weather, tool_results};

type Log = Arc<Mutex<Vec<String>>>;

/// Records entering and leaving, and calls `next` once.
struct Around {
    name: &'static str,
    log: Log,
}

#[agentix::hook]
impl Hook for Around {
    const EVENTS: EventSet = EventSet::of(EventKind::WrapModel).with(EventKind::WrapTool);

    fn name(&self) -> &'static str {
        self.name
    }

    async fn wrap_model(
        &self,
        request: &ModelRequest,
        _turn: &Turn,
        next: &impl NextModel,
    ) -> Result<ModelResponse, ModelError> {
        self.log.lock().unwrap().push(format!("{} enters model", self.name));
        let response = next.call(request).await;
        self.log.lock().unwrap().push(format!("{} leaves model", self.name));
        response
    }

    async fn wrap_tool(&self, call: &ToolCall, _turn: &Turn, next: &impl NextTool) -> ToolResult {
        self.log.lock().unwrap().push(format!("{} enters tool", self.name));
        let result = next.call(call).await;
        self.log.lock().unwrap().push(format!("{} leaves tool", self.name));
        result
    }
}

#[tokio::test]
async fn first_declared_wrap_is_outermost() {
    let log = Log::default();
    let model =
        ScriptedModel::new().tool_call("get_weather", json!({ "city": "Oslo" })).text("done");
    let agent = Agent::builder(&model)
        .tool(Weather::default())
        .hook(Around { name: "outer", log: log.clone() })
        .hook(Around { name: "inner", log: log.clone() })
        .build();
    agent.run(&mut Conversation::new(), "weather?").await.unwrap();
    let log = log.lock().unwrap();
    assert_eq!(
        log[..8],
        [
            "outer enters model",
            "inner enters model",
            "inner leaves model",
            "outer leaves model",
            "outer enters tool",
            "inner enters tool",
            "inner leaves tool",
            "outer leaves tool",
        ]
    );
}

/// Answers from a cache without calling `next` when the user message is known.
struct Cache {
    hits: Arc<Mutex<usize>>,
}

#[agentix::hook]
impl Hook for Cache {
    const EVENTS: EventSet = EventSet::of(EventKind::WrapModel);

    async fn wrap_model(
        &self,
        request: &ModelRequest,
        _turn: &Turn,
        next: &impl NextModel,
    ) -> Result<ModelResponse, ModelError> {
        if request.messages.last().is_some_and(|m| m.text() == "cached question") {
            *self.hits.lock().unwrap() += 1;
            return Ok(AssistantMessage::text("cached answer").into());
        }
        next.call(request).await
    }
}

#[tokio::test]
async fn wrap_model_may_not_call_next_at_all() {
    let model = ScriptedModel::new().text("fresh answer");
    let hits = Arc::new(Mutex::new(0));
    let agent = Agent::builder(&model).hook(Cache { hits: hits.clone() }).build();
    let mut conversation = Conversation::new();
    assert_eq!(
        agent.run(&mut conversation, "cached question").await.unwrap().joined_text(),
        "cached answer"
    );
    assert_eq!(model.calls(), 0);
    assert_eq!(
        agent.run(&mut conversation, "new question").await.unwrap().joined_text(),
        "fresh answer"
    );
    assert_eq!(model.calls(), 1);
    assert_eq!(*hits.lock().unwrap(), 1);
}

/// Calls `next` until it succeeds, at most `attempts` times.
struct RetryModel {
    attempts: usize,
}

#[agentix::hook]
impl Hook for RetryModel {
    const EVENTS: EventSet = EventSet::of(EventKind::WrapModel);

    async fn wrap_model(
        &self,
        request: &ModelRequest,
        _turn: &Turn,
        next: &impl NextModel,
    ) -> Result<ModelResponse, ModelError> {
        let mut last = None;
        for _ in 0..self.attempts {
            match next.call(request).await {
                Ok(response) => return Ok(response),
                Err(error) => last = Some(error),
            }
        }
        Err(last.expect("at least one attempt"))
    }
}

#[tokio::test]
async fn wrap_model_may_call_next_many_times() {
    let flaky = || {
        ScriptedModel::new()
            .error(ModelError::Transport("reset".into()))
            .error(ModelError::Transport("reset".into()))
            .text("third time lucky")
    };
    let model = flaky();
    let agent = Agent::builder(&model).hook(RetryModel { attempts: 3 }).build();
    let reply = agent.run(&mut Conversation::new(), "hi").await.unwrap();
    assert_eq!(reply.joined_text(), "third time lucky");
    assert_eq!(model.calls(), 3);
    let requests = model.requests();
    assert!(
        requests.iter().all(|request| *request == requests[0]),
        "each attempt sends the same request"
    );

    let model = flaky();
    let agent = Agent::builder(&model).hook(RetryModel { attempts: 2 }).build();
    let mut conversation = Conversation::new();
    let error = agent.run(&mut conversation, "hi").await.unwrap_err();
    assert_eq!(error, agentix::Error::Model(ModelError::Transport("reset".into())));
    assert!(
        matches!(conversation.log().last(), Some(agentix::Entry::Failed { error, .. }) if error.contains("reset"))
    );
}

/// Falls back to a second model when the first fails.
struct Fallback<M> {
    backup: M,
}

#[agentix::hook]
impl<M: Model> Hook for Fallback<M> {
    const EVENTS: EventSet = EventSet::of(EventKind::WrapModel);

    async fn wrap_model(
        &self,
        request: &ModelRequest,
        _turn: &Turn,
        next: &impl NextModel,
    ) -> Result<ModelResponse, ModelError> {
        match next.call(request).await {
            Ok(response) => Ok(response),
            Err(_) => self.backup.complete(request).await,
        }
    }
}

#[tokio::test]
async fn wrap_model_falls_back_to_another_model() {
    let primary = ScriptedModel::new().error(ModelError::Provider {
        provider: "scripted".into(),
        status: 529,
        message: "overloaded".into(),
        retry_after: None,
    });
    let backup = Arc::new(ScriptedModel::new().text("from the backup"));
    let agent = Agent::builder(&primary).hook(Fallback { backup: backup.clone() }).build();
    let reply = agent.run(&mut Conversation::new(), "hi").await.unwrap();
    assert_eq!(reply.joined_text(), "from the backup");
    assert_eq!((primary.calls(), backup.calls()), (1, 1));
    assert_eq!(primary.requests(), backup.requests(), "the backup sees the same request");
}

/// Retries a failing tool.
struct RetryTool;

#[agentix::hook]
impl Hook for RetryTool {
    const EVENTS: EventSet = EventSet::of(EventKind::WrapTool);

    async fn wrap_tool(&self, call: &ToolCall, _turn: &Turn, next: &impl NextTool) -> ToolResult {
        let mut result = next.call(call).await;
        for _ in 0..2 {
            if !result.is_error() {
                break;
            }
            result = next.call(call).await;
        }
        result
    }
}

#[tokio::test]
async fn wrap_tool_may_call_next_many_times() {
    let model = ScriptedModel::new().tool_call("flaky", json!({ "city": "Oslo" })).text("done");
    let calls = Arc::new(Mutex::new(0));
    let agent = Agent::builder(&model)
        .tool(Flaky { failures: 2, calls: calls.clone() })
        .hook(RetryTool)
        .build();
    agent.run(&mut Conversation::new(), "go").await.unwrap();
    assert_eq!(*calls.lock().unwrap(), 3);
    let result = &tool_results(&model.requests()[1])[0];
    assert_eq!(result.output, "reached Oslo");
    assert!(!result.is_error());
}

/// Answers every call without running the tool (a dry run).
struct DryRun;

#[agentix::hook]
impl Hook for DryRun {
    const EVENTS: EventSet = EventSet::of(EventKind::WrapTool);

    async fn wrap_tool(&self, call: &ToolCall, _turn: &Turn, _next: &impl NextTool) -> ToolResult {
        ToolResult::success(call, format!("dry run of {}", call.name))
    }
}

#[tokio::test]
async fn wrap_tool_may_not_call_next_at_all() {
    let model =
        ScriptedModel::new().tool_call("get_weather", json!({ "city": "Oslo" })).text("done");
    let weather = Weather::default();
    let calls = weather.calls.clone();
    let agent = Agent::builder(&model).tool(weather).hook(DryRun).build();
    agent.run(&mut Conversation::new(), "go").await.unwrap();
    assert!(calls.lock().unwrap().is_empty());
    assert_eq!(tool_results(&model.requests()[1])[0].output, "dry run of get_weather");
}

/// Refuses every call itself, without asking `next`: a circuit that is open.
struct OpenCircuit;

impl agentix::on::WrapModel for OpenCircuit {
    async fn wrap_model(
        &self,
        _: &ModelRequest,
        _: &Turn,
        _: &impl NextModel,
    ) -> Result<ModelResponse, ModelError> {
        Err(ModelError::Other("circuit open".into()))
    }
}

/// Passes everything on.
struct Transparent;

impl agentix::on::WrapModel for Transparent {
    async fn wrap_model(
        &self,
        request: &ModelRequest,
        _: &Turn,
        next: &impl NextModel,
    ) -> Result<ModelResponse, ModelError> {
        next.call(request).await
    }
}

#[tokio::test]
async fn an_error_a_wrap_hook_makes_names_it_and_one_it_passes_on_is_the_models() {
    let agent = Agent::builder(ScriptedModel::new().text("unreachable"))
        .hook(Transparent)
        .hook(OpenCircuit)
        .build();
    let error = agent.run(&mut Conversation::new(), "hi").await.unwrap_err();
    assert_eq!(
        error,
        agentix::Error::HookFailed {
            event: EventKind::WrapModel,
            hook: "OpenCircuit",
            message: "circuit open".into()
        }
    );

    let failing = ScriptedModel::new().error(ModelError::Transport("reset".into()));
    let agent = Agent::builder(failing).hook(Transparent).hook(Transparent).build();
    let error = agent.run(&mut Conversation::new(), "hi").await.unwrap_err();
    assert_eq!(error, agentix::Error::Model(ModelError::Transport("reset".into())));
}
