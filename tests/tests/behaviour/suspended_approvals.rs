//! Approvals that wait for a person: an approver that answers `Suspend` stops the turn at the
//! escalated call, the log keeps the step as it stood, and `resume` goes on from there with the
//! person's answer — the calls before it not run again, the model not called again for it.

use std::sync::{Arc, Mutex};

use agentix::event::{BeforeModel, BeforeTool, Post};
use agentix::{
    Agent, Conversation, Entry, Error, Outcome, ScriptedModel, StreamEvent, ToolCall, Turn,
    Verdict, approval::Approval, message::ToolFailure,
};
use futures::StreamExt;
use serde_json::json;
use tests::{Weather, assert_log_consistent, tool_results};

/// Escalates the calls for the cities it names.
struct AskFor(&'static [&'static str]);

impl agentix::on::BeforeTool for AskFor {
    async fn before_tool(&self, call: &mut ToolCall, _: &mut Turn) -> Verdict<BeforeTool> {
        let city = call.arguments["city"].as_str().unwrap_or_default();
        if self.0.contains(&city) {
            Verdict::escalate(format!("{city} is far"))
        } else {
            Verdict::Continue
        }
    }
}

/// Counts `post` (it runs once per turn, when the turn ends) and keeps each model call's step.
#[derive(Clone, Default)]
struct Meter {
    posts: Arc<Mutex<Vec<Outcome>>>,
    steps: Arc<Mutex<Vec<u32>>>,
}

impl agentix::on::Post for Meter {
    async fn post(&self, outcome: &Outcome, _: &mut Turn) -> Verdict<Post> {
        self.posts.lock().unwrap().push(outcome.clone());
        Verdict::Continue
    }
}

impl agentix::on::BeforeModel for Meter {
    async fn before_model(
        &self,
        _: &mut agentix::model::ModelRequest,
        turn: &mut Turn,
    ) -> Verdict<BeforeModel> {
        self.steps.lock().unwrap().push(turn.step());
        Verdict::Continue
    }
}

/// A step calling the weather for three cities, then the answer.
fn three_cities() -> ScriptedModel {
    ScriptedModel::new()
        .tool_calls([
            ("get_weather", json!({ "city": "Oslo" })),
            ("get_weather", json!({ "city": "Tromsø" })),
            ("get_weather", json!({ "city": "Bergen" })),
        ])
        .text("Sunny everywhere.")
}

struct Setup {
    model: ScriptedModel,
    weather: Arc<Mutex<Vec<String>>>,
    meter: Meter,
}

fn setup() -> Setup {
    Setup { model: three_cities(), weather: Arc::default(), meter: Meter::default() }
}

macro_rules! agent {
    ($setup:expr, $far:expr) => {
        Agent::builder(&$setup.model)
            .tool(Weather { calls: $setup.weather.clone() })
            .hook(AskFor($far))
            .hook::<_, BeforeModel, _>($setup.meter.clone())
            .hook::<_, Post, _>($setup.meter.clone())
            .approver(|_: ToolCall, _| async { Approval::Suspend })
            .build()
    };
}

fn waiting_on(outcome: &Outcome) -> (String, String, String) {
    match outcome {
        Err(Error::AwaitingApproval { pending, .. }) => {
            (pending.call.name.clone(), pending.call.arguments.to_string(), pending.reason.clone())
        }
        other => panic!("a turn waiting for approval, not {other:?}"),
    }
}

fn cities(calls: &Arc<Mutex<Vec<String>>>) -> Vec<String> {
    calls.lock().unwrap().clone()
}

#[tokio::test]
async fn a_suspended_call_waits_and_resumes_where_it_stopped() {
    let setup = setup();
    let agent = agent!(setup, &["Tromsø"]);
    let mut conversation = Conversation::new();

    let outcome = agent.run(&mut conversation, "weather?").await;
    assert_eq!(
        waiting_on(&outcome),
        ("get_weather".into(), json!({ "city": "Tromsø" }).to_string(), "Tromsø is far".into())
    );
    assert_eq!(
        outcome.as_ref().unwrap_err().to_string(),
        "turn 1 waits for approval of the call `get_weather` (call_2), escalated by \
         `AskFor`: Tromsø is far"
    );
    // The calls beside it ran; the model was called once.
    assert_eq!(cities(&setup.weather), ["Oslo", "Bergen"]);
    assert_eq!(setup.model.calls(), 1);
    assert!(setup.meter.posts.lock().unwrap().is_empty(), "the turn has not ended: no post");
    let (turn, pending) = conversation.pending_approval().expect("the conversation waits");
    assert_eq!((turn.0, pending.call.id.as_str()), (1, "call_2"));
    let Some(Entry::Suspended { suspension, .. }) = conversation.log().last() else {
        panic!("{:#?}", conversation.log())
    };
    let kept: Vec<(&str, &str)> = suspension
        .results
        .iter()
        .map(|result| (result.call_id.as_str(), result.output.as_str()))
        .collect();
    assert_eq!(kept, [("call_1", "sunny in Oslo"), ("call_3", "sunny in Bergen")]);
    conversation.validate().unwrap();

    let reply = agent.resume(&mut conversation, Approval::Approve).await.unwrap();
    assert_eq!(reply.joined_text(), "Sunny everywhere.");
    assert_eq!(cities(&setup.weather), ["Oslo", "Bergen", "Tromsø"], "each city once");
    assert_eq!(setup.model.calls(), 2, "no model call made twice");
    assert_eq!(*setup.meter.steps.lock().unwrap(), [0, 1], "the resumed turn counts on");
    let posts = setup.meter.posts.lock().unwrap().clone();
    assert_eq!(posts, [Ok(reply)], "post runs once, when the turn ends");

    let log = conversation.log();
    let kinds: Vec<&str> = log.iter().map(kind).collect();
    assert_eq!(kinds, ["user", "suspended", "resumed", "assistant", "results", "assistant"]);
    assert!(log.iter().all(|entry| entry.turn().0 == 1));
    assert_log_consistent(log);
    conversation.validate().unwrap();
    // The model saw the step whole, every result in call order.
    let results = tool_results(&setup.model.requests()[1]);
    let outputs: Vec<&str> = results.iter().map(|result| result.output.as_str()).collect();
    assert_eq!(outputs, ["sunny in Oslo", "sunny in Tromsø", "sunny in Bergen"]);
    assert!(conversation.pending_approval().is_none());
}

#[tokio::test]
async fn a_rejected_call_is_answered_with_the_reason_and_the_rest_run() {
    let setup = setup();
    let agent = agent!(setup, &["Tromsø"]);
    let mut conversation = Conversation::new();
    let _ = agent.run(&mut conversation, "weather?").await;
    let reply = agent.resume(&mut conversation, Approval::Reject("too far".into())).await;
    assert_eq!(reply.unwrap().joined_text(), "Sunny everywhere.");
    assert_eq!(cities(&setup.weather), ["Oslo", "Bergen"]);
    let results = tool_results(&setup.model.requests()[1]);
    assert_eq!(
        results[1].error,
        Some(ToolFailure::Rejected {
            by: "the approver, on escalation by AskFor".into(),
            reason: "too far".into(),
        })
    );
    assert_log_consistent(conversation.log());
}

#[tokio::test]
async fn an_edited_call_runs_in_its_place_and_the_log_records_it() {
    let setup = setup();
    let agent = agent!(setup, &["Tromsø"]);
    let mut conversation = Conversation::new();
    let _ = agent.run(&mut conversation, "weather?").await;
    let edit = ToolCall::new("ignored", "get_weather", json!({ "city": "Narvik" }));
    agent.resume(&mut conversation, Approval::Edit(edit)).await.unwrap();
    assert_eq!(cities(&setup.weather), ["Oslo", "Bergen", "Narvik"]);
    let Some(Entry::Assistant { message, .. }) = conversation.log().get(3) else {
        panic!("{:#?}", conversation.log())
    };
    let logged: Vec<&ToolCall> = message.tool_calls().collect();
    assert_eq!(
        (logged[1].id.as_str(), &logged[1].arguments),
        ("call_2", &json!({ "city": "Narvik" }))
    );
    let Some(Entry::Resumed { approval, .. }) = conversation.log().get(2) else { panic!() };
    assert!(matches!(**approval, Approval::Edit(_)));
    assert_log_consistent(conversation.log());
}

#[tokio::test]
async fn the_log_records_who_answered_and_keeps_it_through_serde() {
    let setup = setup();
    let agent = agent!(setup, &["Tromsø"]);
    let mut conversation = Conversation::new();
    let _ = agent.run(&mut conversation, "weather?").await;
    let answer = Approval::Reject("too far".into()).by("alice");
    agent.resume(&mut conversation, answer).await.unwrap();
    let Some(Entry::Resumed { approval, by, .. }) = conversation.log().get(2) else {
        panic!("{:#?}", conversation.log())
    };
    assert_eq!((&**approval, by.as_deref()), (&Approval::Reject("too far".into()), Some("alice")));
    let stored = serde_json::to_value(&conversation).unwrap();
    assert_eq!(stored["log"][2]["by"], "alice");
    let revived: Conversation = serde_json::from_value(stored).unwrap();
    assert_eq!(revived.log(), conversation.log());

    // An answer from nobody named leaves no `by`: a log written before answers had one reads
    // the same.
    let again = self::setup();
    let agent = agent!(again, &["Tromsø"]);
    let mut unnamed = Conversation::new();
    let _ = agent.run(&mut unnamed, "weather?").await;
    agent.resume(&mut unnamed, Approval::Approve).await.unwrap();
    let stored = serde_json::to_value(&unnamed).unwrap();
    assert!(stored["log"][2].get("by").is_none(), "{}", stored["log"][2]);
    assert!(matches!(unnamed.log().get(2), Some(Entry::Resumed { by: None, .. })));
}

#[tokio::test]
async fn a_step_can_wait_twice() {
    let setup = setup();
    let agent = agent!(setup, &["Tromsø", "Bergen"]);
    let mut conversation = Conversation::new();
    assert_eq!(waiting_on(&agent.run(&mut conversation, "weather?").await).2, "Tromsø is far");
    let second = agent.resume(&mut conversation, Approval::Approve).await;
    assert_eq!(waiting_on(&second).2, "Bergen is far");
    assert_eq!(cities(&setup.weather), ["Oslo", "Tromsø"]);
    assert_eq!(setup.model.calls(), 1);
    agent.resume(&mut conversation, Approval::Approve).await.unwrap();
    assert_eq!(cities(&setup.weather), ["Oslo", "Tromsø", "Bergen"]);
    assert_eq!(setup.model.calls(), 2);
    let kinds: Vec<&str> = conversation.log().iter().map(kind).collect();
    assert_eq!(
        kinds,
        [
            "user",
            "suspended",
            "resumed",
            "suspended",
            "resumed",
            "assistant",
            "results",
            "assistant"
        ]
    );
    assert_eq!(setup.meter.posts.lock().unwrap().len(), 1);
    conversation.validate().unwrap();
}

#[tokio::test]
async fn a_waiting_conversation_opens_no_turn_and_resume_needs_something_to_resume() {
    let setup = setup();
    let agent = agent!(setup, &["Tromsø"]);
    let mut conversation = Conversation::new();

    let nothing = agent.resume(&mut conversation, Approval::Approve).await;
    assert!(matches!(nothing, Err(Error::CannotResume { .. })), "{nothing:?}");
    assert!(conversation.log().is_empty());

    let _ = agent.run(&mut conversation, "weather?").await;
    let before = conversation.log().to_vec();
    let refused = agent.run(&mut conversation, "and tomorrow?").await;
    assert_eq!(waiting_on(&refused).2, "Tromsø is far");
    let again = agent.resume(&mut conversation, Approval::Suspend).await;
    assert!(matches!(again, Err(Error::CannotResume { .. })), "{again:?}");
    assert_eq!(conversation.log(), before, "nothing written");
    assert_eq!(setup.model.calls(), 1);
}

#[tokio::test]
async fn a_waiting_conversation_survives_serde_and_resumes_on_another_agent() {
    let setup = setup();
    let mut conversation = Conversation::new();
    let _ = agent!(setup, &["Tromsø"]).run(&mut conversation, "weather?").await;
    let stored = serde_json::to_string(&conversation).unwrap();
    drop(conversation);

    // Another process: a new agent, the same script from where the first left it.
    let later = Setup {
        model: ScriptedModel::new().text("Sunny everywhere."),
        weather: Arc::default(),
        meter: Meter::default(),
    };
    let mut revived: Conversation = serde_json::from_str(&stored).unwrap();
    let agent = agent!(later, &["Tromsø"]);
    agent.resume(&mut revived, Approval::Approve).await.unwrap();
    assert_eq!(cities(&later.weather), ["Tromsø"], "Oslo and Bergen ran before, not again");
    assert_eq!(later.model.calls(), 1);
    let outputs: Vec<String> =
        tool_results(&later.model.requests()[0]).into_iter().map(|result| result.output).collect();
    assert_eq!(outputs, ["sunny in Oslo", "sunny in Tromsø", "sunny in Bergen"]);
}

#[tokio::test]
async fn streamed_the_suspension_and_the_resumption_finish_their_streams() {
    let setup = setup();
    let agent = agent!(setup, &["Tromsø"]);
    let mut conversation = Conversation::new();
    let events: Vec<StreamEvent> =
        agent.turn(&mut conversation, "weather?").stream().collect().await;
    let Some(StreamEvent::Finished(outcome)) = events.last() else { panic!("{events:?}") };
    assert_eq!(waiting_on(outcome).2, "Tromsø is far");
    let events: Vec<StreamEvent> =
        agent.resume(&mut conversation, Approval::Approve).stream().collect().await;
    let Some(StreamEvent::Finished(Ok(reply))) = events.last() else { panic!("{events:?}") };
    assert_eq!(reply.joined_text(), "Sunny everywhere.");
    assert_eq!(setup.model.calls(), 2);
}

#[tokio::test]
async fn a_resumed_turn_is_bounded_by_the_steps_it_had_taken() {
    let setup = setup();
    let agent = agent!(setup, &["Tromsø"]);
    let mut conversation = Conversation::new();
    conversation.config_mut().max_steps = 1;
    let _ = agent.run(&mut conversation, "weather?").await;
    let outcome = agent.resume(&mut conversation, Approval::Approve).await;
    assert_eq!(outcome, Err(Error::StepLimit { limit: 1 }));
    assert_eq!(setup.model.calls(), 1);
    assert_log_consistent(conversation.log());
    assert_eq!(setup.meter.posts.lock().unwrap().len(), 1);
}

#[tokio::test]
async fn logs_that_misplace_a_suspension_do_not_load() {
    let setup = setup();
    let mut conversation = Conversation::new();
    let _ = agent!(setup, &["Tromsø"]).run(&mut conversation, "weather?").await;
    let log = conversation.log().to_vec();
    let problem = |log: Vec<Entry>| {
        Conversation::from_parts(
            agentix::Config::default(),
            log,
            1,
            agentix::scope::Scope::default(),
        )
        .unwrap_err()
    };

    // Something other than its resumption after a suspended step.
    let mut broken = log.clone();
    broken.push(Entry::Failed { turn: agentix::conversation::TurnRef(1), error: "lost".into() });
    let error = problem(broken);
    assert_eq!(
        (error.index, error.to_string().as_str()),
        (2, "log entry 2: turn 1 was suspended by the entry before, and this does not resume it")
    );

    // A resumption with nothing suspended before it.
    let mut broken = log[..1].to_vec();
    broken.push(Entry::Resumed {
        turn: agentix::conversation::TurnRef(1),
        approval: Box::new(Approval::Approve),
        by: None,
    });
    assert_eq!(problem(broken).index, 1);

    // A suspension that waits on a call already answered.
    let mut broken = log.clone();
    let Entry::Suspended { suspension, .. } = &mut broken[1] else { panic!() };
    suspension.pending.call.id = "call_1".into();
    let error = problem(broken);
    assert_eq!(
        error.to_string(),
        "log entry 1: the suspended step waits on the call `call_1`, which is not one of its \
         unanswered calls (the first is `call_2`)"
    );
}

#[tokio::test]
async fn in_a_session_a_suspension_rejects_the_call() {
    let setup = setup();
    let agent = agent!(setup, &["Tromsø"]);
    let mut session = agentix::session::Session::builder(&agent).build();
    session.enqueue(agentix::session::Task::new("weather?")).unwrap();
    let reports = session.run().await.unwrap();
    assert_eq!(reports.len(), 1);
    assert_eq!(cities(&setup.weather), ["Oslo", "Bergen"]);
    let results = tool_results(&setup.model.requests()[1]);
    let Some(ToolFailure::Rejected { reason, .. }) = &results[1].error else { panic!() };
    assert!(reason.contains("a session's task cannot wait across runs"), "{reason}");
}

fn kind(entry: &Entry) -> &'static str {
    match entry {
        Entry::User { .. } => "user",
        Entry::Assistant { .. } => "assistant",
        Entry::ToolResults { .. } => "results",
        Entry::Suspended { .. } => "suspended",
        Entry::Resumed { .. } => "resumed",
        _ => "other",
    }
}

/// Injects a transient note at `pre`: it lives only in this turn's requests.
struct Note;

impl agentix::on::Pre for Note {
    async fn pre(&self, turn: &mut Turn) -> Verdict<agentix::event::Pre> {
        turn.inject("a note for this turn only");
        Verdict::Continue
    }
}

#[tokio::test]
async fn a_turn_suspended_in_a_later_step_resumes_with_its_counters_and_injections() {
    // Step 0 looks up Oslo; step 1 asks for Tromsø, which waits; then the answer.
    let model = ScriptedModel::new()
        .tool_call("get_weather", json!({ "city": "Oslo" }))
        .tool_call("get_weather", json!({ "city": "Tromsø" }))
        .text("Both sunny.");
    let meter = Meter::default();
    let agent = Agent::builder(&model)
        .tool(Weather::default())
        .hook(AskFor(&["Tromsø"]))
        .hook(Note)
        .hook::<_, BeforeModel, _>(meter.clone())
        .approver(|_: ToolCall, _| async { Approval::Suspend })
        .build();
    let mut conversation = Conversation::new();
    let _ = agent.run(&mut conversation, "weather?").await;
    let stored = serde_json::to_string(&conversation).unwrap();
    let mut revived: Conversation = serde_json::from_str(&stored).unwrap();
    let reply = agent.resume(&mut revived, Approval::Approve).await.unwrap();
    assert_eq!(reply.joined_text(), "Both sunny.");
    assert_eq!(*meter.steps.lock().unwrap(), [0, 1, 2], "the resumed turn's next step is 2");
    let last = model.requests().pop().unwrap();
    let texts: Vec<String> =
        last.messages.iter().map(|message| message.text().into_owned()).collect();
    assert!(texts.iter().any(|text| text.contains("a note for this turn only")), "{texts:#?}");

    // The same, bounded at two steps: the resumed step is the turn's second, its last.
    let model = ScriptedModel::new()
        .tool_call("get_weather", json!({ "city": "Oslo" }))
        .tool_call("get_weather", json!({ "city": "Tromsø" }))
        .text("unreachable");
    let agent = Agent::builder(&model)
        .tool(Weather::default())
        .hook(AskFor(&["Tromsø"]))
        .approver(|_: ToolCall, _| async { Approval::Suspend })
        .build();
    let mut conversation = Conversation::new();
    conversation.config_mut().max_steps = 2;
    let _ = agent.run(&mut conversation, "weather?").await;
    let outcome = agent.resume(&mut conversation, Approval::Approve).await;
    assert_eq!(outcome, Err(Error::StepLimit { limit: 2 }));
    assert_eq!(model.calls(), 2);
}

#[tokio::test]
async fn streams_refused_before_the_turn_opens_still_finish() {
    let setup = setup();
    let agent = agent!(setup, &["Tromsø"]);
    let mut conversation = Conversation::new();
    let nothing: Vec<StreamEvent> =
        agent.resume(&mut conversation, Approval::Approve).stream().collect().await;
    assert!(
        matches!(nothing.as_slice(), [StreamEvent::Finished(Err(Error::CannotResume { .. }))]),
        "{nothing:?}"
    );
    let _ = agent.run(&mut conversation, "weather?").await;
    let refused: Vec<StreamEvent> = agent.turn(&mut conversation, "again").stream().collect().await;
    assert!(
        matches!(refused.as_slice(), [StreamEvent::Finished(Err(Error::AwaitingApproval { .. }))]),
        "{refused:?}"
    );
}

/// Commits nowhere, recording how long the log was at each commit; the commit of a log that
/// ends suspended never returns when `hang` is set.
#[derive(Default)]
struct Recording {
    lengths: Mutex<Vec<usize>>,
    hang: bool,
}

impl agentix::durable::Commit for Recording {
    async fn commit(
        &self,
        conversation: &Conversation,
    ) -> Result<(), agentix::durable::CommitError> {
        // A commit takes time, as a database's does: the run is pending meanwhile.
        tokio::task::yield_now().await;
        self.lengths.lock().unwrap().push(conversation.log().len());
        if self.hang && conversation.pending_approval().is_some() {
            std::future::pending::<()>().await;
        }
        Ok(())
    }
}

#[tokio::test]
async fn a_streamed_suspension_finishes_after_its_commit() {
    let setup = setup();
    let agent = agent!(setup, &["Tromsø"]);
    let mut conversation = Conversation::new();
    let committer = Recording::default();
    let mut stream =
        std::pin::pin!(agent.turn(&mut conversation, "weather?").commit(&committer).stream());
    while let Some(event) = stream.next().await {
        if let StreamEvent::Finished(outcome) = event {
            assert_eq!(waiting_on(&outcome).2, "Tromsø is far");
            // The suspended step is committed before the stream says the run ended.
            assert_eq!(committer.lengths.lock().unwrap().last(), Some(&2));
            break;
        }
    }
}

#[tokio::test]
async fn a_run_dropped_while_its_suspension_commits_leaves_the_log_suspended() {
    let setup = setup();
    let agent = agent!(setup, &["Tromsø"]);
    let mut conversation = Conversation::new();
    let committer = Recording { hang: true, ..Recording::default() };
    let run = agent.turn(&mut conversation, "weather?").commit(&committer);
    let cut = tokio::time::timeout(std::time::Duration::from_millis(50), run).await;
    assert!(cut.is_err(), "the commit hangs: the run is dropped");
    conversation.validate().unwrap();
    assert!(conversation.pending_approval().is_some(), "{:#?}", conversation.log());
    agent.resume(&mut conversation, Approval::Approve).await.unwrap();
}

#[tokio::test]
async fn a_resumption_must_be_followed_by_its_step_and_the_waiting_call_must_be_the_messages() {
    let setup = setup();
    let mut conversation = Conversation::new();
    let agent = agent!(setup, &["Tromsø"]);
    let _ = agent.run(&mut conversation, "weather?").await;
    let log = conversation.log().to_vec();
    let problem = |log: Vec<Entry>| {
        Conversation::from_parts(
            agentix::Config::default(),
            log,
            1,
            agentix::scope::Scope::default(),
        )
        .unwrap_err()
        .to_string()
    };
    let mut ends_resumed = log.clone();
    ends_resumed.push(Entry::Resumed {
        turn: agentix::conversation::TurnRef(1),
        approval: Box::new(Approval::Approve),
        by: None,
    });
    assert_eq!(
        problem(ends_resumed),
        "log entry 2: turn 1 was resumed by the entry before, and this is not the step it resumed"
    );
    let mut differs = log.clone();
    let Entry::Suspended { suspension, .. } = &mut differs[1] else { panic!() };
    suspension.pending.call.arguments = json!({ "city": "Oslo" });
    assert_eq!(
        problem(differs),
        "log entry 1: the suspended step's waiting call `call_2` differs from the call its message holds"
    );
}

#[tokio::test]
async fn a_boxed_agent_suspends_and_resumes() {
    let setup = setup();
    let agent = Agent::builder(three_cities())
        .tool(Weather { calls: setup.weather.clone() })
        .hook(AskFor(&["Tromsø"]))
        .approver(|_: ToolCall, _| async { Approval::Suspend })
        .build()
        .boxed();
    let mut conversation = Conversation::new();
    let committer = Recording::default();
    let outcome = agent.turn(&mut conversation, "weather?").commit(&committer).await;
    assert_eq!(waiting_on(&outcome).2, "Tromsø is far");
    assert_eq!(committer.lengths.lock().unwrap().last(), Some(&2), "the suspension committed");
    let reply = agent.resume(&mut conversation, Approval::Approve).commit(&committer).await;
    assert_eq!(reply.unwrap().joined_text(), "Sunny everywhere.");
    assert_eq!(committer.lengths.lock().unwrap().last(), Some(&6));
    assert_eq!(cities(&setup.weather), ["Oslo", "Bergen", "Tromsø"]);
}
