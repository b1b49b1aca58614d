//! Shared helpers for the behaviour tests: a scriptable probe hook that records every call, and
//! a few tools. Every test drives the real agent loop over the scripted model.

mod journal;

pub use journal::Memory;

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};

use agentix::event::{
    AfterModel, AfterTool, BeforeFinal, BeforeModel, BeforeTool, EventKind, Post, Pre, Retryable,
    Stoppable, StopsWith, ToolError,
};
use agentix::{
    AssistantMessage, Hook, Outcome, Part, ToolCall, ToolResult, Turn, Verdict, model::ModelRequest,
};
use schemars::JsonSchema;
use serde::Deserialize;

pub mod scenarios;
pub mod session;

/// Tests that run `on(path)` on both paths, direct and streamed.
#[macro_export]
macro_rules! on_both_paths {
    ($($name:ident => $on:ident;)*) => {$(
        #[tokio::test]
        async fn $name() {
            for path in $crate::session::PATHS {
                $on(path).await;
            }
        }
    )*};
}

/// A turn that reaches every sequential event: one step with a call that runs and a call to an
/// unknown tool, then `answer`.
pub fn every_event_model(answer: &str) -> agentix::ScriptedModel {
    agentix::ScriptedModel::new()
        .tool_calls([
            ("get_weather", serde_json::json!({ "city": "Oslo" })),
            ("no_such_tool", serde_json::json!({})),
        ])
        .text(answer)
}

/// The sequential events the turn of [`every_event_model`] fires, in order.
pub const EVERY_EVENT_FIRED: [EventKind; 11] = [
    EventKind::Pre,
    EventKind::BeforeModel,
    EventKind::AfterModel,
    EventKind::BeforeTool,
    EventKind::BeforeTool,
    EventKind::AfterTool,
    EventKind::ToolError,
    EventKind::BeforeModel,
    EventKind::AfterModel,
    EventKind::BeforeFinal,
    EventKind::Post,
];

/// Every hook call of a turn, in the order they happened: `(event, hook name)`.
#[derive(Clone, Debug, Default)]
pub struct Record(Arc<Mutex<Vec<(EventKind, &'static str)>>>);

impl Record {
    pub fn new() -> Self {
        Record::default()
    }

    pub fn push(&self, event: EventKind, hook: &'static str) {
        self.0.lock().unwrap().push((event, hook));
    }

    /// The hooks called at `event`, in call order.
    pub fn at(&self, event: EventKind) -> Vec<&'static str> {
        self.0.lock().unwrap().iter().filter(|(e, _)| *e == event).map(|(_, h)| *h).collect()
    }

    /// How many times `hook` was called at `event`.
    pub fn count(&self, event: EventKind, hook: &str) -> usize {
        self.0.lock().unwrap().iter().filter(|(e, h)| *e == event && *h == hook).count()
    }

    /// The events, in call order, with consecutive repeats (several hooks) folded.
    pub fn events(&self) -> Vec<EventKind> {
        let mut events: Vec<EventKind> = Vec::new();
        for (event, _) in self.0.lock().unwrap().iter() {
            if events.last() != Some(event) {
                events.push(*event);
            }
        }
        events
    }

    pub fn clear(&self) {
        self.0.lock().unwrap().clear();
    }
}

/// What a probe does at one call of an event.
#[derive(Clone, Debug)]
pub enum Action {
    Continue,
    Stop(AssistantMessage),
    Retry(Option<String>),
    Reject(String),
    Escalate(String),
    Halt(String),
    Fail(String),
    Panic(String),
    /// Inject a text part (pre), or replace the value's text (after_model, before_final,
    /// after_tool, tool_error output), then continue.
    Edit(String),
    /// tool_error: clear the error and answer with this output.
    Recover(String),
}

/// A hook on every event that records each call and acts from a per-event script (continue
/// when the script is empty). The `Outcome` each `post` call saw is kept too.
pub struct Probe {
    name: &'static str,
    record: Record,
    script: Mutex<HashMap<EventKind, VecDeque<Action>>>,
    outcomes: Arc<Mutex<Vec<Outcome>>>,
    requests: Arc<Mutex<Vec<ModelRequest>>>,
}

impl Probe {
    pub fn new(name: &'static str, record: &Record) -> Self {
        Probe {
            name,
            record: record.clone(),
            script: Mutex::default(),
            outcomes: Arc::default(),
            requests: Arc::default(),
        }
    }

    /// Queues `action` for the next call at `event` that has no action queued before it.
    pub fn on(self, event: EventKind, action: Action) -> Self {
        self.script.lock().unwrap().entry(event).or_default().push_back(action);
        self
    }

    /// The outcomes `post` saw.
    pub fn outcomes(&self) -> Arc<Mutex<Vec<Outcome>>> {
        self.outcomes.clone()
    }

    /// The requests `before_model` saw.
    pub fn requests(&self) -> Arc<Mutex<Vec<ModelRequest>>> {
        self.requests.clone()
    }

    fn next(&self, event: EventKind) -> Action {
        self.record.push(event, self.name);
        let mut script = self.script.lock().unwrap();
        script.get_mut(&event).and_then(VecDeque::pop_front).unwrap_or(Action::Continue)
    }

    /// `after_model` and `before_final` share a contract: edit, stop, retry, halt.
    fn judge_message<E>(&self, message: &mut AssistantMessage) -> Verdict<E>
    where
        E: Retryable + Stoppable + StopsWith<AssistantMessage>,
    {
        match self.next(E::KIND) {
            Action::Continue => Verdict::Continue,
            Action::Edit(text) => {
                replace_text(message, text);
                Verdict::Continue
            }
            Action::Stop(message) => Verdict::stop(message),
            Action::Retry(Some(feedback)) => Verdict::retry(feedback),
            Action::Retry(None) => Verdict::retry_silently(),
            Action::Halt(reason) => Verdict::halt(reason),
            Action::Panic(message) => panic!("{message}"),
            other => self.misuse(E::KIND, other),
        }
    }

    fn misuse(&self, event: EventKind, action: Action) -> ! {
        panic!("test bug: probe `{}` scripted with {action:?} at {event}", self.name)
    }
}

fn replace_text(message: &mut AssistantMessage, text: String) {
    message.content.retain(|part| !matches!(part, Part::Text(_)));
    message.content.insert(0, Part::Text(text));
}

#[agentix::hook]
impl Hook for Probe {
    fn name(&self) -> &'static str {
        self.name
    }

    async fn pre(&self, turn: &mut Turn) -> Verdict<Pre> {
        match self.next(EventKind::Pre) {
            Action::Continue => Verdict::Continue,
            Action::Edit(text) => {
                turn.inject(text);
                Verdict::Continue
            }
            Action::Halt(reason) => Verdict::halt(reason),
            Action::Fail(error) => Verdict::Halt(agentix::verdict::Halt::failure(error)),
            Action::Panic(message) => panic!("{message}"),
            other => self.misuse(EventKind::Pre, other),
        }
    }

    async fn before_model(&self, request: &mut ModelRequest, _: &mut Turn) -> Verdict<BeforeModel> {
        self.requests.lock().unwrap().push(request.clone());
        match self.next(EventKind::BeforeModel) {
            Action::Continue => Verdict::Continue,
            Action::Edit(system) => {
                request.system = Some(system.into());
                Verdict::Continue
            }
            Action::Stop(message) => Verdict::stop(message),
            Action::Halt(reason) => Verdict::halt(reason),
            Action::Panic(message) => panic!("{message}"),
            other => self.misuse(EventKind::BeforeModel, other),
        }
    }

    async fn after_model(
        &self,
        message: &mut AssistantMessage,
        _: &mut Turn,
    ) -> Verdict<AfterModel> {
        self.judge_message(message)
    }

    async fn before_tool(&self, call: &mut ToolCall, _: &mut Turn) -> Verdict<BeforeTool> {
        match self.next(EventKind::BeforeTool) {
            Action::Continue => Verdict::Continue,
            Action::Edit(arguments) => {
                call.arguments = serde_json::from_str(&arguments).unwrap();
                Verdict::Continue
            }
            Action::Reject(reason) => Verdict::reject(reason),
            Action::Escalate(reason) => Verdict::escalate(reason),
            Action::Halt(reason) => Verdict::halt(reason),
            Action::Panic(message) => panic!("{message}"),
            other => self.misuse(EventKind::BeforeTool, other),
        }
    }

    async fn after_tool(&self, result: &mut ToolResult, _: &mut Turn) -> Verdict<AfterTool> {
        match self.next(EventKind::AfterTool) {
            Action::Continue => Verdict::Continue,
            Action::Edit(output) => {
                result.output = output;
                Verdict::Continue
            }
            Action::Halt(reason) => Verdict::halt(reason),
            Action::Panic(message) => panic!("{message}"),
            other => self.misuse(EventKind::AfterTool, other),
        }
    }

    async fn tool_error(&self, result: &mut ToolResult, _: &mut Turn) -> Verdict<ToolError> {
        match self.next(EventKind::ToolError) {
            Action::Continue => Verdict::Continue,
            Action::Edit(output) => {
                result.output = output;
                Verdict::Continue
            }
            Action::Recover(output) => {
                result.output = output;
                result.error = None;
                Verdict::Continue
            }
            Action::Halt(reason) => Verdict::halt(reason),
            Action::Panic(message) => panic!("{message}"),
            other => self.misuse(EventKind::ToolError, other),
        }
    }

    async fn before_final(
        &self,
        message: &mut AssistantMessage,
        _: &mut Turn,
    ) -> Verdict<BeforeFinal> {
        self.judge_message(message)
    }

    async fn post(&self, outcome: &Outcome, _: &mut Turn) -> Verdict<Post> {
        self.outcomes.lock().unwrap().push(outcome.clone());
        match self.next(EventKind::Post) {
            Action::Continue => Verdict::Continue,
            Action::Halt(reason) => Verdict::halt(reason),
            Action::Panic(message) => panic!("{message}"),
            other => self.misuse(EventKind::Post, other),
        }
    }
}

/// Arguments naming a city.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct City {
    pub city: String,
}

/// `get_weather`: always sunny; counts its calls.
#[derive(Default)]
pub struct Weather {
    pub calls: Arc<Mutex<Vec<String>>>,
}

impl agentix::Tool for Weather {
    const NAME: &'static str = "get_weather";
    type Args = City;
    type Output = String;
    type Error = std::convert::Infallible;

    fn description(&self) -> &str {
        "Current weather for a city."
    }

    async fn call(&self, args: City, _turn: &Turn) -> Result<String, Self::Error> {
        self.calls.lock().unwrap().push(args.city.clone());
        Ok(format!("sunny in {}", args.city))
    }
}

/// `flaky`: fails until it has been called `failures` times, then succeeds.
pub struct Flaky {
    pub failures: usize,
    pub calls: Arc<Mutex<usize>>,
}

impl agentix::Tool for Flaky {
    const NAME: &'static str = "flaky";
    type Args = City;
    type Output = String;
    type Error = String;

    fn description(&self) -> &str {
        "Works on the last try."
    }

    async fn call(&self, args: City, _turn: &Turn) -> Result<String, String> {
        let mut calls = self.calls.lock().unwrap();
        *calls += 1;
        if *calls <= self.failures {
            Err(format!("attempt {calls} failed"))
        } else {
            Ok(format!("reached {}", args.city))
        }
    }
}

/// `explode`: panics.
pub struct Explode;

impl agentix::Tool for Explode {
    const NAME: &'static str = "explode";
    type Args = City;
    type Output = String;
    type Error = String;

    fn description(&self) -> &str {
        "Panics."
    }

    async fn call(&self, args: City, _turn: &Turn) -> Result<String, String> {
        panic!("boom in {}", args.city)
    }
}

/// The text of the last message of a request.
pub fn last_text(request: &ModelRequest) -> String {
    request.messages.last().map(|message| message.text().into_owned()).unwrap_or_default()
}

/// The tool results in a request's messages, in order.
pub fn tool_results(request: &ModelRequest) -> Vec<ToolResult> {
    request.tool_results().cloned().collect()
}

/// Every tool result in a conversation's log, in order: what the model read of each call.
pub fn logged_results(conversation: &agentix::Conversation) -> Vec<&ToolResult> {
    let steps = conversation.log().iter().filter_map(|entry| match entry {
        agentix::Entry::ToolResults { results, .. } => Some(results),
        _ => None,
    });
    steps.flatten().collect()
}

/// Checks the log reads as a valid conversation: every tool call is answered, in order, right
/// after the message that made it.
pub fn assert_log_consistent(log: &[agentix::Entry]) {
    use agentix::Entry;
    for (index, entry) in log.iter().enumerate() {
        if let Entry::Assistant { message, .. } = entry {
            let calls: Vec<&str> = message.tool_calls().map(|call| call.id.as_str()).collect();
            if calls.is_empty() {
                continue;
            }
            match log.get(index + 1) {
                Some(Entry::ToolResults { results, .. }) => {
                    let answered: Vec<&str> = results.iter().map(|r| r.call_id.as_str()).collect();
                    assert_eq!(
                        answered, calls,
                        "tool results out of step with calls at entry {index}"
                    );
                }
                other => panic!("tool calls at entry {index} not answered; next entry: {other:?}"),
            }
        }
        if let Entry::ToolResults { .. } = entry {
            assert!(
                matches!(index.checked_sub(1).map(|i| &log[i]), Some(Entry::Assistant { .. })),
                "tool results at entry {index} answer no assistant message"
            );
        }
    }
}

/// Which way a turn runs: the plain future, or the stream of events. Both run the same loop.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Path {
    Direct,
    Streamed,
}

/// What a turn did, as both paths can report it.
#[derive(Debug, PartialEq)]
pub struct Ran {
    pub outcome: Outcome,
    /// Every hook decision, as `event hook: decision`.
    pub hooks: Vec<String>,
    /// The text that was streamed (empty on the direct path).
    pub streamed: String,
}

/// Runs one turn on `path`.
pub async fn run_on<M, T, P, A, X>(
    path: Path,
    agent: &agentix::Agent<M, T, P, A, X>,
    conversation: &mut agentix::Conversation,
    message: &str,
) -> Ran
where
    M: agentix::Model,
    T: agentix::ToolSet,
    P: agentix::pipeline::Pipeline,
    A: agentix::approval::Approver,
    X: agentix::transform::StreamTransformer,
{
    use agentix::{StreamEvent, observe::Observation};
    use futures::StreamExt;
    match path {
        Path::Direct => {
            let hooks = Mutex::new(Vec::new());
            let observer = |observation: &Observation<'_>| {
                if let Observation::Hook { event, hook, decision } = observation {
                    hooks.lock().unwrap().push(format!("{event} {hook}: {decision}"));
                }
            };
            let outcome = agent.turn(conversation, message).observe(&observer).await;
            Ran { outcome, hooks: hooks.into_inner().unwrap(), streamed: String::new() }
        }
        Path::Streamed => {
            let events: Vec<StreamEvent> =
                agent.turn(conversation, message).stream().collect().await;
            let mut ran = Ran {
                outcome: Err(agentix::Error::StepLimit { limit: 0 }),
                hooks: Vec::new(),
                streamed: String::new(),
            };
            for event in events {
                match event {
                    StreamEvent::Hook { event, hook, decision, .. } => {
                        ran.hooks.push(format!("{event} {hook}: {decision}"))
                    }
                    StreamEvent::Text(text) => ran.streamed.push_str(&text),
                    StreamEvent::Finished(outcome) => ran.outcome = outcome,
                    _ => {}
                }
            }
            ran
        }
    }
}

/// Checks `log`, with `turns` as the conversation's counter, as a stored conversation is
/// checked when it is read.
pub fn validate_entries(
    log: &[agentix::Entry],
    turns: u64,
) -> Result<(), agentix::conversation::InvalidLog> {
    let conversation = agentix::Conversation::from_parts(
        agentix::Config::default(),
        log.to_vec(),
        turns,
        agentix::scope::Scope::new(),
    )?;
    conversation.validate()
}

/// Pending `n` times (waking itself each time), then ready: `n` await points, on any executor.
pub struct Yields(pub usize);

impl std::future::Future for Yields {
    type Output = ();

    fn poll(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<()> {
        if self.0 == 0 {
            return std::task::Poll::Ready(());
        }
        self.0 -= 1;
        cx.waker().wake_by_ref();
        std::task::Poll::Pending
    }
}

/// An earlier turn: a question, `steps` tool steps (each of so many calls), an answer.
pub fn earlier_turn(
    turn: u64,
    question: usize,
    steps: &[usize],
    answer: usize,
) -> Vec<agentix::Entry> {
    let turn_ref = agentix::conversation::TurnRef(turn);
    let mut entries = vec![agentix::Entry::User {
        turn: turn_ref,
        message: agentix::Message::user("q".repeat(question)),
        task: None,
    }];
    for (step, &calls) in steps.iter().enumerate() {
        let mut message = AssistantMessage::default();
        let mut results = Vec::new();
        for index in 0..calls {
            let id = format!("t{turn}s{step}c{index}");
            let call = ToolCall::new(id, "get_weather", serde_json::json!({ "city": "Oslo" }));
            results.push(ToolResult::success(&call, "r".repeat(10 + index * 7)));
            message = message.with_tool_call(call);
        }
        entries.push(agentix::Entry::Assistant { turn: turn_ref, message });
        entries.push(agentix::Entry::ToolResults { turn: turn_ref, results });
    }
    entries.push(agentix::Entry::Assistant {
        turn: turn_ref,
        message: AssistantMessage::text("a".repeat(answer)),
    });
    entries
}

/// `after_model`: sends the turn's first final answer back once ("Again."), so the step runs
/// again.
#[agentix::hook(after_model)]
pub async fn answer_again_once(
    message: &mut AssistantMessage,
    turn: &mut Turn,
) -> Verdict<AfterModel> {
    if turn.retries() == 0 && !message.calls_tools() {
        Verdict::retry("Again.")
    } else {
        Verdict::Continue
    }
}
