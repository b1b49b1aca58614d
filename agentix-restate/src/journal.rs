//! The turn's journal in Restate's: each step one `ctx.run`, an approval that waits an
//! awakeable.

use std::future::Future;
use std::pin::pin;

use agentix::{
    approval::{Approval, PendingApproval},
    durable::{Journal, JournalError, JournalStep, replay_recorded},
};
use futures::channel::oneshot;
use futures::future::{Either, select};
use restate_sdk::prelude::*;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use crate::object::{Announcer, WAITING};

/// A call that waits for a person's answer inside a turn: what `pending` shows, and what the
/// `approve`, `reject` and `edit` handlers answer.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct WaitingApproval {
    /// The awakeable the turn waits on: answering resolves it. Stable across replays — an
    /// idempotency key for whoever is told of the call.
    pub awakeable: String,
    /// The conversation (the object's key).
    pub conversation: String,
    /// The call, the hook that escalated it, and why.
    pub approval: PendingApproval,
}

/// What one step records in Restate's journal: the step's name with its outcome, so a replay
/// that asks for another step at that place is told so, by name.
#[derive(Serialize, Deserialize)]
struct Recorded {
    step: String,
    value: serde_json::Value,
}

/// A turn's journal on the invocation's context: every step a `ctx.run`, replayed by Restate
/// after a crash; an approval that waits, an awakeable.
pub(crate) struct RestateJournal<'a, 'ctx> {
    pub(crate) ctx: &'a ObjectContext<'ctx>,
    pub(crate) announce: Option<&'a Announcer>,
}

impl RestateJournal<'_, '_> {
    /// Runs `effect` once as the step named `asked`, or replays what it returned.
    ///
    /// `ctx.run` wants its closure to live as long as the invocation, and the turn's effects
    /// borrow the turn: the closure waits on a channel instead, and the effect runs beside it
    /// — only if Restate calls the closure, which it does on the step's first run and not on
    /// a replay (it drops it uncalled). The run is not named: a name Restate compares on a
    /// replay would fail its own check first, and its error names no step.
    async fn record<T, F>(&self, asked: String, effect: F) -> Result<T, JournalError>
    where
        T: Serialize + DeserializeOwned + Send,
        F: Future<Output = T> + Send,
    {
        let failed = |message: String| JournalError::Failed { step: asked.clone(), message };
        let (start_tx, start_rx) = oneshot::channel::<()>();
        let (outcome_tx, outcome_rx) = oneshot::channel::<Result<Recorded, String>>();
        let run = self.ctx.run(move || async move {
            let _ = start_tx.send(());
            match outcome_rx.await {
                Ok(Ok(recorded)) => Ok(Json(recorded)),
                // Recorded as the step's failure: a replay fails the same way.
                Ok(Err(message)) => Err(HandlerError::from(TerminalError::new(message))),
                Err(_) => Err(HandlerError::from(TerminalError::new("the turn was dropped"))),
            }
        });
        let mut run = pin!(run);
        let (recorded, ran) = match select(run.as_mut(), start_rx).await {
            Either::Left((replayed, _)) => (replayed, None),
            Either::Right((Err(_), run)) => (run.await, None),
            Either::Right((Ok(()), run)) => {
                let value = effect.await;
                match serde_json::to_value(&value) {
                    Ok(json) => {
                        let _ = outcome_tx.send(Ok(Recorded { step: asked.clone(), value: json }));
                        (run.await, Some(value))
                    }
                    Err(error) => {
                        let _ = outcome_tx
                            .send(Err(format!("its outcome does not serialize: {error}")));
                        (run.await, None)
                    }
                }
            }
        };
        let Json(recorded) = recorded.map_err(|error| failed(error.to_string()))?;
        match ran {
            // Recorded just now, as the step asked for.
            Some(value) => Ok(value),
            None => {
                replay_recorded(asked, &recorded.step, || serde_json::from_value(recorded.value))
            }
        }
    }
}

impl Journal for RestateJournal<'_, '_> {
    fn journal<T, F>(
        &self,
        step: &JournalStep<'_>,
        effect: F,
    ) -> impl Future<Output = Result<T, JournalError>> + Send
    where
        T: Serialize + DeserializeOwned + Send,
        F: Future<Output = T> + Send,
    {
        self.record(step.to_string(), effect)
    }

    /// The approver's answer, journaled; a `Suspend` waits on an awakeable for a person's
    /// answer — `approve`, `reject` or `edit` from anywhere, after any number of crashes.
    fn approval<F>(
        &self,
        step: &JournalStep<'_>,
        waiting: &PendingApproval,
        review: F,
    ) -> impl Future<Output = Result<Approval, JournalError>> + Send
    where
        F: Future<Output = Approval> + Send,
    {
        let asked = step.to_string();
        async move {
            let answer = self.record(asked.clone(), review).await?;
            if answer != Approval::Suspend {
                return Ok(answer);
            }
            let (awakeable, answered) = self.ctx.awakeable::<Json<Approval>>();
            let waiting = WaitingApproval {
                awakeable,
                conversation: self.ctx.key().to_owned(),
                approval: waiting.clone(),
            };
            // The call as it waits is a step, announced inside it: a replay shows and writes
            // what the first run did (a hook's reason may read otherwise now), and does not
            // announce again.
            let announce = self.announce;
            let waiting = self
                .record(format!("{asked}: waiting"), async move {
                    if let Some(announce) = announce {
                        announce(waiting.clone()).await;
                    }
                    waiting
                })
                .await?;
            self.ctx.set(WAITING, Json(waiting));
            let Json(answer) = answered.await.map_err(|error| JournalError::Failed {
                step: asked.clone(),
                message: format!("the answer was refused: {error}"),
            })?;
            self.ctx.clear(WAITING);
            Ok(match answer {
                // An answer to wait again cannot be waited on twice: the call is refused.
                Approval::Suspend => Approval::Reject("answered with `suspend`".into()),
                answer => answer,
            })
        }
    }
}
