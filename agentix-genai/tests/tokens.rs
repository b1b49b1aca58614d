//! Token counts for the context budget: OpenAI's own tokenizers where the model is OpenAI's, and
//! elsewhere an estimate that the usage the provider reports corrects, through the agent loop.

mod support;

use agentix::{
    Agent, AssistantMessage, Conversation,
    context::{CharsPerToken, TokenCounter},
};
use agentix_genai::{BpeCounter, Encoding, GenaiModel, ProviderCounter};
use serde_json::json;
use support::{Reply, Server, anthropic_json};

#[test]
fn the_bpe_counter_counts_as_openais_tokenizers_do() {
    // Counts from tiktoken.
    let cl100k = BpeCounter::new(Encoding::Cl100k);
    assert_eq!(cl100k.count("tiktoken is great!"), 6);
    assert_eq!(cl100k.count("hello world"), 2);
    let o200k = BpeCounter::new(Encoding::O200k);
    assert_eq!(o200k.count("hello world"), 2);
    assert_eq!(o200k.count(""), 0);
    // Where a rough estimate is far off: no spaces, many tokens.
    let digits = "31415926535897932384626433832795";
    assert!(o200k.count(digits) > CharsPerToken::default().count(digits));
}

#[test]
fn the_adapter_chooses_the_tokenizer_of_an_openai_model() {
    let counter =
        |spec: &str| GenaiModel::builder(spec).api_key("unused").build().unwrap().token_counter();
    let text = "The adapter picks the encoding the model was trained with.";
    for spec in ["openai:gpt-4.1-mini", "openai:gpt-4o", "openai_resp:gpt-5", "openai:o3-mini"] {
        assert!(matches!(counter(spec), ProviderCounter::Bpe(_)), "{spec}");
        assert_eq!(
            counter(spec).count(text),
            BpeCounter::new(Encoding::O200k).count(text),
            "{spec}"
        );
    }
    assert_eq!(counter("openai:gpt-4").count(text), BpeCounter::new(Encoding::Cl100k).count(text));
    for spec in [
        "anthropic:claude-sonnet-4-5",
        "gemini:gemini-2.5-flash",
        "ollama:llama3.2",
        "groq:llama-3.3-70b-versatile",
    ] {
        assert!(
            matches!(counter(spec), ProviderCounter::Calibrated(_)),
            "{spec}: no local tokenizer"
        );
    }
}

/// The counter of an Anthropic model after `calls` turns whose reported input is `reported`
/// tokens, and what it counted for `text` before them.
async fn calibrated(reported: u32, calls: usize, text: &str) -> (usize, usize) {
    let usage = json!({ "input_tokens": reported, "output_tokens": 3 });
    let replies = (0..calls)
        .map(|_| Reply::json(anthropic_json(&AssistantMessage::text("Noted."), usage.clone())))
        .collect();
    let server = Server::start(replies).await;
    let model = server.model("anthropic:claude-sonnet-4-5");
    let counter = model.token_counter();
    let before = counter.count(text);
    // The agent budgets with the same counter the adapter corrects.
    let agent = Agent::builder(model).token_counter(counter.clone()).build();
    let mut conversation = Conversation::new();
    for turn in 0..calls {
        agent.run(&mut conversation, format!("Remember item number {turn}.")).await.unwrap();
    }
    (before, counter.count(text))
}

#[tokio::test]
async fn a_providers_reported_usage_corrects_the_estimate() {
    let text = "A paragraph of ordinary English prose, some sixty characters.";
    // The provider reads many more tokens than the estimate gave: the estimate grows.
    let (before, after) = calibrated(2_000, 4, text).await;
    assert!(after > 2 * before, "{before} -> {after}");
    // Fewer: it shrinks.
    let (before, after) = calibrated(1, 4, text).await;
    assert!(after < before, "{before} -> {after}");
    assert!(after >= 1, "a text never counts as nothing");
}
