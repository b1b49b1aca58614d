//! A hook's name is asked once, when the hook is added: a `Hook` struct or a hand-written
//! `on::` hook whose name is computed (the default searches the type's name) does not pay for
//! it at every event.

use std::sync::atomic::{AtomicUsize, Ordering};

use agentix::event::AfterModel;
use agentix::{Agent, AssistantMessage, Conversation, Hook, ScriptedModel, Turn, Verdict, on};
use serde_json::json;

static STRUCT_ASKED: AtomicUsize = AtomicUsize::new(0);
static SINGLE_ASKED: AtomicUsize = AtomicUsize::new(0);

/// Called at every event; counts how often its name is asked.
struct Everywhere;

impl Hook for Everywhere {
    fn name(&self) -> &'static str {
        STRUCT_ASKED.fetch_add(1, Ordering::Relaxed);
        "everywhere"
    }
}

/// On `after_model` only; counts how often its name is asked.
struct AfterEachAnswer;

impl on::AfterModel for AfterEachAnswer {
    fn name(&self) -> &'static str {
        SINGLE_ASKED.fetch_add(1, Ordering::Relaxed);
        "after_each_answer"
    }

    async fn after_model(&self, _: &mut AssistantMessage, _: &mut Turn) -> Verdict<AfterModel> {
        Verdict::Continue
    }
}

#[tokio::test]
async fn a_hooks_name_is_asked_once_however_often_it_runs() {
    let model = ScriptedModel::new().tool_call("no_such_tool", json!({})).text("one").text("two");
    let agent = Agent::builder(&model).hook(Everywhere).hook(AfterEachAnswer).build();
    let after_build = (STRUCT_ASKED.load(Ordering::Relaxed), SINGLE_ASKED.load(Ordering::Relaxed));
    assert_eq!(after_build, (1, 1), "asked when added");
    let mut conversation = Conversation::new();
    agent.run(&mut conversation, "first").await.unwrap();
    agent.run(&mut conversation, "second").await.unwrap();
    assert_eq!(model.requests().len(), 3, "every event fired, the after_model ones three times");
    assert_eq!(STRUCT_ASKED.load(Ordering::Relaxed), 1);
    assert_eq!(SINGLE_ASKED.load(Ordering::Relaxed), 1);
}
