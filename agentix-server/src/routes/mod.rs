//! The routes over conversations: each request's caller checked against the conversation's
//! owner before anything of it is read, a turn per message, approvals answered over HTTP.

use std::collections::HashMap;
use std::ops::{Deref, DerefMut};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use agentix::{Answer, AnyAgent, Conversation};
use agentix_store::{Committer, Store, StoreError, Version};
use axum::extract::rejection::JsonRejection;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde_json::json;
use tokio::sync::{Mutex as TurnLock, OwnedMutexGuard};

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
    conversations: Mutex<HashMap<String, Arc<Slot>>>,
    pub(crate) store: Option<Store>,
    pub(crate) turns: Arc<Turns>,
    access: Access,
    pub(crate) counters: Arc<Counters>,
}

/// What each handler gets: the server's state.
type Shared<R> = State<Arc<App<R>>>;

/// One conversation, whose it is, and whether a turn is running on it.
#[derive(Default)]
struct Slot {
    running: AtomicBool,
    conversation: Arc<TurnLock<Conversation>>,
    /// Its owner, for a conversation kept in memory (a store keeps its own).
    owner: Option<String>,
}

/// A conversation claimed for one turn: no other turn starts on it until the claim is dropped,
/// whether the turn ended or its task was cancelled.
pub(crate) struct Claim {
    // Dropped first: the conversation is free before the next turn may claim it.
    conversation: OwnedMutexGuard<Conversation>,
    /// The stored version the conversation was loaded at, with a store.
    version: Option<Version>,
    _running: Running,
}

/// Marks its slot's turn as running while it lives.
struct Running(Arc<Slot>);

impl Drop for Running {
    fn drop(&mut self) {
        self.0.running.store(false, Ordering::Release);
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
        App { agent, conversations: Mutex::default(), store, turns, access, counters }
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
        let slot = Slot { owner: Some(subject.to_owned()), ..Slot::default() };
        lock(&self.conversations).insert(id.clone(), Arc::new(slot));
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
    /// store, the conversation is loaded as it is stored now.
    pub(crate) async fn claim(&self, id: &str) -> Result<Claim, ApiError> {
        let slot = self.slot(id)?;
        if slot.running.swap(true, Ordering::AcqRel) {
            return Err(ApiError::TurnRunning(id.to_owned()));
        }
        let running = Running(Arc::clone(&slot));
        // Only a read of the log can hold the conversation now, and only for a moment.
        let mut conversation = Arc::clone(&slot.conversation).lock_owned().await;
        let mut version = None;
        if let Some(store) = &self.store {
            let stored = store
                .load(id)
                .await
                .map_err(|error| self.forget_unknown(id, &slot, true, error))?;
            *conversation = stored.conversation;
            version = Some(stored.version);
        }
        Ok(Claim { conversation, version, _running: running })
    }

    /// A store's error; an id the store does not know keeps no slot (a client asking for
    /// made-up ids must not grow the map) — unless another request's turn holds the slot (the
    /// conversation was created meanwhile, by another server): `claimed` says this request
    /// holds it.
    fn forget_unknown(
        &self,
        id: &str,
        slot: &Arc<Slot>,
        claimed: bool,
        error: StoreError,
    ) -> ApiError {
        if matches!(error, StoreError::NotFound { .. }) {
            let mut conversations = lock(&self.conversations);
            let same = conversations.get(id).is_some_and(|kept| Arc::ptr_eq(kept, slot));
            if same && (claimed || !slot.running.load(Ordering::Acquire)) {
                conversations.remove(id);
            }
        }
        ApiError::Store(error)
    }

    /// The conversation as it is now, to read; while a turn runs on it, its log is not settled:
    /// `409 turn_running`.
    pub(crate) async fn settled<T>(
        &self,
        id: &str,
        read: impl FnOnce(&Conversation) -> T,
    ) -> Result<T, ApiError> {
        let slot = self.slot(id)?;
        let running = || ApiError::TurnRunning(id.to_owned());
        if slot.running.load(Ordering::Acquire) {
            return Err(running());
        }
        if let Some(store) = &self.store {
            let stored = store
                .load(id)
                .await
                .map_err(|error| self.forget_unknown(id, &slot, false, error))?;
            return Ok(read(&stored.conversation));
        }
        let conversation = slot.conversation.try_lock().map_err(|_| running())?;
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
