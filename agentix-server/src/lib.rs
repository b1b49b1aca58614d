//! An agentix agent served over HTTP with `axum`: conversations kept in the server's memory or
//! in a store (SQLite, or PostgreSQL shared by many servers), each owned by the subject that
//! created it; a turn per request, answered as JSON or streamed as Server-Sent Events; tool
//! calls that wait for a person's approval answered over HTTP.
//!
//! Nobody gets in who should not: every request's caller is an [`Identity`] (API keys and JWTs
//! built in, a team's own auth through [`Authenticate`](identity::Authenticate)); another
//! subject's conversation answers `404`; approving is a role of its own and the log records who
//! decided; `Host` and `Origin` are checked against DNS rebinding and other sites' pages; each
//! subject's requests and turns are limited; and [`serve`] cuts connections that stall their
//! headers.
//!
//! | request | answer |
//! |---|---|
//! | `POST /conversations` | `201 {"id": "…"}`, owned by the caller |
//! | `GET /conversations/{id}` | `200`, the conversation (its log, config and scope) as JSON |
//! | `POST /conversations/{id}/messages` `{"message": "…"}` | `200 {"conversation", "turn", "text", "message"}` |
//! | the same, with `Accept: text/event-stream` | the turn as it runs: `text`, `tool_call`, `tool_result`, `withdrawn`, `model_call_failed` events, then `done` (the JSON above) or `failed` (the error below) |
//! | `GET /conversations/{id}/approvals` | `200 {"turn", "waiting": [{"call_id", "tool", "arguments", "hook", "reason"}]}`: the calls the conversation's suspended turn waits on, the one to answer first first (`[]` when none) |
//! | `POST /conversations/{id}/approvals/{call_id}` `{"decision": "approve"}`, `{"decision": "reject", "reason": "…"}` or `{"decision": "edit", "arguments": {…}}` | the turn goes on from the call, answered as a message is (JSON or SSE) |
//! | `GET /health` | `200 {"status": "ok"}` while the process serves (no credentials needed) |
//! | `GET /ready` | `200 {"status": "ready"}` when the store answers (always, in memory); `503 store_unreachable` otherwise (no credentials needed) |
//!
//! Every error is JSON, `{"error": {"code", "message", …}}`; [`ApiError`] lists them, and
//! `docs/serving.md` says what each means.
//!
//! ```
//! use agentix_server::identity::{ApiKeys, Identity};
//! use agentix_server::{Server, demo};
//!
//! let keys = ApiKeys::new().with_key("agx_secret", Identity::new("alice").with_role("approver"));
//! let server = Server::builder(demo::demo_agent()).authenticate(keys).build();
//! let app = axum::Router::new().nest("/agent", server.router());
//! ```
//!
//! A turn runs in a task of its own: a client that disconnects does not cancel it, so the log
//! always holds whole turns; [`Server::drain`] waits for the running ones at shutdown. With a
//! store, each turn loads the conversation, commits each step as it runs, and a server that
//! restarts serves the conversations it served before — their waiting approvals too. Two
//! servers sharing a PostgreSQL store never interleave turns on one log: the turn that commits
//! second gets `409 conflict`.

mod access;
#[cfg(feature = "cli")]
pub mod cli;
pub mod demo;
mod error;
mod hosts;
pub mod identity;
mod limits;
mod routes;
mod serve;
mod server;

pub use access::Access;
pub use error::ApiError;
pub use hosts::{CheckHosts, Hosts, HostsChecked, Origins};
pub use identity::Identity;
pub use limits::Limits;
pub use routes::{Decision, SendMessage, TurnAnswer, Waiting, WaitingCall};
pub use serve::{HEADER_TIMEOUT, serve};
pub use server::{Server, ServerBuilder};

/// The guide's chapter on serving, whose examples build with this crate.
#[cfg(doctest)]
#[doc = include_str!("../../docs/serving.md")]
struct ServingGuide;

pub(crate) fn lock<T>(mutex: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    // Nothing behind these locks is left half-written by a panic: a map insert, a count.
    mutex.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}
