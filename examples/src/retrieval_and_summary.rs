//! Retrieval and memory: parallel `pre` hooks inject fenced documents for the turn (transient),
//! and a `post, durable` hook keeps a running summary in the log that every later turn sees.

use std::sync::Arc;

use agentix::{
    Agent, AuditLog, Conversation, Entry, ModelRequest, Outcome, Part, Role, ScriptedModel, Turn,
    TurnRef, fence, hook,
};

/// A tiny document store: (title, keywords, text).
const DOCUMENTS: [(&str, &[&str], &str); 3] = [
    (
        "ferries.md",
        &["ferry", "kiel"],
        "The Oslo–Kiel ferry leaves daily at 14:00 and takes 20 hours.",
    ),
    ("trains.md", &["train", "night"], "Night trains from Oslo to Bergen leave at 23:25."),
    ("weather.md", &["rain", "weather"], "Bergen has about 240 days of rain a year."),
];

/// `pre, parallel`: finds the documents the question mentions and fences them, since retrieved
/// text is untrusted.
#[hook(pre, parallel)]
async fn search_documents(turn: &Turn) -> Vec<Part> {
    let question = turn.user_message().text().to_lowercase();
    let words: Vec<&str> = question.split(|c: char| !c.is_alphanumeric()).collect();
    DOCUMENTS
        .iter()
        .filter(|(_, keywords, _)| {
            keywords.iter().any(|keyword| words.iter().any(|word| word.starts_with(keyword)))
        })
        .map(|(title, _, text)| Part::text(fence(title, text)))
        .collect()
}

/// `pre, parallel`: reminds the model how to answer; runs beside the search.
#[hook(pre, parallel)]
async fn house_style(_turn: &Turn) -> Part {
    Part::text("Answer in one sentence and name the document you used.")
}

/// `post, durable`: keeps a running summary; it joins the log, and every later turn sees it.
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

/// The three questions of the example.
pub const QUESTIONS: [&str; 3] = [
    "When does the ferry to Kiel leave?",
    "And the night trains to Bergen?",
    "Will it rain in Bergen?",
];

/// Runs three turns, writing what each turn's request contained and what the log kept; returns
/// the conversation and every request sent.
pub async fn run(out: &(dyn Fn(&str) + Sync)) -> (Conversation, Vec<(TurnRef, ModelRequest)>) {
    let model = ScriptedModel::new()
        .text("The ferry leaves daily at 14:00 (ferries.md).")
        .text("Night trains leave at 23:25 (trains.md).")
        .text("Probably: Bergen has about 240 rainy days a year (weather.md).");
    let audit = Arc::new(AuditLog::new());
    let agent = Agent::builder(model)
        .system("You are a travel assistant.")
        .hook(search_documents)
        .hook(house_style)
        .hook(running_summary)
        .audit(audit.clone())
        .build();

    let mut conversation = Conversation::new();
    for question in QUESTIONS {
        let reply = agent.run(&mut conversation, question).await;
        let records = audit.records();
        let (turn, request) = records.last().expect("every turn calls the model");
        out(&format!("== {turn}: {question}"));
        for message in &request.messages {
            let role = match message.role {
                Role::System => "system",
                Role::User => "user",
                Role::Assistant => "assistant",
                Role::Tool => "tool",
            };
            for part in &message.content {
                let text = part.as_text().unwrap_or("(a tool part)");
                for line in text.lines() {
                    out(&format!("   {role:>9} | {line}"));
                }
            }
        }
        match reply {
            Ok(answer) => out(&format!("   reply: {}", answer.joined_text())),
            Err(error) => out(&format!("   error: {error}")),
        }
    }
    out("== the log keeps the summaries (durable), not the documents (transient):");
    for entry in conversation.log() {
        if let Entry::HookOutput { hook, parts, .. } = entry {
            out(&format!(
                "   {hook}: {}",
                parts.iter().filter_map(Part::as_text).collect::<String>()
            ));
        }
    }
    (conversation, audit.records())
}
