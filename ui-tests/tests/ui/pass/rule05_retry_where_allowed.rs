//! Rule 5: RETRY on `after_model` and `before_final`, with and without feedback.

use agentix::event::{AfterModel, BeforeFinal};
use agentix::{Agent, AssistantMessage, Conversation, ScriptedModel, Verdict, hook};

#[hook(after_model)]
async fn require_plan(message: &AssistantMessage) -> Verdict<AfterModel> {
    if message.joined_text().starts_with("<plan>") { Verdict::Continue } else { Verdict::retry("plan first") }
}

#[hook(before_final)]
async fn not_too_short(message: &AssistantMessage) -> Verdict<BeforeFinal> {
    if message.joined_text().len() < 12 { Verdict::retry_silently() } else { Verdict::Continue }
}

fn main() {
    let model = ScriptedModel::new().text("sure").text("<plan>").text("<plan> then the answer");
    let agent = Agent::builder(&model).hook(require_plan).hook(not_too_short).build();
    let reply = futures::executor::block_on(agent.run(&mut Conversation::new(), "go")).unwrap();
    assert_eq!(reply.joined_text(), "<plan> then the answer");
    assert_eq!(model.calls(), 3);
}
