//! Approvals over HTTP: the calls a suspended turn waits on, and a person's answer to one,
//! which lets the turn go on — in memory, or from the store (after a restart too).

use std::sync::Arc;

use agentix::{AnyAgent, Conversation, Entry, ToolCall, approval::Approval};
use axum::Json;
use axum::extract::rejection::JsonRejection;
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Response};
use serde::{Deserialize, Serialize};

use super::{App, Right, Start};
use crate::{ApiError, Identity};

/// What a suspended turn waits on: the body of `GET /conversations/{id}/approvals`.
#[derive(Clone, Debug, Default, Deserialize, Serialize)]
pub struct Waiting {
    /// The turn that waits, by its number; `None` when nothing waits.
    pub turn: Option<u64>,
    /// The calls it waits on, the one to answer first first.
    pub waiting: Vec<WaitingCall>,
}

/// One tool call waiting for a person's answer.
#[derive(Clone, Debug, Deserialize, Serialize)]
pub struct WaitingCall {
    /// The call's id: the last segment of the route that answers it.
    pub call_id: String,
    /// The tool it calls.
    pub tool: String,
    /// Its arguments, as the hooks left them: what runs if it is approved.
    pub arguments: serde_json::Value,
    /// The `before_tool` hook that escalated it.
    pub hook: String,
    /// Why it escalated.
    pub reason: String,
}

impl Waiting {
    /// What `conversation`'s suspended turn waits on, if its log ends with one.
    pub fn of(conversation: &Conversation) -> Option<Waiting> {
        let Some(Entry::Suspended { turn, suspension }) = conversation.log().last() else {
            return None;
        };
        let calls = std::iter::once(&suspension.pending).chain(&suspension.also_waiting);
        let waiting = calls
            .map(|pending| WaitingCall {
                call_id: pending.call.id.clone(),
                tool: pending.call.name.clone(),
                arguments: pending.call.arguments.clone(),
                hook: pending.hook.clone(),
                reason: pending.reason.clone(),
            })
            .collect();
        Some(Waiting { turn: Some(turn.0), waiting })
    }
}

/// A person's answer to a waiting call: the body of
/// `POST /conversations/{id}/approvals/{call_id}`.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(tag = "decision", rename_all = "snake_case", deny_unknown_fields)]
pub enum Decision {
    /// Run the call as it is.
    Approve,
    /// Do not run it; the model reads why.
    Reject {
        /// Why, for the model.
        reason: String,
    },
    /// Run it with these arguments instead.
    Edit {
        /// The arguments the call runs with.
        arguments: serde_json::Value,
    },
}

impl<R> App<R>
where
    R: AnyAgent + 'static,
{
    /// What the conversation's suspended turn waits on (nothing: an empty list).
    pub(super) async fn waiting(
        &self,
        identity: &Identity,
        id: &str,
    ) -> Result<Json<Waiting>, ApiError> {
        self.check(identity, id, Right::Read).await?;
        let waiting = self.settled(id, Waiting::of).await?;
        Ok(Json(waiting.unwrap_or_default()))
    }

    /// Answers the waiting call `call` of conversation `id` as `identity`, and lets the turn go
    /// on; the log records who answered.
    pub(super) async fn decide(
        self: Arc<Self>,
        identity: Identity,
        id: String,
        call: String,
        headers: &HeaderMap,
        body: Result<Json<Decision>, JsonRejection>,
    ) -> Response {
        if let Err(error) = self.check(&identity, &id, Right::Decide).await {
            return error.into_response();
        }
        let decision = match body {
            Ok(Json(decision)) => decision,
            Err(rejection) => return ApiError::BadRequest(rejection).into_response(),
        };
        let (counted, conversation) = match self.claim_for(&identity, &id).await {
            Ok(claimed) => claimed,
            Err(error) => return error.into_response(),
        };
        let approval = match Waiting::of(&conversation) {
            None => return ApiError::NothingWaiting(id).into_response(),
            Some(Waiting { waiting, .. }) => match waiting.iter().position(|c| c.call_id == call) {
                Some(0) => match decision {
                    Decision::Approve => Approval::Approve,
                    Decision::Reject { reason } => Approval::Reject(reason),
                    Decision::Edit { arguments } if !arguments.is_object() => {
                        return ApiError::EditNotAnObject.into_response();
                    }
                    Decision::Edit { arguments } => {
                        Approval::Edit(ToolCall::new(call, waiting[0].tool.clone(), arguments))
                    }
                },
                Some(_) => {
                    let first = waiting[0].call_id.clone();
                    return ApiError::NotNext { call, first }.into_response();
                }
                None => return ApiError::UnknownCall(call).into_response(),
            },
        };
        let answer = approval.by(identity.subject);
        self.run(id, conversation, Start::Answer(answer), headers, counted).await
    }
}
