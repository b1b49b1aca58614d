//! The audit of model calls: every call a committed turn made — the request as the model got
//! it, its answer or error, its usage with cached tokens, its latency — stored with its step,
//! over SQLite and PostgreSQL.

use agentix_test_support::{self as support, on_both_backends};

use std::sync::Mutex;
use std::time::Duration;

use agentix::{
    Agent, AssistantMessage, Conversation, Part, ToolCall, Turn,
    model::{ModelError, ModelRequest, ModelResponse, NextModel, Usage},
};
use agentix_store::Store;
use serde_json::json;
use support::Clock;

/// Overloaded once, then a step calling `clock` (with cached tokens), then a slow answer.
#[derive(Default)]
struct Metered {
    requests: Mutex<Vec<ModelRequest>>,
}

const CACHED: Usage =
    Usage { input_tokens: 120, output_tokens: 9, cache_read_tokens: 100, cache_write_tokens: 7 };

impl agentix::Model for Metered {
    async fn complete(&self, request: &ModelRequest) -> Result<ModelResponse, ModelError> {
        let n = {
            let mut requests = self.requests.lock().unwrap();
            requests.push(request.clone());
            requests.len()
        };
        match n {
            1 => Err(ModelError::Other("overloaded".into())),
            2 => Ok(ModelResponse {
                message: AssistantMessage {
                    content: vec![Part::ToolCall(ToolCall::new("call_1", "clock", json!({})))],
                },
                usage: CACHED,
            }),
            _ => {
                tokio::time::sleep(Duration::from_millis(20)).await;
                Ok(ModelResponse {
                    message: AssistantMessage { content: vec![Part::Text("Noon.".into())] },
                    usage: Usage { input_tokens: 140, output_tokens: 3, ..Usage::default() },
                })
            }
        }
    }
}

/// Calls the model again once if it fails.
struct RetryOnce;

impl agentix::on::WrapModel for RetryOnce {
    async fn wrap_model(
        &self,
        request: &ModelRequest,
        _: &Turn,
        next: &impl NextModel,
    ) -> Result<ModelResponse, ModelError> {
        match next.call(request).await {
            Err(_) => next.call(request).await,
            answer => answer,
        }
    }
}

on_both_backends! {
    every_model_call_is_audited_with_its_step => every_model_call_is_audited_with_its_step;
}

async fn every_model_call_is_audited_with_its_step(store: Store, _url: String) {
    store.create("c", &Conversation::new()).await.unwrap();
    let model = Metered::default();
    let agent = Agent::builder(&model).tool(Clock).hook(RetryOnce).build();
    for turn in 1..=2 {
        let mut stored = store.load("c").await.unwrap();
        let committer = store.committer("c", &stored);
        let reply = agent.turn(&mut stored.conversation, "time?").commit(&committer).await;
        if turn == 1 {
            assert_eq!(reply.unwrap().joined_text(), "Noon.");
        }
    }

    let audit = store.model_calls("c").await.unwrap();
    let sent = model.requests.lock().unwrap().clone();
    assert_eq!(audit.len(), sent.len(), "{audit:#?}");
    assert_eq!(audit.len(), 4, "turn 1: overloaded, retried, answer; turn 2: one call");
    for (seq, (record, request)) in audit.iter().zip(&sent).enumerate() {
        assert_eq!(record.seq, seq as u64);
        assert_eq!(record.request, serde_json::to_value(request).unwrap(), "as sent");
    }
    let places: Vec<(u64, u32)> = audit.iter().map(|record| (record.turn.0, record.step)).collect();
    assert_eq!(places, [(1, 0), (1, 0), (1, 1), (2, 0)]);

    assert_eq!(audit[0].error.as_deref(), Some("overloaded"));
    assert_eq!((audit[0].response.as_ref(), audit[0].usage), (None, None));
    assert_eq!(audit[1].usage, Some(CACHED), "cached tokens kept");
    assert_eq!(audit[1].response.as_ref().unwrap()["content"][0]["tool_call"]["name"], "clock");
    assert_eq!(audit[1].error, None);
    assert!(audit[2].latency >= Duration::from_millis(20), "{:?}", audit[2].latency);
    assert_eq!(audit[2].response.as_ref().unwrap()["content"][0]["text"], "Noon.");
}
