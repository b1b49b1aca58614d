#![allow(missing_docs)]
//! The turn of `benches/turn` with one optional layer used, for the layer table of
//! BENCHMARKS.md: each variant is the bare turn (`bare`) plus one layer doing the least it can,
//! or one of a pair whose difference is that layer. `scripts/layers.sh` counts each under
//! valgrind (`AGENTIX_TURNS=<variant>:<turns>`); `cargo bench` (and `cargo test --benches`)
//! runs every variant once and checks it answers and logs as the bare turn does.

use std::future::IntoFuture;
use std::sync::Mutex;
use std::sync::atomic::AtomicUsize;
use std::time::Duration;

use agentix::event::StepStart;
use agentix::session::Session;
use agentix::{
    durable::{Commit, CommitError, Journal, JournalError, JournalStep},
    observe::Observation,
    transform::StreamTransformer,
};
use serde::Serialize;
use serde::de::DeserializeOwned;

use std::hint::black_box;
use std::sync::atomic::Ordering;

use agentix::{
    Agent, AssistantMessage, Config, Conversation, Entry, Message, Part, Turn, Verdict, hook,
};
use futures::executor::block_on;

#[path = "../turn/fixture.rs"]
mod fixture;

use fixture::{BenchModel, COUNTER, Weather, work};

/// One turn of one variant: its answer and its log.
type RunTurn = Box<dyn Fn() -> (Result<AssistantMessage, String>, Conversation)>;

/// A committer that keeps how far it committed: the least a store does.
#[derive(Default)]
struct CountingCommit(AtomicUsize);

impl Commit for CountingCommit {
    async fn commit(&self, conversation: &Conversation) -> Result<(), CommitError> {
        self.0.store(conversation.log().len(), Ordering::Relaxed);
        Ok(())
    }
}

/// A journal that records each step's value as JSON, as a durable journal must.
#[derive(Default)]
struct RecordingJournal(Mutex<Vec<Vec<u8>>>);

impl Journal for RecordingJournal {
    async fn journal<T, F>(&self, _step: &JournalStep<'_>, effect: F) -> Result<T, JournalError>
    where
        T: Serialize + DeserializeOwned + Send,
        F: Future<Output = T> + Send,
    {
        let value = effect.await;
        let recorded = serde_json::to_vec(&value).expect("a step's value serializes");
        self.0.lock().unwrap().push(recorded);
        Ok(value)
    }
}

/// A stream transformer that changes nothing but says it may: the answer then passes through it.
struct Passthrough;

impl StreamTransformer for Passthrough {
    type State = ();

    fn transform(&self, (): &mut (), chunk: String) -> String {
        chunk
    }

    fn flush(&self, (): &mut ()) -> String {
        String::new()
    }
}

/// A parallel `pre` hook, whose failure fails the turn (the default policy)...
#[hook(pre, parallel)]
async fn parallel_pre(turn: &Turn) -> Vec<Part> {
    work(&turn.user_message().text());
    Vec::new()
}

/// ... and the same hook under the other policy: its failure is recorded and skipped.
#[hook(pre, parallel, on_error = skip)]
async fn parallel_pre_skipped_on_error(turn: &Turn) -> Vec<Part> {
    work(&turn.user_message().text());
    Vec::new()
}

#[hook(step_start)]
async fn step_gate(turn: &Turn) -> Verdict<StepStart> {
    work(&turn.user_message().text());
    Verdict::Continue
}

const QUESTION: &str = "What is the weather in Oslo?";

/// Prior turns of a long conversation: the ledger's planning is used when they do not fit.
fn prior(turns: usize, config: Config) -> Conversation {
    let mut conversation = Conversation::with_config(config);
    let agent = Agent::builder(BenchModel::new(None)).tool(Weather).build();
    for _ in 0..turns {
        block_on(agent.run(&mut conversation, QUESTION)).expect("a prior turn");
    }
    conversation
}

fn timeouts() -> Config {
    let limit = Some(Duration::from_secs(60));
    Config { model_timeout: limit, tool_timeout: limit, turn_timeout: limit, ..Config::default() }
}

/// The variants, by name.
fn variants() -> Vec<(&'static str, RunTurn)> {
    let agent = || Agent::builder(BenchModel::new(None)).tool(Weather).build();
    let mut all: Vec<(&'static str, RunTurn)> = Vec::new();

    let bare = agent();
    all.push(("bare", Box::new(move || one_turn_of(&bare, Conversation::new()))));

    let bare = agent();
    all.push((
        "observed",
        Box::new(move || {
            let observer = |observation: &Observation<'_>| {
                black_box(observation);
                COUNTER.fetch_add(1, Ordering::Relaxed);
            };
            let mut conversation = Conversation::new();
            let answer =
                block_on(bare.turn(&mut conversation, QUESTION).observe(&observer).into_future());
            transcript(answer, conversation)
        }),
    ));
    let bare = agent();
    all.push((
        "committed",
        Box::new(move || {
            let committer = CountingCommit::default();
            let mut conversation = Conversation::new();
            let answer =
                block_on(bare.turn(&mut conversation, QUESTION).commit(&committer).into_future());
            transcript(answer, conversation)
        }),
    ));
    let bare = agent();
    all.push((
        "journaled",
        Box::new(move || {
            let journal = RecordingJournal::default();
            let mut conversation = Conversation::new();
            let answer =
                block_on(bare.turn(&mut conversation, QUESTION).journal(&journal).into_future());
            transcript(answer, conversation)
        }),
    ));
    let transformed = Agent::builder(BenchModel::new(None)).tool(Weather).transformer(Passthrough);
    let transformed = transformed.build();
    all.push(("transformed", Box::new(move || one_turn_of(&transformed, Conversation::new()))));

    // Timeouts need tokio's timer: both of this pair run on a current-thread runtime.
    for (name, config) in [("tokio", Config::default()), ("timeouts", timeouts())] {
        let bare = agent();
        let runtime = tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap();
        all.push((
            name,
            Box::new(move || {
                let mut conversation = Conversation::with_config(config.clone());
                let answer = runtime.block_on(bare.run(&mut conversation, QUESTION));
                transcript(answer, conversation)
            }),
        ));
    }

    let failing = Agent::builder(BenchModel::new(None)).tool(Weather).hook(parallel_pre).build();
    all.push(("parallel_pre", Box::new(move || one_turn_of(&failing, Conversation::new()))));
    let skipped = Agent::builder(BenchModel::new(None))
        .tool(Weather)
        .hook(parallel_pre_skipped_on_error)
        .build();
    all.push((
        "parallel_pre_skipped_on_error",
        Box::new(move || one_turn_of(&skipped, Conversation::new())),
    ));

    let bare = agent();
    all.push((
        "session",
        Box::new(move || {
            let mut session = Session::builder(&bare).build();
            session.enqueue(QUESTION).unwrap();
            block_on(session.run().into_future()).unwrap();
            let conversation = session.into_conversation();
            (Ok(last_answer(&conversation)), conversation)
        }),
    ));
    let bare = agent();
    all.push((
        "session_gated",
        Box::new(move || {
            let mut session = Session::builder(&bare).hook(step_gate).build();
            session.enqueue(QUESTION).unwrap();
            block_on(session.run().into_future()).unwrap();
            let conversation = session.into_conversation();
            (Ok(last_answer(&conversation)), conversation)
        }),
    ));

    // Four prior turns; the planned one's budget holds the last two and the question.
    let fits = prior(4, Config::default());
    let tight = Config { context_budget: 200, injection_reserve: 0, ..Config::default() };
    let planned = prior(4, tight);
    // Each turn loads the conversation as a store would: both of the pair count its log once.
    for (name, conversation) in [("ledger_fits", fits), ("ledger_planned", planned)] {
        let bare = agent();
        let stored = serde_json::to_string(&conversation).unwrap();
        all.push((
            name,
            Box::new(move || one_turn_of(&bare, serde_json::from_str(&stored).unwrap())),
        ));
    }
    all
}

fn one_turn_of<P: agentix::pipeline::Pipeline, X: StreamTransformer>(
    agent: &Agent<
        BenchModel,
        agentix::tool::Toolbox<agentix::tool::NoTools, Weather>,
        P,
        agentix::approval::NoApprover,
        X,
    >,
    mut conversation: Conversation,
) -> (Result<AssistantMessage, String>, Conversation) {
    let answer = block_on(agent.run(&mut conversation, QUESTION));
    transcript(answer, conversation)
}

fn transcript(
    answer: Result<AssistantMessage, agentix::Error>,
    conversation: Conversation,
) -> (Result<AssistantMessage, String>, Conversation) {
    (answer.map_err(|error| error.to_string()), conversation)
}

/// A session's answer: the last assistant message of its log.
fn last_answer(conversation: &Conversation) -> AssistantMessage {
    conversation
        .log()
        .iter()
        .rev()
        .find_map(|entry| match entry {
            Entry::Assistant { message, .. } => Some(message.clone()),
            _ => None,
        })
        .unwrap_or_default()
}

/// The last turn's messages, as the model would see them.
fn last_turn(conversation: &Conversation) -> Vec<Message> {
    let messages: Vec<Message> = conversation.log().iter().filter_map(Entry::to_message).collect();
    messages[messages.len().saturating_sub(4)..].to_vec()
}

fn main() {
    let variants = variants();
    // `AGENTIX_TURNS=variant:turns` runs just that many turns of one variant, for valgrind.
    if let Ok(spec) = std::env::var("AGENTIX_TURNS") {
        let (variant, turns) = spec.split_once(':').expect("AGENTIX_TURNS is variant:turns");
        let turns: usize = turns.parse().expect("a turn count");
        let run = variants
            .into_iter()
            .find(|(name, _)| *name == variant)
            .map(|(_, run)| run)
            .expect("a variant of benches/layers/main.rs");
        for _ in 0..turns {
            drop(black_box(run()));
        }
        return;
    }
    let (bare_answer, bare_log) = variants[0].1();
    for (name, run) in &variants {
        let (answer, conversation) = run();
        assert_eq!(answer, bare_answer, "{name} answered otherwise than the bare turn");
        assert_eq!(last_turn(&conversation), last_turn(&bare_log), "{name} logged otherwise");
    }
    println!(
        "every layer's variant answers and logs as the bare turn: scripts/layers.sh counts them"
    );
}
