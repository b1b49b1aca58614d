//! Plan first (after seed 002, example 1): an `after_model` hook asks for a retry, with
//! feedback, whenever the model answers without a `<plan>`. The seed checks at
//! `before_final_response`; `after_model` sees every answer as it arrives, so a hook there also
//! catches a plan-less answer before any tool runs (`before_final` would do for final answers
//! only). Retries are bounded: a model that never complies ends the turn with
//! `Error::RetryLimit`, naming the hook.

use agentix::event::AfterModel;
use agentix::{
    Agent, AssistantMessage, Config, Conversation, Outcome, ScriptedModel, Verdict, hook,
    model::ModelRequest,
};

use crate::trace;

/// `after_model`: no plan, no answer. Tool calls pass: the plan comes with the final answer.
#[hook(after_model)]
async fn require_plan(message: &AssistantMessage) -> Verdict<AfterModel> {
    if message.calls_tools() || message.joined_text().starts_with("<plan>") {
        Verdict::Continue
    } else {
        Verdict::retry("Start with a <plan>…</plan> of the steps you will take, then answer.")
    }
}

/// Two turns: one where the model complies on the second try, one where it never does (the
/// conversation allows two retries per turn). Returns both outcomes, the conversation, the
/// requests of the first turn, and how many calls the second made.
pub async fn run(
    out: &(dyn Fn(&str) + Sync),
) -> (Outcome, Outcome, Conversation, Vec<ModelRequest>, usize) {
    let complies = ScriptedModel::new()
        .text("Paris is the capital of France.")
        .text("<plan>1. Recall the capital.</plan> Paris is the capital of France.");
    let agent = Agent::builder(&complies).hook(require_plan).build();
    let mut conversation =
        Conversation::with_config(Config { max_retries: 2, ..Config::default() });
    let observer = trace::observer(out);

    out("== a model that learns:");
    let first =
        agent.turn(&mut conversation, "What is the capital of France?").observe(&observer).await;
    trace::outcome(out, &first);
    let retried = complies.requests().last().map(|request| request.messages.len()).unwrap_or(0);
    out(&format!(
        "   (the retry's request carried {retried} messages: the question, the rejected answer, the feedback)"
    ));

    out("== a model that never plans:");
    let stubborn = ScriptedModel::new().text("Rome.").text("Rome!").text("Rome, really.");
    let agent = Agent::builder(&stubborn).hook(require_plan).build();
    let second = agent.turn(&mut conversation, "And of Italy?").observe(&observer).await;
    trace::outcome(out, &second);
    trace::log(out, &conversation);
    (first, second, conversation, complies.requests(), stubborn.calls())
}
