//! What a server says while an agent uses it, over an in-process rmcp server: a changed tool
//! list offered from the next step, a call's progress in the stream, its questions to the
//! approver.

mod common;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use agentix::{
    Agent, Conversation, ScriptedModel, StreamEvent, ToolCall, Turn, Verdict,
    approval::{Approval, Question},
    event::BeforeModel,
    model::ModelRequest,
    verdict::Escalation,
};
use agentix_mcp::McpServer;
use common::{serve_in_memory, tool_results};
use futures::StreamExt;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ElicitRequestParams,
    ElicitationAction, ListToolsResult, PaginatedRequestParams, ProgressNotificationParam,
    ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::{ErrorData, ServerHandler};
use serde_json::{Value, json};

/// A workshop: `unlock` puts `secret` on its list (and says so), `slow` reports its progress,
/// `ask` asks the client which finish to use.
#[derive(Clone, Default)]
struct Workshop {
    unlocked: Arc<Mutex<bool>>,
    /// Told when the client lists the tools after `unlock`.
    listed: Arc<tokio::sync::Notify>,
}

fn tool(name: &'static str) -> Tool {
    let Value::Object(schema) = json!({ "type": "object" }) else { unreachable!() };
    Tool::new(name, format!("the {name} tool"), Arc::new(schema))
}

fn text(text: impl Into<String>) -> CallToolResponse {
    CallToolResult::success(vec![ContentBlock::text(text.into())]).into()
}

impl ServerHandler for Workshop {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder().enable_tools().enable_tool_list_changed().build(),
        )
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let mut tools = vec![tool("unlock"), tool("slow"), tool("ask"), tool("stall")];
        if *self.unlocked.lock().unwrap() {
            tools.push(tool("secret"));
            self.listed.notify_one();
        }
        Ok(ListToolsResult::with_all_items(tools))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let failed =
            |error: &dyn std::fmt::Display| ErrorData::internal_error(error.to_string(), None);
        match &*request.name {
            "unlock" => {
                *self.unlocked.lock().unwrap() = true;
                let listed = self.listed.notified();
                context.peer.notify_tool_list_changed().await.map_err(|e| failed(&e))?;
                // Answered once the client has the new list, as a slower server would be.
                let _ = tokio::time::timeout(Duration::from_secs(5), listed).await;
                Ok(text("unlocked"))
            }
            "secret" => Ok(text("the secret is 42")),
            "stall" => {
                context.ct.cancelled().await;
                Err(ErrorData::internal_error("cancelled", None))
            }
            "slow" => {
                let token = context.meta.get_progress_token().ok_or_else(|| failed(&"no token"))?;
                for step in 1..=3 {
                    let report = ProgressNotificationParam::new(token.clone(), f64::from(step))
                        .with_total(3.0)
                        .with_message(format!("step {step} of 3"));
                    context.peer.notify_progress(report).await.map_err(|e| failed(&e))?;
                }
                Ok(text("slow done"))
            }
            "ask" => {
                let asked: ElicitRequestParams = serde_json::from_value(json!({
                    "mode": "form",
                    "message": "Which finish?",
                    "requestedSchema": {
                        "type": "object",
                        "properties": { "finish": { "type": "string" } },
                        "required": ["finish"]
                    }
                }))
                .map_err(|e| failed(&e))?;
                let answer =
                    context.peer.create_elicitation(asked).await.map_err(|e| failed(&e))?;
                Ok(text(match answer.action {
                    ElicitationAction::Accept => {
                        format!("finished {}", answer.content.unwrap_or_default())
                    }
                    ElicitationAction::Decline => "declined".to_owned(),
                    _ => "cancelled".to_owned(),
                }))
            }
            other => Err(ErrorData::invalid_params(format!("no tool {other}"), None)),
        }
    }
}

/// The names of the tools each request offered.
#[derive(Clone, Default)]
struct Offered(Arc<Mutex<Vec<Vec<String>>>>);

impl agentix::on::BeforeModel for Offered {
    async fn before_model(&self, request: &mut ModelRequest, _: &mut Turn) -> Verdict<BeforeModel> {
        let names = request.tools.iter().map(|spec| spec.name.clone()).collect();
        self.0.lock().unwrap().push(names);
        Verdict::Continue
    }
}

async fn workshop() -> agentix_mcp::McpTools {
    let (ours, _served) = serve_in_memory(Workshop::default());
    McpServer::named("shop").connect_with(ours, "a pipe").await.unwrap()
}

#[tokio::test]
async fn a_list_the_server_changes_during_a_call_is_offered_from_the_next_step() {
    let tools = workshop().await;
    assert_eq!(tools.names(), ["shop__unlock", "shop__slow", "shop__ask", "shop__stall"]);
    let offered = Offered::default();
    let model = ScriptedModel::new()
        .tool_call("shop__unlock", json!({}))
        .tool_call("shop__secret", json!({}))
        .text("42 it is");
    let agent = Agent::builder(model).tools(tools).hook(offered.clone()).build();
    let mut conversation = Conversation::new();
    agent.run(&mut conversation, "find the secret").await.unwrap();
    let offered = offered.0.lock().unwrap().clone();
    assert_eq!(offered[0], ["shop__unlock", "shop__slow", "shop__ask", "shop__stall"]);
    assert_eq!(
        offered[1],
        ["shop__unlock", "shop__slow", "shop__ask", "shop__stall", "shop__secret"]
    );
    let outputs: Vec<&str> =
        tool_results(&conversation).iter().map(|result| result.output.as_str()).collect();
    assert_eq!(outputs, ["unlocked", "the secret is 42"]);
}

#[tokio::test]
async fn a_calls_progress_reaches_the_stream_while_it_runs() {
    let model = ScriptedModel::new().tool_call("shop__slow", json!({})).text("done");
    let agent = Agent::builder(model).tools(workshop().await).build();
    let mut conversation = Conversation::new();
    let events: Vec<StreamEvent> = agent.turn(&mut conversation, "go").stream().collect().await;
    let progress: Vec<(f64, Option<f64>, String)> = events
        .iter()
        .filter_map(|event| match event {
            StreamEvent::ToolProgress { name, progress, .. } if name == "shop__slow" => Some((
                progress.progress,
                progress.total,
                progress.message.clone().unwrap_or_default(),
            )),
            _ => None,
        })
        .collect();
    assert_eq!(
        progress,
        [
            (1.0, Some(3.0), "step 1 of 3".to_owned()),
            (2.0, Some(3.0), "step 2 of 3".to_owned()),
            (3.0, Some(3.0), "step 3 of 3".to_owned()),
        ]
    );
    let last_progress = events.iter().rposition(|e| matches!(e, StreamEvent::ToolProgress { .. }));
    let result = events.iter().position(|e| matches!(e, StreamEvent::ToolResult(_)));
    assert!(last_progress < result, "{events:?}");
}

/// Answers the server's questions: a matte finish.
struct Painter(Arc<Mutex<Vec<Question>>>);

impl agentix::approval::Approver for Painter {
    async fn review(&self, _: &ToolCall, _: &Escalation, _: &Turn) -> Approval {
        Approval::Reject("no calls are escalated here".to_owned())
    }

    async fn review_question(&self, call: &ToolCall, question: &Question, _: &Turn) -> Approval {
        assert_eq!(call.name, "shop__ask");
        self.0.lock().unwrap().push(question.clone());
        Approval::Edit(ToolCall::new("", "", json!({ "finish": "matte" })))
    }
}

#[tokio::test]
async fn a_servers_question_goes_to_the_approver_and_its_answer_back() {
    let asked = Arc::new(Mutex::new(Vec::new()));
    let model = ScriptedModel::new().tool_call("shop__ask", json!({})).text("painted");
    let agent =
        Agent::builder(model).tools(workshop().await).approver(Painter(asked.clone())).build();
    let mut conversation = Conversation::new();
    agent.run(&mut conversation, "paint it").await.unwrap();
    assert_eq!(tool_results(&conversation)[0].output, r#"finished {"finish":"matte"}"#);
    let asked = asked.lock().unwrap();
    assert_eq!(asked.len(), 1);
    assert_eq!(asked[0].asked_by, "the MCP server `shop`");
    assert_eq!(asked[0].message, "Which finish?");
    assert_eq!(asked[0].schema["required"], json!(["finish"]));
}

#[tokio::test]
async fn without_an_approver_for_questions_the_server_hears_a_decline() {
    let model = ScriptedModel::new().tool_call("shop__ask", json!({})).text("unpainted");
    let agent = Agent::builder(model).tools(workshop().await).build();
    let mut conversation = Conversation::new();
    agent.run(&mut conversation, "paint it").await.unwrap();
    assert_eq!(tool_results(&conversation)[0].output, "declined");
}

#[tokio::test]
async fn a_call_dropped_at_its_timeout_leaves_the_next_calls_question_to_the_approver() {
    let asked = Arc::new(Mutex::new(Vec::new()));
    let model = ScriptedModel::new()
        .tool_call("shop__stall", json!({}))
        .tool_call("shop__ask", json!({}))
        .text("painted");
    let agent =
        Agent::builder(model).tools(workshop().await).approver(Painter(asked.clone())).build();
    let config = agentix::Config {
        tool_timeout: Some(Duration::from_millis(100)),
        ..agentix::Config::default()
    };
    let mut conversation = Conversation::with_config(config);
    agent.run(&mut conversation, "paint it").await.unwrap();
    let results = tool_results(&conversation);
    assert!(
        matches!(results[0].error, Some(agentix::message::ToolFailure::TimedOut { .. })),
        "{results:?}"
    );
    // The dropped call no longer counts as running: the question has one call to go to.
    assert_eq!(results[1].output, r#"finished {"finish":"matte"}"#);
    assert_eq!(asked.lock().unwrap().len(), 1);
}
