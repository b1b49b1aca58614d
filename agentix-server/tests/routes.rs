//! The served agent's statuses a client acts on, its approval routes (in memory, streamed, and
//! across a restart over SQLite), and its health and readiness — over real HTTP on 127.0.0.1.

mod support;
use support::{client, create, router, router_with_store, serve};

use agentix_server::demo::demo_agent;
use serde_json::{Value, json};

/// A request's status and JSON body.
async fn answer(request: reqwest::RequestBuilder) -> (u16, Value) {
    let response = request.send().await.unwrap();
    let status = response.status().as_u16();
    (status, response.json().await.unwrap())
}

async fn send(client: &reqwest::Client, base: &str, id: &str, message: &str) -> (u16, Value) {
    let url = format!("{base}/conversations/{id}/messages");
    answer(client.post(url).json(&json!({ "message": message }))).await
}

async fn decide(
    client: &reqwest::Client,
    base: &str,
    id: &str,
    call: &str,
    decision: Value,
) -> (u16, Value) {
    answer(client.post(format!("{base}/conversations/{id}/approvals/{call}")).json(&decision)).await
}

async fn waiting(client: &reqwest::Client, base: &str, id: &str) -> Value {
    let (status, body) = answer(client.get(format!("{base}/conversations/{id}/approvals"))).await;
    assert_eq!(status, 200, "{body}");
    body
}

fn code(body: &Value) -> &str {
    body["error"]["code"].as_str().unwrap_or_default()
}

#[tokio::test]
async fn a_message_the_context_cannot_hold_is_413_with_the_numbers_and_the_conversation_goes_on() {
    let client = client();
    let base = serve(router(demo_agent())).await;
    let id = create(&client, &base).await;
    // 1 MB of text, some 250 000 tokens: past the default budget of 100 000.
    let (status, body) = send(&client, &base, &id, &"a".repeat(1_000_000)).await;
    assert_eq!((status, code(&body)), (413, "message_too_large"), "{body}");
    assert_eq!(body["error"]["tokens"], 250_000, "{body}");
    assert_eq!(body["error"]["budget"], 92_000, "100 000 less the injection reserve: {body}");
    // Refused before any turn opened: the log does not keep it, and the next message is turn 1.
    let (status, conversation) = answer(client.get(format!("{base}/conversations/{id}"))).await;
    let logged = conversation["log"].as_array().map(Vec::len);
    assert_eq!((status, logged), (200, Some(0)), "{conversation}");
    let (status, body) = send(&client, &base, &id, "Oslo").await;
    assert_eq!((status, body["turn"].as_u64()), (200, Some(1)), "{body}");
}

#[tokio::test]
async fn a_body_past_the_limit_is_413_body_too_large() {
    let client = client();
    let base = serve(router(demo_agent())).await;
    let id = create(&client, &base).await;
    // axum's default limit: 2 MiB.
    let (status, body) = send(&client, &base, &id, &"a".repeat(3 * 1024 * 1024)).await;
    assert_eq!((status, code(&body)), (413, "body_too_large"), "{body}");
}

#[tokio::test]
async fn a_waiting_call_is_listed_and_approved_rejected_or_edited_over_http() {
    let client = client();
    let base = serve(router(demo_agent())).await;
    let id = create(&client, &base).await;
    assert_eq!(waiting(&client, &base, &id).await, json!({ "turn": null, "waiting": [] }));

    let (status, body) = send(&client, &base, &id, "email ola@example.no: lunch at 12?").await;
    assert_eq!((status, code(&body)), (409, "awaiting_approval"), "{body}");
    let call = body["error"]["waiting"][0]["call_id"].as_str().unwrap().to_owned();
    let route = format!("/conversations/{id}/approvals/{call}");
    assert!(body["error"]["message"].as_str().unwrap().ends_with(&route), "{body}");
    let listed = waiting(&client, &base, &id).await;
    assert_eq!(listed["turn"], 1);
    assert_eq!(
        listed["waiting"],
        json!([{
            "call_id": call,
            "tool": "send_email",
            "arguments": { "to": "ola@example.no", "text": "lunch at 12?" },
            "hook": "mail_needs_a_yes",
            "reason": "an e-mail to \"ola@example.no\"",
        }])
    );
    // A message, or an answer to another call, is refused while the call waits.
    let (status, body) = send(&client, &base, &id, "Oslo").await;
    assert_eq!((status, code(&body)), (409, "awaiting_approval"), "{body}");
    let (status, body) =
        decide(&client, &base, &id, "call_0", json!({ "decision": "approve" })).await;
    assert_eq!((status, code(&body)), (404, "unknown_call"), "{body}");
    let (status, body) = decide(&client, &base, &id, &call, json!({ "decision": "maybe" })).await;
    assert_eq!((status, code(&body)), (422, "bad_request"), "{body}");
    let edit = json!({ "decision": "edit", "arguments": "to kari" });
    let (status, body) = decide(&client, &base, &id, &call, edit).await;
    assert_eq!((status, code(&body)), (422, "bad_request"), "{body}");

    // Rejected: the model reads why, the turn ends.
    let reject = json!({ "decision": "reject", "reason": "not today" });
    let (status, body) = decide(&client, &base, &id, &call, reject).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["turn"], 1);
    assert!(body["text"].as_str().unwrap().starts_with("Not sent:"), "{body}");
    assert_eq!(waiting(&client, &base, &id).await["waiting"], json!([]));
    let (status, body) = decide(&client, &base, &id, &call, json!({ "decision": "approve" })).await;
    assert_eq!((status, code(&body)), (409, "nothing_waiting"), "{body}");

    // Edited: it runs with the person's arguments.
    let (_, body) = send(&client, &base, &id, "email kari@example.no: hi").await;
    let call = body["error"]["waiting"][0]["call_id"].as_str().unwrap().to_owned();
    let edit = json!({ "decision": "edit", "arguments": { "to": "ola@example.no", "text": "hi" } });
    let (status, body) = decide(&client, &base, &id, &call, edit).await;
    assert_eq!(
        (status, body["text"].as_str()),
        (200, Some("Done: sent to ola@example.no (2 characters).")),
        "{body}"
    );

    // Approved, answered as a stream.
    let (_, body) = send(&client, &base, &id, "email kari@example.no: see you").await;
    let call = body["error"]["waiting"][0]["call_id"].as_str().unwrap().to_owned();
    let response = client
        .post(format!("{base}/conversations/{id}/approvals/{call}"))
        .header("accept", "text/event-stream")
        .json(&json!({ "decision": "approve" }))
        .send()
        .await
        .unwrap();
    assert_eq!(response.headers()["content-type"], "text/event-stream");
    let events = response.text().await.unwrap();
    let done = events.split("\n\n").find(|event| event.starts_with("event: done")).unwrap();
    assert!(done.contains("Done: sent to kari@example.no"), "{events}");
}

#[tokio::test]
async fn an_approval_is_answered_after_a_restart_over_sqlite() {
    let dir = std::env::temp_dir().join(format!("agentix-approvals-{}", uuid::Uuid::new_v4()));
    std::fs::create_dir_all(&dir).unwrap();
    let url = format!("sqlite://{}", dir.join("chats.db").display());
    let client = client();
    let id;
    let call;
    {
        let store = agentix_store::Store::open(&url).await.unwrap();
        let base = serve(router_with_store(demo_agent(), store.clone())).await;
        id = create(&client, &base).await;
        let (status, body) = send(&client, &base, &id, "email ola@example.no: the report").await;
        assert_eq!((status, code(&body)), (409, "awaiting_approval"), "{body}");
        call = body["error"]["waiting"][0]["call_id"].as_str().unwrap().to_owned();
        store.close().await;
    }
    // Another server, another store handle over the same file: it lists and answers the call.
    let store = agentix_store::Store::open(&url).await.unwrap();
    let base = serve(router_with_store(demo_agent(), store.clone())).await;
    assert_eq!(waiting(&client, &base, &id).await["waiting"][0]["call_id"], call.as_str());
    let (status, body) = decide(&client, &base, &id, &call, json!({ "decision": "approve" })).await;
    assert_eq!(
        (status, body["text"].as_str()),
        (200, Some("Done: sent to ola@example.no (10 characters).")),
        "{body}"
    );
    assert!(store.pending_approvals().await.unwrap().is_empty());
    let (status, body) = send(&client, &base, &id, "Oslo").await;
    assert_eq!((status, body["turn"].as_u64()), (200, Some(2)), "{body}");
    std::fs::remove_dir_all(dir).unwrap();
}

#[tokio::test]
async fn health_is_the_process_and_readiness_the_store() {
    let client = client();
    let base = serve(router(demo_agent())).await;
    let (status, body) = answer(client.get(format!("{base}/health"))).await;
    assert_eq!((status, body), (200, json!({ "status": "ok" })));
    let (status, body) = answer(client.get(format!("{base}/ready"))).await;
    assert_eq!((status, body), (200, json!({ "status": "ready" })));

    let dir = std::env::temp_dir().join(format!("agentix-ready-{}", uuid::Uuid::new_v4()));
    std::fs::create_dir_all(&dir).unwrap();
    let store = agentix_store::Store::open(&format!("sqlite://{}", dir.join("chats.db").display()))
        .await
        .unwrap();
    let base = serve(router_with_store(demo_agent(), store.clone())).await;
    let (status, _) = answer(client.get(format!("{base}/ready"))).await;
    assert_eq!(status, 200);
    // The store's connections closed: not ready, while still alive.
    store.close().await;
    let (status, body) = answer(client.get(format!("{base}/ready"))).await;
    assert_eq!((status, code(&body)), (503, "store_unreachable"), "{body}");
    let (status, _) = answer(client.get(format!("{base}/health"))).await;
    assert_eq!(status, 200);
    std::fs::remove_dir_all(dir).unwrap();
}

/// Every call needs a person's yes.
#[agentix::hook(before_tool)]
async fn ask_a_person(
    _call: &mut agentix::ToolCall,
    _turn: &mut agentix::Turn,
) -> agentix::Verdict<agentix::event::BeforeTool> {
    agentix::Verdict::escalate("a person decides")
}

#[tokio::test]
async fn two_waiting_calls_are_answered_in_order() {
    let model = agentix::ScriptedModel::new()
        .tool_calls([
            ("send_email", json!({ "to": "ola@example.no", "text": "one" })),
            ("send_email", json!({ "to": "kari@example.no", "text": "two" })),
        ])
        .text("Both answered.");
    let agent = agentix::Agent::builder(model)
        .tool(agentix_server::demo::send_email)
        .hook(ask_a_person)
        .approver(|_: agentix::ToolCall, _| async { agentix::approval::Approval::Suspend })
        .build();
    let client = client();
    let base = serve(router(agent)).await;
    let id = create(&client, &base).await;
    let (status, body) = send(&client, &base, &id, "send both").await;
    assert_eq!((status, code(&body)), (409, "awaiting_approval"), "{body}");
    let listed = waiting(&client, &base, &id).await;
    let calls: Vec<&str> = listed["waiting"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["call_id"].as_str().unwrap())
        .collect();
    assert_eq!(calls.len(), 2, "{listed}");
    let (first, second) = (calls[0].to_owned(), calls[1].to_owned());
    // The second waits behind the first.
    let (status, body) =
        decide(&client, &base, &id, &second, json!({ "decision": "approve" })).await;
    assert_eq!((status, code(&body)), (409, "not_next"), "{body}");
    // Answering the first suspends the turn again at the second.
    let (status, body) =
        decide(&client, &base, &id, &first, json!({ "decision": "approve" })).await;
    assert_eq!((status, code(&body)), (409, "awaiting_approval"), "{body}");
    assert_eq!(body["error"]["waiting"][0]["call_id"], second.as_str());
    let reject = json!({ "decision": "reject", "reason": "one is enough" });
    let (status, body) = decide(&client, &base, &id, &second, reject).await;
    assert_eq!((status, body["text"].as_str()), (200, Some("Both answered.")), "{body}");
}

/// `huge`: a result of 600 000 characters.
#[agentix::tool]
async fn huge() -> String {
    "x".repeat(600_000)
}

#[tokio::test]
async fn a_turn_whose_own_steps_outgrow_the_context_is_the_servers_500() {
    let model = agentix::ScriptedModel::new().tool_call("huge", json!({})).text("never asked");
    let agent = agentix::Agent::builder(model).tool(huge).build();
    let client = client();
    let base = serve(router(agent)).await;
    let id = create(&client, &base).await;
    let (status, body) = send(&client, &base, &id, "hi").await;
    assert_eq!((status, code(&body)), (500, "context_overflow"), "{body}");
    assert_eq!(body["error"]["turn"], 1);
}

/// Routes served beside the conversations' (the MCP door, an app's own) are behind the same
/// identity, whether it comes from `authenticate` or from the app's own middleware: a request
/// without one is `401`, and the probes need none.
#[tokio::test]
async fn routes_beside_need_an_identity_whoever_gives_it() {
    use agentix_server::{Identity, Server};
    let whoami = axum::Router::new()
        .route("/whoami", axum::routing::get(|identity: Identity| async move { identity.subject }));
    let server = Server::builder(demo_agent()).beside(whoami.clone()).build();
    let client = client();
    let base = serve(server.router()).await;
    let response = client.get(format!("{base}/whoami")).send().await.unwrap();
    assert_eq!(response.status(), 401);
    let (status, body) = answer(client.post(format!("{base}/conversations"))).await;
    assert_eq!((status, code(&body)), (401, "unauthenticated"), "{body}");
    assert_eq!(client.get(format!("{base}/health")).send().await.unwrap().status(), 200);

    // The app's own middleware says who is asking.
    let server = Server::builder(demo_agent()).beside(whoami).build();
    let open = axum::Router::new().route("/open", axum::routing::get(|| async { "open" }));
    let app = server.router().merge(open).layer(axum::middleware::from_fn(
        |mut request: axum::extract::Request, next: axum::middleware::Next| async move {
            request.extensions_mut().insert(Identity::new("alice"));
            next.run(request).await
        },
    ));
    let base = serve(app).await;
    let response = client.get(format!("{base}/whoami")).send().await.unwrap();
    assert_eq!(response.text().await.unwrap(), "alice");
    assert_eq!(create(&client, &base).await.len(), 36, "a conversation of alice's");
    assert_eq!(client.get(format!("{base}/open")).send().await.unwrap().status(), 200);
}
