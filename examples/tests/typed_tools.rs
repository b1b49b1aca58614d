//! The typed_tools example: the model's requests show the rewritten recipient and the trimmed
//! results, and the log records the call as the hook left it.

use agentix::{Entry, ToolResult};
use examples::typed_tools::{DOMAIN, run, specs};

#[tokio::test]
async fn the_hooks_edit_typed_values_and_the_model_sees_the_edits() {
    let (outcome, requests, conversation) = run(&|_| {}).await;
    assert_eq!(outcome.unwrap().joined_text(), "Sent the three best notes.");
    assert_eq!(requests.len(), 3);

    // The search results the model read: the three best of eight, best first.
    let results: Vec<&ToolResult> = requests[1].tool_results().collect();
    let notes: serde_json::Value = serde_json::from_str(&results[0].output).unwrap();
    let titles: Vec<&str> =
        notes.as_array().unwrap().iter().map(|note| note["title"].as_str().unwrap()).collect();
    assert_eq!(titles, ["ferry note 1", "ferry note 2", "ferry note 3"]);

    // The mail went to the company's domain, and the model was told so.
    let sent = requests[2].tool_results().find(|result| result.name == "send_email").unwrap();
    assert!(!sent.is_error(), "{sent:?}");
    assert!(sent.output.ends_with(&format!("to ola@{DOMAIN}: Ferry notes")), "{}", sent.output);
    // The log records the call as the hook left it, the same call the model's next request
    // shows.
    let logged = conversation
        .log()
        .iter()
        .filter_map(|entry| match entry {
            Entry::Assistant { message, .. } => {
                message.tool_calls().find(|call| call.name == "send_email")
            }
            _ => None,
        })
        .next()
        .unwrap();
    assert_eq!(logged.arguments["to"], format!("ola@{DOMAIN}"));
    let shown =
        requests[2].messages.iter().flat_map(|message| &message.content).find_map(
            |part| match part {
                agentix::Part::ToolCall(call) if call.name == "send_email" => Some(call),
                _ => None,
            },
        );
    assert_eq!(shown, Some(logged));
}

#[test]
fn the_model_sees_each_parameters_description() {
    let specs = specs();
    assert_eq!(specs[0].name, "send_email");
    assert_eq!(specs[0].description, "Sends an email. Returns the message id.");
    let to = &specs[0].parameters["properties"]["to"];
    assert_eq!(to["description"], "Who receives it: an email address.");
    assert_eq!(specs[0].parameters["required"], serde_json::json!(["to", "subject", "body"]));
    assert_eq!(specs[1].parameters["properties"]["query"]["type"], "string");
}
