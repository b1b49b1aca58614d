//! Crash safety, with real processes: a turn runs in a child process that kills itself with
//! `SIGKILL` at each step boundary (before and after each commit) and mid-step (inside each
//! model call, before and after each tool's side effect), over SQLite and PostgreSQL. After each
//! kill the store holds a valid log — every committed tool call answered, no half step — and a
//! new process runs the next turn on it.
//!
//! What a crash costs a turn's tools, as tested here: a step is committed once all its tool
//! calls have finished, so a tool whose call finished in a step that was not committed has its
//! side effect, but not its result, and runs again if the turn is run again (at least once). A
//! committed step's tools never run again.

use agentix_test_support::{self as support, on_both_backends};

use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use agentix::{
    Agent, Conversation, Entry, ScriptedModel, Turn,
    durable::{Commit, CommitError},
};
use agentix_store::{Store, StoreError, Waiting};
use serde_json::json;
use support::die;

/// Where the child kills itself.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Point {
    /// Before the `n`th commit of the turn (from 1): after `pre`, after each of the two steps,
    /// after the final answer, at the turn's end.
    BeforeCommit(usize),
    /// Right after the `n`th commit.
    AfterCommit(usize),
    /// Inside the `n`th model call (from 1), before it answers.
    InModelCall(usize),
    /// In tool `name`, before its side effect.
    BeforeEffect(&'static str),
    /// In tool `name`, after its side effect, before it returns.
    AfterEffect(&'static str),
}

const TOOLS: [&str; 3] = ["alpha", "beta", "gamma"];

/// Every point of the turn: 5 commits before and after, 3 model calls, 3 tools before and after.
fn points() -> Vec<Point> {
    let mut points = Vec::new();
    for n in 1..=5 {
        points.push(Point::BeforeCommit(n));
        points.push(Point::AfterCommit(n));
    }
    points.extend((1..=3).map(Point::InModelCall));
    for tool in TOOLS {
        points.push(Point::BeforeEffect(tool));
        points.push(Point::AfterEffect(tool));
    }
    points
}

fn encode(point: Point) -> String {
    match point {
        Point::BeforeCommit(n) => format!("before_commit:{n}"),
        Point::AfterCommit(n) => format!("after_commit:{n}"),
        Point::InModelCall(n) => format!("model:{n}"),
        Point::BeforeEffect(tool) => format!("before_effect:{tool}"),
        Point::AfterEffect(tool) => format!("after_effect:{tool}"),
    }
}

fn decode(text: &str) -> Option<Point> {
    let (kind, arg) = text.split_once(':')?;
    let tool = || Some(tool_named(arg)).filter(|tool| !tool.is_empty());
    Some(match kind {
        "before_commit" => Point::BeforeCommit(arg.parse().ok()?),
        "after_commit" => Point::AfterCommit(arg.parse().ok()?),
        "model" => Point::InModelCall(arg.parse().ok()?),
        "before_effect" => Point::BeforeEffect(tool()?),
        "after_effect" => Point::AfterEffect(tool()?),
        _ => return None,
    })
}

/// A tool whose side effect is a line appended to a file, synced, before it answers.
struct Effect {
    effects: PathBuf,
    kill: Option<Point>,
}

impl agentix::Tool for Effect {
    const NAME: &'static str = "effect";
    type Args = serde_json::Value;
    type Output = String;
    type Error = std::convert::Infallible;

    fn description(&self) -> &str {
        "Does something once."
    }

    async fn call(&self, args: serde_json::Value, _: &Turn) -> Result<String, Self::Error> {
        let name = args["name"].as_str().unwrap_or_default().to_owned();
        if self.kill == Some(Point::BeforeEffect(tool_named(&name))) {
            die();
        }
        support::append(&self.effects, &name);
        if self.kill == Some(Point::AfterEffect(tool_named(&name))) {
            die();
        }
        Ok(format!("{name} done"))
    }
}

/// The tool named, as one of [`TOOLS`], to compare with a point.
fn tool_named(name: &str) -> &'static str {
    TOOLS.into_iter().find(|tool| *tool == name).unwrap_or("")
}

/// The model: a step calling `alpha`, a step calling `beta` and `gamma`, then the answer. It
/// dies inside the call the point names.
struct Dying {
    script: ScriptedModel,
    calls: AtomicUsize,
    kill: Option<Point>,
}

impl agentix::Model for Dying {
    async fn complete(
        &self,
        request: &agentix::model::ModelRequest,
    ) -> Result<agentix::model::ModelResponse, agentix::model::ModelError> {
        let n = self.calls.fetch_add(1, Ordering::Relaxed) + 1;
        if self.kill == Some(Point::InModelCall(n)) {
            die();
        }
        self.script.complete(request).await
    }
}

fn turn_script() -> ScriptedModel {
    ScriptedModel::new()
        .tool_call("effect", json!({ "name": "alpha" }))
        .tool_calls([("effect", json!({ "name": "beta" })), ("effect", json!({ "name": "gamma" }))])
        .text("All three done.")
}

/// Commits through the store's committer, dying before or after the commit the point names.
struct DyingCommitter<'s> {
    inner: agentix_store::Committer<'s>,
    count: AtomicUsize,
    kill: Option<Point>,
}

impl Commit for DyingCommitter<'_> {
    async fn commit(&self, conversation: &Conversation) -> Result<(), CommitError> {
        let n = self.count.fetch_add(1, Ordering::Relaxed) + 1;
        if self.kill == Some(Point::BeforeCommit(n)) {
            die();
        }
        self.inner.commit(conversation).await?;
        if self.kill == Some(Point::AfterCommit(n)) {
            die();
        }
        Ok(())
    }
}

const CHILD: &str = "AGENTIX_CRASH_CHILD";

/// The child's side: runs one turn on the stored conversation, as the parent asks. Ignored in
/// a test run; without the child variable it does nothing.
#[test]
#[ignore = "a child process of the tests above, which run it"]
fn child() {
    let Ok(spec) = std::env::var(CHILD) else { return };
    let fields: Vec<&str> = spec.splitn(4, '|').collect();
    let [url, effects, mode, message] = fields[..] else { panic!("a child spec: {spec}") };
    let kill = decode(mode);
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    runtime.block_on(async {
        let store = Store::open(url).await.unwrap();
        // A worker that waits: the lease first, then the conversation as the last holder left it.
        let lease = match mode.strip_prefix("race-wait:") {
            None => None,
            Some(go) => {
                while !Path::new(go).exists() {
                    tokio::time::sleep(std::time::Duration::from_millis(5)).await;
                }
                let owner = std::process::id().to_string();
                let (ttl, wait) = (Duration::from_secs(30), Waiting::UpTo(Duration::from_secs(30)));
                Some(store.lease("c", &owner, ttl, wait).await.unwrap())
            }
        };
        let mut stored = store.load("c").await.unwrap();
        let model = Dying { script: turn_script(), calls: AtomicUsize::new(0), kill };
        let tool = Effect { effects: PathBuf::from(effects), kill };
        let agent = Agent::builder(&model).tool(tool).build();
        let committer = DyingCommitter {
            inner: store.committer("c", &stored),
            count: AtomicUsize::new(0),
            kill,
        };
        if let Some(go) = mode.strip_prefix("race:") {
            // Both racers have loaded the conversation: they start together.
            while !Path::new(go).exists() {
                tokio::time::sleep(std::time::Duration::from_millis(5)).await;
            }
        }
        match agent.turn(&mut stored.conversation, message).commit(&committer).await {
            Ok(answer) => assert_eq!(answer.joined_text(), "All three done."),
            Err(agentix::Error::Commit(error)) if error.conflict => std::process::exit(LOST),
            Err(error) => panic!("{error}"),
        }
        if let Some(lease) = lease {
            lease.release().await.unwrap();
        }
    });
}

/// The exit code of a child whose turn lost the race to commit.
const LOST: i32 = 3;

/// Runs the child on `url`: a turn asking `message`, killed at `kill` if given.
fn run_child(
    url: &str,
    effects: &Path,
    kill: Option<Point>,
    message: &str,
) -> std::process::ExitStatus {
    let mode = kill.map_or("none".to_owned(), encode);
    child_command(url, effects, &mode, message).status().unwrap()
}

fn child_command(url: &str, effects: &Path, mode: &str, message: &str) -> Command {
    let mut command = Command::new(std::env::current_exe().unwrap());
    command
        .args(["child", "--exact", "--ignored", "--test-threads=1"])
        .env(CHILD, format!("{url}|{}|{mode}|{message}", effects.display()))
        .stdout(std::process::Stdio::null());
    command
}

/// The tool results a log holds, by the name the model gave each call.
fn results(log: &[Entry]) -> Vec<String> {
    log.iter()
        .flat_map(|entry| match entry {
            Entry::ToolResults { results, .. } => results.clone(),
            _ => Vec::new(),
        })
        .map(|result| result.output.trim_end_matches(" done").trim_matches('"').to_owned())
        .collect()
}

/// Kills a turn at every point over the store at `url` (made fresh for each point by
/// `fresh`), and checks what the store and the tools were left with.
async fn crash_at_every_point(fresh: impl AsyncFn(&str) -> (Store, String)) {
    for point in points() {
        let (store, url) = fresh(&encode(point).replace(':', "_")).await;
        let dir = support::TempDir::new("effects");
        let effects_file = dir.0.join("effects");
        store.create("c", &Conversation::new()).await.unwrap();
        store.close().await;

        let status = run_child(&url, &effects_file, Some(point), "first");
        assert_eq!(status.signal(), Some(9), "{point:?}: the child was killed");

        // What the crash left: a log that loads (it is checked as it loads), with whole steps.
        let store = Store::open(&url).await.unwrap();
        let stored = store.load("c").await.unwrap_or_else(|error| panic!("{point:?}: {error}"));
        let log = stored.conversation.log();
        let kept = log.len();
        // The prefixes a turn's commits leave: nothing, the user message, then each step whole.
        assert!([0, 1, 3, 5, 6].contains(&kept), "{point:?}: {kept} entries: {log:#?}");
        let committed = results(log);
        let done = support::lines(&effects_file);
        // Every committed result's effect happened; a finished effect with no committed result
        // is a step that was not committed.
        assert!(committed.iter().all(|tool| done.contains(tool)), "{point:?}");
        let uncommitted: Vec<&str> =
            done.iter().filter(|tool| !committed.contains(tool)).map(String::as_str).collect();

        // A new process runs the next turn on what was left.
        let status = run_child(&url, &effects_file, None, "again");
        assert!(status.success(), "{point:?}: the next turn ran");
        let after = store.load("c").await.unwrap();
        assert_eq!(&after.conversation.log()[..kept], log, "{point:?}: the log only grew");
        assert_eq!(after.conversation.log().len(), kept + 6, "{point:?}: one whole turn more");
        // The turn run again ran each tool once more: a tool whose call finished in the step
        // the crash cut short had its effect twice (documented: at least once), and its first
        // result is nowhere in the log.
        let all = support::lines(&effects_file);
        for tool in TOOLS {
            let times = all.iter().filter(|done| *done == tool).count();
            let before = usize::from(done.iter().any(|done| done == tool));
            assert_eq!(times, before + 1, "{point:?}: {tool} ran {times} times: {all:?}");
        }
        let expected_uncommitted: &[&str] = match point {
            Point::AfterEffect("alpha") => &["alpha"],
            Point::AfterEffect("beta") | Point::BeforeEffect("gamma") => &["beta"],
            Point::AfterEffect("gamma") | Point::BeforeCommit(3) => &["beta", "gamma"],
            Point::BeforeCommit(2) => &["alpha"],
            _ => &[],
        };
        assert_eq!(uncommitted, expected_uncommitted, "{point:?}");
        store.close().await;
    }
}

#[tokio::test]
async fn a_turn_killed_at_every_point_leaves_a_valid_log_over_sqlite() {
    let dirs = std::sync::Mutex::new(Vec::new());
    crash_at_every_point(async |name: &str| {
        let (store, url, dir) = support::sqlite(name).await;
        dirs.lock().unwrap().push(dir);
        (store, url)
    })
    .await;
}

#[cfg(feature = "postgres-tests")]
#[tokio::test]
async fn a_turn_killed_at_every_point_leaves_a_valid_log_over_postgres() {
    crash_at_every_point(async |name: &str| support::postgres(name).await).await;
}

/// Two processes run a turn on one conversation at once: one commits its turn, the other's
/// first commit finds the version moved and its turn ends with a conflict — the log holds one
/// turn, never the two interleaved.
async fn two_workers_race(store: Store, url: String) {
    let dir = support::TempDir::new("race");
    store.create("c", &Conversation::new()).await.unwrap();
    let go = dir.0.join("go");
    let mode = format!("race:{}", go.display());
    let racers: Vec<std::process::Child> = ["one", "two"]
        .into_iter()
        .map(|message| child_command(&url, &dir.0.join("effects"), &mode, message).spawn().unwrap())
        .collect();
    // Let both load the conversation, then start them together.
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    std::fs::write(&go, b"go").unwrap();
    let mut codes: Vec<i32> =
        racers.into_iter().map(|mut racer| racer.wait().unwrap().code().unwrap()).collect();
    codes.sort_unstable();
    assert_eq!(codes, [0, LOST], "one turn committed, the other lost the race");
    let stored = store.load("c").await.unwrap();
    assert_eq!(stored.conversation.log().len(), 6, "one whole turn");
    assert_eq!(stored.conversation.turns(), 1);
}

/// Two processes that wait for the conversation's lease: one runs its turn, the other waits
/// for it to release the lease, loads what it left, and runs its turn after — two whole turns,
/// no conflict.
async fn two_workers_wait(store: Store, url: String) {
    let dir = support::TempDir::new("wait");
    store.create("c", &Conversation::new()).await.unwrap();
    let go = dir.0.join("go");
    let mode = format!("race-wait:{}", go.display());
    let workers: Vec<std::process::Child> = ["one", "two"]
        .into_iter()
        .map(|message| child_command(&url, &dir.0.join("effects"), &mode, message).spawn().unwrap())
        .collect();
    std::fs::write(&go, b"go").unwrap();
    let codes: Vec<i32> =
        workers.into_iter().map(|mut worker| worker.wait().unwrap().code().unwrap()).collect();
    assert_eq!(codes, [0, 0], "both turns committed");
    let stored = store.load("c").await.unwrap();
    let log = stored.conversation.log();
    assert_eq!((log.len(), stored.conversation.turns()), (12, 2), "{log:#?}");
    // One whole turn, then the other: each turn's entries together.
    assert!(log[..6].iter().all(|entry| entry.turn().0 == 1));
    assert!(log[6..].iter().all(|entry| entry.turn().0 == 2));

    // Held, the lease is refused to another owner at once, and waited for in vain past a bound.
    let held = store.lease("c", "me", Duration::from_secs(30), Waiting::No).await.unwrap();
    let refused = store.lease("c", "you", Duration::from_secs(30), Waiting::No).await.unwrap_err();
    assert!(matches!(&refused, StoreError::Leased { holder, .. } if holder == "me"), "{refused}");
    let waited =
        store.lease("c", "you", Duration::from_secs(30), Waiting::UpTo(Duration::from_millis(50)));
    assert!(matches!(waited.await, Err(StoreError::Leased { .. })));
    // Released, it is free; run out, it is free too.
    held.release().await.unwrap();
    let short = store.lease("c", "you", Duration::from_millis(1), Waiting::No).await.unwrap();
    tokio::time::sleep(Duration::from_millis(5)).await;
    let after = store.lease("c", "me", Duration::from_secs(1), Waiting::No).await.unwrap();
    after.release().await.unwrap();
    drop(short);
}

on_both_backends! {
    two_processes_on_one_conversation_one_commits_the_other_conflicts => two_workers_race;
    two_processes_that_wait_for_the_lease_run_one_after_the_other => two_workers_wait;
}
