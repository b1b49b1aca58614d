//! A running summary: a `post, durable` hook writes one line per turn; it joins the log, so
//! every later turn's request carries the summaries of the turns before it — while what a
//! transient hook injects is gone after its turn.

use agentix::{
    Agent, Conversation, Entry, Outcome, Part, ScriptedModel, Turn, hook, model::ModelRequest,
};

use crate::trace;

/// `post, durable`: one line per completed turn, kept in the log.
#[hook(post, durable)]
async fn running_summary(outcome: &Outcome, turn: &mut Turn) {
    if let Ok(answer) = outcome {
        let question = turn.user_message().text().into_owned();
        turn.inject(format!(
            "Summary of turn {}: asked {question:?}; answered {:?}.",
            turn.turn_ref().0,
            answer.joined_text()
        ));
    }
}

/// `pre` (transient): today's date, for this turn only.
#[hook(pre)]
async fn today(turn: &mut Turn) {
    turn.inject("Today is 2026-11-22.");
}

/// The three questions of the example.
pub const QUESTIONS: [&str; 3] =
    ["Book the ferry to Kiel.", "Add a cabin for two.", "What have we booked so far?"];

/// Three turns. Returns the conversation and the requests the model saw.
pub async fn run(out: &(dyn Fn(&str) + Sync)) -> (Conversation, Vec<ModelRequest>) {
    let model = ScriptedModel::new()
        .text("Booked: Oslo–Kiel ferry, Friday 14:00.")
        .text("Added: an outside cabin for two.")
        .text("The Friday ferry to Kiel, with an outside cabin for two.");
    let agent = Agent::builder(&model).hook(running_summary).hook(today).build();
    let mut conversation = Conversation::new();
    for question in QUESTIONS {
        out(&format!("== {question}"));
        let outcome = agent.turn(&mut conversation, question).observe(&trace::observer(out)).await;
        trace::outcome(out, &outcome);
    }
    out("the summaries in the log (durable):");
    for entry in conversation.log() {
        if let Entry::HookOutput { hook, parts, .. } = entry {
            out(&format!(
                "  {hook}: {}",
                parts.iter().filter_map(Part::as_text).collect::<String>()
            ));
        }
    }
    (conversation, model.requests())
}
