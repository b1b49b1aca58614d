//! Sessions in the store: a session run with a store's committer commits each task's turn step
//! by step and its tasks and plans as they change; a session killed midway (`SIGKILL`, a real
//! process) leaves its finished tasks, the one running and the queue in the store, and a new
//! process runs the unfinished ones — over SQLite and PostgreSQL.

use agentix_test_support::{self as support, on_both_backends};

use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use agentix::event::TaskStart;
use agentix::session::{Plan, QueuedTask, Session, SessionState, Task, TaskStatus};
use agentix::{Agent, Conversation, Entry, ScriptedModel, Verdict, model::ModelRequest};
use agentix_store::{Store, StoreError, TaskState};

/// Each stored task's id and state.
type Snapshot = Vec<(u64, TaskState)>;

/// Reads the stored session as each task starts: what the store held then.
struct Peek {
    store: Store,
    seen: Arc<Mutex<Vec<Snapshot>>>,
}

impl agentix::on::TaskStart for Peek {
    async fn task_start(&self, _: &mut QueuedTask, _: &SessionState) -> Verdict<TaskStart> {
        let stored = self.store.load_session("s").await.unwrap();
        let states = stored.tasks.iter().map(|task| (task.id.get(), task.state)).collect();
        self.seen.lock().unwrap().push(states);
        Verdict::Continue
    }
}

on_both_backends! {
    a_committed_session_stores_its_turns_tasks_and_plans => a_committed_session;
}

async fn a_committed_session(store: Store, _url: String) {
    store.create("c", &Conversation::new()).await.unwrap();
    let model = ScriptedModel::new().text("one").text("two").text("three");
    let agent = Agent::builder(&model).build();
    let stored = store.load("c").await.unwrap();
    let committer = store.committer("c", &stored).in_session("s");
    let seen = Arc::default();
    let peek = Peek { store: store.clone(), seen: Arc::clone(&seen) };
    let mut session = Session::builder(&agent).conversation(stored.conversation).hook(peek).build();
    session.enqueue(Task::new("first").titled("the first")).unwrap();
    session.submit_plan(Plan::new([Task::new("second"), Task::new("third")]).titled("p")).unwrap();
    let reports = session.run().commit(&committer).await.unwrap();
    assert_eq!(reports.len(), 3);

    // As each task started, the store held the tasks before it ended and the rest queued.
    use TaskState::{Ended, Queued};
    let success = Ended(TaskStatus::Success);
    assert_eq!(
        *seen.lock().unwrap(),
        [
            vec![(1, Queued), (2, Queued), (3, Queued)],
            vec![(1, success), (2, Queued), (3, Queued)],
            vec![(1, success), (2, success), (3, Queued)],
        ]
    );

    let saved = store.load_session("s").await.unwrap();
    assert_eq!(
        (saved.conversation.as_str(), saved.ended, saved.stopped.as_ref()),
        ("c", true, None)
    );
    assert_eq!(saved.steps, 3);
    let tasks: Vec<(&str, TaskState, Option<&str>)> = saved
        .tasks
        .iter()
        .map(|task| (task.task.prompt.as_str(), task.state, task.answer.as_deref()))
        .collect();
    assert_eq!(
        tasks,
        [
            ("first", success, Some("one")),
            ("second", success, Some("two")),
            ("third", success, Some("three"))
        ]
    );
    assert_eq!(saved.tasks[0].task.title.as_deref(), Some("the first"));
    assert_eq!(saved.tasks[1].plan.map(|plan| plan.get()), Some(1));
    assert_eq!(saved.tasks[2].turn.map(|turn| turn.0), Some(3));
    assert_eq!(saved.plans.len(), 1);
    assert_eq!(
        (saved.plans[0].total, saved.plans[0].completed, saved.plans[0].succeeded),
        (2, 2, 2)
    );
    assert!(saved.unfinished().is_empty());

    // Every turn's steps are in the store, each entry with its task.
    let log = store.load("c").await.unwrap().conversation.log().to_vec();
    assert_eq!(log, session.conversation().log());
    assert_eq!(log.len(), 6);
    assert_eq!(store.model_calls("c").await.unwrap().len(), 3);

    let missing = store.load_session("nobody").await.unwrap_err();
    assert!(matches!(missing, StoreError::SessionNotFound { .. }), "{missing}");
}

const CHILD: &str = "AGENTIX_SESSION_CHILD";

/// The model: each task's answer, counted in a file; it dies in the call `die_at` names.
struct Dying {
    calls: PathBuf,
    die_at: Option<usize>,
}

impl agentix::Model for Dying {
    async fn complete(
        &self,
        request: &ModelRequest,
    ) -> Result<agentix::model::ModelResponse, agentix::model::ModelError> {
        let before = support::lines(&self.calls).len();
        support::append(&self.calls, "call");
        if self.die_at == Some(before + 1) {
            support::die();
        }
        let prompt = request.messages.last().map(|message| message.text()).unwrap_or_default();
        Ok(agentix::AssistantMessage::text(format!("done: {prompt}")).into())
    }
}

/// The child's side: `first` runs a session of three tasks and dies in the second's model
/// call; `again` runs the first session's unfinished tasks in a new session. Ignored in a
/// test run; without the child variable it does nothing.
#[test]
#[ignore = "a child process of the tests above, which run it"]
fn child() {
    let Ok(spec) = std::env::var(CHILD) else { return };
    let fields: Vec<&str> = spec.splitn(3, '|').collect();
    let [url, dir, mode] = fields[..] else { panic!("a child spec: {spec}") };
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    runtime.block_on(async {
        let store = Store::open(url).await.unwrap();
        let calls = Path::new(dir).join("model_calls");
        let die_at = (mode == "first").then_some(2);
        let agent = Agent::builder(Dying { calls, die_at }).build();
        let stored = store.load("c").await.unwrap();
        let (session_id, tasks) = match mode {
            "first" => ("s1", vec![Task::new("a"), Task::new("b"), Task::new("c")]),
            _ => ("s2", store.load_session("s1").await.unwrap().unfinished()),
        };
        let committer = store.committer("c", &stored).in_session(session_id);
        let mut session = Session::builder(&agent).conversation(stored.conversation).build();
        for task in tasks {
            session.enqueue(task).unwrap();
        }
        let reports = session.run().commit(&committer).await.unwrap();
        assert!(reports.iter().all(|report| report.status == TaskStatus::Success));
    });
}

fn run_child(url: &str, dir: &Path, mode: &str) -> std::process::ExitStatus {
    support::run_child(CHILD, format!("{url}|{}|{mode}", dir.display()))
}

async fn a_session_killed_midway(store: Store, url: String) {
    let dir = support::TempDir::new("session");
    store.create("c", &Conversation::new()).await.unwrap();
    let status = run_child(&url, &dir.0, "first");
    assert_eq!(status.signal(), Some(9), "killed in the second task's model call");

    let first = store.load_session("s1").await.unwrap();
    let states: Vec<TaskState> = first.tasks.iter().map(|task| task.state).collect();
    assert_eq!(
        states,
        [TaskState::Ended(TaskStatus::Success), TaskState::Running, TaskState::Queued]
    );
    assert!(!first.ended);
    let unfinished: Vec<String> = first.unfinished().into_iter().map(|task| task.prompt).collect();
    assert_eq!(unfinished, ["b", "c"]);
    // The log: the first task's turn whole, the second's user message (committed after `pre`).
    let log = store.load("c").await.unwrap().conversation.log().to_vec();
    assert_eq!(log.len(), 3, "{log:#?}");

    assert!(run_child(&url, &dir.0, "again").success());
    let second = store.load_session("s2").await.unwrap();
    assert!(second.ended);
    let answers: Vec<Option<&str>> =
        second.tasks.iter().map(|task| task.answer.as_deref()).collect();
    assert_eq!(answers, [Some("done: b"), Some("done: c")]);
    let log = store.load("c").await.unwrap().conversation.log().to_vec();
    let users: Vec<String> = log
        .iter()
        .filter_map(|entry| match entry {
            Entry::User { message, .. } => Some(message.text().into_owned()),
            _ => None,
        })
        .collect();
    assert_eq!(users, ["a", "b", "b", "c"], "the cut-short turn stays; b runs again after it");
    // The first task's model call is not made again: 1 + 1 (the one that died) + 2.
    let calls = support::lines(&dir.0.join("model_calls")).len();
    assert_eq!(calls, 4);
}

on_both_backends! {
    a_session_killed_midway_is_finished_by_a_new_process => a_session_killed_midway;
}

on_both_backends! {
    a_session_that_lost_the_race_writes_nothing_over_the_winners => a_session_that_lost_the_race;
    a_boxed_agents_session_commits_its_turns_and_their_model_calls => a_boxed_agents_session;
}

/// Two sessions loaded from one version: the first runs; the second's first commit finds the
/// version moved — it stops, its tasks cancelled, and the stored session stays the first's.
async fn a_session_that_lost_the_race(store: Store, _url: String) {
    store.create("c", &Conversation::new()).await.unwrap();
    let first = store.load("c").await.unwrap();
    let second = store.load("c").await.unwrap();
    let model = ScriptedModel::new().text("first's answer").text("unreachable");
    let agent = Agent::builder(&model).build();

    let committer = store.committer("c", &first);
    let mut winner = Session::builder(&agent).conversation(first.conversation).build();
    winner.enqueue(Task::new("the winner's task")).unwrap();
    winner.run().commit(&committer).await.unwrap();

    let committer = store.committer("c", &second);
    let mut loser = Session::builder(&agent).conversation(second.conversation).build();
    loser.enqueue(Task::new("the loser's task")).unwrap();
    let error = loser.run().commit(&committer).await.unwrap_err();
    assert!(matches!(&error, agentix::Error::Commit(commit) if commit.conflict), "{error}");
    let report = &loser.state().completed()[0];
    assert_eq!(report.status, TaskStatus::Cancelled);
    assert_eq!(model.calls(), 1, "the loser's task never reached the model");

    let saved = store.load_session("c").await.unwrap();
    let prompts: Vec<&str> = saved.tasks.iter().map(|task| task.task.prompt.as_str()).collect();
    assert_eq!(prompts, ["the winner's task"]);
    assert_eq!(saved.tasks[0].state, TaskState::Ended(TaskStatus::Success));
    assert!(saved.ended && saved.stopped.is_none());
    let log = store.load("c").await.unwrap().conversation.log().to_vec();
    assert_eq!(log.len(), 2, "{log:#?}");
}

/// A session on a boxed agent commits as one on a typed agent: each turn's steps and the model
/// calls they made.
async fn a_boxed_agents_session(store: Store, _url: String) {
    store.create("c", &Conversation::new()).await.unwrap();
    let agent = Agent::builder(ScriptedModel::new().text("one").text("two")).build().boxed();
    let stored = store.load("c").await.unwrap();
    let committer = store.committer("c", &stored).in_session("boxed");
    let mut session = Session::builder(&agent).conversation(stored.conversation).build();
    session.enqueue(Task::new("first")).unwrap();
    session.enqueue(Task::new("second")).unwrap();
    session.run().commit(&committer).await.unwrap();
    assert_eq!(store.load("c").await.unwrap().conversation.log(), session.conversation().log());
    let calls = store.model_calls("c").await.unwrap();
    assert_eq!(calls.len(), 2);
    assert_eq!(calls[1].response.as_ref().unwrap()["content"][0]["text"], "two");
    assert!(store.load_session("boxed").await.unwrap().ended);
}

#[tokio::test]
async fn a_session_on_a_conversation_waiting_for_an_approval_stops() {
    let model = ScriptedModel::new().tool_call("clock", serde_json::json!({})).text("noon");
    let agent = Agent::builder(&model)
        .tool(support::Clock)
        .hook(AskAlways)
        .approver(|_: agentix::ToolCall, _| async { agentix::approval::Approval::Suspend })
        .build();
    let mut conversation = Conversation::new();
    let _ = agent.run(&mut conversation, "time?").await;
    let mut session = Session::builder(&agent).conversation(conversation).build();
    session.enqueue(Task::new("later")).unwrap();
    let error = session.run().await.unwrap_err();
    assert!(matches!(error, agentix::Error::AwaitingApproval { .. }), "{error}");
    let report = &session.state().completed()[0];
    assert_eq!((report.status, report.turn), (TaskStatus::Cancelled, None));
    assert_eq!(model.calls(), 1);
}

/// Every call needs a person's yes.
struct AskAlways;

impl agentix::on::BeforeTool for AskAlways {
    async fn before_tool(
        &self,
        _: &mut agentix::ToolCall,
        _: &mut agentix::Turn,
    ) -> Verdict<agentix::event::BeforeTool> {
        Verdict::escalate("a person decides")
    }
}
