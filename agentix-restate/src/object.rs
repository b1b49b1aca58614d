//! The virtual object: one per conversation, its turns one invocation each.

use std::future::Future;
use std::sync::Arc;

use agentix::{
    AnyAgent, AssistantMessage, BoxedAgent, Config, Conversation, Entry, Error, ToolCall,
    approval::Approval, durable::JournalError, scope::Scope,
};
use futures::future::BoxFuture;
use restate_sdk::prelude::*;
use restate_sdk::serde::Deserialize;
use serde::Serialize;

use crate::journal::{RestateJournal, WaitingApproval};

/// Told once of each call that waits for a person (a webhook, a queue, a mail): journaled, so
/// a replay does not tell again. The waiting approval's awakeable id is stable across
/// replays: a receiver may deduplicate by it.
pub(crate) type Announcer = dyn Fn(WaitingApproval) -> BoxFuture<'static, ()> + Send + Sync;

/// The state key of the conversation's config, turn count, scope and number of chunks.
const HEAD: &str = "conversation";
/// The state key of the call waiting for a person, while one waits.
pub(crate) const WAITING: &str = "waiting";

/// The conversation apart from its log, kept under [`HEAD`]; the log is kept in chunks, one
/// per turn, each written once (`entries.0`, `entries.1`, …).
#[derive(Serialize, serde::Deserialize)]
struct Head {
    config: Config,
    turns: u64,
    /// The scope as serde writes it (its resources are not kept).
    scope: serde_json::Value,
    chunks: u64,
}

fn chunk_key(n: u64) -> String {
    format!("entries.{n}")
}

/// An agent served as a Restate virtual object named `Conversation`, keyed by conversation:
/// `send` runs one turn as one invocation — each model call, tool call and approval journaled
/// by Restate, so a turn whose process dies goes on where it stopped on the next attempt —
/// and the conversation is kept in the object's state as its entries, each turn writing only
/// its own. `history` reads them; a call escalated to a person waits on an awakeable that
/// `approve`, `reject` or `edit` answers from anywhere, naming it as `pending` shows it.
///
/// Bind it to an [`Endpoint`] and serve it with [`serve`](crate::serve).
pub struct Conversations {
    agent: Arc<BoxedAgent>,
    config: Config,
    announce: Option<Arc<Announcer>>,
}

impl Conversations {
    /// Serves `agent`'s turns. Its hooks run again on a replay and must decide the same way
    /// (see [`TurnRun::journal`](agentix::TurnRun::journal)); deploy changed hooks as a new
    /// deployment. Any agent: an [`Agent`](agentix::Agent), a [`BoxedAgent`], or an `Arc` to one.
    ///
    /// A call that waits for a person waits inside the turn: the conversation's
    /// `turn_timeout`, if it has one, bounds the wait too, and counts anew from each replay.
    pub fn new(agent: impl AnyAgent + 'static) -> Self {
        Conversations { agent: Arc::new(agent.boxed()), config: Config::default(), announce: None }
    }

    /// The config a new conversation starts with.
    pub fn with_config(mut self, config: Config) -> Self {
        self.config = config;
        self
    }

    /// Tells `announce` of each call that starts waiting for a person, once: the telling is a
    /// journaled step, not repeated by a replay (only a crash during it may repeat it — the
    /// awakeable id is the key to deduplicate by).
    pub fn announce<F, Fut>(mut self, announce: F) -> Self
    where
        F: Fn(WaitingApproval) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        self.announce = Some(Arc::new(move |waiting| Box::pin(announce(waiting))));
        self
    }
}

impl std::fmt::Debug for Conversations {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Conversations").field("config", &self.config).finish_non_exhaustive()
    }
}

/// A handler's failure as Restate reports it to the caller: terminal, not retried.
fn terminal(code: u16, message: impl std::fmt::Display) -> HandlerError {
    TerminalError::new_with_code(code, message.to_string()).into()
}

/// Reads state under a key made at run time: restate-sdk ties a key's borrow to the whole
/// invocation's, and a context is covariant in it.
trait ReadState {
    fn read<'k, T: Deserialize + 'static>(
        &'k self,
        key: &'k str,
    ) -> impl Future<Output = Result<Option<T>, TerminalError>> + 'k;
}

impl ReadState for ObjectContext<'_> {
    fn read<'k, T: Deserialize + 'static>(
        &'k self,
        key: &'k str,
    ) -> impl Future<Output = Result<Option<T>, TerminalError>> + 'k {
        let ctx: &'k ObjectContext<'k> = self;
        ctx.get(key)
    }
}

impl ReadState for SharedObjectContext<'_> {
    fn read<'k, T: Deserialize + 'static>(
        &'k self,
        key: &'k str,
    ) -> impl Future<Output = Result<Option<T>, TerminalError>> + 'k {
        let ctx: &'k SharedObjectContext<'k> = self;
        ctx.get(key)
    }
}

/// Reads the conversation's head and entries.
async fn load(
    ctx: &impl ReadState,
    key: &str,
    config: &Config,
) -> Result<(Conversation, u64), HandlerError> {
    let Some(Json(head)) = ctx.read::<Json<Head>>(HEAD).await? else {
        return Ok((Conversation::with_config(config.clone()).with_id(key), 0));
    };
    let mut log = Vec::new();
    for n in 0..head.chunks {
        let name = chunk_key(n);
        let Json(entries) = ctx
            .read::<Json<Vec<Entry>>>(&name)
            .await?
            .ok_or_else(|| terminal(500, format!("conversation {key}: {name} is missing")))?;
        log.extend(entries);
    }
    let scope: Scope = serde_json::from_value(head.scope)
        .map_err(|error| terminal(500, format!("conversation {key}: its scope: {error}")))?;
    let conversation = Conversation::from_parts(head.config, log, head.turns, scope)
        .map_err(|error| terminal(500, format!("conversation {key}: {error}")))?;
    Ok((conversation.with_id(key), head.chunks))
}

#[restate_sdk::object(name = "Conversation")]
impl Conversations {
    /// Runs one turn opened by `message`; answers its final answer. A turn that fails keeps
    /// its entries (the log tells what ran) and answers the error, terminal: the turn ended.
    ///
    /// A replay that diverged — a hook asked for another step than the first run did — is a
    /// retryable failure naming both steps: the conversation is not written, and Restate
    /// retries the invocation by its retry policy with that message as its last failure
    /// (`restate invocations describe`). By default it pauses the invocation after 70
    /// attempts; once the code the turn started on serves again, the next attempt (or
    /// `restate invocations resume`) finishes it — or kill it.
    #[handler]
    async fn send(
        &self,
        ctx: ObjectContext<'_>,
        message: String,
    ) -> HandlerResult<Json<AssistantMessage>> {
        let ctx = &ctx;
        let key = ctx.key().to_owned();
        let (mut conversation, chunks) = load(ctx, &key, &self.config).await?;
        let journal = RestateJournal { ctx, announce: self.announce.as_deref() };
        let outcome = self.agent.turn(&mut conversation, message).journal(&journal).await;
        // Any command now would not match what Restate recorded after the diverging step:
        // the invocation fails as it is, to be retried.
        if let Err(Error::Journal(error @ JournalError::Diverged { .. })) = &outcome {
            return Err(HandlerError::from(format!("conversation {key}: {error}")));
        }
        // However the turn ended, no call of it waits any more.
        ctx.clear(WAITING);
        let head = Head {
            config: conversation.config().clone(),
            turns: conversation.turns(),
            scope: serde_json::to_value(conversation.scope()).map_err(|error| {
                terminal(500, format!("conversation {key}: its scope: {error}"))
            })?,
            chunks: chunks + 1,
        };
        ctx.set(&chunk_key(chunks), Json(conversation.unsaved().to_vec()));
        ctx.set(HEAD, Json(head));
        outcome.map(Json).map_err(|error| terminal(500, format!("conversation {key}: {error}")))
    }

    /// The conversation's log, every entry.
    #[handler]
    async fn history(&self, ctx: SharedObjectContext<'_>) -> HandlerResult<Json<Vec<Entry>>> {
        let ctx = &ctx;
        let key = ctx.key().to_owned();
        let (conversation, _) = load(ctx, &key, &self.config).await?;
        Ok(Json(conversation.log().to_vec()))
    }

    /// The call waiting for a person's answer, if one waits.
    #[handler]
    async fn pending(
        &self,
        ctx: SharedObjectContext<'_>,
    ) -> HandlerResult<Json<Option<WaitingApproval>>> {
        Ok(Json(ctx.get::<Json<WaitingApproval>>(WAITING).await?.map(|Json(waiting)| waiting)))
    }

    /// Runs the waiting call as it is: `awakeable` names it, as `pending` showed it.
    #[handler]
    async fn approve(&self, ctx: SharedObjectContext<'_>, awakeable: String) -> HandlerResult<()> {
        answer(&ctx, &awakeable, Approval::Approve).await
    }

    /// Does not run the waiting call; the model reads the reason.
    #[handler]
    async fn reject(
        &self,
        ctx: SharedObjectContext<'_>,
        reject: Json<Reject>,
    ) -> HandlerResult<()> {
        let Json(Reject { awakeable, reason }) = reject;
        answer(&ctx, &awakeable, Approval::Reject(reason)).await
    }

    /// Runs the given call in place of the waiting call, under its id.
    #[handler]
    async fn edit(&self, ctx: SharedObjectContext<'_>, edit: Json<Edit>) -> HandlerResult<()> {
        let Json(Edit { awakeable, call }) = edit;
        answer(&ctx, &awakeable, Approval::Edit(call)).await
    }
}

/// `reject`'s input: the waiting call, and why not.
#[derive(Clone, Debug, PartialEq, Serialize, serde::Deserialize)]
pub struct Reject {
    /// The waiting call's awakeable, as `pending` showed it.
    pub awakeable: String,
    /// What the model reads.
    pub reason: String,
}

/// `edit`'s input: the waiting call, and the call to run in its place.
#[derive(Clone, Debug, PartialEq, Serialize, serde::Deserialize)]
pub struct Edit {
    /// The waiting call's awakeable, as `pending` showed it.
    pub awakeable: String,
    /// The call to run, under the waiting call's id.
    pub call: ToolCall,
}

/// Resolves the waiting call's awakeable with `approval`, if `awakeable` is the call that
/// waits: an answer meant for another call is refused (`409`), not given to this one. The
/// first answer counts; one given before the turn has cleared the call changes nothing.
async fn answer(
    ctx: &SharedObjectContext<'_>,
    awakeable: &str,
    approval: Approval,
) -> HandlerResult<()> {
    let key = ctx.key();
    let Some(Json(waiting)) = ctx.get::<Json<WaitingApproval>>(WAITING).await? else {
        return Err(terminal(404, format!("conversation {key}: no call waits for approval")));
    };
    if waiting.awakeable != awakeable {
        return Err(terminal(
            409,
            format!(
                "conversation {key}: the call waiting is {} ({}), not {awakeable}",
                waiting.approval.call.id, waiting.awakeable
            ),
        ));
    }
    ctx.resolve_awakeable(&waiting.awakeable, Json(approval));
    Ok(())
}
