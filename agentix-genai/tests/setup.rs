//! Naming a model, giving it a key and an endpoint, and choosing the model per request.

mod support;

use agentix::{
    Agent, AssistantMessage, Conversation, Error, Model,
    model::{ModelError, ModelRequest},
};
use agentix_genai::{GenaiModel, UnknownModel};
use serde_json::json;
use support::{Reply, Server, openai_json};

#[test]
fn a_model_is_named_by_provider_and_name_or_by_a_name_genai_knows() {
    let place =
        |spec: &str| GenaiModel::new(spec).map(|model| (model.adapter(), model.model().to_owned()));
    assert_eq!(place("openai:gpt-4.1-mini"), Ok(("openai", "openai::gpt-4.1-mini".to_owned())));
    assert_eq!(
        place("anthropic:claude-sonnet-4-5"),
        Ok(("anthropic", "anthropic::claude-sonnet-4-5".to_owned()))
    );
    assert_eq!(
        place("ollama:llama3.2:3b").map(|(provider, _)| provider),
        Ok("ollama"),
        "a tag after the name"
    );
    assert_eq!(place("openai_resp:gpt-5").map(|(provider, _)| provider), Ok("openai_resp"));
    assert_eq!(
        place("claude-sonnet-4-5").map(|(provider, _)| provider),
        Ok("anthropic"),
        "a bare name genai knows"
    );
    assert_eq!(place("gemini-2.5-flash").map(|(provider, _)| provider), Ok("gemini"));
    // Traces name the provider as OpenTelemetry's GenAI conventions do, and the model bare.
    let traced = |spec: &str, requested: Option<&str>| {
        let model = GenaiModel::new(spec).unwrap();
        let provider = Model::provider(&model, requested).to_owned();
        (provider, model.model_name(requested).map(str::to_owned))
    };
    let named = |provider: &str, model: &str| (provider.to_owned(), Some(model.to_owned()));
    assert_eq!(traced("openai_resp:gpt-5", None), named("openai", "gpt-5"));
    assert_eq!(traced("gemini-2.5-flash", None), named("gcp.gemini", "gemini-2.5-flash"));
    assert_eq!(traced("xai:grok-3", None), named("x_ai", "grok-3"));
    assert_eq!(traced("ollama:llama3.2:3b", None), named("ollama", "llama3.2:3b"));
    // A request may name another model, or another provider's.
    assert_eq!(traced("openai:gpt-4.1-mini", Some("gpt-4.1")), named("openai", "gpt-4.1"));
    let other = traced("openai:gpt-4.1-mini", Some("anthropic:claude-sonnet-4-5"));
    assert_eq!(other, named("anthropic", "claude-sonnet-4-5"));
    let unknown = GenaiModel::new("nope:some-model").unwrap_err();
    assert_eq!(
        unknown,
        UnknownModel { spec: "nope:some-model".into(), why: "no provider is called `nope`".into() }
    );
    assert_eq!(
        unknown.to_string(),
        "no provider for model `nope:some-model`: name one, as in `openai:gpt-4.1-mini` (no provider is called `nope`)"
    );
}

#[test]
fn the_key_comes_from_the_providers_usual_variable() {
    let variable = |spec: &str| GenaiModel::new(spec).unwrap().key_variable();
    assert_eq!(variable("openai:gpt-4.1-mini"), Some("OPENAI_API_KEY"));
    assert_eq!(variable("anthropic:claude-sonnet-4-5"), Some("ANTHROPIC_API_KEY"));
    assert_eq!(variable("gemini:gemini-2.5-flash"), Some("GEMINI_API_KEY"));
    assert_eq!(variable("groq:llama-3.3-70b-versatile"), Some("GROQ_API_KEY"));
    assert_eq!(variable("deepseek:deepseek-chat"), Some("DEEPSEEK_API_KEY"));
    assert_eq!(variable("xai:grok-3"), Some("XAI_API_KEY"));
    assert_eq!(variable("ollama:llama3.2"), None);
}

#[tokio::test]
async fn a_missing_key_says_which_variable_to_set() {
    // A variable no test machine sets; if one did, the request would reach the stub instead.
    let spec = "deepseek:deepseek-chat";
    if std::env::var_os("DEEPSEEK_API_KEY").is_some() {
        return;
    }
    let server = Server::start(vec![]).await;
    let model = GenaiModel::builder(spec).endpoint(&server.base).build().unwrap();
    let agent = Agent::builder(model).build();
    let mut conversation = Conversation::new();
    let error = agent.run(&mut conversation, "hi").await.unwrap_err();
    assert_eq!(
        error,
        Error::Model(ModelError::Other(
            "deepseek: no API key: set DEEPSEEK_API_KEY, or give one to the builder's api_key"
                .into()
        ))
    );
    assert!(server.received().is_empty(), "nothing was sent");
    conversation.validate().unwrap();
}

#[tokio::test]
async fn a_request_may_name_another_model_of_the_provider() {
    let server = Server::start(vec![
        Reply::json(openai_json(&AssistantMessage::text("from gpt-4.1"), json!({}))),
        Reply::json(openai_json(&AssistantMessage::text("from gpt-4.1-nano"), json!({}))),
    ])
    .await;
    // An endpoint without its trailing slash is completed.
    let base = server.base.trim_end_matches('/');
    let model =
        GenaiModel::builder("openai:gpt-4.1-mini").endpoint(base).api_key("k").build().unwrap();
    let first = model.complete(&request("openai:gpt-4.1")).await.unwrap();
    assert_eq!(first.message.joined_text(), "from gpt-4.1");
    // A bare name is the same provider's.
    let second = model.complete(&request("gpt-4.1-nano")).await.unwrap();
    assert_eq!(second.message.joined_text(), "from gpt-4.1-nano");
    let received = server.received();
    assert_eq!(received[0].path, "/v1/chat/completions");
    assert_eq!(received[0].json()["model"], "gpt-4.1");
    assert_eq!(received[1].json()["model"], "gpt-4.1-nano");
    assert_eq!(received[1].headers["authorization"], "Bearer k");
}

/// A request of one user message naming `model`.
fn request(model: &str) -> ModelRequest {
    ModelRequest {
        messages: vec![agentix::Message::user("hi")],
        model: Some(model.into()),
        ..ModelRequest::default()
    }
}

#[tokio::test]
async fn a_request_for_another_provider_gets_neither_the_key_nor_the_endpoint() {
    // xAI's key variable, which no test machine sets; if one did, the request would go out.
    if std::env::var_os("XAI_API_KEY").is_some() {
        return;
    }
    let server = Server::start(vec![]).await;
    let model = GenaiModel::builder("openai:gpt-4.1-mini")
        .endpoint(&server.base)
        .api_key("an OpenAI key")
        .build()
        .unwrap();
    let error = model.complete(&request("xai:grok-3")).await.unwrap_err();
    assert_eq!(
        error,
        ModelError::Other(
            "xai: no API key: set XAI_API_KEY, or give one to the builder's api_key".into()
        ),
        "the OpenAI key was not offered to xAI"
    );
    assert!(server.received().is_empty(), "nor was the request sent to OpenAI's endpoint");
}
