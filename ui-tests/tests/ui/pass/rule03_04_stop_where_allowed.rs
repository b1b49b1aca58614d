//! Rules 3 and 4: STOP on the events that have it, carrying an `AssistantMessage`.

use agentix::event::{AfterModel, BeforeFinal, BeforeModel};
use agentix::{Agent, AssistantMessage, Conversation, ScriptedModel, Verdict, hook, model::ModelRequest};

#[hook(before_model)]
async fn cache(request: &ModelRequest) -> Verdict<BeforeModel> {
    if request.messages.last().is_some_and(|m| m.text() == "cached?") {
        return Verdict::stop(AssistantMessage::text("from the cache"));
    }
    Verdict::Continue
}

#[hook(after_model)]
async fn cut_short(message: &AssistantMessage) -> Verdict<AfterModel> {
    if message.joined_text().len() > 100 {
        return Verdict::stop(AssistantMessage::text("too long; summary follows"));
    }
    Verdict::Continue
}

#[hook(before_final)]
async fn canned(message: &AssistantMessage) -> Verdict<BeforeFinal> {
    if message.joined_text().is_empty() {
        return Verdict::stop(AssistantMessage::text("I have nothing to add."));
    }
    Verdict::Continue
}

fn main() {
    let model = ScriptedModel::new().text("");
    let agent = Agent::builder(&model).hook(cache).hook(cut_short).hook(canned).build();
    let mut conversation = Conversation::new();
    let cached = futures::executor::block_on(agent.run(&mut conversation, "cached?")).unwrap();
    assert_eq!(cached.joined_text(), "from the cache");
    let canned = futures::executor::block_on(agent.run(&mut conversation, "anything")).unwrap();
    assert_eq!(canned.joined_text(), "I have nothing to add.");
}
