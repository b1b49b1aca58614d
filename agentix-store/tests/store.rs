//! The store over SQLite and PostgreSQL: a conversation committed step by step loads back
//! exactly; a second writer gets a conflict, never an interleaved log; a damaged row is a typed
//! error naming the conversation and the entry, and nothing is changed to make it load.

use agentix_test_support::{self as support, on_both_backends};

use agentix::session::Session;
use agentix::{
    Agent, Config, Conversation, Entry, Hook, ScriptedModel, Turn, Verdict, scope::Scope,
};
use agentix_store::{SCHEMA_VERSION, Store, StoreError, Version};
use serde_json::json;
use sqlx::Executor;
use support::Clock;

/// Remembers the user's name in the scope, and leaves durable output in the log.
struct Memory;

#[agentix::hook]
impl Hook for Memory {
    const DURABLE: bool = true;

    async fn pre(&self, turn: &mut Turn) -> Verdict<agentix::event::Pre> {
        let count = turn.scope().get::<Visits>().map_or(0, |visits| visits.0);
        turn.scope_mut().insert(Visits(count + 1));
        turn.inject(format!("visit {}", count + 1));
        Verdict::Continue
    }
}

#[derive(serde::Serialize, serde::Deserialize)]
struct Visits(u32);

impl agentix::scope::ScopeValue for Visits {
    const KEY: &'static str = "visits";
}

on_both_backends! {
    committed_turns_load_back_exactly => committed_turns_load_back_exactly;
    a_second_writer_gets_a_conflict_and_the_log_stays_one_writers => a_second_writer_gets_a_conflict;
    a_commit_that_does_not_continue_the_log_is_refused => a_commit_that_does_not_continue_the_log_is_refused;
    damaged_rows_are_typed_errors_and_stay_as_they_are => damaged_rows_are_typed_errors_and_stay_as_they_are;
    a_schema_from_the_future_is_refused => a_schema_from_the_future_is_refused;
    unknown_and_duplicate_ids_are_typed_errors => unknown_and_duplicate_ids_are_typed_errors;
    a_load_while_another_writer_commits_reads_one_commit => a_load_reads_one_commit;
    typed_answers_load_back_and_the_next_turn_reads_them => typed_answers_load_back;
    a_kept_sub_agents_conversation_is_stored_with_its_parents => kept_sub_agent_loads_back;
}

/// A sub-agent that keeps its conversation: what it said is stored in its parent's log, and a
/// process that loads the parent's conversation goes on with the child's where it was.
async fn kept_sub_agent_loads_back(store: Store, _url: String) {
    let child_model = ScriptedModel::new().text("Noted: Oslo.").text("You said Oslo.");
    let child = Agent::builder(&child_model).build();
    let model = ScriptedModel::new()
        .tool_call("notes", json!({ "prompt": "Remember Oslo." }))
        .text("Noted.");
    let parent = Agent::builder(&model)
        .sub_agent(
            agentix::delegate::AgentTool::new("notes", "Keeps notes.", &child).keep_conversation(),
        )
        .build();
    let version = store.create("team", &Conversation::new()).await.unwrap();
    let mut stored = store.load("team").await.unwrap();
    let from = stored.conversation.log().len();
    parent.run(&mut stored.conversation, "Remember Oslo.").await.unwrap();
    store.commit("team", version, &stored.conversation, from).await.unwrap();

    let mut loaded = store.load("team").await.unwrap().conversation;
    assert_eq!(loaded.log(), stored.conversation.log());
    let model = ScriptedModel::new()
        .tool_call("notes", json!({ "prompt": "What did I say?" }))
        .text("Oslo.");
    let parent = Agent::builder(&model)
        .sub_agent(
            agentix::delegate::AgentTool::new("notes", "Keeps notes.", &child).keep_conversation(),
        )
        .build();
    parent.run(&mut loaded, "What did I say?").await.unwrap();
    let seen: Vec<String> = child_model.requests()[1]
        .messages
        .iter()
        .map(|message| message.text().into_owned())
        .collect();
    assert_eq!(seen, ["Remember Oslo.", "Noted: Oslo.", "What did I say?"]);
}

/// A typed agent's answer, for the store to keep as JSON.
#[derive(
    Debug,
    PartialEq,
    agentix::prelude::Serialize,
    agentix::prelude::Deserialize,
    agentix::schemars::JsonSchema,
)]
#[serde(crate = "agentix::serde")]
#[schemars(crate = "agentix::schemars")]
struct Reading {
    celsius: i32,
}

/// A conversation whose turns answered with typed values — one refused and sent back on the
/// way — loads back as it was committed, and a typed turn goes on from it.
async fn typed_answers_load_back(store: Store, _url: String) {
    let mut version = store.create("typed", &Conversation::new()).await.unwrap();
    let model = ScriptedModel::new().text("warm").text(r#"{"celsius": 21}"#);
    let agent = Agent::builder(&model).output::<Reading>().build();
    let mut stored = store.load("typed").await.unwrap();
    let from = stored.conversation.log().len();
    let reading = agent.turn(&mut stored.conversation, "How warm?").answer().await.unwrap();
    assert_eq!(reading, Reading { celsius: 21 });
    version = store.commit("typed", version, &stored.conversation, from).await.unwrap();

    let loaded = store.load("typed").await.unwrap();
    assert_eq!(loaded.version, version);
    assert_eq!(loaded.conversation.log(), stored.conversation.log());
    let mut revived = loaded.conversation;
    let model = ScriptedModel::new().text(r#"{"celsius": 19}"#);
    let agent = Agent::builder(&model).output::<Reading>().build();
    let reading = agent.turn(&mut revived, "And now?").answer().await.unwrap();
    assert_eq!(reading, Reading { celsius: 19 });
    // The model read the first answer as the JSON it was.
    let requests = model.requests();
    assert!(requests[0].messages.iter().any(|message| message.text() == r#"{"celsius": 21}"#));
}

/// A reader loading while a writer commits turn after turn: each load is the state one commit
/// left — the row's turn counter and the entries agree — never half of one and half of the next
/// (it loads: a log whose entries run ahead of the counter is refused).
async fn a_load_reads_one_commit(store: Store, _url: String) {
    store.create("busy", &Conversation::new()).await.unwrap();
    let writer = {
        let store = store.clone();
        tokio::spawn(async move {
            for _ in 0..40 {
                let mut stored = store.load("busy").await.unwrap();
                let committer = store.committer("busy", &stored);
                let model = ScriptedModel::new().text("ok");
                let agent = Agent::builder(&model).build();
                agent.turn(&mut stored.conversation, "hi").commit(&committer).await.unwrap();
            }
        })
    };
    let mut loads = 0;
    while !writer.is_finished() {
        let stored =
            store.load("busy").await.unwrap_or_else(|error| panic!("load {loads}: {error}"));
        // A turn commits its user message, then its answer.
        let (entries, turns) =
            (stored.conversation.log().len() as u64, stored.conversation.turns());
        assert!(
            entries == 2 * turns || entries + 1 == 2 * turns,
            "{entries} entries, {turns} turns"
        );
        loads += 1;
    }
    writer.await.unwrap();
    assert!(loads > 0);
}

async fn committed_turns_load_back_exactly(store: Store, _url: String) {
    let config = Config { max_steps: 7, ..Config::default() };
    let conversation = Conversation::with_config(config.clone()).with_scope(Scope::new());
    let mut version = store.create("c1", &conversation).await.unwrap();
    let model = ScriptedModel::new()
        .tool_call("clock", json!({}))
        .text("It is noon.")
        .text("Still noon.")
        .text("A task's answer.");
    let agent = Agent::builder(&model).tool(Clock).hook(Memory).build();
    let mut stored = store.load("c1").await.unwrap();
    for message in ["What time is it?", "And now?"] {
        let from = stored.conversation.log().len();
        agent.run(&mut stored.conversation, message).await.unwrap();
        version = store.commit("c1", version, &stored.conversation, from).await.unwrap();
    }
    // A session's task: its entries carry the task into their rows.
    let mut session = Session::builder(&agent).conversation(stored.conversation).build();
    session.enqueue("A task.").unwrap();
    session.run().await.unwrap();
    let conversation = session.into_conversation();
    let from = store.load("c1").await.unwrap().conversation.log().len();
    version = store.commit("c1", version, &conversation, from).await.unwrap();
    assert_eq!(version, Version(4));

    let loaded = store.load("c1").await.unwrap();
    assert_eq!(loaded.version, version);
    assert_eq!(loaded.conversation.log(), conversation.log());
    assert_eq!(loaded.conversation.turns(), 3);
    assert_eq!(loaded.conversation.config(), &config);
    assert_eq!(loaded.conversation.scope().get::<Visits>().map(|visits| visits.0), Some(3));
    let tasks: Vec<Option<u64>> = (0..loaded.conversation.log().len())
        .map(|index| loaded.conversation.task_of(index).map(|tag| tag.task.get()))
        .collect();
    assert_eq!(tasks.last(), Some(&Some(1)));
    assert!(matches!(loaded.conversation.log()[1], Entry::HookOutput { .. }));
    // The next turn goes on from the loaded conversation as from the one in memory.
    let mut revived = loaded.conversation;
    let model = ScriptedModel::new().text("Evening.");
    let agent = Agent::builder(&model).tool(Clock).hook(Memory).build();
    agent.run(&mut revived, "Later?").await.unwrap();
    assert_eq!(revived.scope().get::<Visits>().map(|visits| visits.0), Some(4));
}

async fn a_second_writer_gets_a_conflict(store: Store, _url: String) {
    let version = store.create("c2", &Conversation::new()).await.unwrap();
    let mut first = store.load("c2").await.unwrap().conversation;
    let mut second = store.load("c2").await.unwrap().conversation;
    let agent = Agent::builder(ScriptedModel::new().text("one").text("two")).build();
    agent.run(&mut first, "first writer").await.unwrap();
    agent.run(&mut second, "second writer").await.unwrap();
    let committed = store.commit("c2", version, &first, 0).await.unwrap();
    let refused = store.commit("c2", version, &second, 0).await.unwrap_err();
    assert!(
        matches!(&refused, StoreError::Conflict { conversation, expected, found }
            if conversation == "c2" && *expected == version && *found == committed),
        "{refused}"
    );
    let loaded = store.load("c2").await.unwrap();
    assert_eq!(loaded.conversation.log(), first.log(), "only the first writer's entries");
    assert_eq!(loaded.version, committed);
}

async fn a_commit_that_does_not_continue_the_log_is_refused(store: Store, _url: String) {
    let version = store.create("c3", &Conversation::new()).await.unwrap();
    let mut conversation = store.load("c3").await.unwrap().conversation;
    let agent = Agent::builder(ScriptedModel::new().text("one").text("two")).build();
    agent.run(&mut conversation, "one").await.unwrap();
    let version = store.commit("c3", version, &conversation, 0).await.unwrap();
    agent.run(&mut conversation, "two").await.unwrap();
    // Starting past where the stored log ends would leave a gap.
    let refused = store.commit("c3", version, &conversation, 3).await.unwrap_err();
    assert!(matches!(refused, StoreError::NotContinuous { from: 3, stored: 2, .. }), "{refused}");
    assert_eq!(store.load("c3").await.unwrap().version, version, "nothing was written");
}

/// A stored conversation of two turns, one with a tool step: five entries.
async fn two_turns(store: &Store, id: &str) {
    let version = store.create(id, &Conversation::new()).await.unwrap();
    let mut conversation = Conversation::new();
    let model = ScriptedModel::new().tool_call("clock", json!({})).text("noon").text("bye");
    let agent = Agent::builder(&model).tool(Clock).build();
    agent.run(&mut conversation, "time?").await.unwrap();
    agent.run(&mut conversation, "bye").await.unwrap();
    store.commit(id, version, &conversation, 0).await.unwrap();
}

async fn raw(url: &str) -> sqlx::AnyPool {
    sqlx::any::install_default_drivers();
    sqlx::any::AnyPoolOptions::new().max_connections(1).connect(url).await.unwrap()
}

async fn entry_text(pool: &sqlx::AnyPool, id: &str, seq: i64) -> String {
    let text = format!("SELECT entry FROM entries WHERE conversation_id = '{id}' AND seq = {seq}");
    sqlx::query_scalar(sqlx::AssertSqlSafe(text)).fetch_one(pool).await.unwrap()
}

async fn damaged_rows_are_typed_errors_and_stay_as_they_are(store: Store, url: String) {
    let pool = raw(&url).await;
    let run = |text: String| {
        let pool = pool.clone();
        async move { pool.execute(sqlx::AssertSqlSafe(text)).await.unwrap() }
    };

    // An entry that does not decode.
    two_turns(&store, "bad-json").await;
    run("UPDATE entries SET entry = '{\"entry\": \"user\", \"turn\": ' WHERE conversation_id = 'bad-json' AND seq = 3".into()).await;
    let error = store.load("bad-json").await.unwrap_err();
    assert!(
        matches!(&error, StoreError::CorruptEntry { conversation, seq: 3, .. } if conversation == "bad-json"),
        "{error}"
    );
    assert!(
        error
            .to_string()
            .starts_with("conversation `bad-json`, entry 3: the stored entry does not decode")
    );
    assert_eq!(
        entry_text(&pool, "bad-json", 3).await,
        "{\"entry\": \"user\", \"turn\": ",
        "left as it was"
    );

    // An entry missing from the middle of the log.
    two_turns(&store, "gap").await;
    run("DELETE FROM entries WHERE conversation_id = 'gap' AND seq = 2".into()).await;
    let error = store.load("gap").await.unwrap_err();
    assert!(matches!(error, StoreError::MissingEntry { seq: 2, .. }), "{error}");

    // Entries that decode but break a rule: the tool results moved away from their call.
    two_turns(&store, "unanswered").await;
    let results = entry_text(&pool, "unanswered", 2).await;
    let answer = entry_text(&pool, "unanswered", 3).await;
    let swap = |seq: i64, text: &str| {
        format!(
            "UPDATE entries SET entry = '{}' WHERE conversation_id = 'unanswered' AND seq = {seq}",
            text.replace('\'', "''")
        )
    };
    run(swap(2, &answer)).await;
    run(swap(3, &results)).await;
    let error = store.load("unanswered").await.unwrap_err();
    assert!(
        matches!(&error, StoreError::InvalidLog { conversation, seq: 1, .. } if conversation == "unanswered"),
        "{error}"
    );
    assert_eq!(entry_text(&pool, "unanswered", 2).await, answer, "left as it was");

    // A config that does not decode.
    two_turns(&store, "bad-config").await;
    run("UPDATE conversations SET config = '[' WHERE id = 'bad-config'".into()).await;
    let error = store.load("bad-config").await.unwrap_err();
    assert!(matches!(error, StoreError::CorruptConversation { field: "config", .. }), "{error}");

    // A waiting approval whose call does not decode.
    run("INSERT INTO approvals (conversation_id, seq, turn, call_id, tool, call, hook, reason, \
         status) VALUES ('gap', 1, 1, 'call_1', 'effect', '{', 'guard', 'why', 'pending')"
        .into())
    .await;
    let error = store.pending_approvals().await.unwrap_err();
    assert!(
        matches!(&error, StoreError::CorruptApproval { conversation, seq: 1, .. } if conversation == "gap"),
        "{error}"
    );
    assert!(
        error.to_string().starts_with(
            "conversation `gap`, approval at entry 1: the stored call does not decode"
        )
    );
}

async fn a_schema_from_the_future_is_refused(store: Store, url: String) {
    store.close().await;
    let pool = raw(&url).await;
    pool.execute("INSERT INTO agentix_schema (version) VALUES (99)").await.unwrap();
    pool.close().await;
    let error = Store::open(&url).await.unwrap_err();
    assert!(
        matches!(error, StoreError::SchemaFromTheFuture { found: 99, supported } if supported == SCHEMA_VERSION),
        "{error}"
    );
}

async fn unknown_and_duplicate_ids_are_typed_errors(store: Store, _url: String) {
    let error = store.load("nobody").await.unwrap_err();
    assert!(matches!(error, StoreError::NotFound { .. }), "{error}");
    let error = store.commit("nobody", Version(1), &Conversation::new(), 0).await.unwrap_err();
    assert!(matches!(error, StoreError::NotFound { .. }), "{error}");
    store.create("twice", &Conversation::new()).await.unwrap();
    let error = store.create("twice", &Conversation::new()).await.unwrap_err();
    assert!(matches!(error, StoreError::AlreadyExists { .. }), "{error}");
}

#[tokio::test]
async fn a_url_of_no_known_database_is_refused() {
    let error = Store::open("mysql://localhost/db").await.unwrap_err();
    assert!(matches!(error, StoreError::UnknownUrl { .. }), "{error}");
}

/// Delegates to a store's committer and, after each commit, loads the conversation back: the
/// log the store holds at each step boundary, and that it loads.
struct Checked<'s> {
    inner: agentix_store::Committer<'s>,
    store: &'s Store,
    id: &'static str,
    seen: std::sync::Mutex<Vec<usize>>,
}

impl agentix::durable::Commit for Checked<'_> {
    async fn commit(
        &self,
        conversation: &Conversation,
    ) -> Result<(), agentix::durable::CommitError> {
        self.inner.commit(conversation).await?;
        let stored = self.store.load(self.id).await.expect("every commit leaves a log that loads");
        assert_eq!(stored.conversation.log(), conversation.log());
        self.seen.lock().unwrap().push(stored.conversation.log().len());
        Ok(())
    }
}

on_both_backends! {
    a_turn_commits_each_step_as_it_runs => a_turn_commits_each_step_as_it_runs;
    a_turn_that_lost_the_race_fails_before_its_model_is_called => a_turn_that_lost_the_race;
}

async fn a_turn_commits_each_step_as_it_runs(store: Store, _url: String) {
    store.create("steps", &Conversation::new()).await.unwrap();
    let model = ScriptedModel::new()
        .tool_call("clock", json!({}))
        .tool_call("clock", json!({}))
        .text("Noon, still.");
    let agent = Agent::builder(&model).tool(Clock).hook(Memory).build();
    let mut stored = store.load("steps").await.unwrap();
    assert_eq!(stored.conversation.id(), Some("steps"), "a loaded conversation has its key");
    assert!(stored.conversation.unsaved().is_empty());
    let checked = Checked {
        inner: store.committer("steps", &stored),
        store: &store,
        id: "steps",
        seen: Default::default(),
    };
    agent.turn(&mut stored.conversation, "time?").commit(&checked).await.unwrap();
    // After `pre` (the user message and the durable injection), after each step (the call with
    // its result), after the final answer, and at the turn's end, which had nothing left: four
    // commits, the fifth call writing nothing.
    assert_eq!(*checked.seen.lock().unwrap(), [2, 4, 6, 7, 7]);
    assert_eq!(checked.inner.version(), Version(5));
    assert_eq!(store.load("steps").await.unwrap().conversation.log(), stored.conversation.log());
}

async fn a_turn_that_lost_the_race(store: Store, _url: String) {
    store.create("race", &Conversation::new()).await.unwrap();
    let mut first = store.load("race").await.unwrap();
    let mut second = store.load("race").await.unwrap();
    let first_model = ScriptedModel::new().text("first");
    let second_model = ScriptedModel::new().text("second");
    let first_committer = store.committer("race", &first);
    let second_committer = store.committer("race", &second);
    Agent::builder(&first_model)
        .build()
        .turn(&mut first.conversation, "one")
        .commit(&first_committer)
        .await
        .unwrap();
    let lost = Agent::builder(&second_model)
        .build()
        .turn(&mut second.conversation, "two")
        .commit(&second_committer)
        .await
        .unwrap_err();
    assert!(matches!(&lost, agentix::Error::Commit(error) if error.conflict), "{lost}");
    assert_eq!(second_model.calls(), 0, "its first commit, after `pre`, already lost");
    let stored = store.load("race").await.unwrap();
    assert_eq!(stored.conversation.log(), first.conversation.log(), "one writer's log");
}

/// Panics at its `at`-th commit (from 1).
struct PanicsAt(usize, std::sync::atomic::AtomicUsize);

impl agentix::durable::Commit for PanicsAt {
    async fn commit(&self, _: &Conversation) -> Result<(), agentix::durable::CommitError> {
        let n = self.1.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
        assert!(n != self.0, "the disk is on fire");
        Ok(())
    }
}

#[tokio::test]
async fn a_committer_that_panics_fails_the_turn_naming_it_inside_the_loop_and_at_its_end() {
    // The first commit is after `pre`, inside the loop; the third (of a turn with no tool
    // step), at the turn's end, outside it.
    for at in [1, 3] {
        let model = ScriptedModel::new().text("hi");
        let agent = Agent::builder(&model).build();
        let mut conversation = Conversation::new();
        let committer = PanicsAt(at, Default::default());
        let error = agent.turn(&mut conversation, "hello").commit(&committer).await.unwrap_err();
        assert_eq!(
            error,
            agentix::Error::ComponentPanicked {
                component: agentix::error::Component::Committer,
                message: "the disk is on fire".to_owned()
            },
            "at commit {at}"
        );
        assert_eq!(model.calls(), usize::from(at == 3));
    }
}

/// Counts its calls: a tool whose effect a replay must not repeat.
#[derive(Clone, Default)]
struct Counted(std::sync::Arc<std::sync::atomic::AtomicUsize>);

impl agentix::Tool for Counted {
    const NAME: &'static str = "count";
    type Args = serde_json::Value;
    type Output = String;
    type Error = std::convert::Infallible;

    fn description(&self) -> &str {
        "Counts."
    }

    async fn call(&self, _: serde_json::Value, _: &Turn) -> Result<String, Self::Error> {
        let n = self.0.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1;
        Ok(format!("counted {n}"))
    }
}

fn counting_turn() -> ScriptedModel {
    ScriptedModel::new().tool_call("count", json!({})).text("Counted.")
}

/// A turn in flight whose journal was written at schema version 2 (one run of steps, by `seq`,
/// its tool call's among them), the store then migrated to version 3: the turn goes on as it
/// was recorded — every step replayed in its one order, no model called and no tool run again.
async fn a_version_2_journal_replays_in_its_one_order(store: Store, url: String) {
    store.create("c", &Conversation::new()).await.unwrap();
    let stored = store.load("c").await.unwrap();
    let journal = store.journal("c", &stored).await.unwrap();
    let (model, tool) = (counting_turn(), Counted::default());
    let agent = Agent::builder(&model).tool(tool.clone()).build();
    let mut conversation = stored.conversation;
    agent.turn(&mut conversation, "Count").journal(&journal).await.unwrap();
    assert_eq!((model.calls(), tool.0.load(std::sync::atomic::Ordering::SeqCst)), (2, 1));
    drop(journal);
    store.close().await;

    // The journal as version 2 wrote it: the steps in the order they completed (and nothing
    // of version 4).
    support::undo_schema_version_4(&url).await;
    let pool = raw(&url).await;
    let rows: Vec<(String, i64, String, String)> =
        sqlx::query_as("SELECT lane, seq, step, value FROM journal ORDER BY lane, seq")
            .fetch_all(&pool)
            .await
            .unwrap();
    let turns: Vec<&(String, i64, String, String)> =
        rows.iter().filter(|row| row.0 == "[]").collect();
    let call: Vec<&(String, i64, String, String)> =
        rows.iter().filter(|row| row.0 != "[]").collect();
    assert_eq!((turns.len(), call.len()), (3, 1), "{rows:?}");
    let in_order = [turns[0], turns[1], call[0], turns[2]];
    for statement in [
        "DROP TABLE journal",
        "CREATE TABLE journal (
            conversation_id TEXT NOT NULL REFERENCES conversations (id),
            turn BIGINT NOT NULL,
            part BIGINT NOT NULL,
            seq BIGINT NOT NULL,
            step TEXT NOT NULL,
            value TEXT NOT NULL,
            PRIMARY KEY (conversation_id, turn, part, seq)
        )",
        "DELETE FROM agentix_schema WHERE version = 3",
    ] {
        pool.execute(statement).await.unwrap();
    }
    for (seq, (_, _, step, value)) in in_order.into_iter().enumerate() {
        let insert = "INSERT INTO journal VALUES ('c', 1, 0, $1, $2, $3)";
        sqlx::query(insert).bind(seq as i64).bind(step).bind(value).execute(&pool).await.unwrap();
    }
    pool.close().await;

    let store = Store::open(&url).await.unwrap();
    let stored = store.load("c").await.unwrap();
    let journal = store.journal("c", &stored).await.unwrap();
    let recorded: Vec<&str> = journal.recorded().collect();
    assert_eq!(
        recorded,
        [
            "opened (turn 1)",
            "model (turn 1, step 0)",
            "tool count (turn 1, step 0, call_1)",
            "model (turn 1, step 1)"
        ]
    );
    let (model, tool) = (counting_turn(), Counted::default());
    let agent = Agent::builder(&model).tool(tool.clone()).build();
    let mut conversation = stored.conversation;
    let reply = agent.turn(&mut conversation, "Count").journal(&journal).await.unwrap();
    assert_eq!(reply.joined_text(), "Counted.");
    assert_eq!(model.calls(), 0, "no model called again");
    assert_eq!(tool.0.load(std::sync::atomic::Ordering::SeqCst), 0, "no tool run again");
    assert_eq!(SCHEMA_VERSION, 4);
}

on_both_backends! {
    a_version_2_journal_replays_in_its_one_order => a_version_2_journal_replays_in_its_one_order;
    owners_are_kept_and_a_store_from_before_owners_upgrades => owners_are_kept_and_an_old_store_upgrades;
}

/// A conversation keeps the owner it was created with; one created without has none. A store
/// written before conversations had owners (schema version 3) opens, migrated: its
/// conversations have none until [`Store::adopt_unowned`] gives them to a subject, and nothing
/// else of them changed.
async fn owners_are_kept_and_an_old_store_upgrades(store: Store, url: String) {
    store.create_owned("mine", &Conversation::new(), "alice").await.unwrap();
    store.create("legacy", &Conversation::new()).await.unwrap();
    let mut stored = store.load("mine").await.unwrap();
    assert_eq!(stored.owner.as_deref(), Some("alice"));
    assert_eq!(store.owner("mine").await.unwrap().as_deref(), Some("alice"));
    assert_eq!(store.owner("legacy").await.unwrap(), None);
    assert!(matches!(store.owner("nobody").await, Err(StoreError::NotFound { .. })));
    let agent = Agent::builder(ScriptedModel::new().text("Hello!")).build();
    agent.run(&mut stored.conversation, "Hi").await.unwrap();
    let version = store.commit("mine", stored.version, &stored.conversation, 0).await.unwrap();
    let committed = store.load("mine").await.unwrap();
    assert_eq!(committed.owner.as_deref(), Some("alice"), "a commit keeps the owner");
    assert!(matches!(
        store.create_owned("mine", &Conversation::new(), "mallory").await,
        Err(StoreError::AlreadyExists { .. })
    ));
    assert_eq!(store.owner("mine").await.unwrap().as_deref(), Some("alice"));
    store.close().await;

    // The store as version 3 left it: no owners, nobody recorded as answering.
    support::undo_schema_version_4(&url).await;

    let store = Store::open(&url).await.unwrap();
    let upgraded = store.load("mine").await.unwrap();
    assert_eq!((upgraded.owner, upgraded.version), (None, version));
    assert_eq!(upgraded.conversation.log(), committed.conversation.log());
    assert_eq!(store.unowned().await.unwrap(), 2);
    assert_eq!(store.adopt_unowned("operator").await.unwrap(), 2);
    assert_eq!(store.owner("mine").await.unwrap().as_deref(), Some("operator"));
    assert_eq!(store.owner("legacy").await.unwrap().as_deref(), Some("operator"));
    store.create_owned("new", &Conversation::new(), "bob").await.unwrap();
    assert_eq!(store.adopt_unowned("someone else").await.unwrap(), 0, "owned stay theirs");
    assert_eq!(store.owner("new").await.unwrap().as_deref(), Some("bob"));
    assert_eq!(store.unowned().await.unwrap(), 0);
}

/// Workers opening one new store at once: it is migrated once, and every worker opens it.
async fn many_open_a_new_store_at_once(url: &str) {
    let mut opens = tokio::task::JoinSet::new();
    for _ in 0..8 {
        let url = url.to_owned();
        opens.spawn(async move { Store::open(&url).await.map(drop) });
    }
    while let Some(opened) = opens.join_next().await {
        opened.unwrap().unwrap();
    }
    let pool = raw(url).await;
    let versions: Vec<i64> =
        sqlx::query_scalar("SELECT version FROM agentix_schema ORDER BY version")
            .fetch_all(&pool)
            .await
            .unwrap();
    assert_eq!(versions, (1..=SCHEMA_VERSION).collect::<Vec<_>>(), "each migration once");
}

#[tokio::test]
async fn workers_opening_a_new_store_at_once_migrate_it_once_over_sqlite() {
    let dir = support::TempDir::new("new-store");
    many_open_a_new_store_at_once(&format!("sqlite://{}", dir.0.join("store.db").display())).await;
}

#[cfg(feature = "postgres-tests")]
#[tokio::test]
async fn workers_opening_a_new_store_at_once_migrate_it_once_over_postgres() {
    many_open_a_new_store_at_once(&support::postgres_database("new_store")).await;
}
