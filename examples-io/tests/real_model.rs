//! The first real agent: it picks its model from the environment, falls back to the loopback
//! stub with a note saying how to reach a real one, and runs two streamed turns with a tool
//! through the genai adapter, metering what each call cost.

use std::collections::HashMap;
use std::sync::Mutex;

use examples_io::real_model::{Spend, Stub, choose, run};

fn env(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
    let vars: HashMap<String, String> =
        pairs.iter().map(|(name, value)| (name.to_string(), value.to_string())).collect();
    move |name| vars.get(name).cloned()
}

#[tokio::test]
async fn without_a_model_it_says_how_and_runs_on_the_stub() {
    let choice = choose(env(&[])).await.unwrap();
    assert!(choice.stub.is_some());
    assert!(
        choice.note.starts_with("No AGENTIX_MODEL: set AGENTIX_MODEL (openai:gpt-4.1-mini"),
        "{}",
        choice.note
    );

    let printed = Mutex::new(String::new());
    let conversation =
        run(choice.model, &|text| printed.lock().unwrap().push_str(text)).await.unwrap();
    let printed = printed.into_inner().unwrap();
    assert!(printed.contains("[calls get_weather({\"city\":\"Oslo\"})]"), "{printed}");
    assert!(printed.contains("Right now: Oslo: clear sky, 21°C."), "{printed}");
    assert!(printed.contains("Right now: Bergen: clear sky, 21°C."), "{printed}");
    conversation.validate().unwrap();
    let spend = *conversation.scope().get::<Spend>().unwrap();
    assert_eq!(spend.calls, 4, "a call and an answer per turn");
    assert!(spend.usage.input_tokens > 0 && spend.usage.output_tokens > 0);
    // The second turn repeats the first one's prefix: the stub reports it read from its cache.
    assert!(spend.usage.cache_read_tokens > 0, "{spend:?}");
}

#[tokio::test]
async fn a_model_without_its_key_falls_back_to_the_stub_naming_the_key() {
    let choice = choose(env(&[("AGENTIX_MODEL", "anthropic:claude-sonnet-4-5")])).await.unwrap();
    assert!(choice.stub.is_some());
    assert!(
        choice.note.starts_with("anthropic:claude-sonnet-4-5 needs ANTHROPIC_API_KEY"),
        "{}",
        choice.note
    );
}

#[tokio::test]
async fn an_unknown_provider_is_an_error() {
    let error = choose(env(&[("AGENTIX_MODEL", "nope:some-model")])).await.err().unwrap();
    assert!(error.to_string().contains("no provider is called `nope`"), "{error}");
}

#[tokio::test]
async fn a_model_with_its_endpoint_runs_there() {
    // An OpenAI-compatible server of the user's own; here, the stub, reached as a real provider.
    let server = Stub::start().await;
    let base = server.base();
    let choice = choose(env(&[
        ("AGENTIX_MODEL", "openai:gpt-4.1-mini"),
        ("AGENTIX_ENDPOINT", &base),
        ("OPENAI_API_KEY", "k"),
    ]))
    .await
    .unwrap();
    assert!(choice.stub.is_none());
    assert_eq!(choice.note, format!("Running on openai:gpt-4.1-mini at {base}."));
    let conversation = run(choice.model, &|_| {}).await.unwrap();
    assert_eq!(conversation.scope().get::<Spend>().unwrap().calls, 4);
}
