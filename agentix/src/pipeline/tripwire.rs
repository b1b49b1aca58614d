//! The `tripwire` hooks: each a node of the chain, run beside the model call of the turn's
//! first step, all at once; the first that trips ends the wait.

use super::chain::Chain;
use super::chain::report_panic;
use crate::error::Error;
use crate::error::HookFailure;
use crate::event::{EventKind, EventSet};
use crate::model::ModelRequest;
use crate::observe::{Decision, Observation, Observer};
use crate::on;
use crate::on::OnError;
use crate::support::{Bounded, caught};
use crate::turn::Turn;
use crate::verdict::Trip;

/// A `tripwire` hook, with its name, asked once, when it was added.
#[derive(Clone, Debug)]
pub struct Wire<H>(H, &'static str);

impl<H: on::Tripwire> Wire<H> {
    pub(super) fn new(hook: H) -> Self {
        let name = hook.name();
        Wire(hook, name)
    }
}

/// A tripwire that tripped, or failed and may not be skipped: what ends the turn.
#[doc(hidden)]
#[derive(Debug)]
pub struct Tripped {
    hook: &'static str,
    cause: TripCause,
}

#[derive(Debug)]
enum TripCause {
    Reason(String),
    Failed(HookFailure),
}

impl Tripped {
    /// The hook that tripped.
    pub(crate) fn hook(&self) -> &'static str {
        self.hook
    }

    /// The turn's error: [`Error::Tripped`], or the hook's failure, named as every event's.
    pub(crate) fn error(self) -> Error {
        match self.cause {
            TripCause::Reason(reason) => Error::Tripped { hook: self.hook, reason },
            TripCause::Failed(failure) => failure.error(EventKind::Tripwire, self.hook),
        }
    }
}

/// The failures of tripwires that may be skipped (`on_error = skip`), for the loop to record
/// once the model call is done with the turn.
pub(crate) type SkippedWires = std::sync::Mutex<Vec<(&'static str, HookFailure)>>;

impl<H: on::Tripwire> Chain for Wire<H> {
    const EVENTS: EventSet = EventSet::of(EventKind::Tripwire);

    async fn tripwire<O: Observer>(
        &self,
        request: &ModelRequest,
        turn: &Turn,
        observer: &O,
        skipped: &SkippedWires,
    ) -> Result<(), Tripped> {
        let (wire, hook) = (&self.0, self.1);
        let event = EventKind::Tripwire;
        if H::CONDITIONAL && !wire.applies(request, turn) {
            observer.observe(&Observation::Hook { event, hook, decision: Decision::Skipped });
            return Ok(());
        }
        let checked = Bounded::new(H::TIMEOUT, caught(|| wire.tripwire(request, turn))).await;
        let failure = match checked {
            Ok(Ok(Trip::Pass)) => {
                observer.observe(&Observation::Hook { event, hook, decision: Decision::Continue });
                return Ok(());
            }
            Ok(Ok(Trip::Tripped(reason))) => {
                let decision = Decision::Tripped { reason: &reason };
                observer.observe(&Observation::Hook { event, hook, decision });
                return Err(Tripped { hook, cause: TripCause::Reason(reason) });
            }
            Ok(Err(payload)) => {
                let message = report_panic(observer, event, hook, payload.as_ref());
                HookFailure::Panicked { message }
            }
            Err(after) => {
                let decision = Decision::TimedOut { after };
                observer.observe(&Observation::Hook { event, hook, decision });
                HookFailure::TimedOut { after }
            }
        };
        match H::ON_ERROR {
            OnError::Fail => Err(Tripped { hook, cause: TripCause::Failed(failure) }),
            OnError::Skip => {
                crate::support::lock(skipped).push((hook, failure));
                Ok(())
            }
        }
    }
}
