//! Two minds (Patinox UC-4.5): an `after_model` hook sends the creator's draft to a separate
//! critic model and asks the creator to retry with the critique until the critic passes it —
//! or the retry bound ends the turn.

use agentix::event::AfterModel;
use agentix::{
    Agent, AssistantMessage, Config, Conversation, Message, Model, Outcome, ScriptedModel, Turn,
    Verdict, model::ModelRequest, on,
};

use crate::trace;

/// The critic's verdict that lets a draft through.
pub const PASS: &str = "PASS";

/// `after_model`, as a struct: it owns the critic model.
pub struct Critic<M> {
    model: M,
}

impl<M: Model> on::AfterModel for Critic<M> {
    fn name(&self) -> &'static str {
        "critic"
    }

    async fn after_model(
        &self,
        draft: &mut AssistantMessage,
        turn: &mut Turn,
    ) -> Verdict<AfterModel> {
        if draft.calls_tools() {
            return Verdict::Continue;
        }
        let question = turn.user_message().text().into_owned();
        let review = ModelRequest {
            system: Some("You review answers. Reply PASS, or say what to fix.".into()),
            messages: vec![Message::user(format!(
                "Question: {question}\nAnswer: {}",
                draft.joined_text()
            ))],
            ..ModelRequest::default()
        };
        match self.model.complete(&review).await {
            Ok(critique) if critique.message.joined_text().starts_with(PASS) => Verdict::Continue,
            Ok(critique) => {
                Verdict::retry(format!("A reviewer says: {}", critique.message.joined_text()))
            }
            // No critic, no gate: the draft goes out rather than the turn failing.
            Err(_) => Verdict::Continue,
        }
    }
}

/// Two turns: a draft the critic passes on the third try, and one it never passes (two retries
/// allowed per turn). Returns both outcomes, the conversation, the requests the creator saw and
/// how many the critic reviewed.
pub async fn run(
    out: &(dyn Fn(&str) + Sync),
) -> (Outcome, Outcome, Conversation, Vec<ModelRequest>, usize) {
    let creator = ScriptedModel::new()
        .text("The meeting is soon.")
        .text("The meeting is on Monday.")
        .text("The meeting is on Monday 30 November at 10:00, in room 4.")
        .text("Bring snacks.")
        .text("Bring snacks, please.")
        .text("Please bring snacks.");
    let critic = ScriptedModel::new()
        .text("Too vague: give the day.")
        .text("Give the time and the place too.")
        .text("PASS")
        .text("Say what kind of snacks.")
        .text("Still not specific.")
        .text("Still not specific.");
    let agent = Agent::builder(&creator).hook(Critic { model: &critic }).build();
    let mut conversation =
        Conversation::with_config(Config { max_retries: 2, ..Config::default() });
    let observer = trace::observer(out);

    out("== the critic is satisfied on the third draft:");
    let first = agent.turn(&mut conversation, "When is the meeting?").observe(&observer).await;
    trace::outcome(out, &first);
    out("== the critic is never satisfied; the bound ends the turn:");
    let second = agent.turn(&mut conversation, "What should I bring?").observe(&observer).await;
    trace::outcome(out, &second);
    trace::log(out, &conversation);
    (first, second, conversation, creator.requests(), critic.calls())
}
