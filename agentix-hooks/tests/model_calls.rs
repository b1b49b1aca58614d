//! Retry and fallback on the real loop, over scripted models that fail as providers do; the
//! waits on tokio's paused clock, so each is measured exactly and none is slept through.

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::time::Duration;

use agentix::{
    Agent, Conversation, Error, Model, ScriptedModel,
    model::{ModelError, ModelRequest, ModelResponse},
    observe::Observation,
};
use agentix_hooks::{Jitter, ModelFallback, Retry};
use tokio::time::Instant;

fn down() -> ModelError {
    ModelError::Transport("connection reset".into())
}

fn status(status: u16) -> ModelError {
    ModelError::Provider {
        provider: "test".into(),
        status,
        message: "no".into(),
        retry_after: None,
    }
}

fn fixed() -> Retry {
    Retry::new().jitter(Jitter::Off)
}

#[tokio::test(start_paused = true)]
async fn a_transient_failure_is_retried_after_a_doubling_wait() {
    let model = ScriptedModel::new().error(down()).error(status(503)).text("Hello.");
    let agent = Agent::builder(&model).hook(fixed()).build();
    let started = Instant::now();
    let reply = agent.run(&mut Conversation::new(), "hi").await.unwrap();
    assert_eq!(reply.joined_text(), "Hello.");
    assert_eq!(model.calls(), 3);
    // 200 ms, then 400 ms.
    assert_eq!(started.elapsed(), Duration::from_millis(600));
}

#[tokio::test(start_paused = true)]
async fn each_failed_attempt_is_seen_by_an_observer_that_does_not_stream() {
    let model = ScriptedModel::new().error(down()).error(status(503)).text("Hello.");
    let agent = Agent::builder(&model).hook(fixed()).build();
    let failed = Mutex::new(Vec::new());
    let observer = |observation: &Observation<'_>| {
        if let Observation::ModelCallFailed { step, error } = observation {
            failed.lock().unwrap().push((*step, error.to_string()));
        }
    };
    let mut conversation = Conversation::new();
    agent.turn(&mut conversation, "hi").observe(&observer).await.unwrap();
    let failed = failed.into_inner().unwrap();
    assert_eq!(failed.len(), 2, "{failed:?}");
    assert!(failed.iter().all(|(step, _)| *step == 0));
    assert!(failed[0].1.contains("connection reset"), "{failed:?}");
    assert!(failed[1].1.contains("503"), "{failed:?}");
}

#[tokio::test(start_paused = true)]
async fn a_providers_retry_after_is_waited_at_least() {
    let limited = ModelError::Provider {
        provider: "test".into(),
        status: 429,
        message: "slow down".into(),
        retry_after: Some(Duration::from_secs(3)),
    };
    let model = ScriptedModel::new().error(limited).text("Hello.");
    let agent = Agent::builder(&model).hook(fixed()).build();
    let started = Instant::now();
    agent.run(&mut Conversation::new(), "hi").await.unwrap();
    assert_eq!(started.elapsed(), Duration::from_secs(3));
}

#[tokio::test(start_paused = true)]
async fn retries_stop_at_the_attempts_and_the_last_error_is_the_turns() {
    let model =
        ScriptedModel::new().error(down()).error(down()).error(status(502)).text("never read");
    let agent = Agent::builder(&model).hook(fixed().attempts(3)).build();
    let failed = agent.run(&mut Conversation::new(), "hi").await;
    assert!(matches!(failed, Err(Error::Model(ModelError::Provider { status: 502, .. }))));
    assert_eq!(model.calls(), 3);
}

#[tokio::test(start_paused = true)]
async fn a_retry_that_would_wait_past_the_cap_is_not_made() {
    let model = ScriptedModel::new().error(down()).error(down()).text("never read");
    // 200 ms waited; the next wait, 400 ms, would make 600 > 500.
    let retry = fixed().attempts(10).max_wait(Duration::from_millis(500));
    let agent = Agent::builder(&model).hook(retry).build();
    let started = Instant::now();
    assert!(agent.run(&mut Conversation::new(), "hi").await.is_err());
    assert_eq!(model.calls(), 2);
    assert_eq!(started.elapsed(), Duration::from_millis(200));
}

#[tokio::test(start_paused = true)]
async fn waits_grow_to_the_most_one_wait_may_be() {
    let model = ScriptedModel::new().error(down()).error(down()).error(down()).text("Hello.");
    let retry = fixed().initial_delay(Duration::from_secs(1)).max_delay(Duration::from_secs(2));
    let agent = Agent::builder(&model).hook(retry).build();
    let started = Instant::now();
    agent.run(&mut Conversation::new(), "hi").await.unwrap();
    // 1 s, 2 s, then 2 s again (not 4).
    assert_eq!(started.elapsed(), Duration::from_secs(5));
}

#[tokio::test(start_paused = true)]
async fn jittered_waits_stay_within_their_backoff() {
    for jitter in [Jitter::Full, Jitter::Equal] {
        let model = ScriptedModel::new().error(down()).error(down()).text("Hello.");
        let agent = Agent::builder(&model).hook(Retry::new().jitter(jitter)).build();
        let started = Instant::now();
        agent.run(&mut Conversation::new(), "hi").await.unwrap();
        let waited = started.elapsed();
        // Full: 0..=200 ms then 0..=400 ms; equal: at least half of each.
        let least = if jitter == Jitter::Equal { 300 } else { 0 };
        assert!(waited >= Duration::from_millis(least), "{jitter:?}: {waited:?}");
        assert!(waited <= Duration::from_millis(600), "{jitter:?}: {waited:?}");
    }
}

#[tokio::test(start_paused = true)]
async fn an_error_that_will_not_pass_is_not_retried() {
    for error in [status(400), ModelError::Refused { provider: "test".into(), reason: "no".into() }]
    {
        let model = ScriptedModel::new().error(error).text("never read");
        let agent = Agent::builder(&model).hook(fixed()).build();
        assert!(agent.run(&mut Conversation::new(), "hi").await.is_err());
        assert_eq!(model.calls(), 1);
    }
    // Unless the hook is told to.
    let model = ScriptedModel::new().error(status(400)).text("Hello.");
    let retry = fixed().retry_if(|error| matches!(error, ModelError::Provider { status: 400, .. }));
    let agent = Agent::builder(&model).hook(retry).build();
    assert!(agent.run(&mut Conversation::new(), "hi").await.is_ok());
    assert_eq!(model.calls(), 2);
}

/// Serves several models, each from a script of its own: what an adapter over many providers
/// does with a request's `model`.
#[derive(Default)]
struct Providers {
    scripts: BTreeMap<Option<String>, ScriptedModel>,
    asked: Mutex<Vec<Option<String>>>,
}

impl Providers {
    fn serve(mut self, model: Option<&str>, script: ScriptedModel) -> Self {
        self.scripts.insert(model.map(str::to_owned), script);
        self
    }

    fn asked(&self) -> Vec<Option<String>> {
        self.asked.lock().unwrap().clone()
    }
}

impl Model for Providers {
    async fn complete(&self, request: &ModelRequest) -> Result<ModelResponse, ModelError> {
        self.asked.lock().unwrap().push(request.model.clone());
        match self.scripts.get(&request.model) {
            Some(script) => script.complete(request).await,
            None => Err(status(404)),
        }
    }
}

#[tokio::test]
async fn a_failed_model_falls_back_to_the_next_in_order() {
    let models = Providers::default()
        .serve(None, ScriptedModel::new().error(status(503)))
        .serve(Some("openai:gpt-4.1"), ScriptedModel::new().error(down()))
        .serve(Some("anthropic:claude-sonnet-4-5"), ScriptedModel::new().text("From Claude."));
    let fallback = ModelFallback::to(["openai:gpt-4.1", "anthropic:claude-sonnet-4-5", "unused"]);
    let agent = Agent::builder(&models).hook(fallback).build();
    let reply = agent.run(&mut Conversation::new(), "hi").await.unwrap();
    assert_eq!(reply.joined_text(), "From Claude.");
    let asked = models.asked();
    assert_eq!(
        asked,
        [None, Some("openai:gpt-4.1".into()), Some("anthropic:claude-sonnet-4-5".into())]
    );
}

#[tokio::test]
async fn a_refusal_falls_through_unless_told_otherwise_and_the_last_error_is_the_turns() {
    let refused = || ModelError::Refused { provider: "test".into(), reason: "unsafe".into() };
    let models = || {
        Providers::default()
            .serve(None, ScriptedModel::new().error(refused()))
            .serve(Some("backup"), ScriptedModel::new().text("Backed up."))
    };
    let served = models();
    let agent = Agent::builder(&served).hook(ModelFallback::to(["backup"])).build();
    assert_eq!(
        agent.run(&mut Conversation::new(), "hi").await.unwrap().joined_text(),
        "Backed up."
    );

    let served = models();
    let only_outages = ModelFallback::to(["backup"]).fall_through_if(agentix_hooks::transient);
    let agent = Agent::builder(&served).hook(only_outages).build();
    let failed = agent.run(&mut Conversation::new(), "hi").await;
    assert!(matches!(failed, Err(Error::Model(ModelError::Refused { .. }))));
    assert_eq!(served.asked(), [None]);

    // Every model failing: the last one's error.
    let served = Providers::default().serve(None, ScriptedModel::new().error(refused()));
    let agent = Agent::builder(&served).hook(ModelFallback::to(["gone"])).build();
    let failed = agent.run(&mut Conversation::new(), "hi").await;
    assert!(matches!(failed, Err(Error::Model(ModelError::Provider { status: 404, .. }))));
}

#[tokio::test(start_paused = true)]
async fn a_fallback_outside_a_retry_retries_each_model_before_the_next() {
    let models = Providers::default()
        .serve(None, ScriptedModel::new().error(down()).error(down()))
        .serve(Some("backup"), ScriptedModel::new().error(down()).text("Backed up."));
    let agent = Agent::builder(&models)
        .hook(ModelFallback::to(["backup"]))
        .hook(fixed().attempts(2))
        .build();
    let reply = agent.run(&mut Conversation::new(), "hi").await.unwrap();
    assert_eq!(reply.joined_text(), "Backed up.");
    let backup = Some("backup".to_owned());
    assert_eq!(models.asked(), [None, None, backup.clone(), backup]);
}

#[tokio::test(start_paused = true)]
async fn jittered_waits_are_drawn_anew_each_time() {
    let mut waits = Vec::new();
    for _ in 0..8 {
        let model = ScriptedModel::new().error(down()).text("Hello.");
        let agent = Agent::builder(&model).hook(Retry::new()).build();
        let started = Instant::now();
        agent.run(&mut Conversation::new(), "hi").await.unwrap();
        waits.push(started.elapsed());
    }
    waits.sort();
    waits.dedup();
    assert!(waits.len() > 1, "eight draws, one wait: {waits:?}");
    assert!(waits.iter().all(|wait| *wait <= Duration::from_millis(200)), "{waits:?}");
}

#[tokio::test(start_paused = true)]
async fn a_retry_after_longer_than_the_cap_is_not_waited() {
    let limited = ModelError::Provider {
        provider: "test".into(),
        status: 429,
        message: "come back tomorrow".into(),
        retry_after: Some(Duration::from_secs(86_400)),
    };
    let model = ScriptedModel::new().error(limited).text("never read");
    let agent = Agent::builder(&model).hook(fixed().max_wait(Duration::from_secs(60))).build();
    let started = Instant::now();
    let failed = agent.run(&mut Conversation::new(), "hi").await;
    assert!(matches!(failed, Err(Error::Model(ModelError::Provider { status: 429, .. }))));
    assert_eq!((model.calls(), started.elapsed()), (1, Duration::ZERO));
}

#[tokio::test(start_paused = true)]
async fn one_attempt_is_no_retry() {
    let model = ScriptedModel::new().error(down()).text("never read");
    let agent = Agent::builder(&model).hook(fixed().attempts(0)).build();
    assert!(agent.run(&mut Conversation::new(), "hi").await.is_err());
    assert_eq!(model.calls(), 1);
}

#[tokio::test]
async fn a_timeout_falls_through_and_a_named_model_falls_back_from_its_name() {
    let timed_out = ModelError::TimedOut { after: Duration::from_secs(30) };
    let models = Providers::default()
        .serve(Some("primary"), ScriptedModel::new().error(timed_out))
        .serve(Some("backup"), ScriptedModel::new().text("Backed up."));
    let agent =
        Agent::builder(&models).model_name("primary").hook(ModelFallback::to(["backup"])).build();
    let reply = agent.run(&mut Conversation::new(), "hi").await.unwrap();
    assert_eq!(reply.joined_text(), "Backed up.");
    assert_eq!(models.asked(), [Some("primary".to_owned()), Some("backup".to_owned())]);
}
