//! Turns that survive a crash through the store's journal, with real processes: a turn
//! (model → tool → model) runs with `agent.turn(..).journal(..)` over the store's journal in a child
//! process killed (`SIGKILL`) inside each model call, after the tool's side effect, after each
//! journaled step, and before the turn's commit; a new process runs the turn again and it
//! finishes exactly as a clean run does — no completed model call repeated (only the one in
//! flight at the kill), the tool's effect applied once through its idempotency key. A hook
//! changed between the crash and the replay is the typed divergence error; an approval that
//! waits survives the crash and is answered once. Over SQLite and PostgreSQL.

use agentix_test_support::{self as support, on_both_backends};

use std::future::Future;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use agentix::AnyAgent;
use agentix::{
    Agent, Conversation, Entry, Error, ToolCall,
    approval::Approval,
    durable::{Journal, JournalError, JournalStep},
};
use agentix_store::{Store, StoreJournal};
use serde::Serialize;
use serde::de::DeserializeOwned;
use support::durable_turn::{
    self, AskFirst, DelegatingModel, HandingModel, KeyedSend, PairModel, Refuse, SendingModel,
    ToolDeath,
};
use support::{die, lines};

const CHILD: &str = "AGENTIX_JOURNAL_CHILD";

/// Where the child dies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Point {
    /// Inside the `n`th model call (from 1), before it answers.
    InModel(usize),
    /// In the tool, after its side effect, before it returns.
    AfterEffect,
    /// Right after the journal recorded its `n`th step (from 1).
    AfterStep(usize),
    /// After the turn ended, before its entries were committed.
    BeforeFinish,
}

fn encode(point: Point) -> String {
    match point {
        Point::InModel(n) => format!("model:{n}"),
        Point::AfterEffect => "effect:0".into(),
        Point::AfterStep(n) => format!("step:{n}"),
        Point::BeforeFinish => "finish:0".into(),
    }
}

fn decode(text: &str) -> Option<Point> {
    let (kind, n) = text.split_once(':')?;
    let n: usize = n.parse().ok()?;
    Some(match kind {
        "model" => Point::InModel(n),
        "effect" => Point::AfterEffect,
        "step" => Point::AfterStep(n),
        "finish" => Point::BeforeFinish,
        _ => return None,
    })
}

/// The model call the point dies in, if it is one.
fn in_model(point: Option<Point>) -> Option<usize> {
    match point {
        Some(Point::InModel(n)) => Some(n),
        _ => None,
    }
}

/// The store's journal, dying after the step the point names.
struct Dying<'s> {
    inner: StoreJournal<'s>,
    steps: AtomicUsize,
    kill: Option<Point>,
}

impl Journal for Dying<'_> {
    async fn journal<T, F>(&self, step: &JournalStep<'_>, effect: F) -> Result<T, JournalError>
    where
        T: Serialize + DeserializeOwned + std::marker::Send,
        F: Future<Output = T> + std::marker::Send,
    {
        let value = self.inner.journal(step, effect).await?;
        let n = self.steps.fetch_add(1, Ordering::SeqCst) + 1;
        if self.kill == Some(Point::AfterStep(n)) {
            die();
        }
        Ok(value)
    }
    fn concurrent_calls(&self) -> bool {
        self.inner.concurrent_calls()
    }
}

/// The child: `run:POINT` runs the turn (dying at the point, `none` for none), `refuse:none`
/// runs it again with a hook that refuses the call, `wait:POINT` runs it with every call
/// waiting for a person, `answer:POINT` approves the waiting call. Ignored in a test run;
/// without the child variable it does nothing.
#[test]
#[ignore = "a child process of the tests above, which run it"]
fn child() {
    let Ok(spec) = std::env::var(CHILD) else { return };
    let fields: Vec<&str> = spec.splitn(3, '|').collect();
    let [url, dir, mode] = fields[..] else { panic!("a child spec: {spec}") };
    let (mode, point) = mode.split_once('=').expect("MODE=POINT");
    let kill = decode(point);
    let dir = PathBuf::from(dir);
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    runtime.block_on(async {
        let store = Store::open(url).await.unwrap();
        let mut stored = store.load("c").await.unwrap();
        let journal = store.journal("c", &stored).await.unwrap();
        let journal = Dying { inner: journal, steps: AtomicUsize::new(0), kill };
        let model = SendingModel { calls: dir.join("model_calls"), die_in_call: in_model(kill) };
        let after_effect = (kill == Some(Point::AfterEffect)).then_some(ToolDeath::AfterEffect);
        let send = KeyedSend { dir: dir.clone(), die: after_effect, slow: None };
        let (version, from) = (stored.version, stored.conversation.log().len());
        let conversation = &mut stored.conversation;
        let outcome = match mode {
            "run" => {
                let agent = Agent::builder(&model).tool(send).build();
                agent.turn(conversation, "Send it").journal(&journal).await
            }
            // The step's two calls run together; `pair-NAME`: sending to NAME is slow, so the
            // other call finishes first.
            pair if pair.starts_with("pair-") => {
                let slow = if pair == "pair-boss" { "boss" } else { "team" };
                let model =
                    PairModel { calls: dir.join("model_calls"), die_in_call: in_model(kill) };
                let send = KeyedSend { slow: Some(slow), ..send };
                let agent = Agent::builder(&model).tool(send).build();
                agent.turn(conversation, "Send it").journal(&journal).await
            }
            "team" => {
                let parent = DelegatingModel { calls: dir.join("parent_calls") };
                let team = durable_turn::team(parent, model, send);
                team.turn(conversation, "Have it sent").journal(&journal).await
            }
            "handoff" => {
                let parent = HandingModel { calls: dir.join("parent_calls") };
                let team = durable_turn::handing_team(parent, model, send);
                team.turn(conversation, "Have it sent").journal(&journal).await
            }
            "refuse" => {
                let agent = Agent::builder(&model).tool(send).hook(Refuse).build();
                let error =
                    agent.turn(conversation, "Send it").journal(&journal).await.unwrap_err();
                assert_eq!(
                    error,
                    Error::Journal(JournalError::Diverged {
                        recorded: "tool send (turn 1, step 0, call_1)".into(),
                        asked: "model (turn 1, step 1)".into(),
                    })
                );
                return;
            }
            "wait" => {
                let agent = Agent::builder(&model)
                    .tool(send)
                    .hook(AskFirst)
                    .approver(|_: ToolCall, _| async { Approval::Suspend })
                    .build();
                let waiting = agent.turn(conversation, "Send it").journal(&journal).await;
                assert!(matches!(waiting, Err(Error::AwaitingApproval { .. })), "{waiting:?}");
                Ok(agentix::AssistantMessage::default())
            }
            "answer" => {
                assert_eq!(store.pending_approvals().await.unwrap().len(), 1, "announced once");
                let agent = Agent::builder(&model).tool(send).hook(AskFirst).build();
                agent.resume(conversation, Approval::Approve).journal(&journal).await
            }
            other => panic!("a mode: {other}"),
        };
        outcome.unwrap();
        if kill == Some(Point::BeforeFinish) {
            die();
        }
        store.finish_turn("c", version, conversation, from).await.unwrap();
    });
}

fn run_child(url: &str, dir: &Path, mode: &str, point: Option<Point>) -> std::process::ExitStatus {
    let point = point.map_or("none".to_owned(), encode);
    support::run_child(CHILD, format!("{url}|{}|{mode}={point}", dir.display()))
}

fn points() -> Vec<Point> {
    let mut points = vec![Point::InModel(1), Point::InModel(2), Point::AfterEffect];
    points.extend((1..=4).map(Point::AfterStep));
    points.push(Point::BeforeFinish);
    points
}

async fn killed_at_every_point(fresh: impl AsyncFn(&str) -> (Store, String)) {
    let clean = durable_turn::clean_log("c", 1, None).await;
    assert_eq!(clean.len(), 4);
    for point in points() {
        let (store, url) = fresh(&encode(point).replace(':', "_")).await;
        let dir = support::TempDir::new("journal");
        store.create("c", &Conversation::new()).await.unwrap();
        let status = run_child(&url, &dir.0, "run", Some(point));
        assert_eq!(status.signal(), Some(9), "{point:?}: the child was killed");
        assert!(store.load("c").await.unwrap().conversation.log().is_empty(), "{point:?}");

        assert!(run_child(&url, &dir.0, "run", None).success(), "{point:?}: run again");
        let log = store.load("c").await.unwrap().conversation.log().to_vec();
        assert_eq!(log, clean, "{point:?}: the stored turn is a clean run's");
        let in_flight = usize::from(matches!(point, Point::InModel(_)));
        assert_eq!(lines(&dir.0.join("model_calls")).len(), 2 + in_flight, "{point:?}");
        assert_eq!(lines(&dir.0.join("applied")), ["c/1/call_1"], "{point:?}: applied once");
        let attempts = 1 + usize::from(point == Point::AfterEffect);
        assert_eq!(lines(&dir.0.join("attempts")).len(), attempts, "{point:?}");
        assert!(
            store
                .journal("c", &store.load("c").await.unwrap())
                .await
                .unwrap()
                .recorded()
                .next()
                .is_none()
        );
        store.close().await;
    }
}

/// A step of two calls running together (model → two `send`s at once → model), killed at every
/// point — inside each model call, after the first effect, after each journaled step (the
/// opening, the model call, each call's `send` as it finishes, the second model call), before
/// the commit — and run again with the other call slow: the calls finish in the other order,
/// and each replays from its own lane of the journal. The turn finishes as a clean run does, no
/// completed model call repeated, each send applied once.
async fn calls_running_together_killed_at_every_point(
    fresh: impl AsyncFn(&str) -> (Store, String),
) {
    let clean = durable_turn::clean_pair_log("c").await;
    // The user message, the two calls, their results, the answer.
    assert_eq!(clean.len(), 4, "{clean:#?}");
    let mut points = vec![Point::InModel(1), Point::InModel(2), Point::AfterEffect];
    points.extend((1..=5).map(Point::AfterStep));
    points.push(Point::BeforeFinish);
    for point in points {
        let (store, url) = fresh(&format!("pair_{}", encode(point).replace(':', "_"))).await;
        let dir = support::TempDir::new("pair");
        store.create("c", &Conversation::new()).await.unwrap();
        let status = run_child(&url, &dir.0, "pair-boss", Some(point));
        assert_eq!(status.signal(), Some(9), "{point:?}: the child was killed");
        if point == Point::AfterStep(3) {
            let stored = store.load("c").await.unwrap();
            let journal = store.journal("c", &stored).await.unwrap();
            let recorded: Vec<&str> = journal.recorded().collect();
            assert_eq!(
                recorded,
                ["opened (turn 1)", "model (turn 1, step 0)", "tool send (turn 1, step 0, call_2)"],
                "the team's call finished first"
            );
        }

        let again = run_child(&url, &dir.0, "pair-team", None);
        assert!(again.success(), "{point:?}: run again, the boss's call finishing first");
        let log = store.load("c").await.unwrap().conversation.log().to_vec();
        assert_eq!(log, clean, "{point:?}: the stored turn is a clean run's");
        let in_flight = usize::from(matches!(point, Point::InModel(_)));
        assert_eq!(lines(&dir.0.join("model_calls")).len(), 2 + in_flight, "{point:?}");
        let mut applied = lines(&dir.0.join("applied"));
        applied.sort();
        assert_eq!(applied, ["c/1/call_1", "c/1/call_2"], "{point:?}: each applied once");
        let attempts = 2 + usize::from(point == Point::AfterEffect);
        assert_eq!(lines(&dir.0.join("attempts")).len(), attempts, "{point:?}");
        store.close().await;
    }
}

#[tokio::test]
async fn calls_running_together_killed_anywhere_replay_from_their_lanes_over_sqlite() {
    let dirs = std::sync::Mutex::new(Vec::new());
    calls_running_together_killed_at_every_point(async |name: &str| {
        let (store, url, dir) = support::sqlite(name).await;
        dirs.lock().unwrap().push(dir);
        (store, url)
    })
    .await;
}

#[cfg(feature = "postgres-tests")]
#[tokio::test]
async fn calls_running_together_killed_anywhere_replay_from_their_lanes_over_postgres() {
    calls_running_together_killed_at_every_point(async |name: &str| support::postgres(name).await)
        .await;
}

/// How a parent delegates the model → tool → model turn to `worker`: as a sub-agent (`team`,
/// whose answer the parent's second model call reads) or by handing it the turn (`handoff`,
/// whose answer is the turn's).
struct Delegation {
    /// The child's mode.
    mode: &'static str,
    /// The steps the whole turn journals.
    steps: usize,
    /// The parent's model calls in a clean run.
    parent_calls: usize,
    /// The parent's call of `worker`.
    call: &'static str,
}

/// The parent's steps: its opening and two model calls; the worker's opening, model call,
/// `send` and model call.
const TEAM: Delegation = Delegation { mode: "team", steps: 7, parent_calls: 2, call: "call_w" };

/// The handing agent's opening and one model call; the worker's four steps.
const HANDOFF: Delegation =
    Delegation { mode: "handoff", steps: 6, parent_calls: 1, call: "call_h" };

/// A parent that delegates to `worker` (as `how` says), killed inside each of the worker's model
/// calls, after its tool's effect, and after each step the journal recorded — the worker's
/// steps journaled inside the parent's call: run again, the turn finishes as a clean run does,
/// no completed model call of the worker's (or the parent's) made again, and the worker's tool
/// applied once.
async fn killed_mid_worker(how: Delegation, fresh: impl AsyncFn(&str) -> (Store, String)) {
    let clean = match how.mode {
        "team" => durable_turn::clean_team_log("c").await,
        _ => durable_turn::clean_handing_log("c").await,
    };
    // The user message, the call of `worker`, its result, the answer.
    assert_eq!(clean.len(), 4, "{clean:#?}");
    let mut points = vec![Point::InModel(1), Point::InModel(2), Point::AfterEffect];
    points.extend((1..=how.steps).map(Point::AfterStep));
    for point in points {
        let name = format!("{}_{}", how.mode, encode(point).replace(':', "_"));
        let (store, url) = fresh(&name).await;
        let dir = support::TempDir::new(how.mode);
        store.create("c", &Conversation::new()).await.unwrap();
        let status = run_child(&url, &dir.0, how.mode, Some(point));
        assert_eq!(status.signal(), Some(9), "{point:?}: the child was killed");

        assert!(run_child(&url, &dir.0, how.mode, None).success(), "{point:?}: run again");
        let log = store.load("c").await.unwrap().conversation.log().to_vec();
        assert_eq!(log, clean, "{point:?}: the stored turn is a clean run's");
        let in_flight = usize::from(matches!(point, Point::InModel(_)));
        assert_eq!(lines(&dir.0.join("model_calls")).len(), 2 + in_flight, "{point:?}: worker");
        let parent = lines(&dir.0.join("parent_calls")).len();
        assert_eq!(parent, how.parent_calls, "{point:?}: parent");
        let applied = lines(&dir.0.join("applied"));
        assert_eq!(applied, [format!("c/1/{}/worker/1/call_1", how.call)], "{point:?}: once");
        let attempts = 1 + usize::from(point == Point::AfterEffect);
        assert_eq!(lines(&dir.0.join("attempts")).len(), attempts, "{point:?}");
        store.close().await;
    }
}

#[tokio::test]
async fn a_handoff_killed_mid_receiver_repeats_no_completed_call_over_sqlite() {
    let dirs = std::sync::Mutex::new(Vec::new());
    killed_mid_worker(HANDOFF, async |name: &str| {
        let (store, url, dir) = support::sqlite(name).await;
        dirs.lock().unwrap().push(dir);
        (store, url)
    })
    .await;
}

#[tokio::test]
async fn a_team_killed_mid_child_repeats_no_completed_child_call_over_sqlite() {
    let dirs = std::sync::Mutex::new(Vec::new());
    killed_mid_worker(TEAM, async |name: &str| {
        let (store, url, dir) = support::sqlite(name).await;
        dirs.lock().unwrap().push(dir);
        (store, url)
    })
    .await;
}

#[cfg(feature = "postgres-tests")]
#[tokio::test]
async fn a_team_killed_mid_child_repeats_no_completed_child_call_over_postgres() {
    killed_mid_worker(TEAM, async |name: &str| support::postgres(name).await).await;
}

/// Killed after the tool's step was journaled, then run again with a hook that refuses the
/// call: the replay asks for the model where the journal holds the tool — the typed error.
async fn a_changed_hook_diverges(store: Store, url: String) {
    let dir = support::TempDir::new("diverge");
    store.create("c", &Conversation::new()).await.unwrap();
    assert_eq!(run_child(&url, &dir.0, "run", Some(Point::AfterStep(3))).signal(), Some(9));
    assert!(run_child(&url, &dir.0, "refuse", None).success());
    assert_eq!(lines(&dir.0.join("model_calls")).len(), 1, "the replay called no model");
}

/// The call waits for a person; the process dies; another lists it once and approves it, dies
/// after the tool's effect; a third approves again and the turn finishes as a clean run's.
async fn an_approval_survives_the_crash(store: Store, url: String) {
    let dir = support::TempDir::new("wait");
    store.create("c", &Conversation::new()).await.unwrap();
    assert_eq!(run_child(&url, &dir.0, "wait", Some(Point::BeforeFinish)).signal(), Some(9));
    assert!(store.pending_approvals().await.unwrap().is_empty(), "not committed: not waiting");
    assert!(run_child(&url, &dir.0, "wait", None).success(), "the journal replays the wait");
    assert_eq!(lines(&dir.0.join("model_calls")).len(), 1);
    assert_eq!(store.pending_approvals().await.unwrap().len(), 1);

    assert_eq!(run_child(&url, &dir.0, "answer", Some(Point::AfterEffect)).signal(), Some(9));
    assert!(run_child(&url, &dir.0, "answer", None).success());
    assert!(store.pending_approvals().await.unwrap().is_empty());
    assert_eq!(lines(&dir.0.join("model_calls")).len(), 2);
    assert_eq!(lines(&dir.0.join("applied")), ["c/1/call_1"]);
    let log = store.load("c").await.unwrap().conversation.log().to_vec();
    let kinds: Vec<bool> =
        log.iter().map(|entry| matches!(entry, Entry::Assistant { .. })).collect();
    assert_eq!(log.len(), 6, "{log:#?}");
    assert_eq!(kinds, [false, false, false, true, false, true]);
}

#[tokio::test]
async fn a_journaled_turn_killed_at_every_point_finishes_once_over_sqlite() {
    let dirs = std::sync::Mutex::new(Vec::new());
    killed_at_every_point(async |name: &str| {
        let (store, url, dir) = support::sqlite(name).await;
        dirs.lock().unwrap().push(dir);
        (store, url)
    })
    .await;
}

#[cfg(feature = "postgres-tests")]
#[tokio::test]
async fn a_journaled_turn_killed_at_every_point_finishes_once_over_postgres() {
    killed_at_every_point(async |name: &str| support::postgres(name).await).await;
}

on_both_backends! {
    a_hook_changed_between_the_crash_and_the_replay_diverges => a_changed_hook_diverges;
    an_approval_waiting_in_a_journaled_turn_survives_the_crash => an_approval_survives_the_crash;
}

/// A journal serves one run: reused for the next turn, it refuses the first step.
#[tokio::test]
async fn a_journal_serves_one_run() {
    let (store, _url, _dir) = support::sqlite("one_run").await;
    store.create("c", &Conversation::new()).await.unwrap();
    let dir = support::TempDir::new("one_run_files");
    let model = SendingModel { calls: dir.0.join("calls"), die_in_call: None };
    let agent = Agent::builder(&model)
        .tool(KeyedSend { dir: dir.0.clone(), die: None, slow: None })
        .build();
    let mut stored = store.load("c").await.unwrap();
    let journal = store.journal("c", &stored).await.unwrap();
    let (version, from) = (stored.version, stored.conversation.log().len());
    agent.turn(&mut stored.conversation, "Send it").journal(&journal).await.unwrap();
    store.finish_turn("c", version, &stored.conversation, from).await.unwrap();
    let error = agent.turn(&mut stored.conversation, "Again").journal(&journal).await.unwrap_err();
    assert!(
        matches!(&error, Error::Journal(JournalError::Failed { message, .. }) if message.contains("turn 1's")),
        "{error}"
    );
}
