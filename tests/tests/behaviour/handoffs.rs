//! Handoffs: the model hands the rest of its turn to another agent through
//! `transfer_to_<agent>`; that agent answers the user, seeing the conversation as the
//! handoff's `History` says; its answer is the turn's, through the handing agent's own
//! `before_final` hooks; the log records the handoff right before the answer.

use agentix::event::BeforeFinal;
use agentix::prelude::*;
use agentix::{
    Entry, Message,
    delegate::{Handoff, History},
    message::ToolFailure,
};
use serde_json::json;

fn transfer() -> ScriptedModel {
    ScriptedModel::new().tool_call("transfer_to_billing", json!({}))
}

/// What each request `model` got shows of the conversation: the text of each message.
fn seen(model: &ScriptedModel, request: usize) -> Vec<String> {
    let messages: Vec<Message> = model.requests()[request].messages.clone();
    messages.iter().map(|message| message.text().into_owned()).collect()
}

#[tokio::test]
async fn the_receiving_agent_answers_the_user_and_the_log_records_the_handoff() {
    let billing_model = ScriptedModel::new().text("Your invoice is paid.");
    let billing = Agent::builder(&billing_model).build();
    let model = transfer();
    let triage = Agent::builder(&model)
        .handoff(Handoff::new("billing", "Answers questions about invoices.", billing))
        .build();
    let mut conversation = Conversation::new();
    let answer = triage.run(&mut conversation, "Is my invoice paid?").await.unwrap();
    assert_eq!(answer.joined_text(), "Your invoice is paid.");
    assert_eq!(model.calls(), 1, "the handing model was not called again");
    // The handoff tool was offered with no arguments, described by what it hands to.
    let spec = &model.requests()[0].tools[0];
    assert_eq!(spec.name, "transfer_to_billing");
    assert!(spec.description.contains("Answers questions about invoices."));
    // User, the call, its result naming who answered, the answer.
    let log = conversation.log();
    assert_eq!(log.len(), 4, "{log:#?}");
    let results = tests::logged_results(&conversation);
    assert_eq!(results[0].name, "transfer_to_billing");
    assert_eq!(results[0].output, "`billing` answered the user");
    let Entry::Assistant { message, .. } = &log[3] else { panic!("{log:#?}") };
    assert_eq!(message.joined_text(), "Your invoice is paid.");
    tests::assert_log_consistent(log);
    assert_eq!(seen(&billing_model, 0), ["Is my invoice paid?"]);
}

async fn second_turn_seen_by(history: History) -> Vec<String> {
    let billing_model = ScriptedModel::new().text("Paid.");
    let billing = Agent::builder(&billing_model).build();
    let model = ScriptedModel::new()
        .tool_call("get_weather", json!({ "city": "Oslo" }))
        .text("Sunny in Oslo.")
        .tool_call("transfer_to_billing", json!({}));
    let triage = Agent::builder(&model)
        .tool(tests::Weather::default())
        .handoff(Handoff::new("billing", "Invoices.", billing).history(history))
        .build();
    let mut conversation = Conversation::new();
    triage.run(&mut conversation, "Weather in Oslo?").await.unwrap();
    let answer = triage.run(&mut conversation, "Is my invoice paid?").await.unwrap();
    assert_eq!(answer.joined_text(), "Paid.");
    seen(&billing_model, 0)
}

#[tokio::test]
async fn the_history_says_what_the_receiving_agent_sees() {
    // Each earlier turn's user message and answer, not its tool calls.
    assert_eq!(
        second_turn_seen_by(History::Answers).await,
        ["Weather in Oslo?", "Sunny in Oslo.", "Is my invoice paid?"]
    );
    assert_eq!(second_turn_seen_by(History::LastTurns(0)).await, ["Is my invoice paid?"]);
    assert_eq!(second_turn_seen_by(History::Nothing).await, ["Is my invoice paid?"]);
    // A filter that keeps the earlier log whole: the tool call and its result too.
    let whole = second_turn_seen_by(History::Filter(|earlier| earlier.to_vec())).await;
    assert_eq!(whole.len(), 5, "{whole:?}");
}

#[tokio::test]
async fn a_filter_that_keeps_no_log_fails_the_handoff_naming_the_rule() {
    let billing = Agent::builder(ScriptedModel::new()).build();
    // Half a turn: its answer without its user message.
    let half = History::Filter(|earlier| earlier[1..].to_vec());
    let model = ScriptedModel::new()
        .text("Hello.")
        .tool_call("transfer_to_billing", json!({}))
        .text("Billing is away.");
    let triage = Agent::builder(&model)
        .handoff(Handoff::new("billing", "Invoices.", billing).history(half))
        .build();
    let mut conversation = Conversation::new();
    triage.run(&mut conversation, "Hi").await.unwrap();
    let answer = triage.run(&mut conversation, "Invoice?").await.unwrap();
    assert_eq!(answer.joined_text(), "Billing is away.");
    let results = tests::logged_results(&conversation);
    let Some(ToolFailure::Failed { message }) = &results[0].error else { panic!("{results:?}") };
    assert!(message.starts_with("the history for `billing` is no log"), "{message}");
}

/// The handing agent's own guard on its final answers.
#[hook(before_final)]
async fn signed(message: &mut AssistantMessage) -> Verdict<BeforeFinal> {
    let text = format!("{} (triage)", message.joined_text());
    *message = AssistantMessage::text(text);
    Verdict::Continue
}

#[tokio::test]
async fn the_handing_agents_before_final_hooks_see_the_answer() {
    let billing = Agent::builder(ScriptedModel::new().text("Paid.")).build();
    let triage = Agent::builder(transfer())
        .handoff(Handoff::new("billing", "Invoices.", billing))
        .hook(signed)
        .build();
    let answer = triage.run(&mut Conversation::new(), "Invoice?").await.unwrap();
    assert_eq!(answer.joined_text(), "Paid. (triage)");
}

#[tokio::test]
async fn a_failing_receiving_agent_is_a_failed_call_and_the_turn_goes_on() {
    let billing = Agent::builder(ScriptedModel::new()).build();
    let model = transfer().text("Billing is away; try later.");
    let triage =
        Agent::builder(&model).handoff(Handoff::new("billing", "Invoices.", billing)).build();
    let mut conversation = Conversation::new();
    let answer = triage.run(&mut conversation, "Invoice?").await.unwrap();
    assert_eq!(answer.joined_text(), "Billing is away; try later.");
    let results = tests::logged_results(&conversation);
    let Some(ToolFailure::Failed { message }) = &results[0].error else { panic!("{results:?}") };
    assert!(message.starts_with("the agent `billing` failed"), "{message}");
}

#[tokio::test]
async fn two_handoffs_in_one_step_the_second_is_refused() {
    let billing = Agent::builder(ScriptedModel::new().text("Paid.")).build();
    let model = ScriptedModel::new()
        .tool_calls([("transfer_to_billing", json!({})), ("transfer_to_billing", json!({}))]);
    let triage =
        Agent::builder(&model).handoff(Handoff::new("billing", "Invoices.", billing)).build();
    let mut conversation = Conversation::new();
    let answer = triage.run(&mut conversation, "Invoice?").await.unwrap();
    assert_eq!(answer.joined_text(), "Paid.");
    let results = tests::logged_results(&conversation);
    assert!(results[0].error.is_none());
    let Some(ToolFailure::Failed { message }) = &results[1].error else { panic!("{results:?}") };
    assert_eq!(message, "the turn was already handed to another agent");
}

#[tokio::test]
async fn a_handoff_in_the_last_step_the_limit_allows_still_answers() {
    let billing = Agent::builder(ScriptedModel::new().text("Paid.")).build();
    let triage =
        Agent::builder(transfer()).handoff(Handoff::new("billing", "Invoices.", billing)).build();
    let config = agentix::Config { max_steps: 1, ..Default::default() };
    let answer = triage.run(&mut Conversation::with_config(config), "Invoice?").await.unwrap();
    assert_eq!(answer.joined_text(), "Paid.");
}

#[tokio::test]
async fn the_handing_models_note_reaches_the_receiving_agent() {
    let billing_model = ScriptedModel::new().text("Paid on the 3rd.");
    let billing = Agent::builder(&billing_model).build();
    let model = ScriptedModel::new()
        .tool_call("transfer_to_billing", json!({ "note": "Invoice 17, found paid on the 3rd." }));
    let triage =
        Agent::builder(&model).handoff(Handoff::new("billing", "Invoices.", billing)).build();
    triage.run(&mut Conversation::new(), "Is invoice 17 paid?").await.unwrap();
    let asked = billing_model.requests()[0].messages.last().unwrap().text().into_owned();
    assert!(asked.starts_with("Is invoice 17 paid?"), "{asked}");
    assert!(asked.contains("(Handed over with this note: Invoice 17, found paid on the 3rd.)"));
    let schema = &model.requests()[0].tools[0].parameters;
    assert_eq!(schema["properties"]["note"]["type"], "string");
}

/// Sends back any answer that does not thank the user.
#[hook(before_final)]
async fn polite(message: &AssistantMessage) -> Verdict<BeforeFinal> {
    if message.joined_text().contains("Thanks") {
        Verdict::Continue
    } else {
        Verdict::retry("thank the user")
    }
}

#[tokio::test]
async fn a_handed_answer_sent_back_goes_to_the_handing_model() {
    let billing = Agent::builder(ScriptedModel::new().text("Paid.")).build();
    let model = transfer().text("Paid. Thanks for asking!");
    let triage = Agent::builder(&model)
        .handoff(Handoff::new("billing", "Invoices.", billing))
        .hook(polite)
        .build();
    let answer = triage.run(&mut Conversation::new(), "Invoice?").await.unwrap();
    assert_eq!(answer.joined_text(), "Paid. Thanks for asking!");
    // The handing model saw the handed answer sent back, with the feedback.
    let last = model.requests()[1].messages.last().unwrap().text().into_owned();
    assert!(last.contains("thank the user"), "{last}");
}
