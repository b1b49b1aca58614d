//! One way to run a session: [`SessionRun`], what [`Session::run`] returns — awaited as it is,
//! or first told to stream, to report to an observer, or to commit as it goes.

use std::future::{Future, IntoFuture};

use futures::Stream;

use crate::agent::AnyAgent;
use crate::agent::effects::{Committed, Effects};
use crate::agent::run::Launch;
use crate::durable::Commit;
use crate::error::Error;
use crate::observe::Observer;
use crate::stream::StreamEvent;

use super::Session;
use super::chain::SessionChain;
use crate::task::TaskReport;

/// A session's run, ready to go: `.await` it for the reports of the tasks that ended, or set
/// it up first — [`stream`](SessionRun::stream) it, [`observe`](SessionRun::observe) it,
/// [`commit`](SessionRun::commit) it. What it is not told costs nothing.
///
/// Its type parameters are the agent (`R`), the session's hooks (`S`), the observer (`O`),
/// where its steps go (`E`), and how it starts (`L`, a function the crate names).
#[must_use = "a session does nothing until its run is awaited or streamed"]
pub struct SessionRun<'a, R, S, O, E, L> {
    parts: SessionParts<'a, R, S, O, E>,
    launch: L,
}

/// What a session's run is run with.
pub struct SessionParts<'a, R, S, O, E> {
    session: &'a mut Session<R, S>,
    observer: &'a O,
    effects: E,
}

type Reports = Result<Vec<TaskReport>, Error>;

/// How a [`SessionRun`] starts its future.
pub trait StartsSession<'a, R: 'a, S: 'a, O: 'a, E>:
    Launch<SessionParts<'a, R, S, O, E>, Output = Reports>
{
}

impl<'a, R: 'a, S: 'a, O: 'a, E, L> StartsSession<'a, R, S, O, E> for L where
    L: Launch<SessionParts<'a, R, S, O, E>, Output = Reports>
{
}

/// The run's future, as its parts make it.
fn launch<'a, R, S, O, E>(
    parts: SessionParts<'a, R, S, O, E>,
) -> impl Future<Output = Reports> + Send + 'a
where
    R: AnyAgent,
    S: SessionChain,
    O: Observer,
    E: Effects + 'a,
{
    let SessionParts { session, observer, effects } = parts;
    session.observed(observer, effects)
}

/// `session`'s run, reporting nowhere and committing nothing.
pub(super) fn start<R: AnyAgent, S: SessionChain>(
    session: &mut Session<R, S>,
) -> SessionRun<'_, R, S, (), (), impl StartsSession<'_, R, S, (), ()>> {
    let parts = SessionParts { session, observer: &(), effects: () };
    SessionRun { parts, launch: launch::<R, S, (), ()> }
}

impl<'a, R: AnyAgent, S: SessionChain, O: Observer, E: Effects + 'a, L>
    SessionRun<'a, R, S, O, E, L>
{
    /// Reports the session's events ([`Observation::Session`](crate::observe::Observation::Session))
    /// and every turn's events to `observer`.
    pub fn observe<O2: Observer>(
        self,
        observer: &'a O2,
    ) -> SessionRun<'a, R, S, O2, E, impl StartsSession<'a, R, S, O2, E>> {
        let SessionParts { session, effects, .. } = self.parts;
        let parts = SessionParts { session, observer, effects };
        SessionRun { parts, launch: launch::<R, S, O2, E> }
    }

    /// Streams the run: the session's events ([`StreamEvent::Session`]) and each task's
    /// turn's stream events, in order, ending with
    /// [`SessionEvent::RunEnded`](super::SessionEvent::RunEnded). Dropping the stream midway
    /// is dropping the run. An observer set with [`observe`](SessionRun::observe) sees the
    /// same events.
    pub fn stream(self) -> impl Stream<Item = StreamEvent> + Send + 'a {
        let SessionParts { session, observer, effects } = self.parts;
        stream_while!(observer, |queue| session.observed(&queue, effects))
    }
}

impl<'a, R: AnyAgent, S: SessionChain, O: Observer, L> SessionRun<'a, R, S, O, (), L> {
    /// Commits through `committer`: each task's turn step by step, as
    /// [`TurnRun::commit`](crate::TurnRun::commit) commits a turn, and the session's state
    /// ([`Commit::commit_session`]) after its start, as each task starts its turn and after it
    /// ends, when follow-up work is queued, and as it ends. A failed commit — a task's turn's
    /// or the session's — stops the session as a session hook's failure does (the tasks left
    /// end `cancelled`, `session_end` fires), and the run returns
    /// [`Error::Commit`] (or [`Error::ComponentPanicked`] if the committer panicked). A session
    /// whose end failed to commit commits it at its next run (which then says
    /// [`Error::SessionEnded`]).
    pub fn commit<K: Commit>(
        self,
        committer: &'a K,
    ) -> SessionRun<'a, R, S, O, Committed<'a, K>, impl StartsSession<'a, R, S, O, Committed<'a, K>>>
    {
        let SessionParts { session, observer, .. } = self.parts;
        let parts = SessionParts { session, observer, effects: Committed(committer) };
        SessionRun { parts, launch: launch::<R, S, O, Committed<'a, K>> }
    }
}

impl<'a, R, S, O, E, L> IntoFuture for SessionRun<'a, R, S, O, E, L>
where
    L: Launch<SessionParts<'a, R, S, O, E>, Output = Reports>,
{
    type Output = Reports;
    type IntoFuture = L::Future;

    #[inline(always)]
    fn into_future(self) -> L::Future {
        self.launch.launch(self.parts)
    }
}

impl<R, S, O, E, L> std::fmt::Debug for SessionRun<'_, R, S, O, E, L> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SessionRun").finish_non_exhaustive()
    }
}
