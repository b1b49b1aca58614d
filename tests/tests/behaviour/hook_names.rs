//! A hook's name is asked once, when the hook is added: a `Hook` struct or a hand-written
//! `on::` hook whose name is computed (the default searches the type's name) does not pay for
//! it at every event.

use std::sync::atomic::{AtomicUsize, Ordering};

use agentix::event::{AfterModel, AfterTool};
use agentix::{
    Agent, AssistantMessage, Conversation, Hook, Part, ScriptedModel, Turn, Verdict, on, tool,
};
use serde_json::json;

static STRUCT_ASKED: AtomicUsize = AtomicUsize::new(0);
static SINGLE_ASKED: AtomicUsize = AtomicUsize::new(0);
static PARALLEL_ASKED: AtomicUsize = AtomicUsize::new(0);
static PER_TOOL_ASKED: AtomicUsize = AtomicUsize::new(0);

/// Called at every event; counts how often its name is asked.
struct Everywhere;

#[agentix::hook]
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

/// A parallel `pre` hook; counts how often its name is asked.
struct Alongside;

impl on::ParallelPre for Alongside {
    fn name(&self) -> &'static str {
        PARALLEL_ASKED.fetch_add(1, Ordering::Relaxed);
        "alongside"
    }

    async fn pre(&self, _: &Turn) -> Vec<Part> {
        vec![Part::text("context")]
    }
}

/// Echoes its text.
#[tool]
async fn echo(text: String) -> String {
    text
}

/// On `echo`'s output; counts how often its name is asked.
struct OnEcho;

impl on::AfterToolOf for OnEcho {
    type Tool = echo;

    fn name(&self) -> &'static str {
        PER_TOOL_ASKED.fetch_add(1, Ordering::Relaxed);
        "on_echo"
    }

    async fn after_tool(&self, output: &mut String, _: &Turn) -> Verdict<AfterTool> {
        output.push('!');
        Verdict::Continue
    }
}

fn asked() -> [usize; 4] {
    [&STRUCT_ASKED, &SINGLE_ASKED, &PARALLEL_ASKED, &PER_TOOL_ASKED]
        .map(|asked| asked.load(Ordering::Relaxed))
}

#[tokio::test]
async fn a_hooks_name_is_asked_once_however_often_it_runs() {
    let model = ScriptedModel::new()
        .tool_call("no_such_tool", json!({}))
        .tool_call("echo", json!({ "text": "a" }))
        .tool_call("echo", json!({ "text": "b" }))
        .text("one")
        .text("two");
    let agent = Agent::builder(&model)
        .tool(echo)
        .hook(Everywhere)
        .hook(AfterEachAnswer)
        .hook(Alongside)
        .hook(OnEcho)
        .build();
    assert_eq!(asked(), [1, 1, 1, 1], "asked when added");
    let mut conversation = Conversation::new();
    agent.run(&mut conversation, "first").await.unwrap();
    agent.run(&mut conversation, "second").await.unwrap();
    assert_eq!(model.requests().len(), 5, "every event fired, the after_model ones five times");
    let echoed: Vec<String> =
        model.requests()[3].tool_results().map(|r| r.output.clone()).collect();
    assert_eq!(echoed[1..], ["a!", "b!"], "the per-tool hook ran");
    assert_eq!(asked(), [1, 1, 1, 1]);
}

/// Ends every turn; its name is a keyword.
#[agentix::hook(pre)]
async fn r#loop(_turn: &mut Turn) -> Verdict<agentix::event::Pre> {
    Verdict::halt("enough")
}

#[tokio::test]
async fn a_raw_identifiers_name_is_the_identifier_without_its_prefix() {
    let agent = Agent::builder(ScriptedModel::new()).hook(r#loop).build();
    let error = agent.run(&mut Conversation::new(), "hi").await.unwrap_err();
    assert!(matches!(error, agentix::Error::Halted { hook: "loop", .. }), "{error:?}");
}
