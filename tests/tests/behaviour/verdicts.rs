//! Every verdict the contract table allows, at every event, does what the table says.

use agentix::event::EventKind::{self, *};
use agentix::{
    Agent, AssistantMessage, Conversation, Entry, Error, Part, ScriptedModel, ToolCall,
    approval::Approval,
    message::{Role, ToolFailure},
    verdict::Escalation,
};
use serde_json::json;
use tests::{Action, Probe, Record, Weather, assert_log_consistent, last_text, tool_results};

fn weather_then(text: &str) -> ScriptedModel {
    ScriptedModel::new().tool_call("get_weather", json!({ "city": "Oslo" })).text(text)
}

fn assistant_texts(conversation: &Conversation) -> Vec<String> {
    conversation
        .log()
        .iter()
        .filter_map(|entry| match entry {
            Entry::Assistant { message, .. } if !message.calls_tools() => {
                Some(message.joined_text().into_owned())
            }
            _ => None,
        })
        .collect()
}

// ---- pre ----

#[tokio::test]
async fn pre_halt_never_reaches_the_model() {
    let model = ScriptedModel::new().text("unreachable");
    let record = Record::new();
    let agent = Agent::builder(&model)
        .hook(Probe::new("gate", &record).on(Pre, Action::Halt("off topic".into())))
        .build();
    let mut conversation = Conversation::new();
    let error = agent.run(&mut conversation, "hi").await.unwrap_err();
    assert_eq!(error, Error::Halted { event: Pre, hook: "gate", reason: "off topic".into() });
    assert_eq!(model.calls(), 0);
    assert!(matches!(
        conversation.log(),
        [Entry::User { .. }, Entry::Halted { event: Pre, hook, reason, .. }] if hook == "gate" && reason == "off topic"
    ));
    assert_eq!(record.count(Post, "gate"), 1, "post runs after a pre halt");
}

#[tokio::test]
async fn pre_injection_follows_the_user_message_with_the_user_role() {
    let model = weather_then("done");
    let record = Record::new();
    let agent = Agent::builder(&model)
        .tool(Weather::default())
        .hook(Probe::new("memory", &record).on(Pre, Action::Edit("user likes rain".into())))
        .build();
    let mut conversation = Conversation::new();
    agent.run(&mut conversation, "weather?").await.unwrap();
    for request in model.requests() {
        let roles: Vec<Role> = request.messages.iter().map(|m| m.role).collect();
        assert_eq!(roles[..2], [Role::User, Role::User]);
        assert_eq!(request.messages[0].text(), "weather?");
        assert_eq!(
            request.messages[1].text(),
            "user likes rain",
            "injection is regenerated for every call"
        );
    }
    assert!(
        conversation.log().iter().all(|entry| !format!("{entry:?}").contains("likes rain")),
        "a transient injection must not reach the log"
    );
}

// ---- before_model ----

#[tokio::test]
async fn before_model_stop_skips_the_call_and_uses_the_message() {
    let model = ScriptedModel::new().text("from the model");
    let record = Record::new();
    let cached = AssistantMessage::text("from the cache");
    let agent = Agent::builder(&model)
        .hook(Probe::new("cache", &record).on(BeforeModel, Action::Stop(cached.clone())))
        .hook(Probe::new("later", &record))
        .build();
    let mut conversation = Conversation::new();
    let reply = agent.run(&mut conversation, "hi").await.unwrap();
    assert_eq!(reply, cached);
    assert_eq!(model.calls(), 0, "STOP skips the model call");
    assert_eq!(record.count(BeforeModel, "later"), 0);
    assert_eq!(
        record.at(AfterModel),
        ["cache", "later"],
        "the stopped message is the step's response"
    );
    assert_eq!(assistant_texts(&conversation), ["from the cache"]);
}

#[tokio::test]
async fn before_model_edits_the_request_the_model_sees() {
    let model = ScriptedModel::new().text("ok");
    let record = Record::new();
    let agent = Agent::builder(&model)
        .system("original")
        .hook(Probe::new("prompt", &record).on(BeforeModel, Action::Edit("edited".into())))
        .build();
    agent.run(&mut Conversation::new(), "hi").await.unwrap();
    assert_eq!(model.requests()[0].system.as_deref(), Some("edited"));
}

#[tokio::test]
async fn before_model_halt_ends_the_turn_before_the_call() {
    let model = ScriptedModel::new().text("unreachable");
    let record = Record::new();
    let agent = Agent::builder(&model)
        .hook(Probe::new("budget", &record).on(BeforeModel, Action::Halt("over budget".into())))
        .build();
    let error = agent.run(&mut Conversation::new(), "hi").await.unwrap_err();
    assert_eq!(
        error,
        Error::Halted { event: BeforeModel, hook: "budget", reason: "over budget".into() }
    );
    assert_eq!(model.calls(), 0);
}

// ---- after_model ----

#[tokio::test]
async fn after_model_retry_shows_feedback_and_keeps_the_rejected_message_out_of_the_log() {
    let model = ScriptedModel::new().text("no plan").text("<plan/> answer");
    let record = Record::new();
    let agent = Agent::builder(&model)
        .hook(Probe::new("plan", &record).on(AfterModel, Action::Retry(Some("add a plan".into()))))
        .build();
    let mut conversation = Conversation::new();
    let reply = agent.run(&mut conversation, "task").await.unwrap();
    assert_eq!(reply.joined_text(), "<plan/> answer");
    let requests = model.requests();
    assert_eq!(requests.len(), 2);
    let retried: Vec<(Role, String)> =
        requests[1].messages.iter().map(|m| (m.role, m.text().into_owned())).collect();
    assert_eq!(
        retried,
        [
            (Role::User, "task".into()),
            (Role::Assistant, "no plan".into()),
            (Role::User, "add a plan".into())
        ]
    );
    assert_eq!(
        assistant_texts(&conversation),
        ["<plan/> answer"],
        "the rejected message is not durable"
    );
    assert_eq!(conversation.log().len(), 2);
}

#[tokio::test]
async fn after_model_silent_retry_asks_the_same_thing_again() {
    let model = ScriptedModel::new().text("first").text("second");
    let record = Record::new();
    let agent = Agent::builder(&model)
        .hook(Probe::new("again", &record).on(AfterModel, Action::Retry(None)))
        .build();
    let reply = agent.run(&mut Conversation::new(), "task").await.unwrap();
    assert_eq!(reply.joined_text(), "second");
    let requests = model.requests();
    assert_eq!(requests[0], requests[1]);
}

#[tokio::test]
async fn after_model_stop_ends_the_turn_without_running_tools() {
    let model = weather_then("unreachable");
    let weather = Weather::default();
    let calls = weather.calls.clone();
    let record = Record::new();
    let agent = Agent::builder(&model)
        .tool(weather)
        .hook(
            Probe::new("enough", &record)
                .on(AfterModel, Action::Stop(AssistantMessage::text("final"))),
        )
        .build();
    let mut conversation = Conversation::new();
    let reply = agent.run(&mut conversation, "weather?").await.unwrap();
    assert_eq!(reply.joined_text(), "final");
    assert!(calls.lock().unwrap().is_empty(), "no tool runs after STOP");
    assert_eq!(model.calls(), 1);
    assert_eq!(
        record.count(BeforeFinal, "enough"),
        1,
        "the stopped message still passes before_final"
    );
    assert_eq!(assistant_texts(&conversation), ["final"]);
}

#[tokio::test]
async fn after_model_stop_with_tool_calls_is_an_error_naming_the_hook() {
    let model = ScriptedModel::new().text("hi");
    let record = Record::new();
    let calling =
        AssistantMessage::default().with_tool_call(ToolCall::new("x", "get_weather", json!({})));
    let agent = Agent::builder(&model)
        .hook(Probe::new("bad", &record).on(AfterModel, Action::Stop(calling)))
        .build();
    let mut conversation = Conversation::new();
    let error = agent.run(&mut conversation, "hi").await.unwrap_err();
    assert_eq!(error, Error::FinalCallsTools { event: AfterModel, hook: "bad" });
    assert_log_consistent(conversation.log());
}

#[tokio::test]
async fn after_model_edit_replaces_the_message() {
    let model = ScriptedModel::new().text("raw");
    let record = Record::new();
    let agent = Agent::builder(&model)
        .hook(Probe::new("polish", &record).on(AfterModel, Action::Edit("polished".into())))
        .build();
    let mut conversation = Conversation::new();
    assert_eq!(agent.run(&mut conversation, "hi").await.unwrap().joined_text(), "polished");
    assert_eq!(assistant_texts(&conversation), ["polished"]);
}

#[tokio::test]
async fn after_model_halt_ends_the_turn() {
    let model = ScriptedModel::new().text("unsafe");
    let record = Record::new();
    let agent = Agent::builder(&model)
        .hook(Probe::new("safety", &record).on(AfterModel, Action::Halt("unsafe output".into())))
        .build();
    let mut conversation = Conversation::new();
    let error = agent.run(&mut conversation, "hi").await.unwrap_err();
    assert_eq!(
        error,
        Error::Halted { event: AfterModel, hook: "safety", reason: "unsafe output".into() }
    );
    assert!(assistant_texts(&conversation).is_empty(), "a halted message is not committed");
}

// ---- before_tool ----

#[tokio::test]
async fn before_tool_reject_answers_the_call_with_the_reason() {
    let model = weather_then("ok");
    let weather = Weather::default();
    let calls = weather.calls.clone();
    let record = Record::new();
    let agent = Agent::builder(&model)
        .tool(weather)
        .hook(
            Probe::new("policy", &record).on(BeforeTool, Action::Reject("no weather today".into())),
        )
        .build();
    let mut conversation = Conversation::new();
    agent.run(&mut conversation, "weather?").await.unwrap();
    assert!(calls.lock().unwrap().is_empty(), "a rejected tool does not run");
    let results = tool_results(&model.requests()[1]);
    assert_eq!(results.len(), 1);
    assert!(results[0].is_error());
    assert_eq!(results[0].output, "call rejected by policy: no weather today");
    assert_eq!(record.count(AfterTool, "policy") + record.count(ToolError, "policy"), 0);
    assert_log_consistent(conversation.log());
}

#[tokio::test]
async fn before_tool_edit_changes_the_call_that_runs() {
    let model = weather_then("ok");
    let weather = Weather::default();
    let calls = weather.calls.clone();
    let record = Record::new();
    let agent = Agent::builder(&model)
        .tool(weather)
        .hook(
            Probe::new("redirect", &record)
                .on(BeforeTool, Action::Edit(r#"{"city":"Bergen"}"#.into())),
        )
        .build();
    let mut conversation = Conversation::new();
    agent.run(&mut conversation, "weather?").await.unwrap();
    assert_eq!(*calls.lock().unwrap(), ["Bergen"]);
    let request = &model.requests()[1];
    let result = &tool_results(request)[0];
    assert_eq!(result.output, "sunny in Bergen");
    assert_eq!(result.call_id, "call_1", "the result answers the model's call id");
    // The log, and so the next request, records the call that ran beside its result.
    let logged: Vec<_> =
        logged_calls(&conversation).into_iter().map(|call| call.arguments).collect();
    assert_eq!(logged, [json!({ "city": "Bergen" })]);
    let sent = request.messages.iter().flat_map(|message| &message.content);
    let sent: Vec<_> = sent
        .filter_map(|part| match part {
            Part::ToolCall(call) => Some(call.arguments.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(sent, [json!({ "city": "Bergen" })]);
    assert_log_consistent(conversation.log());
}

/// Gives each call a new id: the id is the call's, and the hook's to edit.
struct Renumber;

impl agentix::on::BeforeTool for Renumber {
    async fn before_tool(
        &self,
        call: &mut ToolCall,
        _turn: &mut agentix::Turn,
    ) -> agentix::Verdict<agentix::event::BeforeTool> {
        call.id = format!("{}-renumbered", call.id);
        agentix::Verdict::Continue
    }
}

#[tokio::test]
async fn a_before_tool_edit_to_the_id_is_the_id_the_result_answers() {
    let model = weather_then("ok");
    let agent = Agent::builder(&model).tool(Weather::default()).hook(Renumber).build();
    let mut conversation = Conversation::new();
    agent.run(&mut conversation, "weather?").await.unwrap();
    assert_log_consistent(conversation.log());
    let request = &model.requests()[1];
    assert_eq!(tool_results(request)[0].call_id, "call_1-renumbered");
    assert_eq!(logged_calls(&conversation)[0].id, "call_1-renumbered");
}

/// The tool calls of the turn's first step, as the log records them.
fn logged_calls(conversation: &Conversation) -> Vec<ToolCall> {
    let Some(Entry::Assistant { message, .. }) = conversation.log().get(1) else {
        panic!("{:?}", conversation.log())
    };
    message.tool_calls().cloned().collect()
}

async fn escalate_with(
    approver: impl agentix::approval::Approver + 'static,
) -> (Vec<String>, agentix::ToolResult, Conversation) {
    let model = weather_then("ok");
    let weather = Weather::default();
    let calls = weather.calls.clone();
    let record = Record::new();
    let agent = Agent::builder(&model)
        .tool(weather)
        .hook(Probe::new("guard", &record).on(BeforeTool, Action::Escalate("costly".into())))
        .approver(approver)
        .build();
    let mut conversation = Conversation::new();
    agent.run(&mut conversation, "weather?").await.unwrap();
    assert_log_consistent(conversation.log());
    let result = tool_results(&model.requests()[1]).remove(0);
    let calls = calls.lock().unwrap().clone();
    (calls, result, conversation)
}

#[tokio::test]
async fn before_tool_escalate_asks_the_approver() {
    let (calls, result, _) = escalate_with(|_call: ToolCall, escalation: Escalation| async move {
        assert_eq!(escalation.reason, "costly");
        Approval::Approve
    })
    .await;
    assert_eq!(calls, ["Oslo"]);
    assert_eq!(result.output, "sunny in Oslo");

    let (calls, result, _) = escalate_with(|_: ToolCall, _: Escalation| async {
        Approval::Reject("the user said no".into())
    })
    .await;
    assert!(calls.is_empty());
    assert_eq!(
        result.error,
        Some(ToolFailure::Rejected {
            by: "the approver, on escalation by guard".into(),
            reason: "the user said no".into()
        })
    );

    // An edit runs in the call's place, under its id, and the log records it.
    let (calls, result, conversation) = escalate_with(|_: ToolCall, _: Escalation| async move {
        Approval::Edit(ToolCall::new("made_up", "get_weather", json!({ "city": "Tromsø" })))
    })
    .await;
    assert_eq!(calls, ["Tromsø"]);
    assert_eq!(result.output, "sunny in Tromsø");
    assert_eq!(result.call_id, "call_1");
    let logged = logged_calls(&conversation);
    assert_eq!(logged, [ToolCall::new("call_1", "get_weather", json!({ "city": "Tromsø" }))]);
}

#[tokio::test]
async fn before_tool_escalate_without_an_approver_fails_closed() {
    let model = weather_then("ok");
    let weather = Weather::default();
    let calls = weather.calls.clone();
    let record = Record::new();
    let agent = Agent::builder(&model)
        .tool(weather)
        .hook(Probe::new("guard", &record).on(BeforeTool, Action::Escalate("costly".into())))
        .build();
    agent.run(&mut Conversation::new(), "weather?").await.unwrap();
    assert!(
        calls.lock().unwrap().is_empty(),
        "an escalation with no approver must not run the tool"
    );
    let result = &tool_results(&model.requests()[1])[0];
    assert_eq!(
        result.output,
        "call rejected by the approver, on escalation by guard: \
         escalated (costly), and no approver is configured",
        "the model reads who refused and why"
    );
}

#[tokio::test]
async fn before_tool_halt_answers_every_call_and_ends_the_turn() {
    let model = ScriptedModel::new()
        .tool_calls([
            ("get_weather", json!({ "city": "Oslo" })),
            ("get_weather", json!({ "city": "Rome" })),
        ])
        .text("unreachable");
    let record = Record::new();
    let weather = Weather::default();
    let calls = weather.calls.clone();
    let agent = Agent::builder(&model)
        .tool(weather)
        .hook(
            Probe::new("limit", &record)
                .on(BeforeTool, Action::Continue)
                .on(BeforeTool, Action::Halt("one call only".into())),
        )
        .build();
    let mut conversation = Conversation::new();
    let error = agent.run(&mut conversation, "weather?").await.unwrap_err();
    assert_eq!(
        error,
        Error::Halted { event: BeforeTool, hook: "limit", reason: "one call only".into() }
    );
    // The hooks decide every call of a step before any runs: halted at the second, neither
    // ran, and both are answered as not run.
    assert!(calls.lock().unwrap().is_empty());
    assert_log_consistent(conversation.log());
    let Some(Entry::ToolResults { results, .. }) = conversation.log().get(2) else {
        panic!("{:?}", conversation.log())
    };
    assert!(matches!(results[0].error, Some(ToolFailure::NotRun { .. })), "{results:?}");
    assert!(matches!(results[1].error, Some(ToolFailure::NotRun { .. })), "{results:?}");
}

// ---- after_tool ----

#[tokio::test]
async fn after_tool_edit_changes_what_the_model_reads() {
    let model = weather_then("ok");
    let record = Record::new();
    let agent = Agent::builder(&model)
        .tool(Weather::default())
        .hook(Probe::new("units", &record).on(AfterTool, Action::Edit("sunny, 21°C".into())))
        .build();
    agent.run(&mut Conversation::new(), "weather?").await.unwrap();
    assert_eq!(tool_results(&model.requests()[1])[0].output, "sunny, 21°C");
}

#[tokio::test]
async fn after_tool_halt_keeps_the_result_and_ends_the_turn() {
    let model = weather_then("unreachable");
    let record = Record::new();
    let agent = Agent::builder(&model)
        .tool(Weather::default())
        .hook(Probe::new("audit", &record).on(AfterTool, Action::Halt("leak".into())))
        .build();
    let mut conversation = Conversation::new();
    let error = agent.run(&mut conversation, "weather?").await.unwrap_err();
    assert_eq!(error, Error::Halted { event: AfterTool, hook: "audit", reason: "leak".into() });
    assert_eq!(model.calls(), 1);
    assert_log_consistent(conversation.log());
    assert!(
        matches!(&conversation.log()[2], Entry::ToolResults { results, .. } if results[0].output == "sunny in Oslo")
    );
}

// ---- tool_error ----

#[tokio::test]
async fn tool_error_receives_unknown_tools_and_invalid_arguments() {
    let model = ScriptedModel::new()
        .tool_calls([("no_such_tool", json!({})), ("get_weather", json!({ "town": 3 }))])
        .text("ok");
    let record = Record::new();
    let agent =
        Agent::builder(&model).tool(Weather::default()).hook(Probe::new("errors", &record)).build();
    agent.run(&mut Conversation::new(), "weather?").await.unwrap();
    assert_eq!(record.count(ToolError, "errors"), 2);
    assert_eq!(record.count(AfterTool, "errors"), 0);
    let results = tool_results(&model.requests()[1]);
    assert_eq!(
        results[0].error,
        Some(ToolFailure::UnknownTool { available: vec!["get_weather".into()] })
    );
    assert_eq!(results[0].output, "unknown tool; available tools: get_weather");
    assert!(
        matches!(&results[1].error, Some(ToolFailure::InvalidArguments { message }) if message.contains("missing field `city`"))
    );
}

#[tokio::test]
async fn tool_error_recovers_the_result() {
    let model = ScriptedModel::new().tool_call("no_such_tool", json!({})).text("ok");
    let record = Record::new();
    let agent = Agent::builder(&model)
        .hook(
            Probe::new("fallback", &record).on(ToolError, Action::Recover("default answer".into())),
        )
        .build();
    let mut conversation = Conversation::new();
    agent.run(&mut conversation, "x").await.unwrap();
    let result = &tool_results(&model.requests()[1])[0];
    assert_eq!(result.output, "default answer");
    assert!(!result.is_error());
}

#[tokio::test]
async fn tool_error_halt_ends_the_turn() {
    let model = ScriptedModel::new().tool_call("no_such_tool", json!({})).text("unreachable");
    let record = Record::new();
    let agent = Agent::builder(&model)
        .hook(Probe::new("strict", &record).on(ToolError, Action::Halt("tools must work".into())))
        .build();
    let mut conversation = Conversation::new();
    let error = agent.run(&mut conversation, "x").await.unwrap_err();
    assert_eq!(
        error,
        Error::Halted { event: ToolError, hook: "strict", reason: "tools must work".into() }
    );
    assert_log_consistent(conversation.log());
}

// ---- before_final ----

#[tokio::test]
async fn before_final_retry_goes_back_to_the_model() {
    let model = ScriptedModel::new().text("draft").text("better");
    let record = Record::new();
    let agent = Agent::builder(&model)
        .hook(
            Probe::new("critic", &record).on(BeforeFinal, Action::Retry(Some("too short".into()))),
        )
        .build();
    let mut conversation = Conversation::new();
    let reply = agent.run(&mut conversation, "essay").await.unwrap();
    assert_eq!(reply.joined_text(), "better");
    assert_eq!(last_text(&model.requests()[1]), "too short");
    assert_eq!(assistant_texts(&conversation), ["better"]);
    assert_eq!(record.count(AfterModel, "critic"), 2, "the retried call passes after_model again");
}

#[tokio::test]
async fn before_final_stop_replaces_the_answer() {
    let model = ScriptedModel::new().text("draft");
    let record = Record::new();
    let agent = Agent::builder(&model)
        .hook(
            Probe::new("canned", &record)
                .on(BeforeFinal, Action::Stop(AssistantMessage::text("canned"))),
        )
        .hook(Probe::new("later", &record))
        .build();
    let mut conversation = Conversation::new();
    assert_eq!(agent.run(&mut conversation, "x").await.unwrap().joined_text(), "canned");
    assert_eq!(record.count(BeforeFinal, "later"), 0);
    assert_eq!(assistant_texts(&conversation), ["canned"]);
}

#[tokio::test]
async fn before_final_edit_and_halt() {
    let model = ScriptedModel::new().text("draft").text("draft");
    let record = Record::new();
    let agent = Agent::builder(&model)
        .hook(
            Probe::new("final", &record)
                .on(BeforeFinal, Action::Edit("signed".into()))
                .on(BeforeFinal, Action::Halt("no second answer".into())),
        )
        .build();
    let mut conversation = Conversation::new();
    assert_eq!(agent.run(&mut conversation, "x").await.unwrap().joined_text(), "signed");
    let error = agent.run(&mut conversation, "y").await.unwrap_err();
    assert_eq!(
        error,
        Error::Halted { event: BeforeFinal, hook: "final", reason: "no second answer".into() }
    );
    assert_eq!(assistant_texts(&conversation), ["signed"]);
}

// ---- post ----

#[tokio::test]
async fn post_sees_the_outcome_and_its_halt_ends_a_completed_turn() {
    let model = ScriptedModel::new().text("answer");
    let record = Record::new();
    let probe = Probe::new("persist", &record).on(Post, Action::Halt("disk full".into()));
    let outcomes = probe.outcomes();
    let agent = Agent::builder(&model).hook(probe).build();
    let mut conversation = Conversation::new();
    let error = agent.run(&mut conversation, "x").await.unwrap_err();
    assert_eq!(error, Error::Halted { event: Post, hook: "persist", reason: "disk full".into() });
    assert_eq!(outcomes.lock().unwrap()[0].as_ref().unwrap().joined_text(), "answer");
    assert_eq!(assistant_texts(&conversation), ["answer"], "the answer was committed before post");
    assert!(matches!(
        conversation.log().last(),
        Some(Entry::Halted { event: EventKind::Post, .. })
    ));
}

#[tokio::test]
async fn a_retried_message_that_called_tools_is_replayed_without_its_calls() {
    let model = weather_then("plain answer");
    let weather = Weather::default();
    let calls = weather.calls.clone();
    let record = Record::new();
    let agent = Agent::builder(&model)
        .tool(weather)
        .hook(
            Probe::new("no_tools", &record)
                .on(AfterModel, Action::Retry(Some("answer directly".into()))),
        )
        .build();
    let mut conversation = Conversation::new();
    assert_eq!(
        agent.run(&mut conversation, "weather?").await.unwrap().joined_text(),
        "plain answer"
    );
    assert!(calls.lock().unwrap().is_empty(), "a rejected message's tool calls never run");
    let retried = &model.requests()[1];
    assert!(tool_results(retried).is_empty());
    assert!(
        retried
            .messages
            .iter()
            .all(|m| !m.content.iter().any(|p| matches!(p, agentix::Part::ToolCall(_)))),
        "no unanswered tool call is replayed: {retried:?}"
    );
    assert_eq!(last_text(retried), "answer directly");
    assert_log_consistent(conversation.log());
}

/// Rewrites the call id and the tool name of every result, as a careless hook might.
struct Renamer;

impl agentix::on::AfterTool for Renamer {
    async fn after_tool(
        &self,
        result: &mut agentix::ToolResult,
        _: &mut agentix::Turn,
    ) -> agentix::Verdict<AfterToolEvent> {
        result.call_id = "forged".into();
        result.name = "forged".into();
        agentix::Verdict::Continue
    }
}

use agentix::event::{AfterTool as AfterToolEvent, BeforeFinal as BeforeFinalEvent};

#[tokio::test]
async fn a_hook_cannot_unpair_a_result_from_its_call() {
    let model = weather_then("ok");
    let agent = Agent::builder(&model).tool(Weather::default()).hook(Renamer).build();
    let mut conversation = Conversation::new();
    agent.run(&mut conversation, "weather?").await.unwrap();
    assert_log_consistent(conversation.log());
    let result = &tool_results(&model.requests()[1])[0];
    assert_eq!((result.call_id.as_str(), result.name.as_str()), ("call_1", "get_weather"));
}

/// Edits a tool call into the final answer.
struct SneakTool;

impl agentix::on::BeforeFinal for SneakTool {
    async fn before_final(
        &self,
        message: &mut AssistantMessage,
        _: &mut agentix::Turn,
    ) -> agentix::Verdict<BeforeFinalEvent> {
        *message = message.clone().with_tool_call(ToolCall::new(
            "x",
            "get_weather",
            json!({ "city": "Oslo" }),
        ));
        agentix::Verdict::Continue
    }
}

#[tokio::test]
async fn a_final_answer_edited_to_call_tools_fails_naming_the_hook() {
    let model = ScriptedModel::new().text("answer");
    let agent = Agent::builder(&model).tool(Weather::default()).hook(SneakTool).build();
    let mut conversation = Conversation::new();
    let error = agent.run(&mut conversation, "x").await.unwrap_err();
    assert_eq!(
        error,
        Error::HookFailed {
            event: BeforeFinal,
            hook: "SneakTool",
            message: "it left tool calls in the final answer, which cannot call tools".into()
        }
    );
    assert_log_consistent(conversation.log());
    assert!(assistant_texts(&conversation).is_empty());
}
