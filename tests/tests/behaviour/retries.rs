//! RETRY is bounded per turn by the conversation's config; going over ends the turn with an
//! error naming the hook.

use agentix::event::EventKind::*;
use agentix::{Agent, Config, Conversation, Entry, Error, ScriptedModel};
use tests::{Action, Probe, Record};

fn scripted(responses: usize) -> ScriptedModel {
    (0..responses).fold(ScriptedModel::new(), |model, n| model.text(format!("answer {n}")))
}

fn always_retry(probe: Probe, event: agentix::event::EventKind, times: usize) -> Probe {
    (0..times).fold(probe, |probe, _| probe.on(event, Action::Retry(Some("not yet".into()))))
}

#[tokio::test]
async fn retry_bound_holds_and_names_the_hook() {
    for event in [AfterModel, BeforeFinal] {
        let model = scripted(10);
        let record = Record::new();
        let agent = Agent::builder(&model)
            .hook(Probe::new("fine", &record))
            .hook(always_retry(Probe::new("picky", &record), event, 10))
            .build();
        let mut conversation =
            Conversation::with_config(Config { max_retries: 2, ..Config::default() });
        let error = agent.run(&mut conversation, "go").await.unwrap_err();
        assert_eq!(error, Error::RetryLimit { event, hook: "picky", limit: 2 });
        assert_eq!(model.calls(), 3, "{event}: the first call and two retries");
        assert!(
            !conversation.log().iter().any(|entry| matches!(entry, Entry::Assistant { .. })),
            "no rejected message joins the log"
        );
        assert!(
            matches!(conversation.log().last(), Some(Entry::Failed { error, .. }) if error.contains("picky"))
        );

        // The bound is per turn: the next turn gets two retries again (three calls), where a
        // budget carried over would have failed on its first retry.
        let error = agent.run(&mut conversation, "again").await.unwrap_err();
        assert_eq!(error, Error::RetryLimit { event, hook: "picky", limit: 2 });
        assert_eq!(model.calls(), 6);
    }
}

#[tokio::test]
async fn after_model_and_before_final_share_one_budget_per_turn() {
    let model = scripted(10);
    let record = Record::new();
    let agent = Agent::builder(&model)
        .hook(always_retry(Probe::new("a", &record), AfterModel, 1))
        .hook(always_retry(Probe::new("b", &record), BeforeFinal, 2))
        .build();
    let mut conversation =
        Conversation::with_config(Config { max_retries: 2, ..Config::default() });
    let error = agent.run(&mut conversation, "go").await.unwrap_err();
    assert_eq!(error, Error::RetryLimit { event: BeforeFinal, hook: "b", limit: 2 });
    assert_eq!(model.calls(), 3);

    let mut conversation =
        Conversation::with_config(Config { max_retries: 3, ..Config::default() });
    let model = scripted(10);
    let agent = Agent::builder(&model)
        .hook(always_retry(Probe::new("a", &record), AfterModel, 1))
        .hook(always_retry(Probe::new("b", &record), BeforeFinal, 2))
        .build();
    let reply = agent.run(&mut conversation, "go").await.unwrap();
    assert_eq!(reply.joined_text(), "answer 3");
}

#[tokio::test]
async fn every_retry_within_a_large_bound_is_acted_on() {
    let retries = 20_000;
    let model = scripted(retries + 1);
    let record = Record::new();
    let agent = Agent::builder(&model)
        .hook(always_retry(Probe::new("slow", &record), AfterModel, retries))
        .build();
    let mut conversation =
        Conversation::with_config(Config { max_retries: retries as u32, ..Config::default() });
    let reply = agent.run(&mut conversation, "go").await.unwrap();
    assert_eq!(reply.joined_text(), format!("answer {retries}"));
}
