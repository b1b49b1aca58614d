//! Long conversations: the request a turn sends is the one a plan made from scratch over the
//! whole log would send, though the agent plans it from a ledger kept between turns; and a
//! summarizer is given each message once, however many turns go by.

use std::sync::{Arc, Mutex};

use agentix::context::TokenCounter as _;
use agentix::{
    Agent, Config, Conversation, Entry, Error, Message, ScriptedModel,
    context::{CharsPerToken, Summarizer},
    model::ModelRequest,
};
use futures::executor::block_on;
use proptest::prelude::*;
use serde_json::json;
use tests::Weather;

/// The plan made from scratch, as the README states it, over the log as it stood when a
/// request was rendered (`log`, the current turn's user message at `user`): every entry counted;
/// the oldest earlier turns dropped whole, then the current turn's oldest steps (never its
/// latest), until the request fits `target` beside `fixed`. The messages it sends, or `None`
/// when even that does not fit.
fn planned_from_scratch(
    log: &[Entry],
    user: usize,
    fixed: usize,
    target: usize,
) -> Option<Vec<Message>> {
    let counter = CharsPerToken::default();
    let tokens = |entries: &[Entry]| -> usize {
        entries.iter().filter_map(Entry::to_message).map(|m| counter.count_message(&m)).sum()
    };
    let mut turns: Vec<&[Entry]> = Vec::new();
    let mut start = 0;
    while start < user {
        let turn = log[start].turn();
        let end = (start..user).find(|&i| log[i].turn() != turn).unwrap_or(user);
        turns.push(&log[start..end]);
        start = end;
    }
    let mut steps: Vec<&[Entry]> = Vec::new();
    let mut index = user + 1;
    while index < log.len() {
        let end = if matches!(log.get(index + 1), Some(Entry::ToolResults { .. })) {
            index + 2
        } else {
            index + 1
        };
        steps.push(&log[index..end]);
        index = end;
    }
    let mut total = fixed + tokens(log);
    let mut dropped_turns = 0;
    while total > target && dropped_turns < turns.len() {
        total -= tokens(turns[dropped_turns]);
        dropped_turns += 1;
    }
    let mut dropped_steps = 0;
    while total > target && dropped_steps + 1 < steps.len() {
        total -= tokens(steps[dropped_steps]);
        dropped_steps += 1;
    }
    if total > target {
        return None;
    }
    let opening: &[Entry] = &log[user..=user];
    let kept = turns[dropped_turns..]
        .iter()
        .copied()
        .chain([opening])
        .chain(steps[dropped_steps..].iter().copied())
        .flat_map(|entries| entries.iter().filter_map(Entry::to_message));
    Some(kept.collect())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// Over several turns — the ledger kept between them, or started over when the
    /// conversation goes through serde — each request is the one the plan from scratch makes.
    #[test]
    fn the_incremental_plan_sends_what_a_plan_from_scratch_sends(
        earlier in prop::collection::vec(
            (1usize..120, prop::collection::vec(1usize..3, 0..3), 1usize..160),
            0..30,
        ),
        budget in 80usize..2_500,
        turns in prop::collection::vec((0usize..3, any::<bool>()), 1..5),
    ) {
        let mut log = Vec::new();
        for (n, (question, steps, answer)) in earlier.iter().enumerate() {
            log.extend(tests::earlier_turn(n as u64 + 1, *question, steps, *answer));
        }
        let config = Config { context_budget: budget, injection_reserve: 0, ..Config::default() };
        let stored = json!({ "config": config, "log": log, "turns": earlier.len() });
        let mut conversation: Conversation = serde_json::from_value(stored).unwrap();
        let counter = CharsPerToken::default();
        for (turn, (tool_steps, reload)) in turns.into_iter().enumerate() {
            if reload {
                let stored = serde_json::to_string(&conversation).unwrap();
                conversation = serde_json::from_str(&stored).unwrap();
            }
            let model = (0..tool_steps)
                .fold(ScriptedModel::new(), |model, step| {
                    model.tool_call("get_weather", json!({ "city": format!("city {step}") }))
                })
                .text("x".repeat(40 + 30 * turn));
            let agent = Agent::builder(&model).system("Be brief.").tool(Weather::default()).build();
            let user = conversation.log().len();
            let outcome = block_on(agent.run(&mut conversation, "y".repeat(20 + turn)));
            let tools: usize =
                model.requests().first().map_or(0, |request| {
                    request.tools.iter().map(|spec| counter.count_tool(spec)).sum()
                });
            let fixed = counter.count("Be brief.") + tools;
            for (step, request) in model.requests().iter().enumerate() {
                let seen = &conversation.log()[..user + 1 + 2 * step];
                let expected = planned_from_scratch(seen, user, fixed, budget);
                prop_assert_eq!(Some(&request.messages), expected.as_ref(), "turn {} step {}", turn, step);
            }
            match outcome {
                Ok(_) => {}
                Err(Error::ContextOverflow { .. }) => {
                    let seen = &conversation.log()[..user + 1 + 2 * model.requests().len()];
                    prop_assert_eq!(planned_from_scratch(seen, user, fixed, budget), None);
                }
                Err(other) => panic!("unexpected error: {other}"),
            }
        }
        tests::assert_log_consistent(conversation.log());
    }
}

/// What a summarizer was given, call by call: the summary so far, and the texts dropped since;
/// and the turn that asked, with the first text of that turn's user message.
#[derive(Default)]
struct Recording(Mutex<Vec<(Option<String>, Vec<String>)>>, Mutex<Vec<(u64, String)>>);

impl Summarizer for Recording {
    async fn summarize(
        &self,
        earlier: Option<&str>,
        dropped: &[Message],
        turn: &agentix::Turn,
    ) -> String {
        let asking = (turn.turn_ref().0, turn.user_message().text().into_owned());
        self.1.lock().unwrap().push(asking);
        let texts: Vec<String> =
            dropped.iter().map(|message| message.text().into_owned()).collect();
        let mut calls = self.0.lock().unwrap();
        calls.push((earlier.map(str::to_owned), texts));
        // The summary names how many messages it covers: short, whatever it covers.
        let covered = calls.iter().map(|(_, texts)| texts.len()).sum::<usize>();
        format!("{covered} messages")
    }
}

#[test]
fn over_a_thousand_turns_each_message_is_summarized_once() {
    const TURNS: usize = 1_000;
    let model = (0..TURNS).fold(ScriptedModel::new(), |model, n| model.text(format!("answer {n}")));
    let recording = Arc::new(Recording::default());
    let agent = Agent::builder(&model).summarizer(Arc::clone(&recording)).build();
    // Room for about ten turns.
    let config = Config { context_budget: 300, injection_reserve: 50, ..Config::default() };
    let mut conversation = Conversation::with_config(config);
    for n in 0..TURNS {
        block_on(agent.run(&mut conversation, format!("question {n}"))).unwrap();
    }
    let calls = std::mem::take(&mut *recording.0.lock().unwrap());
    // Each call came from the turn whose request needed the room: the turn in progress.
    let asking = std::mem::take(&mut *recording.1.lock().unwrap());
    assert_eq!(asking.len(), calls.len());
    assert!(asking.iter().all(|(turn, user)| *user == format!("question {}", turn - 1)));
    // Every message dropped reached the summarizer once, in order, and each call folded in
    // the summary the one before it made.
    let given: Vec<&String> = calls.iter().flat_map(|(_, texts)| texts).collect();
    let dropped = given.len();
    assert!(dropped > 1_900, "almost every turn was dropped, and summarized: {dropped}");
    let expected: Vec<String> =
        (0..dropped / 2).flat_map(|n| [format!("question {n}"), format!("answer {n}")]).collect();
    assert_eq!(given, expected.iter().collect::<Vec<_>>(), "each message once, in order");
    let mut covered = 0;
    for (earlier, texts) in &calls {
        let expected_earlier = (covered > 0).then(|| format!("{covered} messages"));
        assert_eq!(earlier, &expected_earlier);
        covered += texts.len();
    }
    assert!(calls.len() <= TURNS, "{} calls for {TURNS} turns", calls.len());
    assert!(
        calls.iter().all(|(_, texts)| texts.len() <= 20),
        "each call is given what newly fell out of the window, not the log"
    );
    // The last request carries the latest summary in place of every dropped turn.
    let last: ModelRequest = model.requests().pop().unwrap();
    assert_eq!(
        last.messages[0].text(),
        format!("Summary of the earlier conversation: {dropped} messages")
    );
    assert_eq!(last.messages[1].text(), format!("question {}", dropped / 2));
    // The summaries are in the log, each covering more than the one before; a request that
    // needed two rounds (its summary made one more turn go) logs the last round's.
    let summaries: Vec<(usize, &str)> = conversation
        .log()
        .iter()
        .filter_map(|entry| match entry {
            Entry::Summary { through, text, .. } => Some((*through, text.as_str())),
            _ => None,
        })
        .collect();
    assert!(summaries.windows(2).all(|pair| pair[0].0 < pair[1].0), "{summaries:?}");
    assert!(summaries.len() <= calls.len() && summaries.len() + 10 > calls.len());
    assert_eq!(summaries.last().unwrap().1, format!("{dropped} messages"));
}

/// Counts like the default counter, and how many messages it was asked to count.
#[derive(Default)]
struct Tally(std::sync::atomic::AtomicUsize);

impl agentix::context::TokenCounter for Tally {
    fn count(&self, text: &str) -> usize {
        CharsPerToken::default().count(text)
    }

    fn count_message(&self, message: &Message) -> usize {
        self.0.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        CharsPerToken::default().count_message(message)
    }
}

/// Each entry of the log is counted once, not once a turn: over 300 turns, compacted from
/// about the tenth on, the counter is asked for about as many messages as the log holds.
#[test]
fn each_entry_is_counted_once_however_many_turns_follow() {
    const TURNS: usize = 300;
    let model = (0..TURNS).fold(ScriptedModel::new(), |model, n| model.text(format!("answer {n}")));
    let tally = Arc::new(Tally::default());
    let agent = Agent::builder(&model).token_counter(Arc::clone(&tally)).build();
    let config = Config { context_budget: 200, injection_reserve: 50, ..Config::default() };
    let mut conversation = Conversation::with_config(config);
    for n in 0..TURNS {
        block_on(agent.run(&mut conversation, format!("question {n}"))).unwrap();
    }
    let messages = conversation.messages().count();
    let counted = tally.0.load(std::sync::atomic::Ordering::Relaxed);
    // Once each, and those counted before the first compaction once more, when the ledger
    // starts keeping each entry's total.
    assert!(
        (messages..messages + 40).contains(&counted),
        "{counted} messages counted for a log of {messages}"
    );
    assert!(model.requests().last().unwrap().messages.len() < 30, "the requests were compacted");
}

/// A request that cannot fit even without any history fails the turn before anything is
/// summarized: no summary joins the log for a request that was never sent.
#[test]
fn a_request_that_cannot_fit_adds_no_summary_to_the_log() {
    let model = ScriptedModel::new().text("one").text("two").text("three");
    let recording = Arc::new(Recording::default());
    let agent = Agent::builder(&model).summarizer(Arc::clone(&recording)).build();
    let config = Config { context_budget: 200, injection_reserve: 50, ..Config::default() };
    let mut conversation = Conversation::with_config(config);
    for n in 0..3 {
        block_on(agent.run(&mut conversation, format!("question {n}"))).unwrap();
    }
    let error = block_on(agent.run(&mut conversation, "x".repeat(700))).unwrap_err();
    assert!(matches!(error, Error::ContextOverflow { .. }), "{error}");
    assert!(recording.0.lock().unwrap().is_empty(), "the summarizer was not called");
    assert!(
        !conversation.log().iter().any(|entry| matches!(entry, Entry::Summary { .. })),
        "{:?}",
        conversation.log()
    );
}

/// Sums up by counting: short, and the same whatever the ledger.
struct Brief;

impl Summarizer for Brief {
    async fn summarize(
        &self,
        earlier: Option<&str>,
        dropped: &[Message],
        _turn: &agentix::Turn,
    ) -> String {
        format!("{} and {} more", earlier.unwrap_or("nothing"), dropped.len())
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 32, ..ProptestConfig::default() })]

    /// With a summarizer, summaries in the log and a floor above 0: a conversation that keeps
    /// its ledger between turns sends what one loaded afresh before every turn sends, and
    /// writes the same log.
    #[test]
    fn with_summaries_a_kept_ledger_plans_as_a_fresh_one(
        earlier in prop::collection::vec(
            (1usize..120, prop::collection::vec(1usize..3, 0..3), 1usize..160),
            0..20,
        ),
        budget in 150usize..1_500,
        turns in prop::collection::vec((0usize..3, 1usize..200), 1..8),
    ) {
        let mut log = Vec::new();
        for (n, (question, steps, answer)) in earlier.iter().enumerate() {
            log.extend(tests::earlier_turn(n as u64 + 1, *question, steps, *answer));
        }
        let config = Config { context_budget: budget, injection_reserve: 0, ..Config::default() };
        let stored = json!({ "config": config, "log": log, "turns": earlier.len() });
        let mut kept: Conversation = serde_json::from_value(stored.clone()).unwrap();
        let mut fresh: Conversation = serde_json::from_value(stored).unwrap();
        for (tool_steps, question) in turns {
            let script = || {
                (0..tool_steps)
                    .fold(ScriptedModel::new(), |model, step| {
                        model.tool_call("get_weather", json!({ "city": format!("city {step}") }))
                    })
                    .text("x".repeat(question / 2 + 1))
            };
            let (kept_model, fresh_model) = (script(), script());
            let message = "y".repeat(question);
            let kept_agent = Agent::builder(&kept_model).summarizer(Brief).tool(Weather::default()).build();
            let fresh_agent = Agent::builder(&fresh_model).summarizer(Brief).tool(Weather::default()).build();
            fresh = serde_json::from_str(&serde_json::to_string(&fresh).unwrap()).unwrap();
            let kept_outcome = block_on(kept_agent.run(&mut kept, message.clone())).map(|_| ());
            let fresh_outcome = block_on(fresh_agent.run(&mut fresh, message)).map(|_| ());
            prop_assert_eq!(kept_outcome, fresh_outcome);
            prop_assert_eq!(kept_model.requests(), fresh_model.requests());
            prop_assert_eq!(kept.log(), fresh.log());
        }
        tests::assert_log_consistent(kept.log());
        kept.validate().unwrap();
    }
}
