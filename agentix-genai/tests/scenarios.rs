//! The foundation's hook-order and verdict scenarios ([`tests::scenarios`]) once more, over real
//! providers' wire formats: the adapter against loopback OpenAI and Anthropic servers answering
//! with the same script must reach the same outcomes, logs, requests and hook decisions as the
//! scripted model, on both paths.

mod support;

use agentix::AssistantMessage;
use serde_json::{Value, json};
use support::{Reply, Server, anthropic_json, anthropic_sse, openai_json, openai_sse};
use tests::Path;
use tests::scenarios::{self, Seen};

type Render = fn(&AssistantMessage, Value) -> Value;
type RenderStream = fn(&AssistantMessage, Value) -> Vec<String>;

/// The providers, with how each answers whole and streamed, and a usage report of theirs.
fn providers() -> [(&'static str, Render, RenderStream, Value); 2] {
    [
        (
            "openai:gpt-4.1-mini",
            openai_json,
            openai_sse,
            json!({ "prompt_tokens": 50, "completion_tokens": 5, "total_tokens": 55 }),
        ),
        (
            "anthropic:claude-sonnet-4-5",
            anthropic_json,
            anthropic_sse,
            json!({ "input_tokens": 50, "output_tokens": 5 }),
        ),
    ]
}

async fn over_the_wire(spec: &str, path: Path, scenario: scenarios::Scenario) -> (Seen, usize) {
    let (_, render, render_stream, usage) =
        providers().into_iter().find(|(name, ..)| *name == spec).unwrap();
    let replies = scenarios::script()
        .iter()
        .map(|message| match path {
            Path::Direct => Reply::json(render(message, usage.clone())),
            // No pause between events: these scenarios are about order, not timing.
            Path::Streamed => Reply {
                pause: std::time::Duration::ZERO,
                ..Reply::sse(render_stream(message, usage.clone()))
            },
        })
        .collect();
    let server = Server::start(replies).await;
    let seen = scenarios::run(path, server.model(spec), scenario).await;
    (seen, server.received().len())
}

#[tokio::test]
async fn every_scenario_runs_the_same_over_openai_and_anthropic_as_over_the_scripted_model() {
    let mut compared = 0;
    for scenario in scenarios::all() {
        for path in [Path::Direct, Path::Streamed] {
            let model = scenarios::scripted_model();
            let expected = scenarios::run(path, &model, scenario.clone()).await;
            for (spec, ..) in providers() {
                let (seen, sent) = over_the_wire(spec, path, scenario.clone()).await;
                let context = format!("{spec}, {path:?}, {scenario:?}");
                assert_eq!(
                    seen.ran.outcome, expected.ran.outcome,
                    "{context}: the outcomes differ"
                );
                assert_eq!(seen.ran.hooks, expected.ran.hooks, "{context}: hook decisions differ");
                assert_eq!(
                    seen.ran.streamed, expected.ran.streamed,
                    "{context}: the streamed text differs"
                );
                assert_eq!(seen.calls, expected.calls, "{context}: hooks were called differently");
                assert_eq!(seen.log, expected.log, "{context}: the logs differ");
                assert_eq!(seen.requests, expected.requests, "{context}: the requests differ");
                assert_eq!(
                    sent,
                    model.requests().len(),
                    "{context}: the provider got a request per model call"
                );
                compared += 1;
            }
        }
    }
    assert_eq!(compared, scenarios::all().len() * 4);
}
