//! Approval by pattern on the real loop: the calls a pattern names reach the approver with
//! their arguments, the others run untouched — native tools by name, an MCP server's by the
//! server's name (an in-process MCP server).

use std::sync::{Arc, Mutex};

use agentix::{
    Agent, Conversation, ScriptedModel, ToolCall, approval::Approval, message::ToolFailure,
    verdict::Escalation,
};
use agentix_hooks::ApproveByPattern;
use serde_json::json;
use tests::{Flaky, Weather};

/// Says no, and keeps what it was asked.
#[derive(Clone, Default)]
struct Refuses(Arc<Mutex<Vec<(ToolCall, String)>>>);

impl agentix::approval::Approver for Refuses {
    async fn review(
        &self,
        call: &ToolCall,
        escalation: &Escalation,
        _turn: &agentix::Turn,
    ) -> Approval {
        self.0.lock().unwrap().push((call.clone(), escalation.reason.clone()));
        Approval::Reject("not today".into())
    }
}

#[tokio::test]
async fn the_calls_a_pattern_names_reach_the_approver_with_their_arguments() {
    let model = ScriptedModel::new()
        .tool_calls([
            ("get_weather", json!({ "city": "Oslo" })),
            ("flaky", json!({ "city": "Bergen" })),
        ])
        .text("Done.");
    let approver = Refuses::default();
    let agent = Agent::builder(&model)
        .tool(Weather::default())
        .tool(Flaky { failures: 0, calls: Arc::default() })
        .hook(ApproveByPattern::tools(["fla*"]).unwrap())
        .approver(approver.clone())
        .build();
    let mut conversation = Conversation::new();
    agent.run(&mut conversation, "go").await.unwrap();

    let asked = approver.0.lock().unwrap().clone();
    assert_eq!(asked.len(), 1, "only the call the pattern names: {asked:?}");
    let (call, reason) = &asked[0];
    assert_eq!(call.name, "flaky");
    assert_eq!(call.arguments, json!({ "city": "Bergen" }));
    assert_eq!(reason, r#"`flaky` matches `fla*`; arguments: {"city":"Bergen"}"#);
    let results = tests::logged_results(&conversation);
    assert!(results[0].error.is_none(), "the weather call ran");
    assert!(matches!(results[1].error, Some(ToolFailure::Rejected { .. })));
}

#[tokio::test]
async fn long_arguments_are_cut_in_the_reason_and_whole_in_the_call() {
    // Two bytes a character: byte 500 falls inside one.
    let long = "ä".repeat(1_000);
    let model =
        ScriptedModel::new().tool_call("get_weather", json!({ "city": long })).text("Done.");
    let approver = Refuses::default();
    let agent = Agent::builder(&model)
        .tool(Weather::default())
        .hook(ApproveByPattern::tools(["get_*"]).unwrap())
        .approver(approver.clone())
        .build();
    agent.run(&mut Conversation::new(), "go").await.unwrap();
    let (call, reason) = approver.0.lock().unwrap()[0].clone();
    assert_eq!(call.arguments["city"].as_str().map(|city| city.chars().count()), Some(1_000));
    assert!(reason.ends_with('…') && reason.len() < 600, "{} bytes", reason.len());
}

#[tokio::test]
async fn an_mcp_servers_tools_are_named_by_the_server() {
    let tools = examples::mcp_agent::notes_server().await.unwrap();
    let model = ScriptedModel::new()
        .tool_call("notes__read_note", json!({ "title": "groceries" }))
        .text("Done.");
    let approver = Refuses::default();
    let agent = Agent::builder(&model)
        .tools(tools)
        .hook(ApproveByPattern::new().servers(["no*"]).unwrap())
        .approver(approver.clone())
        .build();
    agent.run(&mut Conversation::new(), "go").await.unwrap();
    let asked = approver.0.lock().unwrap().clone();
    assert_eq!(asked.len(), 1);
    assert!(
        asked[0].1.starts_with(
            "`notes__read_note` is a tool of the MCP server `notes`, which matches `no*`"
        ),
        "{}",
        asked[0].1
    );
}

#[test]
fn a_pattern_no_tool_name_could_match_is_refused_when_made() {
    let refused = ApproveByPattern::tools(["send email"]).unwrap_err();
    assert_eq!(refused.pattern, "send email");
    assert!(ApproveByPattern::tools(["ok"]).unwrap().servers([""]).is_err());
}
