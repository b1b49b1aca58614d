//! Every hook fires on every path it should: `post` once at the end of every turn, however it
//! ended; the events before an early STOP or a halt, and none after.

use std::sync::{Arc, Mutex};

use agentix::event::EventKind::{self, *};
use agentix::{
    Agent, AssistantMessage, Config, Conversation, Entry, Error, ScriptedModel,
    message::ToolFailure, model::ModelError, observe::Observation,
};
use serde_json::json;
use tests::{Action, Probe, Record, Weather, assert_log_consistent};

fn model() -> ScriptedModel {
    ScriptedModel::new()
        .tool_calls([("get_weather", json!({ "city": "Oslo" })), ("no_such_tool", json!({}))])
        .text("done")
}

/// Runs one turn with one probe scripted with `action` at `event`; returns what fired, the
/// outcomes `post` saw, how many times the turn was reported ended, and the turn's result.
async fn run_with(
    event: EventKind,
    action: Action,
) -> (Vec<EventKind>, Vec<agentix::Outcome>, usize, agentix::Outcome) {
    let record = Record::new();
    let probe = Probe::new("probe", &record).on(event, action);
    let outcomes = probe.outcomes();
    let agent = Agent::builder(model()).tool(Weather::default()).hook(probe).build();
    let ended = Mutex::new(0);
    let observer = |observation: &Observation<'_>| {
        if let Observation::TurnEnded { .. } = observation {
            *ended.lock().unwrap() += 1;
        }
    };
    let mut conversation = Conversation::new();
    let outcome = agent.turn(&mut conversation, "weather?").observe(&observer).await;
    assert_log_consistent(conversation.log());
    let outcomes = outcomes.lock().unwrap().clone();
    (record.events(), outcomes, ended.into_inner().unwrap(), outcome)
}

#[tokio::test]
async fn post_runs_once_after_a_halt_at_every_event() {
    for event in [Pre, BeforeModel, AfterModel, BeforeTool, AfterTool, ToolError, BeforeFinal] {
        let (events, outcomes, ended, outcome) =
            run_with(event, Action::Halt("stop here".into())).await;
        let expected = Error::Halted { event, hook: "probe", reason: "stop here".into() };
        assert_eq!(outcome, Err(expected.clone()));
        assert_eq!(outcomes, [Err(expected)], "post saw the halt at {event}");
        assert_eq!(ended, 1);
        assert_eq!(events.last(), Some(&Post));
        let halt_at = events.iter().position(|e| *e == event).unwrap();
        assert_eq!(events[halt_at + 1..], [Post], "nothing but post fires after a halt at {event}");
    }
}

#[tokio::test]
async fn post_runs_once_after_a_panic_at_every_event() {
    // (A `before_tool` hook's panic refuses the call instead: `failure_policy.rs`.)
    for event in [Pre, BeforeModel, AfterModel, AfterTool, ToolError, BeforeFinal] {
        let (events, outcomes, ended, outcome) =
            run_with(event, Action::Panic("kaboom".into())).await;
        let expected = Error::HookPanicked { event, hook: "probe", message: "kaboom".into() };
        assert_eq!(outcome, Err(expected.clone()));
        assert_eq!(outcomes, [Err(expected)]);
        assert_eq!(ended, 1);
        assert_eq!(events.last(), Some(&Post));
    }
}

#[tokio::test]
async fn early_stops_skip_only_what_the_contract_says() {
    let stop = || Action::Stop(AssistantMessage::text("early"));

    let (events, outcomes, _, outcome) = run_with(BeforeModel, stop()).await;
    assert_eq!(outcome.unwrap().joined_text(), "early");
    assert_eq!(events, [Pre, BeforeModel, AfterModel, BeforeFinal, Post]);
    assert!(outcomes[0].is_ok());

    let (events, _, _, outcome) = run_with(AfterModel, stop()).await;
    assert_eq!(outcome.unwrap().joined_text(), "early");
    assert_eq!(
        events,
        [Pre, BeforeModel, AfterModel, BeforeFinal, Post],
        "no tools after an after_model STOP"
    );

    let (events, outcomes, _, outcome) = run_with(BeforeFinal, stop()).await;
    assert_eq!(outcome.unwrap().joined_text(), "early");
    assert_eq!(events.last(), Some(&Post));
    assert_eq!(
        outcomes[0].as_ref().unwrap().joined_text(),
        "early",
        "post sees the stopped answer"
    );
}

#[tokio::test]
async fn post_runs_after_model_errors_and_limits() {
    let record = Record::new();
    let probe = Probe::new("probe", &record);
    let outcomes = probe.outcomes();
    let agent = Agent::builder(ScriptedModel::new().error(ModelError::Transport("down".into())))
        .hook(probe)
        .build();
    let error = agent.run(&mut Conversation::new(), "hi").await.unwrap_err();
    assert_eq!(error, Error::Model(ModelError::Transport("down".into())));
    assert_eq!(outcomes.lock().unwrap().as_slice(), [Err(error)]);

    let record = Record::new();
    let probe = Probe::new("probe", &record);
    let outcomes = probe.outcomes();
    let looping = ScriptedModel::new()
        .tool_call("get_weather", json!({ "city": "A" }))
        .tool_call("get_weather", json!({ "city": "B" }))
        .text("never");
    let agent = Agent::builder(looping).tool(Weather::default()).hook(probe).build();
    let mut conversation = Conversation::with_config(Config { max_steps: 2, ..Config::default() });
    let error = agent.run(&mut conversation, "hi").await.unwrap_err();
    assert_eq!(error, Error::StepLimit { limit: 2 });
    assert_eq!(outcomes.lock().unwrap().as_slice(), [Err(error)]);
    assert_eq!(record.count(Post, "probe"), 1);
    assert_log_consistent(conversation.log());
}

#[tokio::test]
async fn a_retried_response_passes_after_model_and_only_the_accepted_one_passes_before_final() {
    let record = Record::new();
    let model = ScriptedModel::new().text("first").text("second");
    let agent = Agent::builder(model)
        .hook(Probe::new("probe", &record).on(AfterModel, Action::Retry(Some("again".into()))))
        .build();
    agent.run(&mut Conversation::new(), "hi").await.unwrap();
    assert_eq!(record.count(BeforeModel, "probe"), 2);
    assert_eq!(record.count(AfterModel, "probe"), 2);
    assert_eq!(record.count(BeforeFinal, "probe"), 1);
    assert_eq!(record.count(Post, "probe"), 1);
}

/// A tool that never returns, to cancel a turn midway.
struct Hang;

impl agentix::Tool for Hang {
    const NAME: &'static str = "hang";
    type Args = tests::City;
    type Output = String;
    type Error = String;

    fn description(&self) -> &str {
        "Never returns."
    }

    async fn call(&self, _args: tests::City, _turn: &agentix::Turn) -> Result<String, String> {
        std::future::pending().await
    }
}

#[tokio::test]
async fn a_dropped_turn_leaves_a_consistent_log_and_the_conversation_usable() {
    let model = Arc::new(
        ScriptedModel::new()
            .tool_call("get_weather", json!({ "city": "Oslo" }))
            .tool_call("hang", json!({ "city": "Oslo" }))
            .text("after the cancelled turn"),
    );
    let agent = Agent::builder(model.clone()).tool(Weather::default()).tool(Hang).build();
    let mut conversation = Conversation::new();
    let turn = agent.run(&mut conversation, "first");
    let cancelled = tokio::time::timeout(std::time::Duration::from_millis(50), turn).await;
    assert!(cancelled.is_err(), "the turn hangs in the tool and is dropped");
    assert_log_consistent(conversation.log());
    // Both steps are logged: the one that finished, and the one whose tool was running, its
    // call answered as interrupted (whether the tool did anything is not known).
    let [
        Entry::User { .. },
        Entry::Assistant { .. },
        Entry::ToolResults { results: finished, .. },
        Entry::Assistant { .. },
        Entry::ToolResults { results: running, .. },
        Entry::Failed { error, .. },
    ] = conversation.log()
    else {
        panic!("unexpected log: {:#?}", conversation.log());
    };
    assert_eq!(finished[0].output, "sunny in Oslo");
    assert!(matches!(&running[0].error, Some(ToolFailure::Interrupted { .. })), "{running:?}");
    assert!(error.contains("cancelled"), "{error}");
    let reply = agent.run(&mut conversation, "second").await.unwrap();
    assert_eq!(reply.joined_text(), "after the cancelled turn");
    let last_request = model.requests().pop().unwrap();
    assert_eq!(
        last_request.messages.len(),
        6,
        "first turn's two committed steps, then the new user message"
    );
}

/// Holds the tool's result after `next` returned, until the test lets it go.
struct Hold(Arc<tokio::sync::Notify>);

impl agentix::on::WrapTool for Hold {
    async fn wrap_tool(
        &self,
        call: &agentix::ToolCall,
        _turn: &agentix::Turn,
        next: &impl agentix::tool::NextTool,
    ) -> agentix::ToolResult {
        let result = next.call(call).await;
        self.0.notified().await;
        result
    }
}

/// Two calls in a step, whose results a wrap hook holds until the turn is dropped; `together`
/// of them run at once.
async fn dropped_while_held(together: usize) -> (Vec<String>, Conversation) {
    let model = ScriptedModel::new()
        .tool_calls([
            ("get_weather", json!({ "city": "Oslo" })),
            ("get_weather", json!({ "city": "Bergen" })),
        ])
        .text("after");
    let weather = Weather::default();
    let performed = Arc::clone(&weather.calls);
    let agent = Agent::builder(&model)
        .tool(weather)
        .hook(Hold(Arc::new(tokio::sync::Notify::new())))
        .build();
    let mut conversation = Conversation::new();
    conversation.config_mut().tool_concurrency = together;
    let turn = agent.run(&mut conversation, "weather?");
    let dropped = tokio::time::timeout(std::time::Duration::from_millis(50), turn).await;
    assert!(dropped.is_err(), "the hook holds the turn until it is dropped");
    assert_log_consistent(conversation.log());
    let performed = performed.lock().unwrap().clone();
    (performed, conversation)
}

#[tokio::test]
async fn calls_running_together_dropped_while_held_are_logged_with_what_their_tools_did() {
    let (performed, conversation) = dropped_while_held(8).await;
    assert_eq!(performed, ["Oslo", "Bergen"], "both ran at once");
    let Some(Entry::ToolResults { results, .. }) = conversation.log().get(2) else {
        panic!("the step is logged: {:#?}", conversation.log());
    };
    let outputs: Vec<(&str, &str)> =
        results.iter().map(|result| (result.call_id.as_str(), result.output.as_str())).collect();
    assert_eq!(outputs, [("call_1", "sunny in Oslo"), ("call_2", "sunny in Bergen")]);
    assert!(results.iter().all(|result| result.error.is_none()), "{results:?}");
}

#[tokio::test]
async fn a_turn_dropped_while_a_wrap_hook_holds_a_result_logs_what_the_tool_did() {
    let (performed, conversation) = dropped_while_held(1).await;
    assert_eq!(performed, ["Oslo"], "the first tool ran; the second never did");
    let Some(Entry::ToolResults { results, .. }) = conversation.log().get(2) else {
        panic!("the step is logged: {:#?}", conversation.log());
    };
    assert_eq!(results[0].output, "sunny in Oslo", "the call that ran, with what it returned");
    assert_eq!(results[0].error, None);
    assert!(matches!(&results[1].error, Some(ToolFailure::NotRun { .. })), "{results:?}");
}
