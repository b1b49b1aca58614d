//! The served agent, driven over real HTTP on 127.0.0.1: many conversations at once, each turn
//! answered as JSON or streamed as Server-Sent Events, bad requests refused with a JSON error.

mod support;
use support::{client, create, router, router_with_store, serve};

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use agentix::event::{AfterModel, Post};
use agentix::{
    Agent, AssistantMessage, Conversation, Entry, Hook, Model, Outcome, Part, Turn, Verdict, hook,
    model::{ModelError, ModelRequest, ModelResponse},
};
use agentix_server::TurnAnswer;
use agentix_server::demo::{DemoModel, demo_agent, get_weather};
use serde_json::{Value, json};
use tokio::sync::Notify;

/// Counts the turns that reached `post`.
#[derive(Clone, Default)]
struct CountTurns(Arc<AtomicUsize>);

#[hook]
impl Hook for CountTurns {
    async fn post(&self, _outcome: &Outcome, _turn: &mut Turn) -> Verdict<Post> {
        self.0.fetch_add(1, Ordering::Relaxed);
        Verdict::Continue
    }
}

/// One turn as JSON: the status and the body.
async fn send(client: &reqwest::Client, base: &str, id: &str, message: &str) -> (u16, Value) {
    let response = client
        .post(format!("{base}/conversations/{id}/messages"))
        .json(&json!({ "message": message }))
        .send()
        .await
        .unwrap();
    let status = response.status().as_u16();
    let retry_after = response.headers().get("retry-after").cloned();
    let mut body: Value = response.json().await.unwrap();
    // `Retry-After`, kept beside the body for the tests that check it.
    if let (Some(retry_after), Some(fields)) = (retry_after, body.as_object_mut()) {
        fields.insert("retry_after".into(), retry_after.to_str().unwrap().into());
    }
    (status, body)
}

/// One turn as Server-Sent Events: each event's name and data, in order.
async fn stream(
    client: &reqwest::Client,
    base: &str,
    id: &str,
    message: &str,
) -> Vec<(String, Value)> {
    let response = client
        .post(format!("{base}/conversations/{id}/messages"))
        .header("accept", "text/event-stream")
        .json(&json!({ "message": message }))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(response.headers()["content-type"], "text/event-stream");
    let body = response.text().await.unwrap();
    body.split("\n\n")
        .filter(|event| !event.is_empty())
        .map(|event| {
            let field = |name: &str| {
                event.lines().find_map(|line| line.strip_prefix(name)).unwrap_or_default()
            };
            (field("event: ").to_owned(), serde_json::from_str(field("data: ")).unwrap())
        })
        .collect()
}

/// The answer a streamed turn ended with (`done`), after checking that its text deltas add up
/// to it.
fn streamed_answer(events: &[(String, Value)]) -> TurnAnswer {
    let (last, data) = events.last().expect("a streamed turn has events");
    assert_eq!(last, "done", "{events:#?}");
    let answer: TurnAnswer = serde_json::from_value(data.clone()).unwrap();
    let mut shown = String::new();
    for (name, data) in events {
        match name.as_str() {
            "text" => shown.push_str(data["text"].as_str().unwrap()),
            "withdrawn" => shown.clear(),
            _ => {}
        }
    }
    assert_eq!(shown, answer.text, "{events:#?}");
    answer
}

async fn log_of(client: &reqwest::Client, base: &str, id: &str) -> Vec<Entry> {
    let response = client.get(format!("{base}/conversations/{id}")).send().await.unwrap();
    assert_eq!(response.status(), 200);
    let conversation: Conversation = response.json().await.unwrap();
    conversation.log().to_vec()
}

/// Each turn of `log` is `[user, the tool call, its result, the answer]`, for the messages in
/// order, every call answered by the result beside it.
fn assert_turns(log: &[Entry], messages: &[String]) {
    assert_eq!(log.len(), 4 * messages.len(), "{log:#?}");
    for ((turn, entries), message) in (1..).zip(log.chunks(4)).zip(messages) {
        let [
            Entry::User { turn: opened, message: user, .. },
            Entry::Assistant { message: call, .. },
            Entry::ToolResults { results, .. },
            Entry::Assistant { message: answer, .. },
        ] = entries
        else {
            panic!(
                "turn {turn} is not a user message, a call, its result and an answer: {entries:#?}"
            );
        };
        assert_eq!(opened.0, turn);
        assert!(entries.iter().all(|entry| entry.turn().0 == turn), "{entries:#?}");
        assert_eq!(user.text(), message.as_str());
        let calls: Vec<_> = call.tool_calls().collect();
        assert_eq!(calls.len(), 1);
        assert_eq!(calls[0].arguments, json!({ "city": message }));
        assert_eq!(results.len(), 1);
        assert_eq!(results[0].call_id, calls[0].id);
        assert_eq!(answer.joined_text(), format!("Here is the weather: {message}: clear sky, 21."));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_hundred_conversations_of_five_turns_each_at_once() {
    let posts = CountTurns::default();
    let agent = Agent::builder(DemoModel { latency: Duration::from_millis(5) })
        .tool(get_weather)
        .hook(posts.clone())
        .build();
    let base = serve(router(agent)).await;
    let client = client();

    let conversations = (0..200).map(|conversation| {
        let (client, base) = (client.clone(), base.clone());
        tokio::spawn(async move {
            let id = create(&client, &base).await;
            let mut messages = Vec::new();
            for turn in 1..=5u64 {
                let message = format!("city {conversation}-{turn}");
                // Every third turn streamed, spread over the conversations.
                let answer = if (conversation + turn) % 3 == 0 {
                    streamed_answer(&stream(&client, &base, &id, &message).await)
                } else {
                    let (status, body) = send(&client, &base, &id, &message).await;
                    assert_eq!(status, 200, "{body}");
                    serde_json::from_value(body).unwrap()
                };
                assert_eq!((answer.conversation.as_str(), answer.turn), (id.as_str(), turn));
                assert_eq!(answer.text, format!("Here is the weather: {message}: clear sky, 21."));
                messages.push(message);
            }
            (id, messages)
        })
    });
    let conversations = futures::future::join_all(conversations).await;

    for conversation in conversations {
        let (id, messages) = conversation.unwrap();
        assert_turns(&log_of(&client, &base, &id).await, &messages);
    }
    assert_eq!(posts.0.load(Ordering::Relaxed), 1_000);
}

/// `after_model`: sends the first final answer of each turn back once, unchanged, so that a
/// streamed turn withdraws the text it showed.
#[hook(after_model)]
async fn check_twice(message: &AssistantMessage, turn: &Turn) -> Verdict<AfterModel> {
    if message.calls_tools() || turn.retries() > 0 {
        Verdict::Continue
    } else {
        Verdict::retry_silently()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_streamed_and_the_json_turns_leave_the_same_log() {
    let agent = Agent::builder(DemoModel::default()).tool(get_weather).hook(check_twice).build();
    let base = serve(router(agent)).await;
    let client = client();
    let (json_id, streamed_id) = (create(&client, &base).await, create(&client, &base).await);
    let messages: Vec<String> = ["Oslo", "Bergen", "Tromsø"].map(String::from).to_vec();
    for (turn, message) in (1..).zip(&messages) {
        let (status, body) = send(&client, &base, &json_id, message).await;
        assert_eq!(status, 200, "{body}");
        let events = stream(&client, &base, &streamed_id, message).await;
        let names: Vec<&str> = events.iter().map(|(name, _)| name.as_str()).collect();
        let texts = names.iter().filter(|name| **name == "text").count();
        // The call, its result, the first answer (withdrawn), the answer again, and the end.
        let mut expected = vec!["tool_call", "tool_result"];
        expected.extend(vec!["text"; texts / 2]);
        expected.push("withdrawn");
        expected.extend(vec!["text"; texts / 2]);
        expected.push("done");
        assert_eq!(names, expected);
        let streamed = streamed_answer(&events);
        let json: TurnAnswer = serde_json::from_value(body).unwrap();
        assert_eq!(
            (streamed.turn, streamed.text, streamed.message),
            (turn, json.text, json.message)
        );
    }
    let json_log = log_of(&client, &base, &json_id).await;
    assert_turns(&json_log, &messages);
    assert_eq!(log_of(&client, &base, &streamed_id).await, json_log);
}

/// A model that answers only once the test opens its gate.
#[derive(Default)]
struct Gated(Notify);

impl Model for Gated {
    async fn complete(&self, _request: &ModelRequest) -> Result<ModelResponse, ModelError> {
        self.0.notified().await;
        Ok(AssistantMessage::text("at last").into())
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_requests_get_a_json_error_naming_what_was_wrong() {
    let model = Arc::new(Gated::default());
    let base = serve(router(Agent::builder(Arc::clone(&model)).build())).await;
    let client = client();
    let id = create(&client, &base).await;
    let messages = format!("{base}/conversations/{id}/messages");
    let error = |body: &Value| body["error"]["code"].as_str().unwrap_or_default().to_owned();

    let (status, body) = send(&client, &base, "no-such-id", "hi").await;
    assert_eq!((status, error(&body)), (404, "unknown_conversation".into()), "{body}");
    let response = client.get(format!("{base}/conversations/no-such-id")).send().await.unwrap();
    assert_eq!(response.status(), 404);

    let (status, body) = send(&client, &base, &id, " \n ").await;
    assert_eq!((status, error(&body)), (400, "empty_message".into()), "{body}");

    let response = client.post(&messages).json(&json!({ "text": "hi" })).send().await.unwrap();
    assert_eq!(response.status(), 422);
    let body: Value = response.json().await.unwrap();
    assert_eq!(error(&body), "bad_request");
    assert!(body["error"]["message"].as_str().unwrap().contains("unknown field `text`"), "{body}");

    let response = client.post(&messages).body("hi").send().await.unwrap();
    assert_eq!(response.status(), 415);
    let body: Value = response.json().await.unwrap();
    assert_eq!(error(&body), "bad_request", "{body}");

    // A turn waits on the model: a second message to the conversation is refused, and so is a
    // read of its log, until the first turn ends.
    let first = tokio::spawn({
        let (client, base, id) = (client.clone(), base.clone(), id.clone());
        async move { send(&client, &base, &id, "first").await }
    });
    // Once a read of the log is refused, the first turn is running.
    loop {
        let response = client.get(format!("{base}/conversations/{id}")).send().await.unwrap();
        match response.status().as_u16() {
            200 => tokio::task::yield_now().await,
            409 => break,
            other => panic!("reading the log: {other}"),
        }
    }
    let (status, second) = send(&client, &base, &id, "second").await;
    assert_eq!((status, error(&second)), (409, "turn_running".into()), "{second}");
    let response = client.get(format!("{base}/conversations/{id}")).send().await.unwrap();
    assert_eq!(response.status(), 409);
    assert_eq!(response.headers()["retry-after"], "1", "a client may try again soon");
    model.0.notify_one();
    let (status, body) = first.await.unwrap();
    assert_eq!((status, body["text"].as_str()), (200, Some("at last")), "{body}");

    let log = log_of(&client, &base, &id).await;
    assert_eq!(log.len(), 2, "one turn only, whole: {log:#?}");
    assert!(matches!(&log[0], Entry::User { message, .. } if message.text() == "first"));
    assert!(
        matches!(&log[1], Entry::Assistant { message, .. } if message.content == [Part::text("at last")])
    );
}

/// A store in a fresh directory: a SQLite file, as `--database sqlite://…` opens it.
async fn sqlite_store(name: &str) -> (agentix_store::Store, std::path::PathBuf) {
    let dir = std::env::temp_dir().join(format!(
        "agentix-server-{name}-{}-{}",
        std::process::id(),
        uuid::Uuid::new_v4()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    let url = format!("sqlite://{}", dir.join("chats.db").display());
    (agentix_store::Store::open(&url).await.unwrap(), dir)
}

#[tokio::test]
async fn a_restarted_server_goes_on_with_its_stored_conversations() {
    let (store, dir) = sqlite_store("restart").await;
    let client = client();
    let first = serve(router_with_store(demo_agent(), store.clone())).await;
    let id = create(&client, &first).await;
    let (status, body) = send(&client, &first, &id, "Oslo").await;
    assert_eq!(status, 200, "{body}");
    let streamed = streamed_answer(&stream(&client, &first, &id, "Bergen").await);
    assert_eq!(streamed.turn, 2);

    // Another server over the same file: what the first served, it serves.
    let reopened =
        agentix_store::Store::open(&format!("sqlite://{}", dir.join("chats.db").display()))
            .await
            .unwrap();
    let second = serve(router_with_store(demo_agent(), reopened)).await;
    assert_turns(&log_of(&client, &second, &id).await, &["Oslo".into(), "Bergen".into()]);
    let (status, body) = send(&client, &second, &id, "Tromsø").await;
    assert_eq!((status, body["turn"].as_u64()), (200, Some(3)), "{body}");
    let log = log_of(&client, &second, &id).await;
    assert_turns(&log, &["Oslo".into(), "Bergen".into(), "Tromsø".into()]);
    assert_eq!(store.load(&id).await.unwrap().conversation.log(), log, "each step committed");

    let (status, body) = send(&client, &second, "nobody", "Oslo").await;
    assert_eq!((status, body["error"]["code"].as_str()), (404, Some("unknown_conversation")));
    std::fs::remove_dir_all(dir).unwrap();
}

#[tokio::test]
async fn two_servers_on_one_store_never_interleave_a_conversation() {
    let (store, dir) = sqlite_store("two").await;
    let slow = || {
        Agent::builder(DemoModel { latency: Duration::from_millis(200) }).tool(get_weather).build()
    };
    let client = client();
    let one = serve(router_with_store(slow(), store.clone())).await;
    let two = serve(router_with_store(slow(), store.clone())).await;
    let id = create(&client, &one).await;
    let (a, b) = tokio::join!(send(&client, &one, &id, "Oslo"), send(&client, &two, &id, "Bergen"));
    let mut statuses = [a.0, b.0];
    statuses.sort_unstable();
    assert_eq!(statuses, [200, 409], "{a:?} {b:?}");
    let lost = if a.0 == 409 { &a.1 } else { &b.1 };
    assert_eq!(lost["error"]["code"], "conflict", "{lost}");
    assert_eq!(lost["retry_after"], "1", "a client may try again soon: {lost}");
    // The log holds whole steps of one turn after another, never the two mixed.
    let log = store.load(&id).await.unwrap().conversation.log().to_vec();
    let won = if a.0 == 200 { "Oslo" } else { "Bergen" };
    let turns: Vec<u64> = log.iter().map(|entry| entry.turn().0).collect();
    assert!(turns.is_sorted(), "{log:#?}");
    let answered = log.iter().filter(|entry| matches!(entry, Entry::ToolResults { .. })).count();
    assert_eq!(answered, 1, "only the winner's step: {log:#?}");
    assert!(
        log.iter()
            .any(|entry| matches!(entry, Entry::User { message, .. } if message.text() == won))
    );
    std::fs::remove_dir_all(dir).unwrap();
}

/// Every call needs a person's yes.
#[hook(before_tool)]
async fn ask_a_person(
    _call: &mut agentix::ToolCall,
    _turn: &mut Turn,
) -> Verdict<agentix::event::BeforeTool> {
    Verdict::escalate("a person decides")
}

#[tokio::test]
async fn a_stored_conversation_waiting_for_approval_is_409_until_resumed() {
    let (store, dir) = sqlite_store("waiting").await;
    let agent = Agent::builder(DemoModel::default())
        .tool(get_weather)
        .hook(ask_a_person)
        .approver(|_: agentix::ToolCall, _| async { agentix::approval::Approval::Suspend })
        .build();
    let client = client();
    let base = serve(router_with_store(agent, store.clone())).await;
    let id = create(&client, &base).await;
    let (status, body) = send(&client, &base, &id, "Oslo").await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (409, Some("awaiting_approval")),
        "{body}"
    );
    let (status, body) = send(&client, &base, &id, "Bergen").await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (409, Some("awaiting_approval")),
        "{body}"
    );
    // The suspension is in the store, waiting for whoever answers it.
    let waiting = store.pending_approvals().await.unwrap();
    assert_eq!((waiting.len(), waiting[0].conversation.as_str()), (1, id.as_str()));
    std::fs::remove_dir_all(dir).unwrap();
}
