//! The mcp_agent example over its in-process notes service: the served tools ran through both
//! agents' hooks — the service's own, behind MCP, and the calling agent's pattern hooks.

use agentix::{Entry, message::ToolFailure};
use examples::mcp_agent::run;

#[tokio::test]
async fn the_notes_are_kept_and_read_over_mcp_and_the_delete_is_refused_before_it_is_sent() {
    let (outcome, conversation) = run(None, &|_| {}).await.unwrap();
    assert_eq!(outcome.unwrap().joined_text(), "Your grocery note says: milk, eggs. I kept it.");
    let results: Vec<_> = conversation
        .log()
        .iter()
        .filter_map(|entry| match entry {
            Entry::ToolResults { results, .. } => Some(results.clone()),
            _ => None,
        })
        .flatten()
        .collect();
    assert_eq!(results[0].output, "kept \"groceries\"");
    assert_eq!(results[1].output, "milk, eggs");
    let Some(ToolFailure::Rejected { by, reason }) = &results[2].error else {
        panic!("{:?}", results[2])
    };
    assert_eq!(
        (by.as_str(), reason.as_str()),
        ("never_delete", "this agent never deletes anything")
    );
    // Refused on this side: the note is still there.
    let again = examples::mcp_agent::notes_server().await.unwrap();
    assert!(again.names().contains(&"notes__read_note".to_owned()));
    assert_eq!(
        agentix::Agent::builder(agentix::ScriptedModel::new())
            .tools(again)
            .build()
            .call_tool(agentix::ToolCall::new(
                "1",
                "notes__read_note",
                serde_json::json!({ "title": "groceries" })
            ))
            .await
            .unwrap()
            .output,
        "milk, eggs"
    );
}
