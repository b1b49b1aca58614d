//! A crate that knows agentix only as `renamed_agentix`: the hooks below expand to paths under
//! `::renamed_agentix::__private`, so they compile only if `crate = "..."` is honoured.

use renamed_agentix::event::{AfterModel, Pre};
use renamed_agentix::{AssistantMessage, Part, Turn, Verdict, hook, tool};

/// agentix under a path of this crate's own, for `crate = "crate::..."`.
pub mod vendored {
    pub use renamed_agentix as agentix;
}

/// Retries answers that do not start with a plan.
#[hook(after_model, crate = "renamed_agentix")]
pub async fn require_plan(message: &AssistantMessage) -> Verdict<AfterModel> {
    if message.joined_text().starts_with("<plan>") {
        Verdict::Continue
    } else {
        Verdict::retry("plan first")
    }
}

/// Injects a note, in parallel with any neighbours.
#[hook(pre, parallel, crate = "renamed_agentix")]
pub async fn note(_turn: &Turn) -> Part {
    Part::text("a note")
}

/// Injects a greeting.
#[hook(pre, name = "greeting", crate = "::renamed_agentix")]
pub async fn greet(turn: &mut Turn) -> Verdict<Pre> {
    turn.inject("hello");
    Verdict::Continue
}

/// Echoes a text.
#[tool(crate = "renamed_agentix")]
pub async fn echo(
    /// What to echo.
    text: String,
) -> String {
    text
}

/// Shouts what `echo` echoes.
#[hook(after_tool, tool = echo, crate = "crate::vendored::agentix")]
pub async fn shout(output: &mut String) {
    *output = output.to_uppercase();
}

/// Echoes twice.
#[tool(crate = "crate::vendored::agentix")]
pub async fn echo_twice(
    /// What to echo.
    text: String,
) -> String {
    format!("{text} {text}")
}

#[cfg(test)]
mod tests {
    use renamed_agentix::{Agent, Conversation, ScriptedModel};

    use super::*;

    #[test]
    fn hooks_of_a_renamed_crate_run() {
        let model = ScriptedModel::new().text("no plan").text("<plan> ok");
        let agent = Agent::builder(&model).hook(greet).hook(note).hook(require_plan).build();
        let reply = futures::executor::block_on(agent.run(&mut Conversation::new(), "hi")).unwrap();
        assert_eq!(reply.joined_text(), "<plan> ok");
        let injected: Vec<String> = model.requests()[0].messages[1]
            .content
            .iter()
            .filter_map(|p| p.as_text().map(String::from))
            .collect();
        assert_eq!(injected, ["hello", "a note"]);
    }

    #[test]
    fn tools_and_per_tool_hooks_of_a_renamed_crate_run() {
        let model = ScriptedModel::new()
            .tool_call("echo", serde_json::json!({ "text": "hi" }))
            .tool_call("echo_twice", serde_json::json!({ "text": "ho" }))
            .text("done");
        let agent = Agent::builder(&model).tool(echo).tool(echo_twice).hook(shout).build();
        futures::executor::block_on(agent.run(&mut Conversation::new(), "go")).unwrap();
        let outputs: Vec<String> =
            model.requests()[2].tool_results().map(|result| result.output.clone()).collect();
        assert_eq!(outputs, ["HI", "ho ho"]);
    }
}
