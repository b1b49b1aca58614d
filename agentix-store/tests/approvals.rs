//! Approvals across a restart, with real processes: a turn's `before_tool` hook escalates a
//! call, the approver suspends it, the suspended step is committed and the process is killed
//! (`SIGKILL`). A new process lists the pending approvals from the store and resumes the turn
//! with approve, reject or edit: it goes on from the waiting call — the call before it is not
//! run again, no model call is made twice — over SQLite and PostgreSQL.

use agentix_test_support::{self as support, on_both_backends};

use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use agentix::event::BeforeTool;
use agentix::{
    Agent, Conversation, Entry, Error, ScriptedModel, ToolCall, Turn, Verdict,
    approval::Approval,
    durable::{Commit, CommitError},
    message::ToolFailure,
};
use agentix_store::Store;
use serde_json::json;
use support::{append, die, lines};

const CHILD: &str = "AGENTIX_APPROVALS_CHILD";

/// A tool whose side effect is a line appended to a file: its name and recipient.
struct Effect {
    effects: PathBuf,
}

impl agentix::Tool for Effect {
    const NAME: &'static str = "effect";
    type Args = serde_json::Value;
    type Output = String;
    type Error = std::convert::Infallible;

    fn description(&self) -> &str {
        "Does something."
    }

    async fn call(&self, args: serde_json::Value, _: &Turn) -> Result<String, Self::Error> {
        let line =
            format!("{} {}", args["name"].as_str().unwrap(), args["to"].as_str().unwrap_or("-"));
        append(&self.effects, &line);
        Ok(format!("{line} done"))
    }
}

/// The model, each call counted in a file shared by every process.
struct Counted {
    script: ScriptedModel,
    calls: PathBuf,
}

impl agentix::Model for Counted {
    async fn complete(
        &self,
        request: &agentix::model::ModelRequest,
    ) -> Result<agentix::model::ModelResponse, agentix::model::ModelError> {
        append(&self.calls, "call");
        self.script.complete(request).await
    }
}

/// Sending mail needs a person's yes.
struct AskBeforeSending;

impl agentix::on::BeforeTool for AskBeforeSending {
    async fn before_tool(&self, call: &mut ToolCall, _: &mut Turn) -> Verdict<BeforeTool> {
        if call.arguments["name"] == "send_email" {
            Verdict::escalate("mail leaves the building")
        } else {
            Verdict::Continue
        }
    }
}

/// Commits through the store's committer; dies before the first commit if asked.
struct MaybeDying<'s> {
    inner: agentix_store::Committer<'s>,
    die_before_commit: bool,
    commits: AtomicUsize,
}

impl Commit for MaybeDying<'_> {
    async fn commit(&self, conversation: &Conversation) -> Result<(), CommitError> {
        self.commits.fetch_add(1, Ordering::Relaxed);
        if self.die_before_commit {
            die();
        }
        self.inner.commit(conversation).await
    }
}

/// The child's side: `suspend` runs the turn until it waits, then is killed; `answer:…` lists
/// the pending approvals and resumes the turn with the answer (and dies before its first
/// commit, with `:die`). Ignored in a test run; without the child variable it does nothing.
#[test]
#[ignore = "a child process of the tests above, which run it"]
fn child() {
    let Ok(spec) = std::env::var(CHILD) else { return };
    let fields: Vec<&str> = spec.splitn(3, '|').collect();
    let [url, dir, mode] = fields[..] else { panic!("a child spec: {spec}") };
    let dir = PathBuf::from(dir);
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    runtime.block_on(async {
        let store = Store::open(url).await.unwrap();
        let script = if mode == "suspend" {
            ScriptedModel::new().tool_calls([
                ("effect", json!({ "name": "lookup" })),
                ("effect", json!({ "name": "send_email", "to": "boss" })),
                ("effect", json!({ "name": "archive" })),
            ])
        } else {
            ScriptedModel::new().text("Sent.")
        };
        let model = Counted { script, calls: dir.join("model_calls") };
        let agent = Agent::builder(&model)
            .tool(Effect { effects: dir.join("effects") })
            .hook(AskBeforeSending)
            .approver(|_: ToolCall, _| async { Approval::Suspend })
            .build();
        let mut stored = store.load("c").await.unwrap();
        let committer = MaybeDying {
            inner: store.committer("c", &stored),
            die_before_commit: mode.ends_with(":die"),
            commits: AtomicUsize::new(0),
        };
        if mode == "suspend" {
            let outcome =
                agent.turn(&mut stored.conversation, "Send the report").commit(&committer).await;
            assert!(matches!(outcome, Err(Error::AwaitingApproval { .. })), "{outcome:?}");
            die();
        }
        // A later process: what waits, from the store.
        let waiting = store.pending_approvals().await.unwrap();
        assert_eq!(waiting.len(), 1, "{waiting:?}");
        assert_eq!(waiting[0].conversation, "c");
        let approval: agentix::approval::Answer = match mode.trim_end_matches(":die") {
            "answer:approve" => Approval::Approve.into(),
            "answer:reject" => Approval::Reject("not today".into()).by("bob"),
            "answer:edit" => Approval::Edit(ToolCall::new(
                "ignored",
                "effect",
                json!({ "name": "send_email", "to": "team" }),
            ))
            .by("carol"),
            other => panic!("a mode: {other}"),
        };
        let reply = agent.resume(&mut stored.conversation, approval).commit(&committer).await;
        assert_eq!(reply.unwrap().joined_text(), "Sent.");
    });
}

fn run_child(url: &str, dir: &Path, mode: &str) -> std::process::ExitStatus {
    support::run_child(CHILD, format!("{url}|{}|{mode}", dir.display()))
}

/// Suspends a turn in one process (killed after), then answers it from another.
async fn suspend_then(store: &Store, url: &str, dir: &Path) {
    store.create("c", &Conversation::new()).await.unwrap();
    let status = run_child(url, dir, "suspend");
    assert_eq!(status.signal(), Some(9), "the first process was killed while the turn waited");
    assert_eq!(
        lines(&dir.join("effects")),
        ["lookup -", "archive -"],
        "the calls beside the waiting one ran"
    );
    assert_eq!(lines(&dir.join("model_calls")).len(), 1);

    let waiting = store.pending_approvals().await.unwrap();
    assert_eq!(waiting.len(), 1);
    let waiting = &waiting[0];
    assert_eq!((waiting.conversation.as_str(), waiting.seq, waiting.turn.0), ("c", 1, 1));
    assert_eq!(waiting.pending.call.arguments, json!({ "name": "send_email", "to": "boss" }));
    assert_eq!(waiting.pending.reason, "mail leaves the building");
    let stored = store.load("c").await.unwrap();
    let (_, pending) = stored.conversation.pending_approval().expect("the stored turn waits");
    assert_eq!(pending, &waiting.pending);
}

/// What the store holds once the turn ended: the one turn, the step whole, every call answered
/// in order; the model called twice in all, no approval pending.
async fn check_finished(store: &Store, dir: &Path) -> Vec<agentix::ToolResult> {
    assert_eq!(lines(&dir.join("model_calls")).len(), 2, "no model call made twice");
    assert!(store.pending_approvals().await.unwrap().is_empty());
    let stored = store.load("c").await.unwrap();
    let log = stored.conversation.log();
    assert_eq!(log.len(), 6, "{log:#?}");
    assert!(matches!(log[1], Entry::Suspended { .. }));
    assert!(matches!(log[2], Entry::Resumed { .. }));
    let Entry::ToolResults { results, .. } = &log[4] else { panic!("{log:#?}") };
    assert!(
        matches!(&log[5], Entry::Assistant { message, .. } if message.joined_text() == "Sent.")
    );
    assert!(stored.conversation.pending_approval().is_none());
    results.clone()
}

async fn approved_from_another_process(store: Store, url: String) {
    let dir = support::TempDir::new("approve");
    suspend_then(&store, &url, &dir.0).await;
    assert!(run_child(&url, &dir.0, "answer:approve").success());
    let results = check_finished(&store, &dir.0).await;
    let outputs: Vec<&str> = results.iter().map(|result| result.output.as_str()).collect();
    assert_eq!(outputs, ["lookup - done", "send_email boss done", "archive - done"]);
    assert_eq!(lines(&dir.0.join("effects")), ["lookup -", "archive -", "send_email boss"]);
    assert_eq!(answered_by(&store, &url).await, ("approved".into(), None), "nobody named");
}

async fn rejected_from_another_process(store: Store, url: String) {
    let dir = support::TempDir::new("reject");
    suspend_then(&store, &url, &dir.0).await;
    assert!(run_child(&url, &dir.0, "answer:reject").success());
    let results = check_finished(&store, &dir.0).await;
    assert_eq!(
        results[1].error,
        Some(ToolFailure::Rejected {
            by: "the approver, on escalation by AskBeforeSending".into(),
            reason: "not today".into(),
        })
    );
    assert_eq!(lines(&dir.0.join("effects")), ["lookup -", "archive -"]);
    assert_eq!(answered_by(&store, &url).await, ("rejected".into(), Some("bob".into())));
}

/// The stored approval's status and who answered it, from the table; and the log's record of
/// the answer says the same.
async fn answered_by(store: &Store, url: &str) -> (String, Option<String>) {
    let stored = store.load("c").await.unwrap();
    let Entry::Resumed { by, .. } = &stored.conversation.log()[2] else { panic!() };
    sqlx::any::install_default_drivers();
    let pool = sqlx::AnyPool::connect(url).await.unwrap();
    let row: (String, Option<String>) =
        sqlx::query_as("SELECT status, answered_by FROM approvals WHERE conversation_id = 'c'")
            .fetch_one(&pool)
            .await
            .unwrap();
    pool.close().await;
    assert_eq!(&row.1, by, "the table and the log agree on who answered");
    row
}

async fn edited_from_another_process(store: Store, url: String) {
    let dir = support::TempDir::new("edit");
    suspend_then(&store, &url, &dir.0).await;
    assert!(run_child(&url, &dir.0, "answer:edit").success());
    let results = check_finished(&store, &dir.0).await;
    assert_eq!(results[1].output, "send_email team done");
    assert_eq!(lines(&dir.0.join("effects")), ["lookup -", "archive -", "send_email team"]);
    let stored = store.load("c").await.unwrap();
    let Entry::Assistant { message, .. } = &stored.conversation.log()[3] else { panic!() };
    let sent = message.tool_calls().nth(1).unwrap();
    assert_eq!(
        (sent.id.as_str(), &sent.arguments),
        ("call_2", &json!({ "name": "send_email", "to": "team" }))
    );
    assert_eq!(answered_by(&store, &url).await, ("edited".into(), Some("carol".into())));
}

/// The process that approved dies before the resumed step is committed: the approval is still
/// pending (the answer is committed with the step it lets finish), and a third process
/// approves again. The approved tool ran in the process that died: it runs again — at least
/// once, as any call of a step that was not committed; the calls that ran beside it before the
/// suspension do not.
async fn an_answer_not_committed_is_asked_again(store: Store, url: String) {
    let dir = support::TempDir::new("again");
    suspend_then(&store, &url, &dir.0).await;
    let status = run_child(&url, &dir.0, "answer:approve:die");
    assert_eq!(status.signal(), Some(9));
    assert_eq!(store.pending_approvals().await.unwrap().len(), 1, "still waiting");
    assert_eq!(store.load("c").await.unwrap().conversation.log().len(), 2);
    // The model's answer came after the step that was not committed: it is asked again too.
    let calls = lines(&dir.0.join("model_calls")).len();
    assert_eq!(calls, 1, "the dying process died before calling the model");
    assert!(run_child(&url, &dir.0, "answer:approve").success());
    check_finished(&store, &dir.0).await;
    assert_eq!(
        lines(&dir.0.join("effects")),
        ["lookup -", "archive -", "send_email boss", "send_email boss"],
        "the calls that ran beside the waiting one are in the suspension: only it runs again"
    );
}

on_both_backends! {
    a_suspended_turn_is_approved_from_another_process => approved_from_another_process;
    a_suspended_turn_is_rejected_from_another_process => rejected_from_another_process;
    a_suspended_turn_is_edited_from_another_process => edited_from_another_process;
    an_approval_whose_step_was_not_committed_is_asked_again => an_answer_not_committed_is_asked_again;
}
