//! How hooks compose: single-event hooks and `Hook` structs interleave in declaration order,
//! order holds across the pipeline's 16-node chunks, parallel groups span chunk boundaries,
//! and wrap hooks of both kinds nest first-declared outermost.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use agentix::event::{AfterModel, EventKind, EventSet};
use agentix::{
    Agent, AssistantMessage, Conversation, Hook, Part, ScriptedModel, Turn, Verdict,
    model::{ModelError, ModelRequest, ModelResponse, NextModel},
    on,
};
use tests::{Probe, Record};

type Log = Arc<Mutex<Vec<String>>>;

/// An `after_model` hook that logs its label.
struct Step(&'static str, Log);

impl on::AfterModel for Step {
    fn name(&self) -> &'static str {
        self.0
    }

    async fn after_model(&self, _: &mut AssistantMessage, _: &mut Turn) -> Verdict<AfterModel> {
        self.1.lock().unwrap().push(self.0.to_owned());
        Verdict::Continue
    }
}

/// A `before_final` hook that logs its label.
struct Last(&'static str, Log);

impl on::BeforeFinal for Last {
    fn name(&self) -> &'static str {
        self.0
    }

    async fn before_final(
        &self,
        _: &mut AssistantMessage,
        _: &mut Turn,
    ) -> Verdict<agentix::event::BeforeFinal> {
        self.1.lock().unwrap().push(self.0.to_owned());
        Verdict::Continue
    }
}

/// A `Hook` struct that logs its label at `after_model`.
struct Struct(&'static str, Log);

#[agentix::hook]
impl Hook for Struct {
    const EVENTS: EventSet = EventSet::of(EventKind::AfterModel);

    fn name(&self) -> &'static str {
        self.0
    }

    async fn after_model(&self, _: &mut AssistantMessage, _: &mut Turn) -> Verdict<AfterModel> {
        self.1.lock().unwrap().push(self.0.to_owned());
        Verdict::Continue
    }
}

#[tokio::test]
async fn single_event_hooks_and_hook_structs_interleave_in_declaration_order() {
    let log = Log::default();
    let record = Record::new();
    let agent = Agent::builder(ScriptedModel::new().text("ok"))
        .hook(Step("a", log.clone()))
        .hook(Struct("b", log.clone()))
        .hook(Step("c", log.clone()))
        .hook(Probe::new("d", &record))
        .hook(Struct("e", log.clone()))
        .build();
    agent.run(&mut Conversation::new(), "hi").await.unwrap();
    assert_eq!(*log.lock().unwrap(), ["a", "b", "c", "e"]);
    assert_eq!(record.count(EventKind::AfterModel, "d"), 1);
}

macro_rules! labels {
    ($($label:literal)*) => { [$($label),*] };
}

#[tokio::test]
async fn order_holds_across_chunks_of_the_chain() {
    const LABELS: [&str; 40] = labels!(
        "00" "01" "02" "03" "04" "05" "06" "07" "08" "09" "10" "11" "12" "13" "14" "15" "16" "17" "18" "19"
        "20" "21" "22" "23" "24" "25" "26" "27" "28" "29" "30" "31" "32" "33" "34" "35" "36" "37" "38" "39"
    );
    let log = Log::default();
    macro_rules! forty {
        ($builder:expr; $($index:literal)*) => { $builder$(.hook(Step(LABELS[$index], log.clone())))* };
    }
    let builder = Agent::builder(ScriptedModel::new().text("ok"));
    let agent = forty!(builder;
        0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31 32 33 34 35 36 37 38 39
    )
    .build();
    agent.run(&mut Conversation::new(), "hi").await.unwrap();
    assert_eq!(*log.lock().unwrap(), LABELS);
}

/// The chain skips, at each event, the nodes without hooks on it (decided at compile time):
/// with two events interleaved across chunks, each event still runs all of its hooks, in order.
#[tokio::test]
async fn each_event_runs_its_own_hooks_across_chunks() {
    const LABELS: [&str; 40] = labels!(
        "00" "01" "02" "03" "04" "05" "06" "07" "08" "09" "10" "11" "12" "13" "14" "15" "16" "17" "18" "19"
        "20" "21" "22" "23" "24" "25" "26" "27" "28" "29" "30" "31" "32" "33" "34" "35" "36" "37" "38" "39"
    );
    let log = Log::default();
    macro_rules! alternating {
        ($builder:expr; $($step:literal $last:literal)*) => {
            $builder$(.hook(Step(LABELS[$step], log.clone())).hook(Last(LABELS[$last], log.clone())))*
        };
    }
    let builder = Agent::builder(ScriptedModel::new().text("ok"));
    let agent = alternating!(builder;
        0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31 32 33 34 35 36 37 38 39
    )
    .build();
    agent.run(&mut Conversation::new(), "hi").await.unwrap();
    let evens = LABELS.iter().step_by(2);
    let odds = LABELS.iter().skip(1).step_by(2);
    let expected: Vec<&str> = evens.chain(odds).copied().collect();
    assert_eq!(*log.lock().unwrap(), expected, "after_model's hooks, then before_final's");
}

/// A parallel `pre` hook that waits `millis`, then returns its label.
struct Fetch(&'static str, u64);

impl on::ParallelPre for Fetch {
    fn name(&self) -> &'static str {
        self.0
    }

    async fn pre(&self, _: &Turn) -> Vec<Part> {
        tokio::time::sleep(Duration::from_millis(self.1)).await;
        vec![Part::text(self.0)]
    }
}

/// A sequential `pre` hook that injects its label.
struct Note(&'static str);

impl on::Pre for Note {
    async fn pre(&self, turn: &mut Turn) -> Verdict<agentix::event::Pre> {
        turn.inject(self.0);
        Verdict::Continue
    }
}

#[tokio::test(start_paused = true)]
async fn a_parallel_group_spanning_a_chunk_boundary_stays_one_group() {
    let model = ScriptedModel::new().text("ok");
    // 15 sequential notes fill the first chunk but one node; the group of three takes that last
    // node and grows in place; the next note starts the second chunk, and `late` a new group.
    let agent = Agent::builder(&model)
        .hook(Note("n01"))
        .hook(Note("n02"))
        .hook(Note("n03"))
        .hook(Note("n04"))
        .hook(Note("n05"))
        .hook(Note("n06"))
        .hook(Note("n07"))
        .hook(Note("n08"))
        .hook(Note("n09"))
        .hook(Note("n10"))
        .hook(Note("n11"))
        .hook(Note("n12"))
        .hook(Note("n13"))
        .hook(Note("n14"))
        .hook(Note("n15"))
        .hook(Fetch("slow", 400))
        .hook(Fetch("medium", 300))
        .hook(Fetch("fast", 100))
        .hook(Note("n16"))
        .hook(Fetch("late", 50))
        .build();
    let started = tokio::time::Instant::now();
    agent.run(&mut Conversation::new(), "hi").await.unwrap();
    let elapsed = started.elapsed();
    assert!(
        elapsed >= Duration::from_millis(450) && elapsed < Duration::from_millis(460),
        "one group of three (400ms), then one of one (50ms): took {elapsed:?}"
    );
    let requests = model.requests();
    let injected: Vec<&str> =
        requests[0].messages[1].content.iter().filter_map(Part::as_text).collect();
    let mut expected: Vec<String> = (1..=15).map(|n| format!("n{n:02}")).collect();
    expected.extend(["slow", "medium", "fast", "n16", "late"].map(String::from));
    assert_eq!(injected, expected);
}

/// A single-event wrap that logs entering and leaving.
struct Around(&'static str, Log);

impl on::WrapModel for Around {
    async fn wrap_model(
        &self,
        request: &ModelRequest,
        _: &Turn,
        next: &impl NextModel,
    ) -> Result<ModelResponse, ModelError> {
        self.1.lock().unwrap().push(format!("{} in", self.0));
        let response = next.call(request).await;
        self.1.lock().unwrap().push(format!("{} out", self.0));
        response
    }
}

/// A `Hook` struct that wraps the model.
struct StructAround(&'static str, Log);

#[agentix::hook]
impl Hook for StructAround {
    const EVENTS: EventSet = EventSet::of(EventKind::WrapModel);

    async fn wrap_model(
        &self,
        request: &ModelRequest,
        _: &Turn,
        next: &impl NextModel,
    ) -> Result<ModelResponse, ModelError> {
        self.1.lock().unwrap().push(format!("{} in", self.0));
        let response = next.call(request).await;
        self.1.lock().unwrap().push(format!("{} out", self.0));
        response
    }
}

#[tokio::test]
async fn wraps_of_both_kinds_nest_first_declared_outermost() {
    let log = Log::default();
    let record = Record::new();
    let agent = Agent::builder(ScriptedModel::new().text("ok"))
        .hook(Around("a", log.clone()))
        .hook(Probe::new("passes through", &record))
        .hook(StructAround("b", log.clone()))
        .hook(Around("c", log.clone()))
        .build();
    agent.run(&mut Conversation::new(), "hi").await.unwrap();
    assert_eq!(*log.lock().unwrap(), ["a in", "b in", "c in", "c out", "b out", "a out"]);
}

/// Defines two methods, one awaiting and one not, and writes no `EVENTS`.
struct TwoMethods(Log);

#[agentix::hook]
impl Hook for TwoMethods {
    fn name(&self) -> &'static str {
        "two_methods"
    }

    async fn pre(&self, _: &mut Turn) -> Verdict<agentix::event::Pre> {
        self.0.lock().unwrap().push("pre".to_owned());
        Verdict::Continue
    }

    async fn before_model(
        &self,
        request: &mut ModelRequest,
        _: &mut Turn,
    ) -> Verdict<agentix::event::BeforeModel> {
        tokio::task::yield_now().await;
        self.0.lock().unwrap().push(format!("before_model of {} messages", request.messages.len()));
        Verdict::Continue
    }
}

#[tokio::test]
async fn a_hook_struct_runs_and_is_traced_at_the_events_its_impl_defines_and_no_others() {
    let log = Log::default();
    let agent =
        Agent::builder(ScriptedModel::new().text("ok")).hook(TwoMethods(log.clone())).build();
    let seen = Mutex::new(Vec::new());
    let observer = |observation: &agentix::observe::Observation<'_>| {
        if let agentix::observe::Observation::Hook { event, hook: "two_methods", .. } = observation
        {
            seen.lock().unwrap().push(*event);
        }
    };
    agent.turn(&mut Conversation::new(), "hi").observe(&observer).await.unwrap();
    assert_eq!(*log.lock().unwrap(), ["pre", "before_model of 1 messages"]);
    assert_eq!(*seen.lock().unwrap(), [EventKind::Pre, EventKind::BeforeModel]);
}
