//! What the examples print: the turn as it happens (every event and hook decision, through the
//! observer seam) and the log it leaves.

use agentix::{Conversation, Entry, Outcome, observe::Observation};

/// An observer that writes each observation on its own line, indented.
pub fn observer(out: &(dyn Fn(&str) + Sync)) -> impl Fn(&Observation<'_>) + Sync + '_ {
    move |observation| out(&format!("  {observation}"))
}

/// Writes how a turn ended.
pub fn outcome(out: &(dyn Fn(&str) + Sync), outcome: &Outcome) {
    match outcome {
        Ok(message) => out(&format!("reply: {}", message.joined_text())),
        Err(error) => out(&format!("error: {error}")),
    }
}

/// Writes the conversation's log, one line per message.
pub fn log(out: &(dyn Fn(&str) + Sync), conversation: &Conversation) {
    out("log:");
    for entry in conversation.log() {
        match entry {
            Entry::User { message, .. } => out(&format!("  user:      {}", message.text())),
            Entry::Assistant { message, .. } if message.calls_tools() => {
                let names: Vec<&str> =
                    message.tool_calls().map(|call| call.name.as_str()).collect();
                out(&format!("  assistant: calls {}", names.join(", ")));
            }
            Entry::Assistant { message, .. } => {
                out(&format!("  assistant: {}", message.joined_text()))
            }
            Entry::ToolResults { results, .. } => {
                for result in results {
                    out(&format!("  tool:      {}", result.output));
                }
            }
            Entry::HookOutput { hook, parts, .. } => {
                let text: Vec<&str> = parts.iter().filter_map(|part| part.as_text()).collect();
                out(&format!("  {hook} (durable): {}", text.join(" ")))
            }
            Entry::Halted { hook, reason, .. } => out(&format!("  halted by {hook}: {reason}")),
            Entry::HookSkipped { hook, reason, .. } => out(&format!("  skipped {hook}: {reason}")),
            Entry::Failed { error, .. } => out(&format!("  failed: {error}")),
            Entry::Suspended { suspension, .. } => {
                let pending = &suspension.pending;
                out(&format!(
                    "  suspended: {} waits for approval ({})",
                    pending.call.name, pending.reason
                ))
            }
            Entry::Resumed { approval, .. } => out(&format!("  resumed: {approval:?}")),
            Entry::Summary { through, text, .. } => {
                out(&format!("  summary of entries 0..{through}: {text}"))
            }
            Entry::Delegated { agent, log, .. } => {
                out(&format!("  {agent} (kept): {} entries of its conversation", log.len()))
            }
        }
    }
}
