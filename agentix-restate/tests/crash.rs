//! Turns that survive a crash on Restate, with real processes: restate-server (installed from
//! the npm registry by `scripts/restate.sh`, which runs these tests) and the service — this
//! test binary run again, serving [`Conversations`] — killed with `SIGKILL` at each step of a
//! model → tool → model turn and while an approval waits, then started again. Restate runs
//! the invocation again on the new process; the turn finishes as a clean run does, no
//! completed model call repeated (only the one in flight at the kill), the tool's effect
//! applied once through its idempotency key; a hook changed between the crash and the replay
//! is the typed divergence error.
//!
//! Ignored in a plain `cargo test`: they need restate-server.

use agentix_test_support::restate as support;

use std::os::unix::process::ExitStatusExt;
use std::path::PathBuf;
use std::time::Duration;

use agentix::event::Post;
use agentix::{
    Agent, AssistantMessage, Entry, Outcome, ToolCall, Turn, Verdict, approval::Approval,
};
use agentix_restate::{Conversations, WaitingApproval};
use agentix_test_support::durable_turn::{
    self, AskFirst, DelegatingModel, KeyedSend, PairModel, Refuse, SendingModel, ToolDeath,
};
use agentix_test_support::{TempDir, append, die, lines};
use restate_sdk::prelude::Endpoint;
use serde_json::json;
use support::{Restate, Service, wait_for};

const SERVICE: &str = "AGENTIX_RESTATE_SERVICE";

/// Where the service dies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Point {
    /// Inside the `n`th model call (from 1), before it answers: the opening step recorded,
    /// and the first model call's too for the second.
    InModel(usize),
    /// As the tool starts: the first model call recorded.
    BeforeEffect,
    /// In the tool, after its side effect, before its step is recorded.
    AfterEffect,
    /// In `post`: every step recorded, the turn's entries not yet written.
    InPost,
}

fn encode(point: Option<Point>) -> String {
    match point {
        None => "none".into(),
        Some(Point::InModel(n)) => format!("model{n}"),
        Some(Point::BeforeEffect) => "before".into(),
        Some(Point::AfterEffect) => "after".into(),
        Some(Point::InPost) => "post".into(),
    }
}

fn decode(text: &str) -> Option<Point> {
    Some(match text {
        "model1" => Point::InModel(1),
        "model2" => Point::InModel(2),
        "before" => Point::BeforeEffect,
        "after" => Point::AfterEffect,
        "post" => Point::InPost,
        _ => return None,
    })
}

/// Dies in `post`, if told to.
struct DieInPost(Option<Point>);

impl agentix::on::Post for DieInPost {
    async fn post(&self, _: &Outcome, _: &mut Turn) -> Verdict<Post> {
        if self.0 == Some(Point::InPost) {
            die();
        }
        Verdict::Continue
    }
}

/// A model that takes two seconds to answer.
struct Slow;

impl agentix::Model for Slow {
    async fn complete(
        &self,
        _: &agentix::model::ModelRequest,
    ) -> Result<agentix::model::ModelResponse, agentix::model::ModelError> {
        tokio::time::sleep(Duration::from_secs(2)).await;
        Ok(AssistantMessage::text("Done.").into())
    }
}

/// Trips, after 50 ms, on a turn whose message holds a secret.
struct NoSecrets;

impl agentix::on::Tripwire for NoSecrets {
    async fn tripwire(
        &self,
        request: &agentix::model::ModelRequest,
        _: &Turn,
    ) -> agentix::verdict::Trip {
        tokio::time::sleep(Duration::from_millis(50)).await;
        let last = request.messages.last().map(|message| message.text()).unwrap_or_default();
        if last.contains("secret") {
            agentix::verdict::Trip::trip("a secret")
        } else {
            agentix::verdict::Trip::Pass
        }
    }
}

/// The service: `PORT|DIR|MODE=POINT`. `run` serves the agent (dying at the point, `none`
/// for none); `refuse` serves it with a hook that refuses the call; `wait` with every call
/// waiting for a person, each announced to a file. Ignored in a test run; without the variable
/// it does nothing.
#[test]
#[ignore = "the service process of the tests below, which run it"]
fn service() {
    let Ok(spec) = std::env::var(SERVICE) else { return };
    let fields: Vec<&str> = spec.splitn(3, '|').collect();
    let [port, dir, mode] = fields[..] else { panic!("a service spec: {spec}") };
    let (mode, point) = mode.split_once('=').expect("MODE=POINT");
    let kill = decode(point);
    let dir = PathBuf::from(dir);
    let die_in_call = match kill {
        Some(Point::InModel(n)) => Some(n),
        _ => None,
    };
    let die = match kill {
        Some(Point::BeforeEffect) => Some(ToolDeath::BeforeEffect),
        Some(Point::AfterEffect) => Some(ToolDeath::AfterEffect),
        _ => None,
    };
    let model = SendingModel { calls: dir.join("model_calls"), die_in_call };
    let send = KeyedSend { dir: dir.clone(), die, slow: None };
    let agent = Agent::builder(model).tool(send);
    let conversations = match mode {
        "run" => Conversations::new(agent.hook(DieInPost(kill)).build()),
        "refuse" => Conversations::new(agent.hook(Refuse).build()),
        "team" => {
            let parent = DelegatingModel { calls: dir.join("parent_calls") };
            let model = SendingModel { calls: dir.join("model_calls"), die_in_call };
            let send = KeyedSend { dir: dir.clone(), die, slow: None };
            Conversations::new(durable_turn::team(parent, model, send))
        }
        // A tripwire beside a model call of two seconds.
        "tripwire" => Conversations::new(Agent::builder(Slow).hook(NoSecrets).build()),
        // A step of two calls (the boss's slow): Restate's journal replays by position, so
        // they run one at a time.
        "pair" => {
            let model = PairModel { calls: dir.join("model_calls"), die_in_call };
            let send = KeyedSend { dir: dir.clone(), die, slow: Some("boss") };
            Conversations::new(Agent::builder(model).tool(send).build())
        }
        "wait" => {
            let announced = dir.join("announced");
            let agent =
                agent.hook(AskFirst).approver(|_: ToolCall, _| async { Approval::Suspend }).build();
            Conversations::new(agent).announce(move |waiting: WaitingApproval| {
                let announced = announced.clone();
                async move { append(&announced, &waiting.awakeable) }
            })
        }
        other => panic!("a mode: {other}"),
    };
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    runtime.block_on(async {
        let listener = tokio::net::TcpListener::bind(format!("127.0.0.1:{port}")).await.unwrap();
        let endpoint = Endpoint::builder().bind(conversations).build();
        agentix_restate::serve(endpoint, listener, std::future::pending()).await;
    });
}

fn spawn(port: u16, dir: &TempDir, mode: &str, point: Option<Point>) -> Service {
    let spec = format!("{port}|{}|{mode}={}", dir.0.display(), encode(point));
    Service::spawn(SERVICE, spec)
}

/// Kills a service that serves on, and waits for it.
fn stop(service: Service) {
    drop(service);
}

/// The log a clean run of `turns` turns leaves, every call answered `answer` if there is one
/// (`durable_turn::clean_log`, on a runtime of its own).
fn clean_log(key: &str, turns: usize, answer: Option<Approval>) -> Vec<Entry> {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    runtime.block_on(durable_turn::clean_log(key, turns, answer))
}

fn history(restate: &Restate, key: &str) -> Vec<Entry> {
    restate.history(key)
}

fn send_in_background(restate: &Restate, key: &str) -> std::thread::JoinHandle<(u16, String)> {
    restate.send_in_background(key, "Send it")
}

#[test]
#[ignore = "needs restate-server: scripts/restate.sh runs it"]
fn a_turn_killed_at_every_step_finishes_once() {
    let restate = Restate::start("every_step");
    let port = support::free_port();
    let points = [
        Point::InModel(1),
        Point::BeforeEffect,
        Point::AfterEffect,
        Point::InModel(2),
        Point::InPost,
    ];
    for (n, point) in points.into_iter().enumerate() {
        let key = format!("c{n}");
        let dir = TempDir::new("every_step");
        let service = spawn(port, &dir, "run", Some(point));
        if n == 0 {
            restate.register(port);
        }
        let turn = send_in_background(&restate, &key);
        let status = service.wait();
        assert_eq!(status.signal(), Some(9), "{point:?}: the service was killed");

        let service = spawn(port, &dir, "run", None);
        let (status, body) = turn.join().unwrap();
        stop(service);
        assert_eq!(status, 200, "{point:?}: {body}");
        let answer: AssistantMessage = serde_json::from_str(&body).unwrap();
        assert_eq!(answer, AssistantMessage::text("Done."), "{point:?}");

        let service = spawn(port, &dir, "run", None);
        assert_eq!(history(&restate, &key), clean_log(&key, 1, None), "{point:?}: a clean run's");
        stop(service);
        let in_flight = usize::from(matches!(point, Point::InModel(_)));
        assert_eq!(lines(&dir.0.join("model_calls")).len(), 2 + in_flight, "{point:?}");
        assert_eq!(lines(&dir.0.join("applied")), [format!("{key}/1/call_1")], "{point:?}");
        let attempts = 1 + usize::from(point == Point::AfterEffect);
        assert_eq!(lines(&dir.0.join("attempts")).len(), attempts, "{point:?}");

        if n == 0 {
            // A second turn writes its own entries only; the log reads back whole.
            let service = spawn(port, &dir, "run", None);
            let (status, body) = send_in_background(&restate, &key).join().unwrap();
            assert_eq!(status, 200, "{body}");
            assert_eq!(history(&restate, &key), clean_log(&key, 2, None));
            stop(service);
        }
    }
}

/// A parent whose sub-agent runs the model → tool → model turn, the service killed inside each
/// of the child's model calls and around its tool's effect: Restate runs the invocation again,
/// the child's steps replayed from the journal inside the parent's call — no completed model
/// call of the child's or the parent's made again, the child's tool applied once — and the turn
/// finishes as a clean run does.
#[test]
#[ignore = "needs restate-server: scripts/restate.sh runs it"]
fn a_team_killed_mid_child_finishes_once() {
    let restate = Restate::start("team");
    let port = support::free_port();
    let points = [Point::InModel(1), Point::BeforeEffect, Point::AfterEffect, Point::InModel(2)];
    for (n, point) in points.into_iter().enumerate() {
        let key = format!("t{n}");
        let dir = TempDir::new("team");
        let service = spawn(port, &dir, "team", Some(point));
        if n == 0 {
            restate.register(port);
        }
        let turn = restate.send_in_background(&key, "Have it sent");
        assert_eq!(service.wait().signal(), Some(9), "{point:?}: the service was killed");

        let service = spawn(port, &dir, "team", None);
        let (status, body) = turn.join().unwrap();
        stop(service);
        assert_eq!(status, 200, "{point:?}: {body}");
        let answer: AssistantMessage = serde_json::from_str(&body).unwrap();
        assert_eq!(answer, AssistantMessage::text("The worker sent it."), "{point:?}");

        let service = spawn(port, &dir, "team", None);
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let clean = runtime.block_on(durable_turn::clean_team_log(&key));
        assert_eq!(history(&restate, &key), clean, "{point:?}: a clean run's");
        stop(service);
        let in_flight = usize::from(matches!(point, Point::InModel(_)));
        assert_eq!(lines(&dir.0.join("model_calls")).len(), 2 + in_flight, "{point:?}: child");
        assert_eq!(lines(&dir.0.join("parent_calls")).len(), 2, "{point:?}: parent");
        let applied = [format!("{key}/1/call_w/worker/1/call_1")];
        assert_eq!(lines(&dir.0.join("applied")), applied, "{point:?}: applied once");
        let attempts = 1 + usize::from(point == Point::AfterEffect);
        assert_eq!(lines(&dir.0.join("attempts")).len(), attempts, "{point:?}");
    }
}

/// A step of two calls, the service killed inside each model call and around the first
/// call's effect: Restate runs the invocation again and the turn finishes as a clean run does,
/// no completed model call made again, each call's effect applied once.
#[test]
#[ignore = "needs restate-server: scripts/restate.sh runs it"]
fn a_step_of_two_calls_killed_anywhere_finishes_once() {
    let restate = Restate::start("pair");
    let port = support::free_port();
    let points = [Point::InModel(1), Point::BeforeEffect, Point::AfterEffect, Point::InModel(2)];
    for (n, point) in points.into_iter().enumerate() {
        let key = format!("p{n}");
        let dir = TempDir::new("pair");
        let service = spawn(port, &dir, "pair", Some(point));
        if n == 0 {
            restate.register(port);
        }
        let turn = send_in_background(&restate, &key);
        assert_eq!(service.wait().signal(), Some(9), "{point:?}: the service was killed");

        let service = spawn(port, &dir, "pair", None);
        let (status, body) = turn.join().unwrap();
        stop(service);
        assert_eq!(status, 200, "{point:?}: {body}");
        let answer: AssistantMessage = serde_json::from_str(&body).unwrap();
        assert_eq!(answer, AssistantMessage::text("Both sent."), "{point:?}");

        let service = spawn(port, &dir, "pair", None);
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let clean = runtime.block_on(durable_turn::clean_pair_log(&key));
        assert_eq!(history(&restate, &key), clean, "{point:?}: a clean run's");
        stop(service);
        let in_flight = usize::from(matches!(point, Point::InModel(_)));
        assert_eq!(lines(&dir.0.join("model_calls")).len(), 2 + in_flight, "{point:?}");
        let mut applied = lines(&dir.0.join("applied"));
        applied.sort();
        let each = [format!("{key}/1/call_1"), format!("{key}/1/call_2")];
        assert_eq!(applied, each, "{point:?}: each applied once");
        let attempts = 2 + usize::from(point == Point::AfterEffect);
        assert_eq!(lines(&dir.0.join("attempts")).len(), attempts, "{point:?}");
    }
}

/// A tripwire trips while the journaled model call is in flight: the call is cancelled, the
/// turn ends with the trip (Restate's caller reads it), the log keeps the user message and the
/// trip, and the conversation's next turn runs as any.
#[test]
#[ignore = "needs restate-server: scripts/restate.sh runs it"]
fn a_tripwire_cancels_a_journaled_call_and_the_conversation_goes_on() {
    let restate = Restate::start("tripwire");
    let port = support::free_port();
    let dir = TempDir::new("tripwire");
    let service = spawn(port, &dir, "tripwire", None);
    restate.register(port);
    let (status, body) = restate.send_in_background("k", "the secret is 42").join().unwrap();
    assert_eq!(status, 500, "{body}");
    assert!(body.contains("tripwire hook `NoSecrets` tripped: a secret"), "{body}");
    let log = history(&restate, "k");
    assert_eq!(log.len(), 2, "{log:#?}");
    assert!(matches!(&log[1], Entry::Halted { event: agentix::event::EventKind::Tripwire, .. }));

    let (status, body) = restate.send_in_background("k", "the weather?").join().unwrap();
    assert_eq!(status, 200, "{body}");
    let answer: AssistantMessage = serde_json::from_str(&body).unwrap();
    assert_eq!(answer, AssistantMessage::text("Done."));
    assert_eq!(history(&restate, "k").len(), 4);
    stop(service);
}

/// The last failure restate-server recorded for the conversation's `send`, once it is a
/// divergence.
fn last_failure(restate: &Restate, key: &str) -> String {
    let sql =
        format!("SELECT last_failure FROM sys_invocation WHERE target = 'Conversation/{key}/send'");
    let mut failure = String::new();
    wait_for(Duration::from_secs(30), "the invocation's failure", || {
        let rows = support::query(restate.admin, &sql);
        failure = rows.first().and_then(|row| row["last_failure"].as_str()).unwrap_or("").into();
        failure.contains("diverged")
    });
    failure
}

/// Killed with the tool's step recorded and the second model call in flight, then served
/// with a hook that refuses the call: the replay asks for the model where the journal holds
/// the tool — the typed error, recorded as the invocation's failure while Restate retries it,
/// the conversation not written, no model called. Served with the code it started on again,
/// the turn finishes as a clean run's.
#[test]
#[ignore = "needs restate-server: scripts/restate.sh runs it"]
fn a_hook_changed_between_the_crash_and_the_replay_diverges() {
    let restate = Restate::start("diverge");
    let port = support::free_port();
    let dir = TempDir::new("diverge");
    let service = spawn(port, &dir, "run", Some(Point::InModel(2)));
    restate.register(port);
    let turn = send_in_background(&restate, "c");
    assert_eq!(service.wait().signal(), Some(9));

    let service = spawn(port, &dir, "refuse", None);
    // Restate's journal holds the second model call's run, never completed: the replay met a
    // recorded step where it diverged, and commands after it.
    let sql = "SELECT j.entry_type FROM sys_journal j JOIN sys_invocation i ON j.id = i.id \
               WHERE i.target = 'Conversation/c/send'";
    let kinds: Vec<String> = support::query(restate.admin, sql)
        .iter()
        .filter_map(|row| row["entry_type"].as_str().map(str::to_owned))
        .collect();
    let count = |kind: &str| kinds.iter().filter(|k| k.as_str() == kind).count();
    assert_eq!((count("Command: Run"), count("Notification: Run")), (4, 3), "{kinds:?}");
    let failure = last_failure(&restate, "c");
    assert!(
        failure.contains(
            "conversation c: the replay diverged: it asked for model (turn 1, step 1), where \
             the journal recorded tool send (turn 1, step 0, call_1)"
        ),
        "{failure}"
    );
    assert!(history(&restate, "c").is_empty(), "the conversation is not written");
    stop(service);
    assert_eq!(lines(&dir.0.join("model_calls")).len(), 2, "the replay called no model");

    let service = spawn(port, &dir, "run", None);
    let (status, body) = turn.join().unwrap();
    assert_eq!(status, 200, "{body}");
    assert_eq!(history(&restate, "c"), clean_log("c", 1, None));
    stop(service);
    assert_eq!(lines(&dir.0.join("model_calls")).len(), 3, "the one in flight, again");
    assert_eq!(lines(&dir.0.join("applied")), ["c/1/call_1"]);
}

/// The call waits for a person; the service is served again with a hook that refuses the
/// call instead of escalating it: the replay diverges at the approval, recorded as the
/// invocation's failure. Served with the code it started on, it waits again, and the answer
/// finishes it.
#[test]
#[ignore = "needs restate-server: scripts/restate.sh runs it"]
fn a_hook_changed_while_an_approval_waits_diverges() {
    let restate = Restate::start("diverge_waiting");
    let port = support::free_port();
    let dir = TempDir::new("diverge_waiting");
    let service = spawn(port, &dir, "wait", None);
    restate.register(port);
    let turn = send_in_background(&restate, "c");
    let waiting = waiting(&restate, "c");
    stop(service);

    let service = spawn(port, &dir, "refuse", None);
    let (status, body) = restate.call("c", "approve", &format!("\"{}\"", waiting.awakeable));
    assert_eq!(status, 200, "{body}");
    let failure = last_failure(&restate, "c");
    assert!(
        failure.contains(
            "the replay diverged: it asked for model (turn 1, step 1), where the journal \
             recorded approval send (turn 1, step 0, call_1)"
        ),
        "{failure}"
    );
    stop(service);

    let service = spawn(port, &dir, "wait", None);
    let (status, body) = turn.join().unwrap();
    assert_eq!(status, 200, "{body}");
    assert_eq!(history(&restate, "c"), clean_log("c", 1, Some(Approval::Approve)));
    stop(service);
    assert_eq!(lines(&dir.0.join("announced")), [waiting.awakeable], "announced once");
    assert_eq!(lines(&dir.0.join("model_calls")).len(), 2);
    assert_eq!(lines(&dir.0.join("applied")), ["c/1/call_1"]);
}

/// The call waiting in conversation `key`, once one waits.
fn waiting(restate: &Restate, key: &str) -> WaitingApproval {
    let mut waiting = None;
    wait_for(Duration::from_secs(30), "the call waiting", || {
        let (status, body) = restate.call(key, "pending", "");
        assert_eq!(status, 200, "{body}");
        waiting = serde_json::from_str::<Option<WaitingApproval>>(&body).unwrap();
        waiting.is_some()
    });
    waiting.unwrap()
}

/// The call waits for a person on an awakeable, announced once; the service is killed while
/// it waits and started again; an answer naming another call is refused, `approve` naming it
/// answers it, and the turn finishes as a clean run whose approver approved.
#[test]
#[ignore = "needs restate-server: scripts/restate.sh runs it"]
fn an_approval_waits_across_a_crash_and_is_announced_once() {
    let restate = Restate::start("approval");
    let port = support::free_port();
    let dir = TempDir::new("approval");
    let service = spawn(port, &dir, "wait", None);
    restate.register(port);
    let (status, body) = restate.call("c", "approve", "\"sign_none\"");
    assert_eq!(status, 404, "nothing waits yet: {body}");
    assert!(body.contains("conversation c: no call waits for approval"), "{body}");
    let turn = send_in_background(&restate, "c");
    let waiting = waiting(&restate, "c");
    assert_eq!(waiting.conversation, "c");
    assert_eq!(waiting.approval.call.name, "send");
    assert_eq!(waiting.approval.reason, "a person decides");
    // Shown once announced.
    assert_eq!(lines(&dir.0.join("announced")), std::slice::from_ref(&waiting.awakeable));
    stop(service);

    let service = spawn(port, &dir, "wait", None);
    let (status, body) = restate.call("c", "approve", "\"sign_another\"");
    assert_eq!(status, 409, "another call's answer: {body}");
    let (status, body) = restate.call("c", "approve", &format!("\"{}\"", waiting.awakeable));
    assert_eq!(status, 200, "{body}");
    let (status, body) = turn.join().unwrap();
    assert_eq!(status, 200, "{body}");
    assert_eq!(lines(&dir.0.join("announced")), [waiting.awakeable], "announced once");
    assert_eq!(history(&restate, "c"), clean_log("c", 1, Some(Approval::Approve)));
    let (status, body) = restate.call("c", "pending", "");
    assert_eq!((status, body.as_str()), (200, "null"), "nothing waits");
    stop(service);
    assert_eq!(lines(&dir.0.join("model_calls")).len(), 2);
    assert_eq!(lines(&dir.0.join("applied")), ["c/1/call_1"]);
}

/// `reject` and `edit` answer a waiting call by its awakeable: the rejected call does not run
/// and the model reads the reason; the edited one runs as edited, under the waiting call's
/// id. Each turn ends as a clean run whose approver answered the same.
#[test]
#[ignore = "needs restate-server: scripts/restate.sh runs it"]
fn reject_and_edit_answer_the_waiting_call() {
    let restate = Restate::start("reject_edit");
    let port = support::free_port();
    let dir = TempDir::new("reject_edit");
    let service = spawn(port, &dir, "wait", None);
    restate.register(port);

    let turn = send_in_background(&restate, "r");
    let awakeable = waiting(&restate, "r").awakeable;
    let reject = json!({ "awakeable": awakeable, "reason": "not now" }).to_string();
    let (status, body) = restate.call("r", "reject", &reject);
    assert_eq!(status, 200, "{body}");
    let (status, body) = turn.join().unwrap();
    assert_eq!(status, 200, "{body}");
    let rejected = Approval::Reject("not now".into());
    assert_eq!(history(&restate, "r"), clean_log("r", 1, Some(rejected)));
    assert!(lines(&dir.0.join("applied")).is_empty(), "the rejected call did not run");
    let (status, body) = restate.call("r", "pending", "");
    assert_eq!((status, body.as_str()), (200, "null"), "nothing waits");

    let turn = send_in_background(&restate, "e");
    let awakeable = waiting(&restate, "e").awakeable;
    let call = ToolCall::new("call_edited", "send", json!({ "to": "team" }));
    let edit = json!({ "awakeable": awakeable, "call": call }).to_string();
    let (status, body) = restate.call("e", "edit", &edit);
    assert_eq!(status, 200, "{body}");
    let (status, body) = turn.join().unwrap();
    assert_eq!(status, 200, "{body}");
    let log = history(&restate, "e");
    assert_eq!(log, clean_log("e", 1, Some(Approval::Edit(call))));
    let results = serde_json::to_string(&log).unwrap();
    assert!(results.contains("sent to team"), "the edited call ran: {results}");
    assert!(!results.contains("call_edited"), "under the waiting call's id: {results}");
    assert_eq!(lines(&dir.0.join("applied")), ["e/1/call_1"]);

    // An answer refused through Restate's own API ends the turn with the error; the log keeps
    // what ran and nothing waits any more.
    let turn = send_in_background(&restate, "x");
    let awakeable = waiting(&restate, "x").awakeable;
    let path = format!("/restate/awakeables/{awakeable}/reject");
    let (status, body) = support::request(restate.ingress, "POST", &path, "\"gone\"").unwrap();
    assert!((200..300).contains(&status), "{status} {body}");
    let (status, body) = turn.join().unwrap();
    assert_eq!(status, 500, "{body}");
    assert!(body.contains("the answer was refused"), "{body}");
    let (status, body) = restate.call("x", "pending", "");
    assert_eq!((status, body.as_str()), (200, "null"), "nothing waits");
    let log = history(&restate, "x");
    assert!(matches!(log.first(), Some(Entry::User { .. })), "{log:?}");
    assert_eq!(lines(&dir.0.join("applied")), ["e/1/call_1"], "the refused call did not run");
    stop(service);
}
