//! Hooks of one event run in declaration order, on every event; the first verdict other than
//! continue ends that event's chain.

use agentix::event::EventKind::{self, *};
use agentix::{Agent, Conversation, Error, ScriptedModel};
use tests::{Action, EVERY_EVENT_FIRED, Probe, Record, Weather, every_event_model};

fn model() -> ScriptedModel {
    every_event_model("done")
}

#[tokio::test]
async fn hooks_of_every_event_run_in_declaration_order() {
    let record = Record::new();
    let agent = Agent::builder(model())
        .tool(Weather::default())
        .hook(Probe::new("a", &record))
        .hook(Probe::new("b", &record))
        .hook(Probe::new("c", &record))
        .build();
    let reply = agent.run(&mut Conversation::new(), "weather?").await.unwrap();
    assert_eq!(reply.joined_text(), "done");

    for event in [Pre, BeforeModel, AfterModel, BeforeTool, AfterTool, ToolError, BeforeFinal, Post]
    {
        let calls = record.at(event);
        assert!(!calls.is_empty(), "{event} did not fire");
        for chunk in calls.chunks(3) {
            assert_eq!(chunk, ["a", "b", "c"], "{event} ran out of declaration order");
        }
    }
    // `events` reads a run of one event as one: the step's two `before_tool`s are one run.
    let mut fired = EVERY_EVENT_FIRED.to_vec();
    fired.dedup();
    assert_eq!(record.events(), fired, "events fired out of lifecycle order");
}

/// For each event, `b` halts: `c` never runs at that event, `a` always does.
#[tokio::test]
async fn first_non_continue_verdict_ends_the_chain() {
    for event in [Pre, BeforeModel, AfterModel, BeforeTool, AfterTool, ToolError, BeforeFinal, Post]
    {
        let record = Record::new();
        let agent = Agent::builder(model())
            .tool(Weather::default())
            .hook(Probe::new("a", &record))
            .hook(Probe::new("b", &record).on(event, Action::Halt("enough".into())))
            .hook(Probe::new("c", &record))
            .build();
        let error = agent.run(&mut Conversation::new(), "weather?").await.unwrap_err();
        assert_eq!(error, Error::Halted { event, hook: "b", reason: "enough".into() });
        assert_eq!(record.at(event)[..2], ["a", "b"], "{event}");
        assert_eq!(record.count(event, "c"), 0, "c ran at {event} after b halted");
    }
}

#[tokio::test]
async fn observer_sees_every_event_and_each_decision_in_order() {
    use agentix::observe::{Decision, Observation};
    use std::sync::Mutex;

    let record = Record::new();
    let agent = Agent::builder(model())
        .tool(Weather::default())
        .hook(Probe::new("a", &record))
        .hook(Probe::new("b", &record))
        .build();
    let seen = Mutex::new(Vec::<(EventKind, Option<String>)>::new());
    let observer = |observation: &Observation<'_>| match observation {
        Observation::Event { event, .. } => seen.lock().unwrap().push((*event, None)),
        Observation::Hook { event, hook, decision: Decision::Continue } => {
            seen.lock().unwrap().push((*event, Some(hook.to_string())))
        }
        _ => {}
    };
    agent.turn(&mut Conversation::new(), "weather?").observe(&observer).await.unwrap();
    let seen = seen.into_inner().unwrap();
    let fired: Vec<EventKind> =
        seen.iter().filter(|(_, hook)| hook.is_none()).map(|(e, _)| *e).collect();
    assert_eq!(
        fired,
        [
            Pre,
            BeforeModel,
            WrapModel,
            AfterModel,
            // The step's two calls: both decided, both run, both settled, in call order.
            BeforeTool,
            BeforeTool,
            WrapTool,
            WrapTool,
            AfterTool,
            ToolError,
            BeforeModel,
            WrapModel,
            AfterModel,
            BeforeFinal,
            Post
        ]
    );
    // Right after each sequential event fires, its hooks report in declaration order.
    for (index, (event, hook)) in seen.iter().enumerate() {
        if hook.is_none() && !matches!(event, WrapModel | WrapTool) {
            let decided: Vec<&str> =
                seen[index + 1..index + 3].iter().map(|(_, h)| h.as_deref().unwrap()).collect();
            assert_eq!(decided, ["a", "b"], "{event}");
        }
    }
}

/// Every verdict other than continue ends its event's chain: `c` never sees the call `b` decided.
#[tokio::test]
async fn every_deciding_verdict_ends_the_chain() {
    use agentix::AssistantMessage;
    let stop = || Action::Stop(AssistantMessage::text("stopped"));
    let cases = [
        (BeforeModel, stop()),
        (AfterModel, stop()),
        (AfterModel, Action::Retry(Some("again".into()))),
        (BeforeTool, Action::Reject("no".into())),
        (BeforeTool, Action::Escalate("ask".into())),
        (BeforeFinal, stop()),
        (BeforeFinal, Action::Retry(None)),
    ];
    for (event, action) in cases {
        let record = Record::new();
        let model = model().text("after a retry");
        let agent = Agent::builder(model)
            .tool(Weather::default())
            .hook(Probe::new("a", &record))
            .hook(Probe::new("b", &record).on(event, action.clone()))
            .hook(Probe::new("c", &record))
            .build();
        agent.run(&mut Conversation::new(), "weather?").await.unwrap();
        let calls = record.at(event);
        assert_eq!(calls[..2], ["a", "b"], "{event} {action:?}");
        assert_ne!(calls.get(2), Some(&"c"), "{event} {action:?}: c ran after b decided");
        assert_eq!(
            record.count(event, "c"),
            calls.iter().filter(|h| **h == "a").count() - 1,
            "{event} {action:?}"
        );
    }
}
