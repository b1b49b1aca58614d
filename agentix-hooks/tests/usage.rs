//! Usage limits on the real loop: tokens and cost as a model reports them, priced by a table
//! (cache reads apart), checked before each call — the request's own size included.

use std::collections::BTreeMap;

use agentix::event::EventKind;
use agentix::{
    Agent, Conversation, Error, Model, ScriptedModel,
    context::CharsPerToken,
    model::{ModelError, ModelRequest, ModelResponse, Usage},
};
use agentix_hooks::{Budget, ModelFallback, Price, Prices, Reached, UsageLimit};
use serde_json::json;
use tests::Weather;

/// Models by the name a request gives (`None`: the agent's own), each answering from its script
/// and reporting the same usage for every call.
#[derive(Default)]
struct Metered {
    models: BTreeMap<Option<String>, (ScriptedModel, Usage)>,
}

impl Metered {
    fn serve(mut self, name: Option<&str>, script: ScriptedModel, usage: Usage) -> Self {
        self.models.insert(name.map(str::to_owned), (script, usage));
        self
    }

    fn calls(&self) -> usize {
        self.models.values().map(|(script, _)| script.calls()).sum()
    }
}

impl Model for Metered {
    async fn complete(&self, request: &ModelRequest) -> Result<ModelResponse, ModelError> {
        let Some((script, usage)) = self.models.get(&request.model) else {
            return Err(ModelError::Other(format!("no model {:?}", request.model)));
        };
        let mut response = script.complete(request).await?;
        response.usage = *usage;
        Ok(response)
    }
}

fn usage(input: u32, output: u32, cache_read: u32) -> Usage {
    Usage {
        input_tokens: input,
        output_tokens: output,
        cache_read_tokens: cache_read,
        ..Usage::default()
    }
}

/// A script of `steps` weather calls, then an answer.
fn weather_steps(steps: usize) -> ScriptedModel {
    (0..steps)
        .fold(ScriptedModel::new(), |model, _| {
            model.tool_call("get_weather", json!({ "city": "Oslo" }))
        })
        .text("Sunny.")
}

fn one_price(price: Price) -> Prices {
    Prices::new().default_model(price)
}

fn reason(error: Error) -> String {
    match error {
        Error::Halted { event: EventKind::BeforeModel, hook: UsageLimit::NAME, reason } => reason,
        other => panic!("not the usage limit's halt: {other:?}"),
    }
}

#[tokio::test]
async fn a_call_after_the_turns_output_tokens_are_spent_is_not_made() {
    let model = Metered::default().serve(None, weather_steps(3), usage(1_000, 500, 0));
    let limit = UsageLimit::new(one_price(Price::per_million(1.0, 1.0)))
        .per_turn(Budget::new().output_tokens(1_000));
    let agent = Agent::builder(&model).tool(Weather::default()).hook(limit).build();
    let error = agent.run(&mut Conversation::new(), "weather?").await.unwrap_err();
    assert_eq!(reason(error), "the turn reached its limit of 1000 output tokens (1000 written)");
    assert_eq!(model.calls(), 2);
}

#[tokio::test]
async fn cache_reads_are_priced_apart() {
    // A million read, 800 000 of them from the cache: 200 000 × 10 + 800 000 × 1 = 2.8 a call.
    // Priced as plain input, one call (10) would pass the budget of 5.
    let model = Metered::default().serve(None, weather_steps(3), usage(1_000_000, 0, 800_000));
    let prices = one_price(Price::per_million(10.0, 0.0).cache_read(1.0));
    let limit = UsageLimit::new(prices).per_turn(Budget::new().cost(5.0));
    let agent = Agent::builder(&model).tool(Weather::default()).hook(limit).build();
    let mut conversation = Conversation::new();
    let error = agent.run(&mut conversation, "weather?").await.unwrap_err();
    assert!(reason(error).starts_with("the turn reached its limit of a cost of 5 (5.6000"));
    assert_eq!(model.calls(), 2);
    let spent = UsageLimit::spent(conversation.scope()).unwrap();
    assert!((spent.cost - 5.6).abs() < 1e-9, "{spent:?}");
    assert_eq!((spent.input_tokens, spent.cache_read_tokens), (2_000_000, 1_600_000));
}

#[tokio::test]
async fn a_request_that_alone_reads_past_the_budget_is_not_sent() {
    let model = Metered::default().serve(None, weather_steps(0), usage(10, 10, 0));
    let limit = UsageLimit::new(one_price(Price::per_million(1.0, 1.0)))
        .per_turn(Budget::new().input_tokens(100))
        .estimate_with(CharsPerToken(4));
    let agent = Agent::builder(&model).hook(limit).build();
    // 1 000 characters: some 250 tokens.
    let error = agent.run(&mut Conversation::new(), "a".repeat(1_000)).await.unwrap_err();
    assert_eq!(reason(error), "the turn reached its limit of 100 input tokens (0 read)");
    assert_eq!(model.calls(), 0);
}

#[tokio::test]
async fn the_conversations_budget_counts_every_turn_and_survives_serialization() {
    let script = ScriptedModel::new().text("One.").text("Two.").text("never asked");
    let model = Metered::default().serve(None, script, usage(100, 100, 0));
    let limit = UsageLimit::new(one_price(Price::per_million(1.0, 1.0)))
        .per_conversation(Budget::new().total_tokens(400))
        .when_reached(Reached::Answer("Out of budget.".into()));
    let agent = Agent::builder(&model).hook(limit).build();
    let mut conversation = Conversation::new();
    agent.run(&mut conversation, "one").await.unwrap();
    let json = serde_json::to_string(&conversation).unwrap();
    let mut conversation: Conversation = serde_json::from_str(&json).unwrap();
    agent.run(&mut conversation, "two").await.unwrap();
    let reply = agent.run(&mut conversation, "three").await.unwrap();
    assert_eq!(reply.joined_text(), "Out of budget.");
    assert_eq!(model.calls(), 2);
    let spent = UsageLimit::spent(conversation.scope()).unwrap();
    assert_eq!((spent.input_tokens, spent.output_tokens), (200, 200));
}

#[tokio::test]
async fn a_fallbacks_call_is_priced_by_the_model_it_named() {
    let down = ModelError::Transport("connection reset".into());
    let model =
        Metered::default().serve(None, ScriptedModel::new().error(down), usage(0, 0, 0)).serve(
            Some("cheap"),
            ScriptedModel::new().text("Cheaply."),
            usage(1_000_000, 1_000_000, 0),
        );
    let prices = Prices::new()
        .default_model(Price::per_million(100.0, 100.0))
        .model("cheap", Price::per_million(1.0, 2.0));
    let agent = Agent::builder(&model)
        .hook(ModelFallback::to(["cheap"]))
        .hook(UsageLimit::new(prices).per_turn(Budget::new().cost(10.0)))
        .build();
    let mut conversation = Conversation::new();
    assert_eq!(agent.run(&mut conversation, "hi").await.unwrap().joined_text(), "Cheaply.");
    let spent = UsageLimit::spent(conversation.scope()).unwrap();
    assert!((spent.cost - 3.0).abs() < 1e-9, "{spent:?}");
}

#[test]
fn a_model_the_table_does_not_price_is_priced_as_the_dearest() {
    let prices = Prices::new()
        .model("small", Price::per_million(1.0, 1.0))
        .model("large", Price::per_million(10.0, 30.0));
    assert_eq!(prices.of(Some("unknown")), Price::per_million(10.0, 30.0));
    assert_eq!(prices.of(None), Price::per_million(10.0, 30.0));
    assert_eq!(prices.of(Some("small")), Price::per_million(1.0, 1.0));
    let usage = Usage {
        input_tokens: 2_000,
        output_tokens: 1_000,
        cache_write_tokens: 1_000,
        ..Usage::default()
    };
    // 1 000 plain and 1 000 written to the cache at 10, 1 000 out at 30.
    let cost = Price::per_million(10.0, 30.0).of(&usage);
    assert!((cost - 0.05).abs() < 1e-12, "{cost}");
}
