//! A tool set whose list changes while the agent lives (an MCP server's), and what a running
//! tool says: the list is read again for the next step, never within one, and a journal
//! records the list each step offered; a call's progress reaches the observer and the stream,
//! and its questions the approver.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use agentix::event::{AfterModel, BeforeModel};
use agentix::{
    Agent, AssistantMessage, Conversation, ScriptedModel, StreamEvent, ToolCall, ToolResult,
    ToolSet, Turn, Verdict,
    approval::{Approval, Question},
    model::ModelRequest,
    observe::Observation,
    tool::{ToolProgress, ToolRunner, ToolSpec},
};
use futures::StreamExt;
use serde_json::json;

use crate::journal::Memory;
use tests::{Weather, logged_results};

/// Tools on a shelf that can be restocked: `restock` puts a tool of the given name on it.
#[derive(Clone, Default)]
struct Shelf {
    tools: Arc<Mutex<Vec<String>>>,
    generation: Arc<AtomicU64>,
}

impl Shelf {
    fn with(names: &[&str]) -> Shelf {
        let shelf = Shelf::default();
        for name in names {
            shelf.restock(name);
        }
        shelf
    }

    fn restock(&self, name: &str) {
        self.tools.lock().unwrap().push(name.to_owned());
        self.generation.fetch_add(1, Ordering::SeqCst);
    }
}

impl ToolSet for Shelf {
    const CHANGES: bool = true;

    fn generation(&self) -> u64 {
        self.generation.load(Ordering::SeqCst)
    }

    fn specs(&self, specs: &mut Vec<ToolSpec>) {
        specs.extend(self.tools.lock().unwrap().iter().map(|name| ToolSpec {
            name: name.clone(),
            description: format!("the {name} tool"),
            parameters: json!({ "type": "object" }),
        }));
    }

    async fn call(&self, call: &ToolCall, _: &Turn) -> Option<ToolResult> {
        if !self.tools.lock().unwrap().contains(&call.name) {
            return None;
        }
        if call.name == "restock" {
            self.restock(call.arguments["name"].as_str().unwrap_or("unnamed"));
        }
        Some(ToolResult::success(call, format!("{} ran", call.name)))
    }
}

/// The names of the tools each request offered, as `before_model` hooks see them.
#[derive(Clone, Default)]
struct Offered(Arc<Mutex<Vec<Vec<String>>>>);

impl agentix::on::BeforeModel for Offered {
    async fn before_model(&self, request: &mut ModelRequest, _: &mut Turn) -> Verdict<BeforeModel> {
        let names = request.tools.iter().map(|spec| spec.name.clone()).collect();
        self.0.lock().unwrap().push(names);
        Verdict::Continue
    }
}

fn names(lists: &Offered) -> Vec<Vec<String>> {
    lists.0.lock().unwrap().clone()
}

fn restocking_model() -> ScriptedModel {
    ScriptedModel::new()
        .tool_call("restock", json!({ "name": "drill" }))
        .tool_call("drill", json!({}))
        .text("drilled")
}

#[tokio::test]
async fn a_changed_list_is_offered_from_the_next_step_and_its_new_tool_runs() {
    let shelf = Shelf::with(&["restock"]);
    let offered = Offered::default();
    let model = restocking_model();
    let agent = Agent::builder(&model).tools(shelf).hook(offered.clone()).build();
    let mut conversation = Conversation::new();
    let answer = agent.run(&mut conversation, "drill a hole").await.unwrap();
    assert_eq!(answer.joined_text(), "drilled");
    assert_eq!(
        names(&offered),
        [vec!["restock"], vec!["restock", "drill"], vec!["restock", "drill"]]
    );
    let tools: Vec<Vec<String>> = model
        .requests()
        .iter()
        .map(|request| request.tools.iter().map(|spec| spec.name.clone()).collect())
        .collect();
    assert_eq!(tools, names(&offered), "the model is offered what the hooks saw");
    let results: Vec<String> =
        logged_results(&conversation).iter().map(|result| result.output.clone()).collect();
    assert_eq!(results, ["restock ran", "drill ran"]);
}

#[tokio::test]
async fn typed_tools_added_to_a_changing_set_leave_its_list_changing() {
    let offered = Offered::default();
    let model = restocking_model();
    let agent = Agent::builder(&model)
        .tools(Shelf::with(&["restock"]))
        .tool(Weather::default())
        .hook(offered.clone())
        .build();
    let answer = agent.run(&mut Conversation::new(), "drill a hole").await.unwrap();
    assert_eq!(answer.joined_text(), "drilled");
    assert_eq!(
        names(&offered),
        [
            vec!["restock", "get_weather"],
            vec!["restock", "drill", "get_weather"],
            vec!["restock", "drill", "get_weather"]
        ]
    );
}

#[tokio::test]
async fn a_typed_tool_of_a_name_the_changing_set_offers_takes_its_place() {
    let offered = Offered::default();
    let model = ScriptedModel::new().tool_call("get_weather", json!({ "city": "Oslo" })).text("ok");
    let shelf = Shelf::with(&["restock", "get_weather"]);
    let agent =
        Agent::builder(&model).tools(shelf).tool(Weather::default()).hook(offered.clone()).build();
    let mut conversation = Conversation::new();
    agent.run(&mut conversation, "weather?").await.unwrap();
    assert_eq!(names(&offered)[0], ["restock", "get_weather"], "one tool of each name");
    let ran = &logged_results(&conversation)[0].output;
    assert_ne!(ran, "get_weather ran", "the typed tool ran, not the set's");
}

/// Sends the model's first answer back once, restocking the shelf as it does.
struct RetryRestocking(Shelf, Arc<AtomicU64>);

impl agentix::on::AfterModel for RetryRestocking {
    async fn after_model(&self, _: &mut AssistantMessage, _: &mut Turn) -> Verdict<AfterModel> {
        if self.1.fetch_add(1, Ordering::SeqCst) == 0 {
            self.0.restock("saw");
            return Verdict::retry("again");
        }
        Verdict::Continue
    }
}

#[tokio::test]
async fn a_list_that_changes_within_a_step_is_offered_from_the_next_one() {
    let shelf = Shelf::with(&["restock"]);
    let offered = Offered::default();
    let model = ScriptedModel::new().text("first").tool_call("saw", json!({})).text("sawn");
    let retry = RetryRestocking(shelf.clone(), Arc::default());
    let agent = Agent::builder(&model).tools(shelf).hook(offered.clone()).hook(retry).build();
    agent.run(&mut Conversation::new(), "saw it").await.unwrap();
    // The retry is the same step: its request offers what the step's first did.
    assert_eq!(names(&offered), [vec!["restock"], vec!["restock"], vec!["restock", "saw"]]);
}

#[tokio::test]
async fn a_replay_offers_the_lists_the_turn_was_offered_however_the_set_changed() {
    let journal = Memory::default();
    let first = Offered::default();
    let agent = Agent::builder(restocking_model())
        .tools(Shelf::with(&["restock"]))
        .hook(first.clone())
        .build();
    let mut conversation = Conversation::new().with_id("c");
    agent.turn(&mut conversation, "drill a hole").journal(&journal).await.unwrap();
    assert_eq!(
        journal.names(),
        [
            "opened (turn 1)",
            "tools (turn 1, step 0)",
            "model (turn 1, step 0)",
            "tool restock (turn 1, step 0, call_1)",
            "tools (turn 1, step 1)",
            "model (turn 1, step 1)",
            "tool drill (turn 1, step 1, call_2)",
            "tools (turn 1, step 2)",
            "model (turn 1, step 2)",
        ]
    );

    // After a crash, the set offers other tools: the replay offers what the turn had.
    let replay = journal.replay(9);
    let again = Offered::default();
    let silent = ScriptedModel::new();
    let agent =
        Agent::builder(&silent).tools(Shelf::with(&["hammer", "glue"])).hook(again.clone()).build();
    let mut replayed = Conversation::new().with_id("c");
    let answer = agent.turn(&mut replayed, "drill a hole").journal(&replay).await.unwrap();
    assert_eq!(answer.joined_text(), "drilled");
    assert_eq!(names(&again), names(&first));
    assert_eq!(replayed.log(), conversation.log());
    assert_eq!(silent.calls(), 0);

    // Cut after the first step: the rest runs live, offered the set's current list.
    let replay = journal.replay(4);
    let live = Offered::default();
    let model = ScriptedModel::new().text("glued");
    let agent =
        Agent::builder(&model).tools(Shelf::with(&["hammer", "glue"])).hook(live.clone()).build();
    let answer = agent
        .turn(&mut Conversation::new().with_id("c"), "drill a hole")
        .journal(&replay)
        .await
        .unwrap();
    assert_eq!(answer.joined_text(), "glued");
    assert_eq!(names(&live), [vec!["restock"], vec!["hammer", "glue"]]);
}

/// One slow tool that reports its progress, then asks a person how to finish.
struct Slow;

impl ToolSet for Slow {
    fn specs(&self, specs: &mut Vec<ToolSpec>) {
        specs.push(ToolSpec {
            name: "slow".to_owned(),
            description: "takes its time".to_owned(),
            parameters: json!({ "type": "object" }),
        });
    }

    async fn call(&self, call: &ToolCall, _: &Turn) -> Option<ToolResult> {
        (call.name == "slow").then(|| ToolResult::success(call, "done"))
    }

    async fn call_hooked<H: ToolRunner>(
        &self,
        call: &ToolCall,
        turn: &Turn,
        hooks: &H,
    ) -> Option<ToolResult> {
        for step in 1..=2 {
            let message = Some(format!("step {step}"));
            hooks.progress(
                call,
                &ToolProgress { progress: f64::from(step), total: Some(2.0), message },
            );
        }
        let question = Question {
            asked_by: "the slow tool".to_owned(),
            message: "Which finish?".to_owned(),
            schema: json!({ "type": "object", "properties": { "finish": { "type": "string" } } }),
        };
        let answer = match hooks.question(call, &question, turn).await {
            Approval::Edit(answer) => answer.arguments.to_string(),
            other => format!("{other:?}"),
        };
        Some(ToolResult::success(call, answer))
    }
}

fn slow_model() -> ScriptedModel {
    ScriptedModel::new().tool_call("slow", json!({})).text("finished")
}

/// Answers every question with a matte finish.
struct Matte;

impl agentix::approval::Approver for Matte {
    async fn review(&self, _: &ToolCall, _: &agentix::verdict::Escalation, _: &Turn) -> Approval {
        Approval::Reject("only questions".to_owned())
    }

    async fn review_question(&self, call: &ToolCall, question: &Question, _: &Turn) -> Approval {
        assert_eq!((call.name.as_str(), question.message.as_str()), ("slow", "Which finish?"));
        Approval::Edit(ToolCall::new("", call.name.clone(), json!({ "finish": "matte" })))
    }
}

#[tokio::test]
async fn progress_reaches_the_stream_and_a_question_the_approver() {
    let agent = Agent::builder(slow_model()).tools(Slow).approver(Matte).build();
    let mut conversation = Conversation::new();
    let events: Vec<StreamEvent> = agent.turn(&mut conversation, "go").stream().collect().await;
    let progress: Vec<(String, f64, Option<String>)> = events
        .iter()
        .filter_map(|event| match event {
            StreamEvent::ToolProgress { name, progress, .. } => {
                Some((name.clone(), progress.progress, progress.message.clone()))
            }
            _ => None,
        })
        .collect();
    assert_eq!(
        progress,
        [("slow".into(), 1.0, Some("step 1".into())), ("slow".into(), 2.0, Some("step 2".into()))]
    );
    let finished = events.iter().position(|event| matches!(event, StreamEvent::ToolResult(_)));
    let reported =
        events.iter().position(|event| matches!(event, StreamEvent::ToolProgress { .. }));
    assert!(reported < finished, "progress comes while the call runs");
    let result = logged_results(&conversation).remove(0);
    assert_eq!(result.output, r#"{"finish":"matte"}"#);
}

#[tokio::test]
async fn an_observer_hears_the_question_and_an_agent_without_an_approver_declines_it() {
    let heard = Mutex::new(Vec::new());
    let observer = |observation: &Observation<'_>| {
        if matches!(observation, Observation::Question { .. } | Observation::ToolProgress { .. }) {
            heard.lock().unwrap().push(observation.to_string());
        }
    };
    let agent = Agent::builder(slow_model()).tools(Slow).build();
    let mut conversation = Conversation::new();
    agent.turn(&mut conversation, "go").observe(&observer).await.unwrap();
    let heard = heard.into_inner().unwrap();
    assert_eq!(heard.len(), 3, "{heard:?}");
    assert_eq!(heard[0].trim(), "progress of `slow`: 1/2 (step 1)");
    assert!(
        heard[2].contains("the slow tool asking during `slow`: \"Which finish?\" -> decline"),
        "{heard:?}"
    );
    let result = logged_results(&conversation).remove(0);
    assert!(result.output.contains("the approver answers no questions"), "{result:?}");
}
