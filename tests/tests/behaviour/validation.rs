//! Bad input gets a typed error and changes nothing: a message that cannot open a turn, a model
//! answer the log could not hold, an empty final answer, and a stored conversation whose log
//! breaks a rule — caught as it is read, naming the entry.

use std::sync::{Arc, Mutex};

use agentix::event::AfterModel;
use agentix::{
    Agent, AssistantMessage, Config, Conversation, Entry, Error, Message, Outcome, Part,
    ScriptedModel, ToolCall, ToolResult, Verdict,
    conversation::{InvalidLog, LogProblem, TurnRef},
    hook,
    message::Role,
    model::ModelError,
};
use proptest::prelude::*;
use serde_json::json;
use tests::{Weather, assert_log_consistent};

#[hook(post)]
async fn count_posts(_outcome: &Outcome) {
    POSTS.lock().unwrap().push(());
}

static POSTS: Mutex<Vec<()>> = Mutex::new(Vec::new());

#[tokio::test]
async fn only_a_plain_user_message_opens_a_turn() {
    let model = ScriptedModel::new().text("hello");
    let agent = Agent::builder(&model).hook(count_posts).build();
    let mut conversation = Conversation::new();
    agent.run(&mut conversation, "first").await.unwrap();
    let before = serde_json::to_value(&conversation).unwrap();
    let posts = POSTS.lock().unwrap().len();

    let call = ToolCall::new("call_1", "get_weather", json!({}));
    let result = ToolResult::success(&call, "sunny");
    let refused = [
        (Message::new(Role::Assistant, "I am the model now"), "its role is assistant, not user"),
        (Message::new(Role::Tool, "sunny"), "its role is tool, not user"),
        (Message::new(Role::System, "new rules"), "its role is system, not user"),
        (
            Message {
                role: Role::User,
                content: vec![Part::text("run this"), Part::ToolCall(call)],
            },
            "it carries a tool call or a tool result",
        ),
        (
            Message { role: Role::User, content: vec![Part::ToolResult(result)] },
            "it carries a tool call or a tool result",
        ),
    ];
    for (message, reason) in refused {
        let error = agent.run(&mut conversation, message).await.unwrap_err();
        let Error::InvalidMessage { reason: said } = &error else {
            panic!("expected InvalidMessage, got {error:?}");
        };
        assert!(said.starts_with(reason), "{said}");
        assert!(error.to_string().starts_with("the message cannot open a turn: "), "{error}");
    }
    assert_eq!(serde_json::to_value(&conversation).unwrap(), before, "the log is untouched");
    assert_eq!(model.calls(), 1, "the model was not called");
    assert_eq!(POSTS.lock().unwrap().len(), posts, "no turn was opened, so no post ran");
}

#[tokio::test]
async fn an_answer_calling_two_tools_under_one_id_is_a_model_failure() {
    let twice = AssistantMessage::default()
        .with_tool_call(ToolCall::new("call_1", "get_weather", json!({ "city": "Oslo" })))
        .with_tool_call(ToolCall::new("call_1", "get_weather", json!({ "city": "Bergen" })));
    let weather = Weather::default();
    let calls = Arc::clone(&weather.calls);
    let agent =
        Agent::builder(ScriptedModel::new().message(twice).text("recovered")).tool(weather).build();
    let mut conversation = Conversation::new();
    let error = agent.run(&mut conversation, "weather?").await.unwrap_err();
    assert_eq!(error, Error::Model(ModelError::DuplicateCallId { id: "call_1".into() }));
    assert!(calls.lock().unwrap().is_empty(), "no tool ran");
    assert_log_consistent(conversation.log());
    conversation.validate().unwrap();
    assert_eq!(agent.run(&mut conversation, "again").await.unwrap().joined_text(), "recovered");
}

/// Copies the first tool call, id and all: a hook breaking the log's rule.
#[hook(after_model)]
async fn echo_call(message: &mut AssistantMessage) -> Verdict<AfterModel> {
    let first = message.tool_calls().next().cloned();
    if let Some(call) = first {
        message.content.push(Part::ToolCall(call));
    }
    Verdict::Continue
}

#[tokio::test]
async fn a_hook_that_leaves_two_calls_under_one_id_fails_by_name() {
    let model = ScriptedModel::new().tool_call("get_weather", json!({ "city": "Oslo" }));
    let agent = Agent::builder(model).tool(Weather::default()).hook(echo_call).build();
    let mut conversation = Conversation::new();
    let error = agent.run(&mut conversation, "weather?").await.unwrap_err();
    let Error::HookFailed {
        event: agentix::event::EventKind::AfterModel,
        hook: "echo_call",
        message,
    } = &error
    else {
        panic!("expected the hook to fail, got {error:?}");
    };
    assert!(message.contains("two tool calls with one id"), "{message}");
    conversation.validate().unwrap();
}

/// Only reads the message: the chain skips the contract check after it.
#[hook(after_model)]
async fn reads_the_message(message: &AssistantMessage) -> Result<(), String> {
    std::hint::black_box(message.calls_tools());
    Ok(())
}

/// Breaks the same rule through its return, a replacement, with a shared borrow only.
#[hook(after_model)]
async fn returns_two_calls_under_one_id(
    message: &AssistantMessage,
) -> Result<AssistantMessage, String> {
    let mut replacement = message.clone();
    if let Some(call) = message.tool_calls().next().cloned() {
        replacement.content.push(Part::ToolCall(call));
    }
    Ok(replacement)
}

#[tokio::test]
async fn a_hook_that_returns_two_calls_under_one_id_fails_by_name_after_one_that_only_reads() {
    // The hook that only reads is not checked after it; the one whose return replaces the
    // message is, though it borrows the message shared.
    let model = ScriptedModel::new().tool_call("get_weather", json!({ "city": "Oslo" }));
    let agent = Agent::builder(model)
        .tool(Weather::default())
        .hook(reads_the_message)
        .hook(returns_two_calls_under_one_id)
        .build();
    let mut conversation = Conversation::new();
    let error = agent.run(&mut conversation, "weather?").await.unwrap_err();
    let Error::HookFailed {
        event: agentix::event::EventKind::AfterModel,
        hook: "returns_two_calls_under_one_id",
        message,
    } = &error
    else {
        panic!("expected the replacing hook to fail, got {error:?}");
    };
    assert!(message.contains("two tool calls with one id"), "{message}");
    conversation.validate().unwrap();
}

#[tokio::test]
async fn an_empty_final_answer_fails_the_turn_unless_the_config_allows_it() {
    let empty = || ScriptedModel::new().message(AssistantMessage::default()).text("");
    let agent = Agent::builder(empty()).build();
    let mut conversation = Conversation::new();
    assert_eq!(agent.run(&mut conversation, "hi").await.unwrap_err(), Error::EmptyAnswer);
    assert_eq!(agent.run(&mut conversation, "hi").await.unwrap_err(), Error::EmptyAnswer);
    assert!(
        !conversation.log().iter().any(|entry| matches!(entry, Entry::Assistant { .. })),
        "an empty answer never joins the log: {:?}",
        conversation.log()
    );
    conversation.validate().unwrap();

    let agent = Agent::builder(empty()).build();
    let mut conversation =
        Conversation::with_config(Config { allow_empty_answers: true, ..Config::default() });
    assert!(agent.run(&mut conversation, "hi").await.unwrap().is_empty());
    assert!(
        matches!(conversation.log().last(), Some(Entry::Assistant { message, .. }) if message.is_empty())
    );
}

/// A stored conversation, as JSON, with `log` as its log and `turns` as its counter.
fn stored(log: serde_json::Value, turns: u64) -> serde_json::Value {
    json!({ "config": {}, "log": log, "turns": turns })
}

fn user(turn: u64, text: &str) -> serde_json::Value {
    json!({ "entry": "user", "turn": turn, "message": { "role": "user", "content": [{ "text": text }] } })
}

fn calls(turn: u64, ids: &[&str]) -> serde_json::Value {
    let content: Vec<_> = ids
        .iter()
        .map(|id| json!({ "tool_call": { "id": id, "name": "get_weather", "arguments": {} } }))
        .collect();
    json!({ "entry": "assistant", "turn": turn, "message": { "content": content } })
}

fn results(turn: u64, ids: &[&str]) -> serde_json::Value {
    let results: Vec<_> = ids
        .iter()
        .map(|id| json!({ "call_id": id, "name": "get_weather", "output": "sunny" }))
        .collect();
    json!({ "entry": "tool_results", "turn": turn, "results": results })
}

fn summary(turn: u64, through: usize) -> serde_json::Value {
    json!({ "entry": "summary", "turn": turn, "through": through, "text": "earlier talk" })
}

fn answer(turn: u64) -> serde_json::Value {
    json!({ "entry": "assistant", "turn": turn, "message": { "content": [{ "text": "done" }] } })
}

#[test]
fn a_stored_log_that_breaks_a_rule_does_not_load_and_the_error_names_the_entry() {
    let valid = stored(
        json!([
            user(1, "a"),
            calls(1, &["c1", "c2"]),
            results(1, &["c1", "c2"]),
            answer(1),
            user(2, "b"),
            answer(2),
            user(3, "c"),
            summary(3, 4),
            answer(3),
            summary(3, 6)
        ]),
        3,
    );
    let conversation: Conversation = serde_json::from_value(valid).unwrap();
    assert_eq!(conversation.log().len(), 10);

    let cases = [
        (
            "an orphan result",
            json!([user(1, "a"), results(1, &["c1"]), answer(1)]),
            1,
            "log entry 1: tool results that follow no assistant message calling tools",
        ),
        (
            "unanswered calls",
            json!([user(1, "a"), calls(1, &["c1"]), answer(1)]),
            1,
            "log entry 1: the tool calls c1 are not answered by the entry after them",
        ),
        (
            "calls left open at the end",
            json!([user(1, "a"), calls(1, &["c1"])]),
            1,
            "log entry 1: the tool calls c1 are not answered",
        ),
        (
            "results in another order",
            json!([user(1, "a"), calls(1, &["c1", "c2"]), results(1, &["c2", "c1"])]),
            2,
            "log entry 2: the results answer [c2, c1], but the calls before them are [c1, c2]",
        ),
        (
            "a result missing",
            json!([user(1, "a"), calls(1, &["c1", "c2"]), results(1, &["c1"])]),
            2,
            "log entry 2: the results answer [c1]",
        ),
        (
            "two calls, one id",
            json!([user(1, "a"), calls(1, &["c1", "c1"]), results(1, &["c1", "c1"])]),
            1,
            "log entry 1: two tool calls share the id `c1`",
        ),
        (
            "a turn that went backwards",
            json!([user(1, "a"), answer(1), user(2, "b"), answer(1)]),
            3,
            "log entry 3: its turn 1 comes after turn 2",
        ),
        (
            "a turn opened twice",
            json!([user(1, "a"), answer(1), user(1, "b")]),
            2,
            "log entry 2: a second user message in turn 1",
        ),
        (
            "a turn without its user message",
            json!([user(1, "a"), answer(1), answer(2)]),
            2,
            "log entry 2: turn 2 starts without a user message",
        ),
        (
            "a summary that ends inside a turn",
            json!([user(1, "a"), answer(1), user(2, "b"), summary(2, 1), answer(2)]),
            3,
            "log entry 3: a summary through entry 1, which is not the start of a turn before it",
        ),
        (
            "a summary that covers less than the one before",
            json!([user(1, "a"), answer(1), user(2, "b"), summary(2, 2), summary(2, 2)]),
            4,
            "log entry 4: a summary through entry 2, which is not the start of a turn before it, past the end of the summary before it",
        ),
        (
            "a summary of what comes after it",
            json!([user(1, "a"), summary(1, 2), user(2, "b")]),
            1,
            "log entry 1: a summary through entry 2",
        ),
        (
            "an entry before any turn",
            json!([answer(1), user(1, "a")]),
            0,
            "log entry 0: it comes before the first user message",
        ),
    ];
    for (what, log, index, message) in cases {
        let error = serde_json::from_value::<Conversation>(stored(log.clone(), 2)).unwrap_err();
        assert!(error.to_string().starts_with(message), "{what}: {error}");
        let found = validate(log, 2).unwrap_err();
        assert_eq!(found.index, index, "{what}: {found}");
    }

    let behind = stored(json!([user(1, "a"), answer(1), user(2, "b"), answer(2)]), 1);
    let error = serde_json::from_value::<Conversation>(behind).unwrap_err();
    assert!(
        error.to_string().starts_with(
            "log entry 2: it belongs to turn 2, but the conversation counts only 1 turns"
        ),
        "{error}"
    );
}

/// The typed error of a stored log, read back without the check (through the log's entries),
/// then checked.
fn validate(log: serde_json::Value, turns: u64) -> Result<(), InvalidLog> {
    let entries: Vec<Entry> = serde_json::from_value(log).unwrap();
    tests::validate_entries(&entries, turns)
}

// ---- properties: mutate valid logs ----

/// One turn of a generated log: durable `pre` output, steps of `n` calls each, how it ended,
/// durable `post` output.
#[derive(Clone, Debug)]
struct TurnPlan {
    pre_output: bool,
    steps: Vec<usize>,
    end: End,
    post_output: bool,
}

#[derive(Clone, Debug)]
enum End {
    Answer,
    Halted,
    Failed,
}

fn turn_plan() -> impl Strategy<Value = TurnPlan> {
    (
        any::<bool>(),
        proptest::collection::vec(1usize..4, 0..4),
        prop_oneof![Just(End::Answer), Just(End::Halted), Just(End::Failed)],
        any::<bool>(),
    )
        .prop_map(|(pre_output, steps, end, post_output)| TurnPlan {
            pre_output,
            steps,
            end,
            post_output,
        })
}

/// The log the loop would have written for `plans`.
fn log_of(plans: &[TurnPlan]) -> Vec<Entry> {
    let mut log = Vec::new();
    for (number, plan) in (1..).zip(plans) {
        let turn = TurnRef(number);
        log.push(Entry::User {
            turn,
            message: Message::user(format!("turn {number}")),
            task: None,
        });
        if plan.pre_output {
            log.push(Entry::HookOutput {
                turn,
                event: agentix::event::EventKind::Pre,
                hook: "memory".into(),
                parts: vec![Part::text("remembered")],
            });
        }
        for (step, &n) in plan.steps.iter().enumerate() {
            let calls: Vec<ToolCall> = (0..n)
                .map(|call| ToolCall::new(format!("call_{step}_{call}"), "get_weather", json!({})))
                .collect();
            let results = calls.iter().map(|call| ToolResult::success(call, "sunny")).collect();
            let message = calls
                .into_iter()
                .fold(AssistantMessage::default(), AssistantMessage::with_tool_call);
            log.push(Entry::Assistant { turn, message });
            log.push(Entry::ToolResults { turn, results });
        }
        log.push(match plan.end {
            End::Answer => Entry::Assistant { turn, message: AssistantMessage::text("done") },
            End::Halted => Entry::Halted {
                turn,
                event: agentix::event::EventKind::BeforeModel,
                hook: "guard".into(),
                reason: "no".into(),
            },
            End::Failed => Entry::Failed { turn, error: "the model failed".into() },
        });
        if plan.post_output {
            log.push(Entry::HookOutput {
                turn,
                event: agentix::event::EventKind::Post,
                hook: "summary".into(),
                parts: vec![Part::text("so far")],
            });
        }
    }
    log
}

/// A change that breaks a rule, by construction.
#[derive(Clone, Debug)]
enum Break {
    DropResults,
    RepeatResults,
    RenameResult,
    DropLastResult,
    ShareCallId,
    ReopenTurn,
    TurnBackwards,
    DropUserMessage,
    CounterBehind,
}

fn breaks() -> impl Strategy<Value = Break> {
    prop_oneof![
        Just(Break::DropResults),
        Just(Break::RepeatResults),
        Just(Break::RenameResult),
        Just(Break::DropLastResult),
        Just(Break::ShareCallId),
        Just(Break::ReopenTurn),
        Just(Break::TurnBackwards),
        Just(Break::DropUserMessage),
        Just(Break::CounterBehind),
    ]
}

/// `log` with `change` applied at the `pick`-th place it applies to; `None` if it applies nowhere.
/// Also the counter to check it with.
fn broken(
    mut log: Vec<Entry>,
    turns: u64,
    change: &Break,
    pick: usize,
) -> Option<(Vec<Entry>, u64)> {
    let at = |log: &[Entry], wanted: &dyn Fn(usize, &Entry) -> bool| -> Option<usize> {
        let places: Vec<usize> =
            log.iter().enumerate().filter(|(i, e)| wanted(*i, e)).map(|(i, _)| i).collect();
        (!places.is_empty()).then(|| places[pick % places.len()])
    };
    let is_results = |_: usize, entry: &Entry| matches!(entry, Entry::ToolResults { .. });
    match change {
        Break::DropResults => {
            let index = at(&log, &is_results)?;
            log.remove(index);
        }
        Break::RepeatResults => {
            let index = at(&log, &is_results)?;
            let copy = log[index].clone();
            log.insert(index + 1, copy);
        }
        Break::RenameResult => {
            let index = at(&log, &is_results)?;
            let Entry::ToolResults { results, .. } = &mut log[index] else { unreachable!() };
            let which = pick % results.len();
            results[which].call_id.push_str("_renamed");
        }
        Break::DropLastResult => {
            let index = at(&log, &is_results)?;
            let Entry::ToolResults { results, .. } = &mut log[index] else { unreachable!() };
            results.pop();
        }
        Break::ShareCallId => {
            let index = at(
                &log,
                &|_, entry| matches!(entry, Entry::Assistant { message, .. } if message.tool_calls().count() >= 2),
            )?;
            let Entry::Assistant { message, .. } = &mut log[index] else { unreachable!() };
            let mut calls = message.content.iter_mut().filter_map(|part| match part {
                Part::ToolCall(call) => Some(call),
                _ => None,
            });
            let first = calls.next()?.id.clone();
            calls.next()?.id = first.clone();
            let Entry::ToolResults { results, .. } = &mut log[index + 1] else { unreachable!() };
            results[1].call_id = first;
        }
        Break::ReopenTurn => {
            let index = at(&log, &|i, entry| i > 0 && matches!(entry, Entry::User { .. }))?;
            let previous = log[index - 1].turn();
            let Entry::User { turn, .. } = &mut log[index] else { unreachable!() };
            *turn = previous;
        }
        Break::TurnBackwards => {
            let index = at(&log, &|i, entry| {
                i > 0 && entry.turn().0 > 1 && !matches!(entry, Entry::User { .. })
            })?;
            let set = |entry: &mut Entry| match entry {
                Entry::User { turn, .. }
                | Entry::Assistant { turn, .. }
                | Entry::ToolResults { turn, .. }
                | Entry::Halted { turn, .. }
                | Entry::HookOutput { turn, .. }
                | Entry::HookSkipped { turn, .. }
                | Entry::Failed { turn, .. }
                | Entry::Suspended { turn, .. }
                | Entry::Resumed { turn, .. }
                | Entry::Summary { turn, .. }
                | Entry::Delegated { turn, .. } => turn.0 -= 1,
            };
            set(&mut log[index]);
        }
        Break::DropUserMessage => {
            // A turn with more than its user message: dropping it leaves the rest without one.
            let index =
                at(&log, &|i, entry| matches!(entry, Entry::User { .. }) && log_has_more(&log, i))?;
            log.remove(index);
        }
        Break::CounterBehind => {
            let last = log.last()?.turn().0;
            return Some((log, last - 1));
        }
    }
    Some((log, turns))
}

fn log_has_more(log: &[Entry], user: usize) -> bool {
    log.get(user + 1).is_some_and(|next| next.turn() == log[user].turn())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn every_log_the_loop_could_write_is_valid(plans in proptest::collection::vec(turn_plan(), 0..6)) {
        let log = log_of(&plans);
        let turns = plans.len() as u64;
        prop_assert_eq!(tests::validate_entries(&log, turns), Ok(()));
        // Later turns may be missing (a log cut at a turn boundary), and the counter may be ahead.
        let cut = log.iter().rposition(|entry| matches!(entry, Entry::User { .. })).unwrap_or(0);
        prop_assert_eq!(tests::validate_entries(&log[..cut], turns + 1), Ok(()));
        let json = json!({ "config": {}, "log": log, "turns": turns });
        let read: Conversation = serde_json::from_value(json).unwrap();
        prop_assert_eq!(read.log(), &log[..]);
    }

    #[test]
    fn every_log_broken_by_a_rule_is_refused(
        plans in proptest::collection::vec(turn_plan(), 1..6),
        change in breaks(),
        pick in any::<usize>(),
    ) {
        let log = log_of(&plans);
        let Some((log, turns)) = broken(log, plans.len() as u64, &change, pick) else {
            return Ok(());
        };
        let error = tests::validate_entries(&log, turns).unwrap_err();
        prop_assert!(error.index < log.len(), "{change:?}: {error}");
        let expected = matches!(
            (&change, &error.problem),
            (Break::DropResults, LogProblem::UnansweredCalls { .. })
                | (Break::RepeatResults, LogProblem::OrphanResults)
                | (Break::RenameResult | Break::DropLastResult, LogProblem::ResultsMismatch { .. })
                | (Break::ShareCallId, LogProblem::DuplicateCallId { .. })
                | (
                    Break::ReopenTurn | Break::TurnBackwards,
                    LogProblem::SecondUserMessage { .. } | LogProblem::TurnWentBackwards { .. }
                )
                | (
                    Break::DropUserMessage,
                    LogProblem::TurnWithoutUserMessage { .. } | LogProblem::OutsideAnyTurn
                )
                | (Break::CounterBehind, LogProblem::CounterBehind { .. })
        );
        prop_assert!(expected, "{:?} was reported as {}", change, error);
        let json = json!({ "config": {}, "log": log, "turns": turns });
        let refused = serde_json::from_value::<Conversation>(json).unwrap_err();
        prop_assert!(refused.to_string().starts_with(&format!("log entry {}", error.index)), "{}", refused);
    }
}
