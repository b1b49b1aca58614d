//! The loop as a state machine under random scripts: model answers (text, tool calls, empty
//! answers, errors, duplicate ids), tools that succeed, fail, are unknown, time out or are
//! refused, every verdict at every event, panics, hook timeouts, and turns dropped at random
//! await points — thousands of turns over both paths (the plain future and the stream). After
//! every turn the log must keep its invariants: every call answered exactly once and no orphan
//! result, turns numbered one after another, one final answer per successful turn, durable
//! entries only from durable hooks, and every tool that did its work answered with a result
//! that says so.

use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use agentix::event::EventKind::{self, *};
use agentix::{
    Agent, AssistantMessage, Config, Conversation, Entry, Hook, Outcome, ScriptedModel,
    StreamEvent, ToolCall, ToolResult, Turn, Verdict, approval::Approval, hook,
    message::ToolFailure, model::ModelError, tool::NextTool, verdict::Escalation,
};
use futures::StreamExt;
use proptest::prelude::*;
use serde::Deserialize;
use serde_json::json;
use tests::{Action, Probe, Record};

/// `act`'s arguments: a key naming the call, and how the tool should behave.
#[derive(Deserialize, schemars::JsonSchema)]
struct Act {
    key: String,
    #[serde(default)]
    how: How,
}

#[derive(Clone, Copy, Debug, Default, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
enum How {
    #[default]
    Work,
    Fail,
    Panic,
    Stall,
    /// Works, then the `wrap_tool` hook panics over its result.
    WrapPanic,
}

/// `act`: does its work (records its key) and says so, or fails, panics or stalls.
#[derive(Clone, Default)]
struct ActTool {
    performed: Arc<Mutex<Vec<String>>>,
}

impl agentix::Tool for ActTool {
    const NAME: &'static str = "act";
    type Args = Act;
    type Output = String;
    type Error = String;

    fn description(&self) -> &str {
        "Does something that leaves a trace."
    }

    async fn call(&self, args: Act, _turn: &Turn) -> Result<String, String> {
        match args.how {
            How::Work | How::WrapPanic => {
                self.performed.lock().unwrap().push(args.key.clone());
                Ok(format!("done {}", args.key))
            }
            How::Fail => Err(format!("could not do {}", args.key)),
            How::Panic => panic!("act exploded on {}", args.key),
            How::Stall => {
                tokio::time::sleep(Duration::from_secs(3600)).await;
                Ok("too late".into())
            }
        }
    }
}

/// `wrap_tool`: panics over the result of a call that asked for it.
#[hook(wrap_tool)]
async fn audit(call: &ToolCall, next: &impl NextTool) -> ToolResult {
    let result = next.call(call).await;
    if call.arguments["how"] == "wrap_panic" {
        panic!("audit failed over {}", call.id);
    }
    result
}

/// `pre, durable`: remembers every turn.
#[hook(pre, durable)]
async fn remember(turn: &mut Turn) {
    turn.inject("memo");
}

/// `pre`: transient context, never in the log.
#[hook(pre)]
async fn context(turn: &mut Turn) {
    turn.inject("context");
}

/// `post, durable`: a summary after every turn.
#[hook(post, durable)]
async fn summarize(_outcome: &Outcome, turn: &mut Turn) {
    turn.inject("summary");
}

const DURABLE_HOOKS: [&str; 2] = ["remember", "summarize"];

/// Stalls past its timeout at the events it is told, once each.
struct Sleepy(Mutex<Vec<EventKind>>);

impl Sleepy {
    async fn maybe_stall(&self, event: EventKind) {
        let stalls = {
            let mut events = self.0.lock().unwrap();
            let found = events.iter().position(|stalled| *stalled == event);
            found.map(|at| events.remove(at)).is_some()
        };
        if stalls {
            tokio::time::sleep(Duration::from_secs(3600)).await;
        }
    }
}

#[hook]
impl Hook for Sleepy {
    const TIMEOUT: Option<Duration> = Some(Duration::from_millis(10));

    async fn pre(&self, _: &mut Turn) -> Verdict<agentix::event::Pre> {
        self.maybe_stall(Pre).await;
        Verdict::Continue
    }

    async fn before_model(
        &self,
        _: &mut agentix::model::ModelRequest,
        _: &mut Turn,
    ) -> Verdict<agentix::event::BeforeModel> {
        self.maybe_stall(BeforeModel).await;
        Verdict::Continue
    }

    async fn after_model(
        &self,
        _: &mut AssistantMessage,
        _: &mut Turn,
    ) -> Verdict<agentix::event::AfterModel> {
        self.maybe_stall(AfterModel).await;
        Verdict::Continue
    }

    async fn before_tool(
        &self,
        _: &mut ToolCall,
        _: &mut Turn,
    ) -> Verdict<agentix::event::BeforeTool> {
        self.maybe_stall(BeforeTool).await;
        Verdict::Continue
    }

    async fn after_tool(
        &self,
        _: &mut ToolResult,
        _: &mut Turn,
    ) -> Verdict<agentix::event::AfterTool> {
        self.maybe_stall(AfterTool).await;
        Verdict::Continue
    }

    async fn before_final(
        &self,
        _: &mut AssistantMessage,
        _: &mut Turn,
    ) -> Verdict<agentix::event::BeforeFinal> {
        self.maybe_stall(BeforeFinal).await;
        Verdict::Continue
    }
}

// ---- scripts ----

/// One model answer.
#[derive(Clone, Debug)]
enum Answer {
    Text(String),
    Empty,
    Calls(Vec<Call>),
    TwoCallsOneId,
    Error,
}

/// One tool call the model asks for.
#[derive(Clone, Debug)]
enum Call {
    Act(How),
    Unknown,
    BadArguments,
}

/// One turn's script.
#[derive(Clone, Debug)]
struct TurnScript {
    answers: Vec<Answer>,
    actions: Vec<(EventKind, Action)>,
    stalls: Vec<EventKind>,
    streamed: bool,
    /// Drop the turn after this many polls, if it has not ended by then.
    drop_after: Option<usize>,
}

fn how() -> impl Strategy<Value = How> {
    prop_oneof![
        4 => Just(How::Work),
        1 => Just(How::Fail),
        1 => Just(How::Panic),
        1 => Just(How::Stall),
        1 => Just(How::WrapPanic),
    ]
}

fn call() -> impl Strategy<Value = Call> {
    prop_oneof![6 => how().prop_map(Call::Act), 1 => Just(Call::Unknown), 1 => Just(Call::BadArguments)]
}

fn answer() -> impl Strategy<Value = Answer> {
    prop_oneof![
        4 => "[a-z]{1,8}( [a-z]{1,8}){0,3}".prop_map(Answer::Text),
        1 => Just(Answer::Empty),
        4 => proptest::collection::vec(call(), 1..4).prop_map(Answer::Calls),
        1 => Just(Answer::TwoCallsOneId),
        1 => Just(Answer::Error),
    ]
}

fn message_action() -> impl Strategy<Value = Action> {
    prop_oneof![
        6 => Just(Action::Continue),
        1 => Just(Action::Edit("edited".into())),
        1 => Just(Action::Stop(AssistantMessage::text("stopped"))),
        1 => Just(Action::Retry(Some("again".into()))),
        1 => Just(Action::Retry(None)),
        1 => Just(Action::Halt("halt".into())),
        1 => Just(Action::Panic("boom".into())),
    ]
}

/// An action `event`'s contract allows.
fn action(event: EventKind) -> BoxedStrategy<Action> {
    let ends = prop_oneof![Just(Action::Halt("halt".into())), Just(Action::Panic("boom".into()))];
    match event {
        Pre => prop_oneof![4 => Just(Action::Continue), 1 => Just(Action::Edit("note".into())), 1 => Just(Action::Fail("failed".into())), 1 => ends].boxed(),
        BeforeModel => prop_oneof![4 => Just(Action::Continue), 1 => Just(Action::Stop(AssistantMessage::text("cached"))), 1 => ends].boxed(),
        AfterModel | BeforeFinal => message_action().boxed(),
        BeforeTool => prop_oneof![
            4 => Just(Action::Continue),
            1 => Just(Action::Reject("no".into())),
            1 => Just(Action::Escalate("ask".into())),
            1 => ends,
        ]
        .boxed(),
        AfterTool => prop_oneof![4 => Just(Action::Continue), 1 => Just(Action::Edit("edited".into())), 1 => ends].boxed(),
        ToolError => prop_oneof![4 => Just(Action::Continue), 1 => Just(Action::Recover("recovered".into())), 1 => ends].boxed(),
        _ => prop_oneof![6 => Just(Action::Continue), 1 => ends].boxed(),
    }
}

fn actions() -> impl Strategy<Value = Vec<(EventKind, Action)>> {
    let events =
        [Pre, BeforeModel, AfterModel, BeforeTool, AfterTool, ToolError, BeforeFinal, Post];
    proptest::collection::vec(
        proptest::sample::select(events.to_vec())
            .prop_flat_map(|event| action(event).prop_map(move |action| (event, action))),
        0..4,
    )
}

fn stalls() -> impl Strategy<Value = Vec<EventKind>> {
    let events = [Pre, BeforeModel, AfterModel, BeforeTool, AfterTool, BeforeFinal];
    prop_oneof![
        6 => Just(Vec::new()),
        1 => proptest::sample::subsequence(events.to_vec(), 1..3),
    ]
}

fn turn_script() -> impl Strategy<Value = TurnScript> {
    (
        proptest::collection::vec(answer(), 1..5),
        actions(),
        stalls(),
        any::<bool>(),
        prop_oneof![4 => Just(None), 1 => (0usize..40).prop_map(Some)],
    )
        .prop_map(|(answers, actions, stalls, streamed, drop_after)| TurnScript {
            answers,
            actions,
            stalls,
            streamed,
            drop_after,
        })
}

/// The scripted model for one turn; call keys are unique across the conversation.
fn model_for(turn: usize, script: &TurnScript) -> ScriptedModel {
    let mut model = ScriptedModel::new().chunked(3);
    for (step, answer) in script.answers.iter().enumerate() {
        model = match answer {
            Answer::Text(text) => model.text(text.clone()),
            Answer::Empty => model.message(AssistantMessage::default()),
            Answer::Error => model.error(ModelError::Transport("connection reset".into())),
            Answer::TwoCallsOneId => model.message(
                AssistantMessage::default()
                    .with_tool_call(ToolCall::new("same", "act", json!({ "key": "x" })))
                    .with_tool_call(ToolCall::new("same", "act", json!({ "key": "y" }))),
            ),
            Answer::Calls(calls) => {
                model.tool_calls(calls.iter().enumerate().map(|(index, call)| {
                    let key = format!("t{turn}s{step}c{index}");
                    match call {
                        Call::Act(how) => ("act", json!({ "key": key, "how": how_word(*how) })),
                        Call::Unknown => ("no_such_tool", json!({})),
                        Call::BadArguments => ("act", json!({ "nokey": key })),
                    }
                }))
            }
        };
    }
    model
}

fn how_word(how: How) -> &'static str {
    match how {
        How::Work => "work",
        How::Fail => "fail",
        How::Panic => "panic",
        How::Stall => "stall",
        How::WrapPanic => "wrap_panic",
    }
}

/// Runs one turn as scripted: `None` if it was dropped before it ended.
async fn run_turn(
    turn: usize,
    script: &TurnScript,
    conversation: &mut Conversation,
    tool: &ActTool,
) -> Option<Outcome> {
    let model = model_for(turn, script);
    let record = Record::new();
    let probe = script
        .actions
        .iter()
        .cloned()
        .fold(Probe::new("probe", &record), |probe, (event, action)| probe.on(event, action));
    let agent = Agent::builder(model)
        .tool(tool.clone())
        .hook(remember)
        .hook(context)
        .hook(probe)
        .hook(Sleepy(Mutex::new(script.stalls.clone())))
        .hook(audit)
        .hook(summarize)
        .approver(|call: ToolCall, _: Escalation| async move {
            if call.arguments["how"] == "fail" {
                Approval::Reject("not that".into())
            } else {
                Approval::Approve
            }
        })
        .build();
    let message = format!("turn {turn}");
    let run = async {
        if script.streamed {
            let events: Vec<StreamEvent> =
                agent.turn(conversation, message).stream().collect().await;
            match events.last() {
                Some(StreamEvent::Finished(outcome)) => outcome.clone(),
                other => panic!("a stream ends with its outcome, not {other:?}"),
            }
        } else {
            agent.run(conversation, message).await
        }
    };
    match script.drop_after {
        None => Some(run.await),
        Some(polls) => {
            let run = std::pin::pin!(run);
            match futures::future::select(run, std::pin::pin!(tests::Yields(polls))).await {
                futures::future::Either::Left((outcome, _)) => Some(outcome),
                futures::future::Either::Right(((), _)) => None,
            }
        }
    }
}

/// The invariants every log keeps after every turn.
fn check(
    conversation: &Conversation,
    turns: usize,
    outcome: &Option<Outcome>,
    performed: &[String],
) {
    let log = conversation.log();
    conversation.validate().unwrap_or_else(|error| panic!("{error}: {log:#?}"));
    tests::assert_log_consistent(log);

    // Turns numbered one after another, each opened by its user message.
    let opened: Vec<u64> = log
        .iter()
        .filter_map(|entry| match entry {
            Entry::User { turn, .. } => Some(turn.0),
            _ => None,
        })
        .collect();
    assert_eq!(opened, (1..=turns as u64).collect::<Vec<_>>());

    // Every call answered exactly once: results by call id, across the log.
    let mut answered: HashMap<(u64, String), &ToolResult> = HashMap::new();
    let mut keys: HashMap<(u64, String), String> = HashMap::new();
    for entry in log {
        match entry {
            Entry::Assistant { turn, message } => {
                for call in message.tool_calls() {
                    let key = call.arguments["key"].as_str().unwrap_or_default().to_owned();
                    assert!(
                        keys.insert((turn.0, call.id.clone()), key).is_none(),
                        "call {} twice",
                        call.id
                    );
                }
            }
            Entry::ToolResults { turn, results } => {
                for result in results {
                    let id = (turn.0, result.call_id.clone());
                    assert!(keys.contains_key(&id), "result {} answers no call", result.call_id);
                    assert!(
                        answered.insert(id, result).is_none(),
                        "call {} answered twice",
                        result.call_id
                    );
                }
            }
            _ => {}
        }
    }
    assert_eq!(answered.len(), keys.len(), "every call answered");

    // Every tool that did its work is answered with a result that says it ran.
    for key in performed {
        let (id, _) = keys
            .iter()
            .find(|(_, logged)| *logged == key)
            .unwrap_or_else(|| panic!("{key} did its work, but its call is not in the log"));
        let result = answered[id];
        assert!(
            !matches!(
                result.error,
                Some(
                    ToolFailure::NotRun { .. }
                        | ToolFailure::Interrupted { .. }
                        | ToolFailure::Rejected { .. }
                )
            ),
            "{key} did its work, but its result says it did not: {result:?}"
        );
    }

    // Durable entries come from durable hooks only.
    for entry in log {
        if let Entry::HookOutput { hook, .. } = entry {
            assert!(DURABLE_HOOKS.contains(&hook.as_str()), "durable output from `{hook}`");
        }
    }

    // The last turn: one final answer when it succeeded (the one returned), at most one otherwise.
    let last = turns as u64;
    let finals: Vec<&AssistantMessage> = log
        .iter()
        .filter_map(|entry| match entry {
            Entry::Assistant { turn, message } if turn.0 == last && !message.calls_tools() => {
                Some(message)
            }
            _ => None,
        })
        .collect();
    match outcome {
        Some(Ok(answer)) => assert_eq!(finals, [answer], "one final answer, the one returned"),
        Some(Err(_)) => assert!(finals.len() <= 1, "{finals:?}"),
        None => {
            assert!(finals.len() <= 1, "{finals:?}");
            assert!(
                matches!(log.last(), Some(Entry::Failed { error, .. }) if error.contains("cancelled"))
                    || log.last().is_some_and(|entry| matches!(entry, Entry::HookOutput { .. }))
                    || finals.len() == 1,
                "a dropped turn says so: {:?}",
                log.last()
            );
        }
    }
}

/// The scripts' own panics are expected by the thousand: they are not printed. Any other panic
/// (a failed check) is, as usual.
fn quiet_scripted_panics() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let default = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let payload = info.payload();
            let message = payload
                .downcast_ref::<&str>()
                .map(|text| text.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_default();
            let scripted = message == "boom"
                || message.starts_with("act exploded on ")
                || message.starts_with("audit failed over ");
            if !scripted {
                default(info);
            }
        }));
    });
}

/// Plays `scripts` on one conversation, checking the invariants after every turn; how each turn
/// ended.
fn play(scripts: &[TurnScript]) -> Vec<Ending> {
    quiet_scripted_panics();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .unwrap();
    runtime.block_on(async {
        let tool = ActTool::default();
        let config = Config {
            tool_timeout: Some(Duration::from_millis(10)),
            max_retries: 1,
            max_steps: 3,
            ..Config::default()
        };
        let mut conversation = Conversation::with_config(config);
        let mut endings = Vec::new();
        for (index, script) in scripts.iter().enumerate() {
            let outcome = run_turn(index + 1, script, &mut conversation, &tool).await;
            let performed = tool.performed.lock().unwrap().clone();
            check(&conversation, index + 1, &outcome, &performed);
            // The conversation survives a round trip through serde after every turn.
            let json = serde_json::to_string(&conversation).unwrap();
            let revived: Conversation = serde_json::from_str(&json).unwrap();
            assert_eq!(revived.log(), conversation.log());
            endings.push(Ending::of(&outcome));
        }
        endings
    })
}

/// How a turn ended, by kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
enum Ending {
    Answered,
    Dropped,
    Halted,
    HookFailed,
    HookPanicked,
    HookTimedOut,
    ModelFailed,
    Empty,
    Limit,
    Other,
}

impl Ending {
    fn of(outcome: &Option<Outcome>) -> Self {
        use agentix::Error;
        match outcome {
            None => Ending::Dropped,
            Some(Ok(_)) => Ending::Answered,
            Some(Err(Error::Halted { .. })) => Ending::Halted,
            Some(Err(Error::HookFailed { .. })) => Ending::HookFailed,
            Some(Err(Error::HookPanicked { .. })) => Ending::HookPanicked,
            Some(Err(Error::HookTimedOut { .. })) => Ending::HookTimedOut,
            Some(Err(Error::Model(_))) => Ending::ModelFailed,
            Some(Err(Error::EmptyAnswer)) => Ending::Empty,
            Some(Err(Error::RetryLimit { .. } | Error::StepLimit { .. })) => Ending::Limit,
            Some(Err(_)) => Ending::Other,
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    #[test]
    fn every_log_keeps_its_invariants_whatever_happens(
        scripts in proptest::collection::vec(turn_script(), 1..8),
    ) {
        play(&scripts);
    }
}

/// The property is only as good as what its scripts reach: a fixed run of the generator reaches
/// every kind of ending, on both paths.
#[test]
fn the_scripts_reach_every_kind_of_ending() {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::{Config as Cases, TestRng, TestRunner};

    let mut runner = TestRunner::new_with_rng(
        Cases::default(),
        TestRng::deterministic_rng(Cases::default().rng_algorithm),
    );
    let mut reached = BTreeSet::new();
    let mut streamed = [false, false];
    for _ in 0..200 {
        let scripts =
            proptest::collection::vec(turn_script(), 1..8).new_tree(&mut runner).unwrap().current();
        for script in &scripts {
            streamed[usize::from(script.streamed)] = true;
        }
        reached.extend(play(&scripts));
    }
    assert_eq!(streamed, [true, true]);
    let every = [
        Ending::Answered,
        Ending::Dropped,
        Ending::Halted,
        Ending::HookFailed,
        Ending::HookPanicked,
        Ending::HookTimedOut,
        Ending::ModelFailed,
        Ending::Empty,
        Ending::Limit,
    ];
    for ending in every {
        assert!(reached.contains(&ending), "no script ended {ending:?}: {reached:?}");
    }
}
