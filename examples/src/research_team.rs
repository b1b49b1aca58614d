//! A research team: a planner delegates a question to a researcher (a sub-agent with a search
//! tool) and hands the rest of the turn to a writer, who answers the user. All three run under
//! one policy, whose guard refuses any tool call that deletes: it fires on the researcher's
//! calls as on the planner's. The researcher's usage adds into the planner's turn, and its
//! events reach the planner's observer nested under its name.

use agentix::event::BeforeTool;
use agentix::prelude::*;
use agentix::{
    Model,
    delegate::{AgentTool, Handoff, History},
    model::{ModelError, ModelRequest, ModelResponse},
};
use agentix::{model::Usage, observe::Observation, pipeline::Policy};
use serde_json::json;

use crate::trace;

/// The policy's guard: no agent of the team deletes anything.
#[hook(before_tool)]
pub async fn no_deletes(call: &ToolCall) -> Verdict<BeforeTool> {
    if call.name.starts_with("delete") {
        Verdict::reject("this team deletes nothing")
    } else {
        Verdict::Continue
    }
}

/// Searches the team's notes.
#[tool]
pub async fn search(
    /// What to look for.
    query: String,
) -> Result<String, String> {
    let notes = [
        ("rust", "Rust 1.0 was released on 15 May 2015."),
        ("ferris", "Ferris the crab is Rust's unofficial mascot."),
    ];
    let found: Vec<&str> = notes
        .iter()
        .filter(|(key, _)| query.to_lowercase().contains(key))
        .map(|(_, note)| *note)
        .collect();
    if found.is_empty() { Err(format!("nothing on {query:?}")) } else { Ok(found.join(" ")) }
}

/// Deletes the team's notes (the policy sees to it that it never runs).
#[tool]
pub async fn delete_notes() -> Result<String, String> {
    Err("the notes were deleted".into())
}

/// A scripted model whose every answer costs `tokens` in and out, so the team's usage shows.
pub struct Metered<S = ScriptedModel> {
    script: S,
    tokens: u32,
}

impl<S: Model> Model for Metered<S> {
    // Traced as the model it wraps.
    fn provider(&self, model: Option<&str>) -> &str {
        self.script.provider(model)
    }

    fn model_name<'a>(&'a self, model: Option<&'a str>) -> Option<&'a str> {
        self.script.model_name(model)
    }

    async fn complete(&self, request: &ModelRequest) -> Result<ModelResponse, ModelError> {
        let mut response = self.script.complete(request).await?;
        let tokens = self.tokens;
        response.usage = Usage { input_tokens: tokens, output_tokens: tokens, ..Usage::default() };
        Ok(response)
    }
}

/// What the team did: the answer, the planner's turn's usage, and what the researcher tried.
pub struct Report {
    /// The writer's answer, the planner's turn's.
    pub answer: Result<AssistantMessage, agentix::Error>,
    /// The planner's turn's usage, the researcher's and the writer's calls included.
    pub usage: Usage,
    /// The researcher's tool calls, and what came of each (a refusal names the guard).
    pub researcher_calls: Vec<String>,
    /// What the writer was asked: the texts of its request's last message.
    pub writer_asked: Vec<String>,
}

/// The usage a `post` hook of the planner's read.
static PLANNER_USAGE: std::sync::Mutex<Option<Usage>> = std::sync::Mutex::new(None);

/// The planner's meter: its turn's usage, its team's included.
#[hook(post)]
pub async fn meter(_outcome: &agentix::Outcome, turn: &Turn) {
    *PLANNER_USAGE.lock().unwrap_or_else(|poisoned| poisoned.into_inner()) = Some(turn.usage());
}

/// Runs the example: what it prints goes to `out`.
pub async fn run(out: &(dyn Fn(&str) + Sync)) -> Report {
    let policy = Policy::new().hook(no_deletes);
    // The researcher tidies up first (refused), then searches, then answers.
    let researcher_script = ScriptedModel::new()
        .tool_call("delete_notes", json!({}))
        .tool_call("search", json!({ "query": "When was Rust 1.0 released?" }))
        .text("Rust 1.0 was released on 15 May 2015.");
    let researcher = Agent::builder(Metered { script: researcher_script, tokens: 10 })
        .policy(&policy)
        .tool(search)
        .tool(delete_notes)
        .build();
    let writer_script = ScriptedModel::new()
        .text("Rust turned 1.0 on 15 May 2015 — a Friday, and the start of its stability promise.");
    let writer_script = std::sync::Arc::new(writer_script);
    let writer = Agent::builder(Metered { script: writer_script.clone(), tokens: 5 })
        .policy(&policy)
        .build();
    // The planner asks the researcher, then hands the turn to the writer, with what the
    // researcher found in a note (the writer sees the conversation's earlier answers, not this
    // turn's tool calls).
    let planner_script = ScriptedModel::new()
        .tool_call("research", json!({ "prompt": "When was Rust 1.0 released?" }))
        .tool_call(
            "transfer_to_writer",
            json!({ "note": "The researcher found: Rust 1.0 was released on 15 May 2015." }),
        );
    let planner = Agent::builder(Metered { script: planner_script, tokens: 100 })
        .policy(&policy)
        .sub_agent(AgentTool::new("research", "Looks facts up in the team's notes.", researcher))
        .handoff(
            Handoff::new("writer", "Writes the answer for the user.", writer)
                .history(History::Answers),
        )
        .hook(meter)
        .build();

    let researcher_calls = std::sync::Mutex::new(Vec::new());
    let observer = |observation: &Observation<'_>| {
        out(&format!("  {observation}"));
        if let Observation::Nested { agent: "research", observation, .. } = observation {
            match observation {
                Observation::Hook {
                    hook,
                    decision: agentix::observe::Decision::Reject { reason },
                    ..
                } => {
                    let refused = format!("refused by {hook}: {reason}");
                    researcher_calls.lock().unwrap_or_else(|p| p.into_inner()).push(refused);
                }
                Observation::ToolFinished { result } => {
                    let ran = format!("{} ran", result.name);
                    researcher_calls.lock().unwrap_or_else(|p| p.into_inner()).push(ran);
                }
                _ => {}
            }
        }
    };
    let mut conversation = Conversation::new();
    let answer = planner
        .turn(&mut conversation, "When did Rust reach 1.0? Make it nice.")
        .observe(&observer)
        .await;
    trace::log(out, &conversation);
    trace::outcome(out, &answer);
    let usage = PLANNER_USAGE.lock().unwrap_or_else(|p| p.into_inner()).unwrap_or_default();
    out(&format!(
        "the planner's turn used {} tokens in and {} out, its team's included",
        usage.input_tokens, usage.output_tokens
    ));
    let researcher_calls = researcher_calls.into_inner().unwrap_or_else(|p| p.into_inner());
    let requests = writer_script.requests();
    let asked = requests.first().and_then(|request| request.messages.last());
    let writer_asked = asked.map_or_else(Vec::new, |message| {
        message.content.iter().filter_map(|part| part.as_text()).map(str::to_owned).collect()
    });
    Report { answer, usage, researcher_calls, writer_asked }
}
