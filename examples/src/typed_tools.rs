//! Typed tools and per-tool hooks: `send_email` and `search` are `#[tool]` functions; a
//! `before_tool` hook on `send_email` keeps mail inside the company by rewriting the recipient's
//! domain on the typed arguments (the log records the rewritten call), and an `after_tool` hook on
//! `search` trims the typed results before they are rendered for the model. Neither hook parses
//! JSON or compares a tool's name; a hook naming a tool the agent lacks, or taking another
//! tool's arguments, does not compile.

use agentix::prelude::*;
use agentix::{Outcome, tool::ToolSpec};

use crate::trace;

/// The company's own mail domain.
pub const DOMAIN: &str = "example.com";

/// Sends an email. Returns the message id.
#[tool]
pub async fn send_email(
    /// Who receives it: an email address.
    to: String,
    /// The subject line.
    subject: String,
    /// The message, plain text.
    body: String,
) -> Result<String, String> {
    if body.trim().is_empty() {
        return Err("the body is empty".to_owned());
    }
    Ok(format!("queued <{}@{DOMAIN}> to {to}: {subject}", to.len() + subject.len()))
}

/// Searches the company's notes.
#[tool]
pub async fn search(
    /// What to look for.
    query: String,
) -> Vec<Note> {
    (1..=8).map(|n| Note { title: format!("{query} note {n}"), score: 1.0 / n as f32 }).collect()
}

/// One search result.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Note {
    /// The note's title.
    pub title: String,
    /// How well it matches, 0 to 1.
    pub score: f32,
}

/// Mail leaves the company only by hand: a recipient outside it is rewritten to the same name
/// at the company's domain.
#[hook(before_tool, tool = send_email)]
pub async fn internal_only(args: &mut SendEmailArgs) {
    let (name, domain) = args.to.split_once('@').unwrap_or((&args.to, ""));
    if domain != DOMAIN {
        args.to = format!("{name}@{DOMAIN}");
    }
}

/// The model reads the three best results, not eight.
#[hook(after_tool, tool = search)]
pub async fn best_three(notes: &mut Vec<Note>) {
    notes.sort_by(|a, b| b.score.total_cmp(&a.score));
    notes.truncate(3);
}

/// What the model sees of the two tools.
pub fn specs() -> Vec<ToolSpec> {
    vec![ToolSpec::of(&send_email()), ToolSpec::of(&search())]
}

/// One turn: the model searches, then mails a summary to an outside address. Returns the
/// outcome and the requests the model received.
pub async fn run(out: &(dyn Fn(&str) + Sync)) -> (Outcome, Vec<ModelRequest>, Conversation) {
    let model = ScriptedModel::new()
        .tool_call("search", serde_json::json!({ "query": "ferry" }))
        .tool_call(
            "send_email",
            serde_json::json!({
                "to": "ola@partner.no",
                "subject": "Ferry notes",
                "body": "The three best notes on the ferry.",
            }),
        )
        .text("Sent the three best notes.");
    let agent = Agent::builder(&model)
        .tool(send_email)
        .tool(search)
        .hook(internal_only)
        .hook(best_three)
        .build();
    for spec in specs() {
        out(&format!("tool {}: {}", spec.name, spec.parameters));
    }
    let mut conversation = Conversation::new();
    let observer = trace::observer(out);
    let outcome =
        agent.turn(&mut conversation, "Mail Ola the ferry notes.").observe(&observer).await;
    trace::outcome(out, &outcome);
    trace::log(out, &conversation);
    (outcome, model.requests(), conversation)
}
