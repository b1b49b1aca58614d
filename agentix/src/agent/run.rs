//! One way to run a turn: [`TurnRun`], what [`Agent::turn`](crate::Agent::turn) and
//! [`Agent::resume`](crate::Agent::resume) return — awaited as it is, or first told to stream,
//! to report to an observer, to commit its steps, or to pass its effects through a journal.

use std::future::{Future, IntoFuture};

use futures::{Stream, StreamExt};

use crate::Outcome;
use crate::approval::Answer;
use crate::conversation::Conversation;
use crate::durable::Commit;
use crate::durable::Journal;
use crate::error::Error;
use crate::message::Message;
use crate::observe::Observer;
use crate::stream::StreamEvent;

use super::effects::{Committed, Effects, Journaled};
use super::runs::Runs;

/// One turn, ready to run. `.await` it for its [`Outcome`], or set it up first:
///
/// - [`stream`](TurnRun::stream): the model's text as it is generated, with every event and
///   hook decision, ending with [`StreamEvent::Finished`];
/// - [`observe`](TurnRun::observe): every event and hook decision reported to an
///   [`Observer`];
/// - [`commit`](TurnRun::commit): each step committed through a [`Commit`] (a store) as it
///   joins the log;
/// - [`journal`](TurnRun::journal): each effect passed through a [`Journal`], so that a turn run
///   again after a crash replays what completed.
///
/// What it is not told costs nothing: a turn awaited as it is runs the plain loop.
///
/// ```
/// use agentix::{Agent, Conversation, ScriptedModel, observe::Observation};
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let agent = Agent::builder(ScriptedModel::new().text("Hello!")).build();
/// let mut conversation = Conversation::new();
/// let events = std::sync::atomic::AtomicUsize::new(0);
/// let count = |_: &Observation<'_>| {
///     events.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
/// };
/// let reply = agent.turn(&mut conversation, "Hi").observe(&count).await?;
/// assert_eq!(reply.joined_text(), "Hello!");
/// assert!(events.into_inner() > 0);
/// # Ok::<_, agentix::Error>(())
/// # }).unwrap();
/// ```
///
/// Its type parameters are the agent (`R`), how the turn opens (`S`: a [`Message`], or the
/// [`Answer`] a suspended turn resumes with), the observer (`O`), where its steps and effects
/// go (`E`), and how it starts (`L`, a function the crate names).
#[must_use = "a turn does nothing until it is awaited or streamed"]
pub struct TurnRun<'a, R: ?Sized, S, O, E, L> {
    parts: Parts<'a, R, S, O, E>,
    launch: L,
}

/// What a turn is run with.
pub struct Parts<'a, R: ?Sized, S, O, E> {
    agent: &'a R,
    conversation: &'a mut Conversation,
    opening: S,
    observer: &'a O,
    effects: E,
}

/// How a run builder starts its future: a function of its parts, whose future's type the
/// builder's `IntoFuture` names through it.
pub trait Launch<A> {
    /// What the future gives.
    type Output;
    /// The future.
    type Future: Future<Output = Self::Output> + Send;
    /// Starts it.
    fn launch(self, parts: A) -> Self::Future;
}

impl<A, F, Fut> Launch<A> for F
where
    F: FnOnce(A) -> Fut,
    Fut: Future + Send,
{
    type Output = Fut::Output;
    type Future = Fut;

    #[inline(always)]
    fn launch(self, parts: A) -> Fut {
        self(parts)
    }
}

/// How a [`TurnRun`] starts its future.
pub trait StartsTurn<'a, R: ?Sized + 'a, S, O: 'a, E>:
    Launch<Parts<'a, R, S, O, E>, Output = Outcome>
{
}

impl<'a, R: ?Sized + 'a, S, O: 'a, E, L> StartsTurn<'a, R, S, O, E> for L where
    L: Launch<Parts<'a, R, S, O, E>, Output = Outcome>
{
}

/// How a turn opens: with a user message, or with the answer to the call a suspended turn
/// waits on.
pub trait Opening: Send {
    /// Runs the turn on `agent`.
    fn run<'a, R: Runs + ?Sized, O: Observer, E: Effects + 'a>(
        self,
        agent: &'a R,
        conversation: &'a mut Conversation,
        observer: &'a O,
        effects: E,
    ) -> impl Future<Output = Outcome> + Send + 'a;
}

impl Opening for Message {
    #[inline(always)]
    fn run<'a, R: Runs + ?Sized, O: Observer, E: Effects + 'a>(
        self,
        agent: &'a R,
        conversation: &'a mut Conversation,
        observer: &'a O,
        effects: E,
    ) -> impl Future<Output = Outcome> + Send + 'a {
        agent.open(conversation, self, observer, effects)
    }
}

impl Opening for Answer {
    #[inline(always)]
    fn run<'a, R: Runs + ?Sized, O: Observer, E: Effects + 'a>(
        self,
        agent: &'a R,
        conversation: &'a mut Conversation,
        observer: &'a O,
        effects: E,
    ) -> impl Future<Output = Outcome> + Send + 'a {
        agent.reopen(conversation, self, observer, effects)
    }
}

/// The turn's future, as its parts make it.
fn launch<'a, R, S, O, E>(parts: Parts<'a, R, S, O, E>) -> impl Future<Output = Outcome> + Send + 'a
where
    R: Runs + ?Sized,
    S: Opening,
    O: Observer,
    E: Effects + 'a,
{
    let Parts { agent, conversation, opening, observer, effects } = parts;
    opening.run(agent, conversation, observer, effects)
}

/// A turn of `agent` on `conversation`, opened by `opening`, reporting nowhere and keeping
/// nothing.
#[inline(always)]
pub(crate) fn start<'a, R: Runs + ?Sized, S: Opening>(
    agent: &'a R,
    conversation: &'a mut Conversation,
    opening: S,
) -> TurnRun<'a, R, S, (), (), impl StartsTurn<'a, R, S, (), ()>> {
    let parts = Parts { agent, conversation, opening, observer: &(), effects: () };
    TurnRun { parts, launch: launch::<R, S, (), ()> }
}

impl<'a, R: Runs + ?Sized, S: Opening + 'a, O: Observer, E: Effects + 'a, L>
    TurnRun<'a, R, S, O, E, L>
{
    /// Reports every event and hook decision of the turn to `observer`, which sees them as they
    /// happen and cannot change anything. An observer whose `STREAMS` is set gets the model's
    /// answer as it streams.
    pub fn observe<O2: Observer>(
        self,
        observer: &'a O2,
    ) -> TurnRun<'a, R, S, O2, E, impl StartsTurn<'a, R, S, O2, E>> {
        let Parts { agent, conversation, opening, effects, .. } = self.parts;
        let parts = Parts { agent, conversation, opening, observer, effects };
        TurnRun { parts, launch: launch::<R, S, O2, E> }
    }

    /// Commits each step through `committer` as it joins the log: after `pre`, after each step
    /// of tool calls (the assistant message with every call's result), after the final answer,
    /// and at the turn's end. A failed commit ends the turn with
    /// [`Error::Commit`](crate::Error::Commit). `agentix_store::Store::committer` gives one for
    /// a stored conversation.
    pub fn commit<K: Commit>(
        self,
        committer: &'a K,
    ) -> TurnRun<'a, R, S, O, E::With, impl StartsTurn<'a, R, S, O, E::With>>
    where
        E: AddCommit<'a, K>,
    {
        let Parts { agent, conversation, opening, observer, effects } = self.parts;
        let parts =
            Parts { agent, conversation, opening, observer, effects: effects.add(committer) };
        TurnRun { parts, launch: launch::<R, S, O, E::With> }
    }

    /// Passes each effect of the turn — every model call, tool call, approval and summary, and
    /// the turn's opening — through `journal` as a named [`JournalStep`](crate::durable::JournalStep):
    /// a journal that recorded them replays them when the turn is run again (after a crash, on
    /// any worker), calling no model and running no tool whose result it holds. A replay for
    /// another message, or another answer, diverges at the opening.
    ///
    /// Hooks run again on a replay — they must decide the same way, or the replay diverges
    /// ([`Error::Journal`](crate::Error::Journal) names the step) — except what runs inside a
    /// journaled call: the `wrap_model` chain's innermost call with the stream transformers,
    /// and a tool set's call with its per-tool `after_tool` and `tool_error` hooks, are replayed
    /// as their recorded outcome (a per-tool hook's halt inside a call is not). A journaled
    /// turn reports its model calls to no committer's audit.
    pub fn journal<J: Journal>(
        self,
        journal: &'a J,
    ) -> TurnRun<'a, R, S, O, E::With, impl StartsTurn<'a, R, S, O, E::With>>
    where
        E: AddJournal<'a, J>,
    {
        let Parts { agent, conversation, opening, observer, effects } = self.parts;
        let parts = Parts { agent, conversation, opening, observer, effects: effects.add(journal) };
        TurnRun { parts, launch: launch::<R, S, O, E::With> }
    }

    /// Runs the turn, as awaiting it does, and answers with what the agent makes of its final
    /// message: the value of its output type
    /// ([`AgentBuilder::output`](crate::AgentBuilder::output)), or the message itself for an
    /// agent that answers with text — after whatever the turn was told (observed, committed,
    /// journaled).
    pub fn answer(self) -> impl Future<Output = Result<R::Answer, Error>> + Send + 'a
    where
        L: StartsTurn<'a, R, S, O, E> + 'a,
    {
        let agent = self.parts.agent;
        let turn = self.into_future();
        async move { agent.read_answer(turn.await?) }
    }

    /// Streams the turn: the model's text as it is generated (through the stream
    /// transformers), with every event and hook decision, ending with
    /// [`StreamEvent::Finished`]. It is the same loop as an awaited turn: every hook fires the
    /// same way on both. An observer set with [`observe`](TurnRun::observe) sees the same
    /// events. Dropping the stream midway cancels the turn and leaves the log consistent.
    ///
    /// A typed agent's ([`AgentBuilder::output`](crate::AgentBuilder::output)) stream shows no
    /// text as it comes — it would be half an answer's JSON — and its
    /// [`Finished`](StreamEvent::Finished) carries the answer whole.
    pub fn stream(self) -> impl Stream<Item = StreamEvent> + Send + 'a {
        let Parts { agent, conversation, opening, observer, effects } = self.parts;
        let events =
            stream_while!(observer, |queue| opening.run(agent, conversation, &queue, effects));
        events.filter(|event| {
            std::future::ready(R::ANSWERS_TEXT || !matches!(event, StreamEvent::Text(_)))
        })
    }
}

impl<'a, R, S, O, E, L> IntoFuture for TurnRun<'a, R, S, O, E, L>
where
    R: ?Sized,
    L: Launch<Parts<'a, R, S, O, E>, Output = Outcome>,
{
    type Output = Outcome;
    type IntoFuture = L::Future;

    #[inline(always)]
    fn into_future(self) -> L::Future {
        self.launch.launch(self.parts)
    }
}

impl<R: ?Sized, S, O, E, L> std::fmt::Debug for TurnRun<'_, R, S, O, E, L> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TurnRun").finish_non_exhaustive()
    }
}

/// Where a turn's steps go once it commits through `K` as well.
#[diagnostic::on_unimplemented(
    message = "this turn commits already",
    label = "a turn commits through one committer",
    note = "call `.commit(...)` once"
)]
pub trait AddCommit<'a, K> {
    /// The effects with the committer.
    type With: Effects + 'a;
    /// Adds it.
    fn add(self, committer: &'a K) -> Self::With;
}

impl<'a, K: Commit + 'a> AddCommit<'a, K> for () {
    type With = Committed<'a, K>;

    fn add(self, committer: &'a K) -> Committed<'a, K> {
        Committed(committer)
    }
}

impl<'a, J: Journal + 'a, K: Commit + 'a> AddCommit<'a, K> for Journaled<'a, J, ()> {
    type With = Journaled<'a, J, Committed<'a, K>>;

    fn add(self, committer: &'a K) -> Self::With {
        Journaled { journal: self.journal, inner: Committed(committer) }
    }
}

/// Where a turn's effects go once they pass through the journal `J` as well.
#[diagnostic::on_unimplemented(
    message = "this turn has a journal already",
    label = "a turn's effects go through one journal",
    note = "call `.journal(...)` once"
)]
pub trait AddJournal<'a, J> {
    /// The effects through the journal.
    type With: Effects + 'a;
    /// Adds it.
    fn add(self, journal: &'a J) -> Self::With;
}

impl<'a, J: Journal + 'a> AddJournal<'a, J> for () {
    type With = Journaled<'a, J, ()>;

    fn add(self, journal: &'a J) -> Self::With {
        Journaled { journal, inner: self }
    }
}

impl<'a, J: Journal + 'a, K: Commit + 'a> AddJournal<'a, J> for Committed<'a, K> {
    type With = Journaled<'a, J, Committed<'a, K>>;

    fn add(self, journal: &'a J) -> Self::With {
        Journaled { journal, inner: self }
    }
}
