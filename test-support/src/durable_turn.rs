//! The turn the crash tests of durable turns kill — over the store's journal here, over
//! Restate in `agentix-restate/tests/crash.rs` — model → tool → model, its effects in files
//! the processes share.

use std::path::PathBuf;
use std::time::Duration;

use agentix::event::BeforeTool;
use agentix::{
    Agent, AssistantMessage, Conversation, Entry, ToolCall, Turn, Verdict, approval::Approval,
};
use serde_json::json;

use crate::{TempDir, append, die, lines};

/// The model: calls `send` until it has its result, then answers — by what the request holds,
/// as a real model would; each call counted in `calls`. It dies inside call `die_in_call`
/// (from 1), after a pause, as a real call takes a while: what the turn sent before the call
/// (a Restate step's run) reaches the other side first.
pub struct SendingModel {
    /// The file each call is counted in, a line a call.
    pub calls: PathBuf,
    /// The call (from 1) the process dies inside, if one.
    pub die_in_call: Option<usize>,
}

impl agentix::Model for SendingModel {
    async fn complete(
        &self,
        request: &agentix::model::ModelRequest,
    ) -> Result<agentix::model::ModelResponse, agentix::model::ModelError> {
        let sent = counted_call(&self.calls, self.die_in_call, request).await;
        let answer = if sent {
            AssistantMessage::text("Done.")
        } else {
            let call = ToolCall::new("call_1", "send", json!({ "to": "boss" }));
            AssistantMessage::default().with_tool_call(call)
        };
        Ok(answer.into())
    }
}

/// Counts a model call in `calls`, dies inside it if it is call `die_in_call` (after a pause:
/// what the turn sent before the call reaches the other side first), and says whether the
/// request holds the tools' results.
async fn counted_call(
    calls: &std::path::Path,
    die_in_call: Option<usize>,
    request: &agentix::model::ModelRequest,
) -> bool {
    append(calls, "call");
    if die_in_call == Some(lines(calls).len()) {
        tokio::time::sleep(Duration::from_millis(200)).await;
        die();
    }
    request.messages.iter().any(|message| {
        message.content.iter().any(|part| matches!(part, agentix::Part::ToolResult(_)))
    })
}

/// The model of a step whose calls run together: calls `send` twice at once — to the boss
/// (`call_1`) and to the team (`call_2`) — until it has their results, then answers; each call
/// counted in `calls`.
pub struct PairModel {
    /// The file each call is counted in, a line a call.
    pub calls: PathBuf,
    /// The call (from 1) the process dies inside, if one (as [`SendingModel`]'s).
    pub die_in_call: Option<usize>,
}

impl agentix::Model for PairModel {
    async fn complete(
        &self,
        request: &agentix::model::ModelRequest,
    ) -> Result<agentix::model::ModelResponse, agentix::model::ModelError> {
        let sent = counted_call(&self.calls, self.die_in_call, request).await;
        let answer = if sent {
            AssistantMessage::text("Both sent.")
        } else {
            AssistantMessage::default()
                .with_tool_call(ToolCall::new("call_1", "send", json!({ "to": "boss" })))
                .with_tool_call(ToolCall::new("call_2", "send", json!({ "to": "team" })))
        };
        Ok(answer.into())
    }
}

/// The log a clean run of [`PairModel`]'s turn of conversation `key` leaves.
pub async fn clean_pair_log(key: &str) -> Vec<Entry> {
    let dir = TempDir::new("clean_pair");
    let model = PairModel { calls: dir.0.join("calls"), die_in_call: None };
    let send = KeyedSend { dir: dir.0.clone(), die: None, slow: None };
    let mut conversation = Conversation::new().with_id(key);
    let agent = Agent::builder(model).tool(send).build();
    agent.run(&mut conversation, "Send it").await.unwrap();
    conversation.log().to_vec()
}

/// The parent of the crash tests' team: delegates to its sub-agent `worker` (which runs the
/// turn [`SendingModel`] does, `send` and all) until it has the worker's result, then answers;
/// each call counted in `calls`.
pub struct DelegatingModel {
    /// The file each call is counted in, a line a call.
    pub calls: PathBuf,
}

impl agentix::Model for DelegatingModel {
    async fn complete(
        &self,
        request: &agentix::model::ModelRequest,
    ) -> Result<agentix::model::ModelResponse, agentix::model::ModelError> {
        append(&self.calls, "call");
        let delegated = request.messages.iter().any(|message| {
            message.content.iter().any(|part| matches!(part, agentix::Part::ToolResult(_)))
        });
        let answer = if delegated {
            AssistantMessage::text("The worker sent it.")
        } else {
            let call = ToolCall::new("call_w", "worker", json!({ "prompt": "Send it" }));
            AssistantMessage::default().with_tool_call(call)
        };
        Ok(answer.into())
    }
}

/// The team the crash tests kill mid-child: a parent (`parent`) whose sub-agent `worker` runs
/// `child`'s model → `send` → model turn.
pub fn team(
    parent: DelegatingModel,
    child: SendingModel,
    send: KeyedSend,
) -> impl agentix::AnyAgent {
    let worker = Agent::builder(child).tool(send).build();
    Agent::builder(parent)
        .sub_agent(agentix::delegate::AgentTool::new(
            "worker",
            "Sends what it is asked to.",
            worker,
        ))
        .build()
}

/// The agent that hands its turn to `worker` (which runs the turn [`SendingModel`] does),
/// its one call counted in `calls`.
pub struct HandingModel {
    /// The file each call is counted in, a line a call.
    pub calls: PathBuf,
}

impl agentix::Model for HandingModel {
    async fn complete(
        &self,
        _request: &agentix::model::ModelRequest,
    ) -> Result<agentix::model::ModelResponse, agentix::model::ModelError> {
        append(&self.calls, "call");
        let call = ToolCall::new("call_h", "transfer_to_worker", json!({ "note": "send it" }));
        Ok(AssistantMessage::default().with_tool_call(call).into())
    }
}

/// The team whose parent (`parent`) hands its turn to `worker`, which runs `child`'s model →
/// `send` → model turn and answers.
pub fn handing_team(
    parent: HandingModel,
    child: SendingModel,
    send: KeyedSend,
) -> impl agentix::AnyAgent {
    let worker = Agent::builder(child).tool(send).build();
    Agent::builder(parent)
        .handoff(agentix::delegate::Handoff::new("worker", "Sends what it is asked to.", worker))
        .build()
}

/// The log a clean run of one handing team's turn of conversation `key` leaves.
pub async fn clean_handing_log(key: &str) -> Vec<Entry> {
    let dir = TempDir::new("clean_handing");
    let parent = HandingModel { calls: dir.0.join("parent_calls") };
    let child = SendingModel { calls: dir.0.join("calls"), die_in_call: None };
    let send = KeyedSend { dir: dir.0.clone(), die: None, slow: None };
    let mut conversation = Conversation::new().with_id(key);
    agentix::AnyAgent::run(&handing_team(parent, child, send), &mut conversation, "Have it sent")
        .await
        .unwrap();
    conversation.log().to_vec()
}

/// The log a clean run of one team turn of conversation `key` leaves, without a journal or a
/// crash.
pub async fn clean_team_log(key: &str) -> Vec<Entry> {
    let dir = TempDir::new("clean_team");
    let parent = DelegatingModel { calls: dir.0.join("parent_calls") };
    let child = SendingModel { calls: dir.0.join("calls"), die_in_call: None };
    let send = KeyedSend { dir: dir.0.clone(), die: None, slow: None };
    let mut conversation = Conversation::new().with_id(key);
    agentix::AnyAgent::run(&team(parent, child, send), &mut conversation, "Have it sent")
        .await
        .unwrap();
    conversation.log().to_vec()
}

/// Where [`KeyedSend`] dies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ToolDeath {
    /// As it starts.
    BeforeEffect,
    /// After its side effect, before it returns.
    AfterEffect,
}

/// The tool `send`: sends through a system that applies each idempotency key once — every
/// attempt's key in `dir/attempts`, each key applied in `dir/applied`.
pub struct KeyedSend {
    /// Where the attempts and the applied keys are written.
    pub dir: PathBuf,
    /// Where in the call the process dies, if anywhere.
    pub die: Option<ToolDeath>,
    /// The recipient whose sending takes a while (150 ms, before its effect), if one: of a
    /// step's calls running together, the others finish first.
    pub slow: Option<&'static str>,
}

impl agentix::Tool for KeyedSend {
    const NAME: &'static str = "send";
    const WANTS_CALL_ID: bool = true;
    type Args = serde_json::Value;
    type Output = String;
    type Error = std::convert::Infallible;

    fn description(&self) -> &str {
        "Sends a message."
    }

    async fn call(&self, args: serde_json::Value, turn: &Turn) -> Result<String, Self::Error> {
        if self.die == Some(ToolDeath::BeforeEffect) {
            die();
        }
        let to = args["to"].as_str().unwrap_or("?");
        if self.slow == Some(to) {
            tokio::time::sleep(Duration::from_millis(150)).await;
        }
        let key = turn.tool_idempotency_key().expect("the tool asked for its call's id");
        append(&self.dir.join("attempts"), &key);
        let applied = self.dir.join("applied");
        if !lines(&applied).contains(&key) {
            append(&applied, &key);
        }
        if self.die == Some(ToolDeath::AfterEffect) {
            die();
        }
        Ok(format!("sent to {to}"))
    }
}

/// Refuses every call: a hook changed between the crash and the replay.
pub struct Refuse;

impl agentix::on::BeforeTool for Refuse {
    async fn before_tool(&self, _: &mut ToolCall, _: &mut Turn) -> Verdict<BeforeTool> {
        Verdict::reject("changed my mind")
    }
}

/// Every call waits for a person.
pub struct AskFirst;

impl agentix::on::BeforeTool for AskFirst {
    async fn before_tool(&self, _: &mut ToolCall, _: &mut Turn) -> Verdict<BeforeTool> {
        Verdict::escalate("a person decides")
    }
}

/// The log a clean run of `turns` turns of conversation `key` leaves, run here without a
/// journal or a crash; every call escalated and answered `answer`, if there is one.
pub async fn clean_log(key: &str, turns: usize, answer: Option<Approval>) -> Vec<Entry> {
    let dir = TempDir::new("clean");
    let model = SendingModel { calls: dir.0.join("calls"), die_in_call: None };
    let send = KeyedSend { dir: dir.0.clone(), die: None, slow: None };
    let mut conversation = Conversation::new().with_id(key);
    if let Some(answer) = answer {
        let agent = Agent::builder(model)
            .tool(send)
            .hook(AskFirst)
            .approver(move |_: ToolCall, _| {
                let answer = answer.clone();
                async move { answer }
            })
            .build();
        for _ in 0..turns {
            agent.run(&mut conversation, "Send it").await.unwrap();
        }
    } else {
        let agent = Agent::builder(model).tool(send).build();
        for _ in 0..turns {
            agent.run(&mut conversation, "Send it").await.unwrap();
        }
    }
    conversation.log().to_vec()
}
