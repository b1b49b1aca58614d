//! A step's tool calls run together: `before_tool` decides every call in call order before any
//! runs, the admitted calls run at once (up to `Config::tool_concurrency`, a sequential tool's
//! alone), and results, `after_tool` hooks and the log come in call order whatever order the
//! calls finish in. A refused, panicking or hung call fails alone; calls that wait for a person
//! each get their own answer.
//!
//! Running at once is shown without a clock: a call told to `meet` others waits until they all
//! run, and fails if they never do — as each would, run one after another.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use agentix::event::{AfterTool, BeforeTool};
use agentix::{
    Agent, Conversation, Entry, Error, ScriptedModel, Tool, ToolCall, ToolResult, Turn, Verdict,
    approval::Approval, message::ToolFailure, observe::Observation, verdict::Escalation,
};
use serde_json::{Value, json};
use tests::{assert_log_consistent, tool_results};

/// What the calls of a step share: how many run, the most that ran at once, and the order they
/// finished in.
#[derive(Default)]
struct Calls {
    running: AtomicUsize,
    most: AtomicUsize,
    finished: Mutex<Vec<String>>,
    /// How many calls arrived at each meeting.
    meetings: Mutex<std::collections::HashMap<String, usize>>,
}

impl Calls {
    fn most(&self) -> usize {
        self.most.load(Ordering::SeqCst)
    }

    fn finished(&self) -> Vec<String> {
        self.finished.lock().unwrap().clone()
    }

    /// Runs one call of `key`, as its arguments say: meets the calls of its meeting (`meet`),
    /// failing if they do not all run within `within_ms` (default 2 s); waits `wait_ms`; panics
    /// if `panic`.
    async fn run(&self, args: &Value) -> Result<String, String> {
        let key = args["key"].as_str().unwrap_or("?").to_owned();
        let running = self.running.fetch_add(1, Ordering::SeqCst) + 1;
        self.most.fetch_max(running, Ordering::SeqCst);
        let met = self.meet(args).await;
        if let Some(wait) = args["wait_ms"].as_u64() {
            tokio::time::sleep(Duration::from_millis(wait)).await;
        }
        self.running.fetch_sub(1, Ordering::SeqCst);
        if args["panic"] == json!(true) {
            panic!("the lookup of {key} broke");
        }
        self.finished.lock().unwrap().push(key.clone());
        met.map(|()| key)
    }

    /// Waits until every call of the meeting `meet` names (`of` of them, default 2) has
    /// arrived. A call that met stays counted, so that each of the others sees it; one that
    /// gives up leaves, so that a call run after it does not find it there.
    async fn meet(&self, args: &Value) -> Result<(), String> {
        let Some(meeting) = args["meet"].as_str() else { return Ok(()) };
        let of = args["of"].as_u64().unwrap_or(2) as usize;
        let within = Duration::from_millis(args["within_ms"].as_u64().unwrap_or(2_000));
        let arrived = || self.meetings.lock().unwrap().get(meeting).copied().unwrap_or(0);
        *self.meetings.lock().unwrap().entry(meeting.to_owned()).or_default() += 1;
        let met = async {
            while arrived() < of {
                tokio::time::sleep(Duration::from_millis(1)).await;
            }
        };
        if tokio::time::timeout(within, met).await.is_err() {
            *self.meetings.lock().unwrap().get_mut(meeting).unwrap() -= 1;
            return Err(format!("the {of} calls of {meeting} never ran at once"));
        }
        Ok(())
    }
}

/// Looks a key up: its output is the key.
#[derive(Clone, Default)]
struct Lookup(Arc<Calls>);

impl Tool for Lookup {
    const NAME: &'static str = "lookup";
    type Args = Value;
    type Output = String;
    type Error = String;

    fn description(&self) -> &str {
        "Looks a key up."
    }

    async fn call(&self, args: Value, _: &Turn) -> Result<String, String> {
        self.0.run(&args).await
    }
}

/// Writes a key down, alone: no other call of the step runs beside it. Its output is how many
/// calls ran when it started.
struct Write(Arc<Calls>);

impl Tool for Write {
    const NAME: &'static str = "write";
    const SEQUENTIAL: bool = true;
    type Args = Value;
    type Output = String;
    type Error = String;

    fn description(&self) -> &str {
        "Writes a key down."
    }

    async fn call(&self, args: Value, _: &Turn) -> Result<String, String> {
        let beside = self.0.running.load(Ordering::SeqCst);
        self.0.run(&args).await?;
        Ok(format!("{beside} running beside it"))
    }
}

/// Stamps a key with its call's id, read once every call of the step runs.
struct Stamp(Arc<Calls>);

impl Tool for Stamp {
    const NAME: &'static str = "stamp";
    const WANTS_CALL_ID: bool = true;
    type Args = Value;
    type Output = String;
    type Error = String;

    fn description(&self) -> &str {
        "Stamps a key."
    }

    async fn call(&self, args: Value, turn: &Turn) -> Result<String, String> {
        let key = self.0.run(&args).await?;
        let id = turn.tool_call_id().unwrap_or_default();
        let idempotency = turn.tool_idempotency_key().unwrap_or_default();
        Ok(format!("{key} {id} {idempotency}"))
    }
}

/// `#[tool(sequential)]` on a function: the same as [`Write`]'s `SEQUENTIAL`.
#[agentix::tool(sequential)]
async fn flush() -> String {
    "flushed".to_owned()
}

/// A step calling `tool` with each of `args`, then an answer.
fn step_of(tool: &str, args: impl IntoIterator<Item = Value>) -> ScriptedModel {
    ScriptedModel::new().tool_calls(args.into_iter().map(|args| (tool, args))).text("done")
}

/// Each result of the turn's step: its call's id, and its output or failure.
fn results_of(conversation: &Conversation) -> Vec<(String, Result<String, ToolFailure>)> {
    let results = conversation.log().iter().find_map(|entry| match entry {
        Entry::ToolResults { results, .. } => Some(results.clone()),
        _ => None,
    });
    let results = results.unwrap_or_else(|| panic!("no results: {:#?}", conversation.log()));
    results
        .into_iter()
        .map(|result| {
            let outcome = match result.error {
                Some(failure) => Err(failure),
                None => Ok(result.output),
            };
            (result.call_id, outcome)
        })
        .collect()
}

#[tokio::test]
async fn a_steps_calls_run_at_once() {
    let model = step_of(
        "lookup",
        [json!({ "key": "a", "meet": "ab" }), json!({ "key": "b", "meet": "ab" })],
    );
    let lookup = Lookup::default();
    let calls = Arc::clone(&lookup.0);
    let agent = Agent::builder(&model).tool(lookup).build();
    let mut conversation = Conversation::new();
    assert_eq!(agent.run(&mut conversation, "look").await.unwrap().joined_text(), "done");
    assert_eq!(
        results_of(&conversation),
        [("call_1".into(), Ok("a".into())), ("call_2".into(), Ok("b".into()))]
    );
    assert_eq!(calls.most(), 2);
    assert_log_consistent(conversation.log());
}

#[tokio::test]
async fn with_a_concurrency_of_one_a_steps_calls_run_one_after_another() {
    let meet = |key| json!({ "key": key, "meet": "ab", "within_ms": 100 });
    let model = step_of("lookup", [meet("a"), meet("b")]);
    let lookup = Lookup::default();
    let calls = Arc::clone(&lookup.0);
    let agent = Agent::builder(&model).tool(lookup).build();
    let mut conversation = Conversation::new();
    conversation.config_mut().tool_concurrency = 1;
    agent.run(&mut conversation, "look").await.unwrap();
    assert_eq!(calls.most(), 1);
    let failed = Err(ToolFailure::Failed { message: "the 2 calls of ab never ran at once".into() });
    assert_eq!(
        results_of(&conversation),
        [("call_1".into(), failed.clone()), ("call_2".into(), failed)]
    );
}

#[tokio::test]
async fn at_most_tool_concurrency_calls_run_at_once() {
    let args = (0..5).map(|key| json!({ "key": key.to_string(), "wait_ms": 20 }));
    let model = step_of("lookup", args);
    let lookup = Lookup::default();
    let calls = Arc::clone(&lookup.0);
    let agent = Agent::builder(&model).tool(lookup).build();
    let mut conversation = Conversation::new();
    conversation.config_mut().tool_concurrency = 2;
    agent.run(&mut conversation, "look").await.unwrap();
    assert_eq!(calls.most(), 2);
    assert_eq!(calls.finished().len(), 5);
}

/// Records each call `before_tool` decides, with how many calls had finished by then.
struct Decisions(Arc<Calls>, Arc<Mutex<Vec<(String, usize)>>>);

impl agentix::on::BeforeTool for Decisions {
    async fn before_tool(&self, call: &mut ToolCall, _: &mut Turn) -> Verdict<BeforeTool> {
        self.1.lock().unwrap().push((call.id.clone(), self.0.finished().len()));
        if call.arguments["key"] == "refused" {
            return Verdict::reject("not this one");
        }
        Verdict::Continue
    }
}

/// Records the id of each result `after_tool` settles.
struct Settled(Arc<Mutex<Vec<String>>>);

impl agentix::on::AfterTool for Settled {
    async fn after_tool(&self, result: &mut ToolResult, _: &mut Turn) -> Verdict<AfterTool> {
        self.0.lock().unwrap().push(result.call_id.clone());
        Verdict::Continue
    }
}

#[tokio::test]
async fn hooks_decide_every_call_first_and_settle_them_in_call_order_whatever_order_they_finish_in()
{
    let model = step_of(
        "lookup",
        [
            json!({ "key": "slow", "wait_ms": 60 }),
            json!({ "key": "slower", "wait_ms": 90 }),
            json!({ "key": "quick" }),
        ],
    );
    let lookup = Lookup::default();
    let calls = Arc::clone(&lookup.0);
    let (decided, settled) = (Arc::default(), Arc::default());
    let finished_seen = Mutex::new(Vec::new());
    let observer = |observation: &Observation<'_>| {
        if let Observation::ToolFinished { result } = observation {
            finished_seen.lock().unwrap().push(result.call_id.clone());
        }
    };
    let agent = Agent::builder(&model)
        .tool(lookup)
        .hook(Decisions(Arc::clone(&calls), Arc::clone(&decided)))
        .hook(Settled(Arc::clone(&settled)))
        .build();
    let mut conversation = Conversation::new();
    agent.turn(&mut conversation, "look").observe(&observer).await.unwrap();

    assert_eq!(calls.finished(), ["quick", "slow", "slower"], "the order they finished in");
    let ids = ["call_1", "call_2", "call_3"];
    let decided: Vec<(String, usize)> = decided.lock().unwrap().clone();
    assert_eq!(decided, ids.map(|id| (id.to_owned(), 0)), "all decided before any finished");
    assert_eq!(*settled.lock().unwrap(), ids, "after_tool in call order");
    assert_eq!(*finished_seen.lock().unwrap(), ids, "observers hear them in call order");
    let outputs: Vec<String> =
        tool_results(&model.requests()[1]).into_iter().map(|result| result.output).collect();
    assert_eq!(outputs, ["slow", "slower", "quick"], "the model reads them in call order");
}

#[tokio::test]
async fn a_sequential_tool_runs_alone_and_the_calls_around_it_together() {
    let calls = Arc::new(Calls::default());
    let model = ScriptedModel::new()
        .tool_calls([
            ("lookup", json!({ "key": "a", "meet": "ab" })),
            ("lookup", json!({ "key": "b", "meet": "ab" })),
            ("write", json!({ "key": "w" })),
            ("lookup", json!({ "key": "c", "meet": "cd", "within_ms": 100 })),
            ("flush", json!({})),
            ("lookup", json!({ "key": "d", "meet": "cd", "within_ms": 100 })),
        ])
        .text("done");
    let agent = Agent::builder(&model)
        .tool(Lookup(Arc::clone(&calls)))
        .tool(Write(Arc::clone(&calls)))
        .tool(flush)
        .build();
    let mut conversation = Conversation::new();
    agent.run(&mut conversation, "write").await.unwrap();
    let results = results_of(&conversation);
    assert_eq!(results[0].1, Ok("a".into()), "a and b met");
    assert_eq!(results[2].1, Ok("0 running beside it".into()), "write ran alone");
    // c and d are split by `flush`, which runs alone: neither meets the other.
    let alone = Err(ToolFailure::Failed { message: "the 2 calls of cd never ran at once".into() });
    assert_eq!(results[3].1, alone);
    assert_eq!(results[4].1, Ok("flushed".into()));
    assert_eq!(results[5].1, alone);
    const { assert!(<flush as Tool>::SEQUENTIAL && !<Lookup as Tool>::SEQUENTIAL) };
}

#[tokio::test]
async fn a_refused_call_holds_up_none_and_leaves_no_call_unanswered() {
    let model = step_of(
        "lookup",
        [
            json!({ "key": "a", "meet": "ac" }),
            json!({ "key": "refused", "meet": "ac" }),
            json!({ "key": "c", "meet": "ac" }),
        ],
    );
    let lookup = Lookup::default();
    let calls = Arc::clone(&lookup.0);
    let agent = Agent::builder(&model).tool(lookup).hook(Decisions(calls, Arc::default())).build();
    let mut conversation = Conversation::new();
    agent.run(&mut conversation, "look").await.unwrap();
    let results = results_of(&conversation);
    assert_eq!(results[0], ("call_1".into(), Ok("a".into())));
    assert_eq!(
        results[1],
        (
            "call_2".into(),
            Err(ToolFailure::Rejected { by: "Decisions".into(), reason: "not this one".into() })
        )
    );
    assert_eq!(results[2], ("call_3".into(), Ok("c".into())));
    // Every call the model made is answered, by id, in the next request: a dangling call id
    // is what a provider refuses the request over.
    let answered: Vec<String> =
        tool_results(&model.requests()[1]).into_iter().map(|result| result.call_id).collect();
    assert_eq!(answered, ["call_1", "call_2", "call_3"]);
    conversation.validate().unwrap();
}

#[tokio::test]
async fn a_panicking_or_hung_call_fails_alone() {
    let model = step_of(
        "lookup",
        [
            json!({ "key": "a", "panic": true }),
            json!({ "key": "b", "wait_ms": 60_000 }),
            json!({ "key": "c" }),
        ],
    );
    let agent = Agent::builder(&model).tool(Lookup::default()).build();
    let mut conversation = Conversation::new();
    conversation.config_mut().tool_timeout = Some(Duration::from_millis(100));
    assert_eq!(agent.run(&mut conversation, "look").await.unwrap().joined_text(), "done");
    let results = results_of(&conversation);
    assert_eq!(
        results[0].1,
        Err(ToolFailure::Panicked { message: "the lookup of a broke".into() })
    );
    assert_eq!(results[1].1, Err(ToolFailure::TimedOut { after: Duration::from_millis(100) }));
    assert_eq!(results[2].1, Ok("c".into()));
}

#[tokio::test]
async fn calls_running_together_each_read_their_own_id() {
    let model = step_of(
        "stamp",
        [json!({ "key": "a", "meet": "ab" }), json!({ "key": "b", "meet": "ab" })],
    );
    let agent = Agent::builder(&model).tool(Stamp(Arc::default())).build();
    let mut conversation = Conversation::new().with_id("ledger");
    agent.run(&mut conversation, "stamp").await.unwrap();
    assert_eq!(
        results_of(&conversation),
        [
            ("call_1".into(), Ok("a call_1 ledger/1/call_1".into())),
            ("call_2".into(), Ok("b call_2 ledger/1/call_2".into())),
        ]
    );
}

/// Sends a person every call of a key that starts with `ask`.
#[agentix::hook(before_tool)]
async fn ask_first(call: &mut ToolCall) -> Verdict<BeforeTool> {
    if call.arguments["key"].as_str().is_some_and(|key| key.starts_with("ask")) {
        Verdict::escalate("a person decides")
    } else {
        Verdict::Continue
    }
}

fn waiting_call(outcome: &agentix::Outcome) -> String {
    match outcome {
        Err(Error::AwaitingApproval { pending, .. }) => pending.call.id.clone(),
        other => panic!("a turn waiting for approval, not {other:?}"),
    }
}

/// Two calls of one step wait for a person while a third runs: each answer goes to the call it
/// was asked about (elsewhere, resume values reach the wrong interrupt: langgraph #6626).
#[tokio::test]
async fn each_waiting_call_gets_its_own_answer() {
    let model = step_of(
        "lookup",
        [json!({ "key": "ask-x" }), json!({ "key": "a" }), json!({ "key": "ask-y" })],
    );
    let lookup = Lookup::default();
    let calls = Arc::clone(&lookup.0);
    let agent = Agent::builder(&model)
        .tool(lookup)
        .hook(ask_first)
        .approver(|_: ToolCall, _: Escalation| async { Approval::Suspend })
        .build();
    let mut conversation = Conversation::new();

    let first = agent.run(&mut conversation, "look").await;
    assert_eq!(waiting_call(&first), "call_1");
    assert_eq!(calls.finished(), ["a"], "the call beside the waiting ones ran");
    let Some(Entry::Suspended { suspension, .. }) = conversation.log().last() else {
        panic!("{:#?}", conversation.log())
    };
    let also: Vec<&str> = suspension.also_waiting.iter().map(|w| w.call.id.as_str()).collect();
    assert_eq!(also, ["call_3"]);

    // The first answer is the first call's: edited, it runs as edited; the other still waits.
    let edited = ToolCall::new("ignored", "lookup", json!({ "key": "x-edited" }));
    let second = agent.resume(&mut conversation, Approval::Edit(edited)).await;
    assert_eq!(waiting_call(&second), "call_3");
    assert_eq!(conversation.pending_approval().unwrap().1.call.arguments["key"], "ask-y");
    assert_eq!(calls.finished(), ["a", "x-edited"]);
    conversation.validate().unwrap();

    let reply = agent.resume(&mut conversation, Approval::Reject("not y".into())).await;
    assert_eq!(reply.unwrap().joined_text(), "done");
    assert_eq!(calls.finished(), ["a", "x-edited"], "the rejected call never ran");
    let results = results_of(&conversation);
    assert_eq!(results[0], ("call_1".into(), Ok("x-edited".into())));
    assert_eq!(results[1], ("call_2".into(), Ok("a".into())));
    assert!(
        matches!(&results[2], (id, Err(ToolFailure::Rejected { reason, .. }))
            if id == "call_3" && reason == "not y"),
        "{results:?}"
    );
    assert_eq!(model.calls(), 2, "the model was asked again only once the step was whole");
    assert_log_consistent(conversation.log());
    conversation.validate().unwrap();
}

/// Panics on the call of the key `boom`, and lets every other call through.
struct Boom;

impl agentix::on::WrapTool for Boom {
    async fn wrap_tool(
        &self,
        call: &ToolCall,
        _: &Turn,
        next: &impl agentix::tool::NextTool,
    ) -> ToolResult {
        if call.arguments["key"] == "boom" {
            panic!("the wrap hook broke");
        }
        next.call(call).await
    }
}

/// A hook that panics in one call ends the turn at once: the calls running beside it are
/// dropped, not waited for, and answered as interrupted.
#[tokio::test]
async fn a_hook_panicking_in_one_call_ends_the_turn_without_waiting_for_the_others() {
    let model =
        step_of("lookup", [json!({ "key": "slow", "wait_ms": 30_000 }), json!({ "key": "boom" })]);
    let lookup = Lookup::default();
    let calls = Arc::clone(&lookup.0);
    let agent = Agent::builder(&model).tool(lookup).hook(Boom).build();
    let mut conversation = Conversation::new();
    let turn = agent.run(&mut conversation, "look");
    let outcome = tokio::time::timeout(Duration::from_secs(5), turn).await;
    let outcome = outcome.expect("the turn ends without waiting for the slow call");
    assert!(matches!(&outcome, Err(Error::HookPanicked { hook: "Boom", .. })), "{outcome:?}");
    assert!(calls.finished().is_empty());
    let results = results_of(&conversation);
    assert!(
        matches!(&results[0].1, Err(ToolFailure::Interrupted { .. })),
        "the slow call was cut: {results:?}"
    );
    assert!(matches!(&results[1].1, Err(ToolFailure::NotRun { .. })), "{results:?}");
    assert_log_consistent(conversation.log());
    conversation.validate().unwrap();
}

/// Two servers' tools, `alpha_*` and `beta_*`, each call meeting the others of its step and
/// answering with the server its turn says it comes from.
#[derive(Default)]
struct Servers(Arc<Calls>);

impl agentix::ToolSet for Servers {
    const HAS_ORIGINS: bool = true;

    fn specs(&self, specs: &mut Vec<agentix::tool::ToolSpec>) {
        for name in ["alpha_find", "beta_find"] {
            let parameters = json!({ "type": "object" });
            specs.push(agentix::tool::ToolSpec {
                name: name.into(),
                description: name.into(),
                parameters,
            });
        }
    }

    fn origin(&self, name: &str) -> Option<Arc<agentix::tool::ToolOrigin>> {
        let server = name.split('_').next()?;
        Some(Arc::new(agentix::tool::ToolOrigin::new("mcp", server, format!("{server}.example"))))
    }

    async fn call(&self, call: &ToolCall, turn: &Turn) -> Option<ToolResult> {
        let met = self.0.run(&call.arguments).await;
        let origin = turn.tool_origin().map(|origin| origin.name.clone());
        let output = format!("{met:?} from {}", origin.unwrap_or_default());
        Some(ToolResult::success(call, output))
    }
}

/// Notes the server each call's `wrap_tool` hook reads from its turn.
#[derive(Clone, Default)]
struct SeenFrom(Arc<Mutex<Vec<(String, String)>>>);

impl agentix::on::WrapTool for SeenFrom {
    async fn wrap_tool(
        &self,
        call: &ToolCall,
        turn: &Turn,
        next: &impl agentix::tool::NextTool,
    ) -> ToolResult {
        let result = next.call(call).await;
        let origin = turn.tool_origin().map(|origin| origin.name.clone()).unwrap_or_default();
        self.0.lock().unwrap().push((call.name.clone(), origin));
        result
    }
}

#[tokio::test]
async fn calls_running_together_each_read_their_own_origin() {
    let model = ScriptedModel::new()
        .tool_calls([
            ("alpha_find", json!({ "key": "a", "meet": "ab" })),
            ("beta_find", json!({ "key": "b", "meet": "ab" })),
        ])
        .text("done");
    let seen = SeenFrom::default();
    let agent = Agent::builder(&model).tools(Servers::default()).hook(seen.clone()).build();
    let mut conversation = Conversation::new();
    agent.run(&mut conversation, "find").await.unwrap();
    assert_eq!(
        results_of(&conversation),
        [
            ("call_1".into(), Ok(r#"Ok("a") from alpha"#.into())),
            ("call_2".into(), Ok(r#"Ok("b") from beta"#.into())),
        ]
    );
    let mut seen = seen.0.lock().unwrap().clone();
    seen.sort();
    assert_eq!(seen, [("alpha_find".into(), "alpha".into()), ("beta_find".into(), "beta".into())]);
}

/// Halts the turn on the result of the key `secret`, as a redacting hook that finds what it
/// cannot redact would.
struct HaltOnSecret;

impl agentix::on::AfterTool for HaltOnSecret {
    async fn after_tool(&self, result: &mut ToolResult, _: &mut Turn) -> Verdict<AfterTool> {
        if result.output == "secret" {
            return Verdict::halt("a secret in a tool's output");
        }
        Verdict::Continue
    }
}

/// The calls after the one whose `after_tool` hook ended the turn ran, but no hook settled
/// their results: the log withholds them.
#[tokio::test]
async fn results_no_hook_settled_are_withheld_when_an_earlier_call_ends_the_turn() {
    let model = step_of(
        "lookup",
        [json!({ "key": "public" }), json!({ "key": "secret" }), json!({ "key": "private" })],
    );
    let lookup = Lookup::default();
    let calls = Arc::clone(&lookup.0);
    let agent = Agent::builder(&model).tool(lookup).hook(HaltOnSecret).build();
    let mut conversation = Conversation::new();
    let outcome = agent.run(&mut conversation, "look").await;
    assert!(matches!(&outcome, Err(Error::Halted { hook: "HaltOnSecret", .. })), "{outcome:?}");
    let mut ran = calls.finished();
    ran.sort();
    assert_eq!(ran, ["private", "public", "secret"], "all three ran together");
    let results = results_of(&conversation);
    assert_eq!(results[0].1, Ok("public".into()));
    assert_eq!(results[1].1, Ok("secret".into()), "the log keeps what its hook saw");
    assert!(
        matches!(&results[2].1, Err(ToolFailure::Withheld { reason })
            if reason.contains("HaltOnSecret")),
        "{results:?}"
    );
    conversation.validate().unwrap();
}
