//! The journal seam: every effect of a turn — model calls, tool calls, approvals — passes
//! through a journal as a named step; a turn run again replays what the journal holds (no
//! model called, no tool run for it) and goes on from there; a replay whose hooks decide
//! otherwise is a typed error naming the step.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use agentix::event::BeforeTool;
use agentix::{
    Agent, Conversation, Error, ScriptedModel, ToolCall, Turn, Verdict, approval::Approval,
    durable::JournalError, model::ModelError,
};
use serde_json::{Value, json};
pub(crate) use tests::Memory;
use tests::Weather;

fn weather_turn() -> ScriptedModel {
    ScriptedModel::new().tool_call("get_weather", json!({ "city": "Oslo" })).text("Sunny in Oslo.")
}

/// A conversation as it was before the turn: what a process that crashed mid-turn starts from.
fn fresh() -> Conversation {
    Conversation::new().with_id("c")
}

#[tokio::test]
async fn a_recorded_turn_replays_without_calling_the_model_or_the_tool() {
    let journal = Memory::default();
    let weather = Weather::default();
    let calls = weather.calls.clone();
    let model = weather_turn();
    let agent = Agent::builder(&model).tool(weather).build();
    let mut first = fresh();
    let answer = agent.turn(&mut first, "weather?").journal(&journal).await.unwrap();
    assert_eq!(
        journal.names(),
        [
            "opened (turn 1)",
            "model (turn 1, step 0)",
            "tool get_weather (turn 1, step 0, call_1)",
            "model (turn 1, step 1)"
        ]
    );
    assert_eq!((model.calls(), calls.lock().unwrap().len()), (2, 1));

    // Run again from the start: everything replays.
    let replay = journal.replay(4);
    let silent = ScriptedModel::new();
    let weather = Weather::default();
    let calls = weather.calls.clone();
    let agent = Agent::builder(&silent).tool(weather).build();
    let mut again = fresh();
    let replayed = agent.turn(&mut again, "weather?").journal(&replay).await.unwrap();
    assert_eq!(replayed, answer);
    assert_eq!(again.log(), first.log());
    assert_eq!((silent.calls(), calls.lock().unwrap().len()), (0, 0), "nothing ran twice");
}

#[tokio::test]
async fn a_turn_cut_short_replays_what_completed_and_runs_the_rest() {
    let journal = Memory::default();
    let agent = Agent::builder(weather_turn()).tool(Weather::default()).build();
    let mut first = fresh();
    agent.turn(&mut first, "weather?").journal(&journal).await.unwrap();

    // The process died after the tool's step was recorded: the model's answer is called again.
    let replay = journal.replay(3);
    let model = ScriptedModel::new().text("Sunny in Oslo.");
    let weather = Weather::default();
    let calls = weather.calls.clone();
    let agent = Agent::builder(&model).tool(weather).build();
    let mut again = fresh();
    agent.turn(&mut again, "weather?").journal(&replay).await.unwrap();
    assert_eq!(again.log(), first.log());
    assert_eq!(model.calls(), 1, "only the call that had not completed");
    assert!(calls.lock().unwrap().is_empty(), "the tool's recorded result, not a second run");
    assert_eq!(replay.names().len(), 4);
}

/// Refuses every call: a hook that decides otherwise than the run it replays.
struct Refuse;

impl agentix::on::BeforeTool for Refuse {
    async fn before_tool(&self, _: &mut ToolCall, _: &mut Turn) -> Verdict<BeforeTool> {
        Verdict::reject("not today")
    }
}

#[tokio::test]
async fn a_replay_whose_hooks_decide_otherwise_diverges_naming_the_step() {
    let journal = Memory::default();
    let agent = Agent::builder(weather_turn()).tool(Weather::default()).build();
    agent.turn(&mut fresh(), "weather?").journal(&journal).await.unwrap();

    let replay = journal.replay(4);
    let model = ScriptedModel::new();
    let agent = Agent::builder(&model).tool(Weather::default()).hook(Refuse).build();
    let mut again = fresh();
    let error = agent.turn(&mut again, "weather?").journal(&replay).await.unwrap_err();
    assert_eq!(
        error,
        Error::Journal(JournalError::Diverged {
            recorded: "tool get_weather (turn 1, step 0, call_1)".into(),
            asked: "model (turn 1, step 1)".into(),
        })
    );
    assert_eq!(
        error.to_string(),
        "the replay diverged: it asked for model (turn 1, step 1), where the journal recorded \
         tool get_weather (turn 1, step 0, call_1)"
    );
    assert_eq!(model.calls(), 0);
    tests::assert_log_consistent(again.log());
}

#[tokio::test]
async fn a_replayed_model_error_is_the_models() {
    let journal = Memory::default();
    let model = ScriptedModel::new().error(ModelError::Transport("connection reset".into()));
    let agent = Agent::builder(&model).build();
    let error = agent.turn(&mut fresh(), "hi").journal(&journal).await.unwrap_err();
    assert_eq!(error, Error::Model(ModelError::Transport("connection reset".into())));

    let replay = journal.replay(2);
    let agent = Agent::builder(ScriptedModel::new()).build();
    let replayed = agent.turn(&mut fresh(), "hi").journal(&replay).await.unwrap_err();
    assert_eq!(replayed, error, "the same error, the model's");
}

/// Escalates every call.
struct Ask;

impl agentix::on::BeforeTool for Ask {
    async fn before_tool(&self, _: &mut ToolCall, _: &mut Turn) -> Verdict<BeforeTool> {
        Verdict::escalate("a person decides")
    }
}

#[tokio::test]
async fn an_approval_is_journaled_and_not_asked_again() {
    let journal = Memory::default();
    let asked = Arc::new(AtomicUsize::new(0));
    let counting = Arc::clone(&asked);
    let agent = Agent::builder(weather_turn())
        .tool(Weather::default())
        .hook(Ask)
        .approver(move |_: ToolCall, _| {
            counting.fetch_add(1, Ordering::SeqCst);
            async { Approval::Approve }
        })
        .build();
    let mut first = fresh();
    agent.turn(&mut first, "weather?").journal(&journal).await.unwrap();
    assert_eq!(
        journal.names(),
        [
            "opened (turn 1)",
            "model (turn 1, step 0)",
            "approval get_weather (turn 1, step 0, call_1)",
            "tool get_weather (turn 1, step 0, call_1)",
            "model (turn 1, step 1)"
        ]
    );

    let replay = journal.replay(5);
    let agent = Agent::builder(ScriptedModel::new())
        .tool(Weather::default())
        .hook(Ask)
        .approver(|_: ToolCall, _| async { panic!("asked again") })
        .build();
    let mut again = fresh();
    agent.turn(&mut again, "weather?").journal(&replay).await.unwrap();
    assert_eq!(again.log(), first.log());
    assert_eq!(asked.load(Ordering::SeqCst), 1);
}

/// Calls the model again once if it fails.
struct AgainOnce;

impl agentix::on::WrapModel for AgainOnce {
    async fn wrap_model(
        &self,
        request: &agentix::model::ModelRequest,
        _: &Turn,
        next: &impl agentix::model::NextModel,
    ) -> Result<agentix::model::ModelResponse, ModelError> {
        match next.call(request).await {
            Err(_) => next.call(request).await,
            answer => answer,
        }
    }
}

#[tokio::test]
async fn each_call_a_wrap_hook_makes_is_a_step_of_its_own() {
    let journal = Memory::default();
    let model = ScriptedModel::new().error(ModelError::Transport("reset".into())).text("hello");
    let agent = Agent::builder(&model).hook(AgainOnce).build();
    agent.turn(&mut fresh(), "hi").journal(&journal).await.unwrap();
    assert_eq!(
        journal.names(),
        ["opened (turn 1)", "model (turn 1, step 0)", "model (turn 1, step 0, call 2)"]
    );
    let replay = journal.replay(3);
    let agent = Agent::builder(ScriptedModel::new()).hook(AgainOnce).build();
    let answer = agent.turn(&mut fresh(), "hi").journal(&replay).await.unwrap();
    assert_eq!(answer.joined_text(), "hello");
}

/// Counts its summaries.
#[derive(Clone, Default)]
struct Summaries(Arc<AtomicUsize>);

impl agentix::context::Summarizer for Summaries {
    async fn summarize(
        &self,
        _earlier: Option<&str>,
        dropped: &[agentix::Message],
        _turn: &Turn,
    ) -> String {
        self.0.fetch_add(1, Ordering::SeqCst);
        format!("{} messages", dropped.len())
    }
}

#[tokio::test]
async fn a_summary_is_journaled_and_not_made_again() {
    let config =
        agentix::Config { context_budget: 400, injection_reserve: 50, ..Default::default() };
    let long = |n: usize| format!("answer {n} ").repeat(40);
    let model = (0..5).fold(ScriptedModel::new(), |model, n| model.text(long(n)));
    let summaries = Summaries::default();
    let agent = Agent::builder(&model).summarizer(summaries.clone()).build();
    let mut conversation = Conversation::with_config(config).with_id("c");
    // Four turns fill the window; the fifth's request needs a summary of the first.
    for n in 0..4 {
        agent.run(&mut conversation, format!("question {n}")).await.unwrap();
    }
    let before = serde_json::to_string(&conversation).unwrap();
    let journal = Memory::default();
    agent.turn(&mut conversation, "question 4").journal(&journal).await.unwrap();
    let names = journal.names();
    assert_eq!(names[0], "opened (turn 5)");
    assert!(names[1].starts_with("summary (turn 5, through entry"), "{names:?}");
    assert_eq!(names.last().unwrap(), "model (turn 5, step 0)");
    let made = summaries.0.load(Ordering::SeqCst);
    assert!(made >= 1);

    // The fifth turn again, from where it started: the summary is replayed, not made.
    let mut again: Conversation = serde_json::from_str(&before).unwrap();
    let replay = journal.replay(names.len());
    let agent = Agent::builder(ScriptedModel::new()).summarizer(summaries.clone()).build();
    agent.turn(&mut again, "question 4").journal(&replay).await.unwrap();
    assert_eq!(summaries.0.load(Ordering::SeqCst), made, "no summary made again");
    assert_eq!(again.log(), conversation.log());
}

#[tokio::test]
async fn a_replay_for_another_message_diverges_where_the_turn_opens() {
    let journal = Memory::default();
    let agent = Agent::builder(weather_turn()).tool(Weather::default()).build();
    agent.turn(&mut fresh(), "weather?").journal(&journal).await.unwrap();
    let replay = journal.replay(4);
    let model = ScriptedModel::new();
    let agent = Agent::builder(&model).tool(Weather::default()).build();
    let error = agent.turn(&mut fresh(), "something else").journal(&replay).await.unwrap_err();
    let Error::Journal(JournalError::Diverged { recorded, asked }) = &error else {
        panic!("{error}")
    };
    assert!(recorded.starts_with("opened (turn 1) with") && recorded.contains("weather?"));
    assert!(asked.contains("something else"), "{asked}");
    assert_eq!(model.calls(), 0);
}

/// Panics once it has done its work: the panic is the call's outcome, recorded.
struct Fragile(Arc<AtomicUsize>);

impl agentix::Tool for Fragile {
    const NAME: &'static str = "fragile";
    type Args = Value;
    type Output = String;
    type Error = std::convert::Infallible;

    fn description(&self) -> &str {
        "Breaks."
    }

    async fn call(&self, _: Value, _: &Turn) -> Result<String, Self::Error> {
        self.0.fetch_add(1, Ordering::SeqCst);
        panic!("broke after its work")
    }
}

#[tokio::test]
async fn a_panicking_tool_is_a_recorded_outcome_and_not_run_again() {
    let journal = Memory::default();
    let runs = Arc::new(AtomicUsize::new(0));
    let model = ScriptedModel::new().tool_call("fragile", json!({})).text("It broke.");
    let agent = Agent::builder(&model).tool(Fragile(Arc::clone(&runs))).build();
    let mut first = fresh();
    agent.turn(&mut first, "try").journal(&journal).await.unwrap();
    assert_eq!(journal.names().len(), 4, "{:?}", journal.names());

    let replay = journal.replay(4);
    let agent = Agent::builder(ScriptedModel::new()).tool(Fragile(Arc::clone(&runs))).build();
    let mut again = fresh();
    agent.turn(&mut again, "try").journal(&replay).await.unwrap();
    assert_eq!(again.log(), first.log());
    assert_eq!(runs.load(Ordering::SeqCst), 1, "the panic was replayed, not the tool");
}

/// Counts the commits of a turn: where its steps go beside the journal.
#[derive(Default)]
struct Commits(AtomicUsize);

impl agentix::durable::Commit for Commits {
    async fn commit(&self, _: &Conversation) -> Result<(), agentix::durable::CommitError> {
        self.0.fetch_add(1, Ordering::SeqCst);
        Ok(())
    }
}

#[tokio::test]
async fn an_erased_agent_journals_and_replays_as_a_typed_one() {
    // Recorded by the typed agent...
    let journal = Memory::default();
    let agent = Agent::builder(weather_turn()).tool(Weather::default()).build();
    let mut first = fresh();
    let answer = agent.turn(&mut first, "weather?").journal(&journal).await.unwrap();

    // ...replayed whole by an erased one: the same steps, the same log, nothing run again.
    let replay = journal.replay(4);
    let silent = Arc::new(ScriptedModel::new());
    let weather = Weather::default();
    let calls = weather.calls.clone();
    let boxed = Agent::builder(Arc::clone(&silent)).tool(weather).build().boxed();
    let mut again = fresh();
    let replayed = boxed.turn(&mut again, "weather?").journal(&replay).await.unwrap();
    assert_eq!(replayed, answer);
    assert_eq!(again.log(), first.log());
    assert_eq!((silent.calls(), calls.lock().unwrap().len()), (0, 0), "nothing ran twice");

    // An erased agent's own record, cut short after the tool, replays into a typed agent.
    let erased_journal = Memory::default();
    let boxed = Agent::builder(weather_turn()).tool(Weather::default()).build().boxed();
    let mut erased = fresh();
    boxed.turn(&mut erased, "weather?").journal(&erased_journal).await.unwrap();
    assert_eq!(erased_journal.names(), journal.names());
    let replay = erased_journal.replay(3);
    let model = ScriptedModel::new().text("Sunny in Oslo.");
    let agent = Agent::builder(&model).tool(Weather::default()).build();
    let mut typed = fresh();
    agent.turn(&mut typed, "weather?").journal(&replay).await.unwrap();
    assert_eq!(typed.log(), first.log());
    assert_eq!(model.calls(), 1, "only the call that had not completed");
}

#[tokio::test]
async fn a_journaled_turn_commits_its_steps_whichever_is_asked_first() {
    let mut counts = Vec::new();
    for journal_first in [true, false] {
        let (journal, commits) = (Memory::default(), Commits::default());
        let agent = Agent::builder(weather_turn()).tool(Weather::default()).build();
        let mut conversation = fresh();
        let turn = agent.turn(&mut conversation, "weather?");
        let answer = if journal_first {
            turn.journal(&journal).commit(&commits).await
        } else {
            turn.commit(&commits).journal(&journal).await
        };
        assert_eq!(answer.unwrap().joined_text(), "Sunny in Oslo.");
        assert_eq!(journal.names().len(), 4, "every effect journaled");
        counts.push(commits.0.into_inner());
    }
    // After `pre`, after the tool step, after the answer, at the end: the same either way.
    assert_eq!(counts, [4, 4]);

    // And through an erased agent.
    let (journal, commits) = (Memory::default(), Commits::default());
    let boxed = Agent::builder(weather_turn()).tool(Weather::default()).build().boxed();
    let mut conversation = fresh();
    boxed.turn(&mut conversation, "weather?").commit(&commits).journal(&journal).await.unwrap();
    assert_eq!((journal.names().len(), commits.0.into_inner()), (4, 4));
}
