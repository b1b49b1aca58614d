//! The agent `agentix-server` serves: a weather tool and an e-mail tool that waits for a
//! person's approval, over a real model — or, when none is configured, over [`DemoModel`].

use std::time::Duration;

use agentix::event::BeforeTool;
use agentix::pipeline::Pipeline;
use agentix::{
    Agent, AssistantMessage, Model, Outcome, Part, ToolCall, ToolResult, ToolSet, Verdict,
    approval::{Approval, Approver},
    message::Role,
    model::{Chunk, ModelError, ModelRequest, ModelResponse},
};
use futures::Stream;
use serde_json::json;

/// The model the example serves when no real one is configured: for each user message it calls
/// `get_weather` with the message as the city — or, for `email ADDRESS: TEXT`, `send_email`,
/// which waits for a person's approval — then answers with what the tool said, streamed a word
/// at a time. Deterministic: the same conversation gets the same answers and call ids.
#[derive(Clone, Debug, Default)]
pub struct DemoModel {
    /// How long each call takes, as a real model's would.
    pub latency: Duration,
}

impl DemoModel {
    fn answer(request: &ModelRequest) -> AssistantMessage {
        if let Some(result) = tool_result_answered(request) {
            return AssistantMessage::text(match (result.name.as_str(), &result.error) {
                ("send_email", None) => format!("Done: {}.", result.output),
                ("send_email", Some(_)) => format!("Not sent: {}.", result.output),
                _ => format!("Here is the weather: {}.", result.output),
            });
        }
        let said = last_user_text(request);
        let id = format!("call_{}", request.messages.len());
        let call = match said.trim().strip_prefix("email ").and_then(|rest| rest.split_once(':')) {
            Some((to, text)) => {
                let arguments = json!({ "to": to.trim(), "text": text.trim() });
                ToolCall::new(id, "send_email", arguments)
            }
            None => ToolCall::new(id, "get_weather", json!({ "city": said.trim() })),
        };
        AssistantMessage::default().with_tool_call(call)
    }
}

impl Model for DemoModel {
    async fn complete(&self, request: &ModelRequest) -> Result<ModelResponse, ModelError> {
        if !self.latency.is_zero() {
            tokio::time::sleep(self.latency).await;
        }
        Ok(DemoModel::answer(request).into())
    }

    fn stream(
        &self,
        request: &ModelRequest,
    ) -> impl Stream<Item = Result<Chunk, ModelError>> + Send {
        let answer = self.complete(request);
        async_stream::stream! {
            let response = match answer.await {
                Ok(response) => response,
                Err(error) => {
                    yield Err(error);
                    return;
                }
            };
            for chunk in Chunk::of(response) {
                match chunk {
                    Chunk::Text(text) => {
                        for word in text.split_inclusive(' ') {
                            tokio::task::yield_now().await;
                            yield Ok(Chunk::Text(word.to_owned()));
                        }
                    }
                    other => yield Ok(other),
                }
            }
        }
    }
}

/// The tool result a demo model's request ends with, if it ends with one: the model answers
/// with it.
pub fn tool_result_answered(request: &ModelRequest) -> Option<&ToolResult> {
    request.messages.last()?.content.iter().find_map(|part| match part {
        Part::ToolResult(result) => Some(result),
        _ => None,
    })
}

/// What the user wrote last, in a demo model's request.
pub fn last_user_text(request: &ModelRequest) -> String {
    let user = request.messages.iter().rev().find(|message| message.role == Role::User);
    user.map(|message| message.text().into_owned()).unwrap_or_default()
}

/// `post`: logs how each turn ended.
#[agentix::hook(post)]
async fn log_turn(outcome: &Outcome, turn: &agentix::Turn) {
    match outcome {
        Ok(answer) => {
            tracing::info!(turn = turn.turn_ref().0, answer = %answer.joined_text(), "turn completed")
        }
        Err(error) => tracing::warn!(turn = turn.turn_ref().0, %error, "turn failed"),
    }
}

/// Current weather for a city (the demo's: always a clear sky).
#[agentix::tool]
pub async fn get_weather(
    /// The city to report on.
    city: String,
) -> String {
    format!("{city}: clear sky, 21")
}

/// Sends an e-mail (the demo's: it only says so).
#[agentix::tool]
pub async fn send_email(
    /// Who to.
    to: String,
    /// What it says.
    text: String,
) -> String {
    format!("sent to {to} ({} characters)", text.chars().count())
}

/// `before_tool`: an e-mail goes only with a person's yes.
#[agentix::hook(before_tool)]
async fn mail_needs_a_yes(call: &ToolCall) -> Verdict<BeforeTool> {
    if call.name == "send_email" {
        Verdict::escalate(format!("an e-mail to {}", call.arguments["to"]))
    } else {
        Verdict::Continue
    }
}

/// The agent `agentix-server` serves over `model`: `get_weather`,
/// `send_email` (escalated: the approver suspends the turn until a person answers over HTTP),
/// and a `post` hook that logs each turn.
pub fn agent_over<M: Model>(model: M) -> Agent<M, impl ToolSet, impl Pipeline, impl Approver> {
    Agent::builder(model)
        .system("You report the weather, and send e-mails a person approves.")
        .tool(get_weather)
        .tool(send_email)
        .hook(mail_needs_a_yes)
        .hook(log_turn)
        .approver(|_call: ToolCall, _escalation| async { Approval::Suspend })
        .build()
}

/// [`agent_over`] the demo model.
pub fn demo_agent() -> Agent<DemoModel, impl ToolSet, impl Pipeline, impl Approver> {
    agent_over(DemoModel::default())
}

/// How to talk to the server at `addr` with curl, every route, each request bringing the
/// credentials `$KEY` holds (an API key, or a JWT).
pub fn usage(addr: std::net::SocketAddr) -> String {
    let json = "-H 'content-type: application/json'";
    let auth = "-H \"authorization: Bearer $KEY\"";
    format!(
        "Serving an agent on http://{addr}. Try (KEY: your API key or JWT):\n\
         \n  curl -s -X POST http://{addr}/conversations {auth}\
         \n  curl -s -X POST http://{addr}/conversations/ID/messages {auth} {json} -d '{{\"message\": \"Oslo\"}}'\
         \n  curl -N -X POST http://{addr}/conversations/ID/messages {auth} {json} -H 'accept: text/event-stream' -d '{{\"message\": \"Bergen\"}}'\
         \n  curl -s http://{addr}/conversations/ID {auth}\
         \n  curl -s -X POST http://{addr}/conversations/ID/messages {auth} {json} -d '{{\"message\": \"email ola@example.no: lunch?\"}}'\
         \n  curl -s http://{addr}/conversations/ID/approvals {auth}\
         \n  curl -s -X POST http://{addr}/conversations/ID/approvals/CALL {auth} {json} -d '{{\"decision\": \"approve\"}}'\
         \n  curl -s -X POST http://{addr}/conversations/ID/approvals/CALL {auth} {json} -d '{{\"decision\": \"reject\", \"reason\": \"not now\"}}'\
         \n  curl -s -X POST http://{addr}/conversations/ID/approvals/CALL {auth} {json} -d '{{\"decision\": \"edit\", \"arguments\": {{\"to\": \"kari@example.no\", \"text\": \"lunch?\"}}}}'\
         \n  curl -s http://{addr}/health\
         \n  curl -s http://{addr}/ready\n\
         \nSIGTERM or Ctrl-C stops it, letting running turns finish."
    )
}
