//! A turn is `Send`: a typed agent with hooks serves inside `axum` handlers — `run` in a JSON
//! handler, a streamed turn in a Server-Sent Events handler — on a multi-thread runtime.

use std::convert::Infallible;
use std::sync::Arc;

use agentix::event::AfterModel;
use agentix::{Agent, AssistantMessage, Conversation, ScriptedModel, StreamEvent, Turn, Verdict, hook};
use axum::Router;
use axum::body::Body;
use axum::extract::State;
use axum::http::Request;
use axum::response::sse::{Event, Sse};
use axum::routing::post;
use futures::{SinkExt, StreamExt};
use serde_json::json;
use tokio::sync::Mutex;
use tower::ServiceExt;
use ui_tests::Clock;

#[hook(pre)]
async fn greet(turn: &mut Turn) {
    tokio::task::yield_now().await;
    turn.inject("be brief");
}

#[hook(after_model)]
async fn not_empty(message: &AssistantMessage) -> Verdict<AfterModel> {
    tokio::task::yield_now().await;
    if message.calls_tools() || !message.joined_text().is_empty() { Verdict::Continue } else { Verdict::retry("say something") }
}

async fn body_text(response: axum::response::Response) -> String {
    let bytes = axum::body::to_bytes(response.into_body(), usize::MAX).await.unwrap();
    String::from_utf8(bytes.to_vec()).unwrap()
}

fn main() {
    let model = (0..2).fold(ScriptedModel::new(), |model, _| model.tool_call("clock", json!({})).text("It is noon."));
    let agent = Arc::new(Agent::builder(model).tool(Clock).hook(greet).hook(not_empty).build());
    let conversation = Arc::new(Mutex::new(Conversation::new()));

    let json_agent = Arc::clone(&agent);
    let stream_agent = Arc::clone(&agent);
    let app = Router::new()
        .route(
            "/json",
            post(move |State(conversation): State<Arc<Mutex<Conversation>>>, message: String| async move {
                let mut conversation = conversation.lock().await;
                let reply = json_agent.run(&mut conversation, message).await.unwrap();
                axum::Json(json!({ "text": reply.joined_text() }))
            }),
        )
        .route(
            "/sse",
            post(move |State(conversation): State<Arc<Mutex<Conversation>>>, message: String| async move {
                let (mut sender, receiver) = futures::channel::mpsc::channel(16);
                let conversation = Arc::clone(&conversation).lock_owned().await;
                tokio::spawn(async move {
                    let mut conversation = conversation;
                    let mut turn = std::pin::pin!(stream_agent.turn(&mut conversation, message).stream());
                    while let Some(event) = turn.next().await {
                        let data = match event {
                            StreamEvent::Text(text) => text,
                            StreamEvent::Finished(outcome) => format!("finished: {}", outcome.unwrap().joined_text()),
                            _ => continue,
                        };
                        let _ = sender.send(Ok::<_, Infallible>(Event::default().data(data))).await;
                    }
                });
                Sse::new(receiver)
            }),
        )
        .with_state(Arc::clone(&conversation));

    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    runtime.block_on(async move {
        let request = Request::post("/json").body(Body::from("What time is it?")).unwrap();
        let response = app.clone().oneshot(request).await.unwrap();
        assert_eq!(body_text(response).await, r#"{"text":"It is noon."}"#);

        let request = Request::post("/sse").body(Body::from("And now?")).unwrap();
        let response = app.oneshot(request).await.unwrap();
        assert_eq!(body_text(response).await, "data: It is noon.\n\ndata: finished: It is noon.\n\n");
        assert_eq!(conversation.lock().await.log().len(), 8);
    });
}
