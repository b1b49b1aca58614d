//! Answer from the cache (seed 002, example 4): a `before_model` hook stops the call with a
//! cached assistant message when the question was answered before, and a `post` hook fills the
//! cache. One hook struct holds the cache and handles both events.

use std::collections::HashMap;
use std::sync::Mutex;

use agentix::event::{BeforeModel, EventKind, EventSet, Post};
use agentix::{
    Agent, AssistantMessage, Conversation, Hook, Outcome, ScriptedModel, Turn, Verdict,
    model::ModelRequest,
};

use crate::trace;

/// Answers by question, shared by the two events.
#[derive(Default)]
pub struct AnswerCache {
    answers: Mutex<HashMap<String, AssistantMessage>>,
}

#[agentix::hook]
impl Hook for AnswerCache {
    const EVENTS: EventSet = EventSet::of(EventKind::BeforeModel).with(EventKind::Post);

    fn name(&self) -> &'static str {
        "answer_cache"
    }

    /// A question answered before stops the call: the cached answer is the model's response.
    async fn before_model(
        &self,
        _request: &mut ModelRequest,
        turn: &mut Turn,
    ) -> Verdict<BeforeModel> {
        let question = turn.user_message().text().into_owned();
        match self.answers.lock().unwrap().get(&question) {
            Some(answer) => Verdict::stop(answer.clone()),
            None => Verdict::Continue,
        }
    }

    /// Every answer the turn ends with is cached under its question.
    async fn post(&self, outcome: &Outcome, turn: &mut Turn) -> Verdict<Post> {
        if let Ok(answer) = outcome {
            let question = turn.user_message().text().into_owned();
            self.answers.lock().unwrap().insert(question, answer.clone());
        }
        Verdict::Continue
    }
}

/// The question asked twice.
pub const QUESTION: &str = "How long is the ferry from Oslo to Kiel?";

/// Asks the same question twice; the model has one answer and is called once. Returns both
/// outcomes and how many times the model was called.
pub async fn run(out: &(dyn Fn(&str) + Sync)) -> (Outcome, Outcome, usize) {
    let model = ScriptedModel::new().text("About 20 hours; it leaves Oslo at 14:00.");
    let agent = Agent::builder(&model).hook(AnswerCache::default()).build();
    let mut conversation = Conversation::new();
    let observer = trace::observer(out);
    out("== first time: the model answers");
    let first = agent.turn(&mut conversation, QUESTION).observe(&observer).await;
    trace::outcome(out, &first);
    out("== second time: the cache answers, the model is not called");
    let second = agent.turn(&mut conversation, QUESTION).observe(&observer).await;
    trace::outcome(out, &second);
    out(&format!("model calls: {}", model.calls()));
    (first, second, model.calls())
}
