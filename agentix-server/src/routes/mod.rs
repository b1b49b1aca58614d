//! The routes over conversations: each request's caller checked against the conversation's
//! owner before anything of it is read, a turn per message, approvals answered over HTTP.

use std::collections::HashMap;
use std::ops::{Deref, DerefMut};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use agentix::{AnyAgent, Conversation, approval::Answer};
use agentix_store::{Committer, Store, StoreError, Version};
use axum::extract::rejection::JsonRejection;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde_json::json;
use tokio::sync::{OwnedRwLockWriteGuard, RwLock};

use crate::limits::Counters;
use crate::server::Turns;
use crate::{Access, ApiError, Identity, lock};

mod approvals;
mod turns;

pub use approvals::{Decision, Waiting, WaitingCall};
pub use turns::{SendMessage, TurnAnswer};

/// How a turn starts: a user's message, or a person's answer to the call a suspended turn
/// waits on.
pub(crate) enum Start {
    Message(String),
    Answer(Answer),
}

/// The server's state: the agent, the conversations by id, and the store they live in, if
/// they live in one (the slots then only keep a process from running two turns at once).
pub(crate) struct App<R> {
    pub(crate) agent: R,
    conversations: Arc<Slots>,
    pub(crate) store: Option<Store>,
    pub(crate) turns: Arc<Turns>,
    access: Access,
    pub(crate) counters: Arc<Counters>,
}

/// What each handler gets: the server's state.
type Shared<R> = State<Arc<App<R>>>;

/// The conversations by id: every one, kept in memory; with a store, those a request is using.
type Slots = Mutex<HashMap<String, Arc<Slot>>>;

/// One conversation, whose it is, and whether a turn is running on it.
#[derive(Default)]
struct Slot {
    running: AtomicBool,
    /// Written by a turn, read by requests between turns (a read never waits for a turn).
    conversation: Arc<RwLock<Conversation>>,
    /// Its owner, for a conversation kept in memory (a store keeps its own).
    owner: Option<String>,
}

/// A conversation claimed for one turn: no other turn starts on it until the claim is dropped,
/// whether the turn ended or its task was cancelled.
pub(crate) struct Claim {
    // Dropped first: the conversation is free before the next turn may claim it.
    conversation: OwnedRwLockWriteGuard<Conversation>,
    /// The stored version the conversation was loaded at, with a store.
    version: Option<Version>,
    _running: Running,
}

impl Drop for Claim {
    fn drop(&mut self) {
        // With a store, the store keeps the conversation: the slot need not.
        if self.version.is_some() {
            *self.conversation = Conversation::default();
        }
    }
}

/// Marks its slot's turn as running while it lives; with a store, then forgets the slot if no
/// other request holds it, so the map keeps only the conversations in use.
struct Running {
    slot: Arc<Slot>,
    forget: Option<(Arc<Slots>, String)>,
}

impl Drop for Running {
    fn drop(&mut self) {
        self.slot.running.store(false, Ordering::Release);
        if let Some((slots, id)) = self.forget.take() {
            // Under the map's lock, as every other holder took its `Arc`: the map's and this
            // one are the only ones left, or someone else is using the slot.
            let mut slots = lock(&slots);
            let kept = slots.get(&id).is_some_and(|kept| Arc::ptr_eq(kept, &self.slot));
            if kept && Arc::strong_count(&self.slot) == 2 {
                slots.remove(&id);
            }
        }
    }
}

impl Deref for Claim {
    type Target = Conversation;

    fn deref(&self) -> &Conversation {
        &self.conversation
    }
}

impl DerefMut for Claim {
    fn deref_mut(&mut self) -> &mut Conversation {
        &mut self.conversation
    }
}

/// What a request asks to do to a conversation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Right {
    /// Read it, or what waits in it.
    Read,
    /// Send it a message.
    Send,
    /// Answer a call it waits on.
    Decide,
}

impl<R> App<R>
where
    R: AnyAgent + 'static,
{
    pub(crate) fn new(
        agent: R,
        store: Option<Store>,
        turns: Arc<Turns>,
        access: Access,
        counters: Arc<Counters>,
    ) -> Self {
        App { agent, conversations: Arc::default(), store, turns, access, counters }
    }

    /// The conversation routes, each behind the caller's identity.
    pub(crate) fn routes(self: Arc<Self>) -> Router {
        Router::new()
            .route(
                "/conversations",
                post(|State(app): Shared<R>, identity: Identity| async move {
                    app.create(&identity).await
                }),
            )
            .route(
                "/conversations/{id}",
                get(
                    |State(app): Shared<R>, identity: Identity, Path(id): Path<String>| async move {
                        app.conversation(&identity, &id).await
                    },
                ),
            )
            .route(
                "/conversations/{id}/messages",
                post(
                    |State(app): Shared<R>,
                     identity: Identity,
                     Path(id): Path<String>,
                     headers: HeaderMap,
                     body: Result<Json<SendMessage>, JsonRejection>| async move {
                        app.send(identity, id, &headers, body).await
                    },
                ),
            )
            .route(
                "/conversations/{id}/approvals",
                get(
                    |State(app): Shared<R>, identity: Identity, Path(id): Path<String>| async move {
                        app.waiting(&identity, &id).await
                    },
                ),
            )
            .route(
                "/conversations/{id}/approvals/{call}",
                post(
                    |State(app): Shared<R>,
                     identity: Identity,
                     Path((id, call)): Path<(String, String)>,
                     headers: HeaderMap,
                     body: Result<Json<Decision>, JsonRejection>| async move {
                        app.decide(identity, id, call, &headers, body).await
                    },
                ),
            )
            .with_state(self)
    }

    /// `GET /health` and `GET /ready`: open to probes, which carry no credentials and learn
    /// nothing of any conversation.
    pub(crate) fn probes(self: Arc<Self>) -> Router {
        Router::new()
            .route("/health", get(|| async { Json(json!({ "status": "ok" })) }))
            .route("/ready", get(|State(app): Shared<R>| async move { app.ready().await }))
            .with_state(self)
    }

    async fn create(&self, identity: &Identity) -> Response {
        let id = uuid::Uuid::new_v4().to_string();
        let subject = identity.subject.as_str();
        if let Some(store) = &self.store
            && let Err(error) = store.create_owned(&id, &Conversation::new(), subject).await
        {
            return ApiError::Store(error).into_response();
        }
        // With a store, a slot is made when a request uses the conversation.
        if self.store.is_none() {
            let slot = Slot { owner: Some(subject.to_owned()), ..Slot::default() };
            lock(&self.conversations).insert(id.clone(), Arc::new(slot));
        }
        (StatusCode::CREATED, Json(json!({ "id": id }))).into_response()
    }

    /// Whether `identity` may do `right` to conversation `id`: a conversation it may not read
    /// is unknown to it (`404`, as one that does not exist: ids cannot be probed), one it may
    /// read but not act on is `403`. Checked before anything of the conversation is touched.
    pub(crate) async fn check(
        &self,
        identity: &Identity,
        id: &str,
        right: Right,
    ) -> Result<(), ApiError> {
        let owner = match &self.store {
            Some(store) => store.owner(id).await.map_err(|error| match error {
                StoreError::NotFound { .. } => ApiError::UnknownConversation(id.to_owned()),
                error => ApiError::Store(error),
            })?,
            None => {
                let conversations = lock(&self.conversations);
                let slot = conversations.get(id);
                slot.ok_or_else(|| ApiError::UnknownConversation(id.to_owned()))?.owner.clone()
            }
        };
        let owner = owner.as_deref();
        if !self.access.reads(identity, owner) {
            return Err(ApiError::UnknownConversation(id.to_owned()));
        }
        let refused = |why: String| Err(ApiError::Forbidden(why));
        match right {
            Right::Read => Ok(()),
            _ if !self.access.acts(identity, owner) => {
                refused(format!("you may read conversation `{id}`, not act on it"))
            }
            Right::Decide if !self.access.approves(identity) => refused(format!(
                "answering a waiting call needs the `{}` role",
                self.access.approver_role().unwrap_or_default()
            )),
            Right::Send | Right::Decide => Ok(()),
        }
    }

    /// The conversation's slot. With a store, any id has one: the store says whether the
    /// conversation exists (another server may have created it).
    fn slot(&self, id: &str) -> Result<Arc<Slot>, ApiError> {
        let mut conversations = lock(&self.conversations);
        match conversations.get(id) {
            Some(slot) => Ok(Arc::clone(slot)),
            None if self.store.is_some() => {
                Ok(Arc::clone(conversations.entry(id.to_owned()).or_default()))
            }
            None => Err(ApiError::UnknownConversation(id.to_owned())),
        }
    }

    /// Claims the conversation for one turn, or says a turn is already running on it. With a
    /// store, the conversation is loaded as it is stored now; a claim that fails there (an id
    /// the store does not know) leaves no slot behind, as one that ends does.
    pub(crate) async fn claim(&self, id: &str) -> Result<Claim, ApiError> {
        let slot = self.slot(id)?;
        if slot.running.swap(true, Ordering::AcqRel) {
            return Err(ApiError::TurnRunning(id.to_owned()));
        }
        let forget = self.store.is_some().then(|| (Arc::clone(&self.conversations), id.to_owned()));
        // Only a read of the log can hold the conversation now, and only for a moment.
        let mut conversation = Arc::clone(&slot.conversation).write_owned().await;
        // The slot's one `Arc` here: dropped, it is forgotten unless another request holds it.
        let running = Running { slot, forget };
        let mut version = None;
        if let Some(store) = &self.store {
            let stored = store.load(id).await.map_err(ApiError::Store)?;
            *conversation = stored.conversation;
            version = Some(stored.version);
        }
        Ok(Claim { conversation, version, _running: running })
    }

    /// The conversation as it is now, to read; while a turn runs on it, its log is not settled:
    /// `409 turn_running`.
    pub(crate) async fn settled<T>(
        &self,
        id: &str,
        read: impl FnOnce(&Conversation) -> T,
    ) -> Result<T, ApiError> {
        let running = || ApiError::TurnRunning(id.to_owned());
        if let Some(store) = &self.store {
            // A slot only if a request of this process uses the conversation: a read makes none.
            let slots = &self.conversations;
            if lock(slots).get(id).is_some_and(|slot| slot.running.load(Ordering::Acquire)) {
                return Err(running());
            }
            let stored = store.load(id).await.map_err(ApiError::Store)?;
            return Ok(read(&stored.conversation));
        }
        let slot = self.slot(id)?;
        if slot.running.load(Ordering::Acquire) {
            return Err(running());
        }
        let conversation = slot.conversation.try_read().map_err(|_| running())?;
        Ok(read(&conversation))
    }

    /// The conversation as JSON.
    async fn conversation(&self, identity: &Identity, id: &str) -> Result<Response, ApiError> {
        self.check(identity, id, Right::Read).await?;
        self.settled(id, |conversation| Json(conversation).into_response()).await
    }

    /// A committer for the claimed conversation, with a store.
    pub(crate) fn committer<'s>(&'s self, id: &str, claim: &Claim) -> Option<Committer<'s>> {
        let (store, version) = (self.store.as_ref()?, claim.version?);
        Some(store.committer_at(id, version, &claim.conversation))
    }

    /// Whether the server can serve turns: its store answers.
    async fn ready(&self) -> Response {
        match &self.store {
            Some(store) => match store.ping().await {
                Ok(()) => Json(json!({ "status": "ready" })).into_response(),
                Err(error) => ApiError::Unready(error).into_response(),
            },
            None => Json(json!({ "status": "ready" })).into_response(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::demo::demo_agent;
    use crate::limits::Limits;

    /// With a store, the map keeps only the conversations a request is using: a turn's slot is
    /// forgotten when it ends, a read makes none, and a new conversation has none until used.
    #[tokio::test]
    async fn with_a_store_slots_live_only_while_a_request_uses_them() {
        let store = Store::open("sqlite::memory:").await.unwrap();
        let counters = Arc::new(Counters::new(Limits::none()));
        let app =
            Arc::new(App::new(demo_agent(), Some(store), Arc::default(), Access::new(), counters));
        let alice = Identity::new("alice");
        let mut ids = Vec::new();
        for city in ["Oslo", "Bergen", "Tromsø"] {
            let created = app.create(&alice).await;
            let body = axum::body::to_bytes(created.into_body(), 1024).await.unwrap();
            let id = serde_json::from_slice::<serde_json::Value>(&body).unwrap()["id"]
                .as_str()
                .unwrap()
                .to_owned();
            assert!(lock(&app.conversations).is_empty(), "none until used");
            let message = Ok(Json(SendMessage { message: city.to_owned() }));
            let headers = HeaderMap::new();
            let answered = Arc::clone(&app).send(alice.clone(), id.clone(), &headers, message);
            assert_eq!(answered.await.status(), StatusCode::OK);
            ids.push(id);
        }
        assert!(lock(&app.conversations).is_empty(), "each turn's slot forgotten at its end");
        for id in &ids {
            let read = app.conversation(&alice, id).await.unwrap();
            assert_eq!(read.status(), StatusCode::OK);
        }
        assert!(lock(&app.conversations).is_empty(), "a read makes none");
    }
}
