//! What runs turns: [`AnyAgent`], the one bound for an agent of any type — an [`Agent`], a
//! [`BoxedAgent`], or a reference or `Arc` to one — and the loop's side of it, [`Runs`], which
//! nothing outside the crate can name or implement.

use std::future::{Future, ready};
use std::sync::Arc;

use crate::Outcome;
use crate::approval::{Answer, Approver};
use crate::conversation::Conversation;
use crate::error::Error;
use crate::event::StepStart;
use crate::message::{AssistantMessage, Message};
use crate::model::Model;
use crate::observe::Observer;
use crate::pipeline::{Answering, Flow, Pipeline};
use crate::task::TaskContext;
use crate::tool::ToolSet;
use crate::transform::StreamTransformer;
use crate::turn::Turn;

use super::effects::Effects;
use super::run::{StartsTurn, TurnRun, start};
use super::{Agent, BoxedAgent};

/// An agent of any type: what a [`Session`](crate::session::Session), a server or a durable
/// runtime takes to run turns. Every [`Agent`] is one, and so are [`BoxedAgent`] and a
/// reference or an `Arc` to either. Sealed: the loop reaches its turns through it.
///
/// Its methods are [`Agent`]'s, for code generic over the agent:
///
/// ```
/// use agentix::{Agent, AnyAgent, Conversation, Error, ScriptedModel};
///
/// async fn greet(agent: &impl AnyAgent) -> Result<String, Error> {
///     let mut conversation = Conversation::new();
///     Ok(agent.turn(&mut conversation, "Hi").await?.joined_text().into_owned())
/// }
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let agent = Agent::builder(ScriptedModel::new().text("Hello!").text("Hello!")).build();
/// assert_eq!(greet(&agent).await?, "Hello!");
/// assert_eq!(greet(&agent.boxed()).await?, "Hello!");
/// # Ok::<_, agentix::Error>(())
/// # }).unwrap();
/// ```
pub trait AnyAgent: Runs {
    /// Runs one turn: `message` opens it, and the reply is its final answer. See
    /// [`Agent::run`].
    fn run<'a>(
        &'a self,
        conversation: &'a mut Conversation,
        message: impl Into<Message>,
    ) -> impl Future<Output = Outcome> + Send + 'a {
        start(self, conversation, message.into()).into_future()
    }

    /// One turn to set up, then await or stream. See [`Agent::turn`].
    fn turn<'a>(
        &'a self,
        conversation: &'a mut Conversation,
        message: impl Into<Message>,
    ) -> TurnRun<'a, Self, Message, (), (), impl StartsTurn<'a, Self, Message, (), ()>> {
        start(self, conversation, message.into())
    }

    /// Goes on with a suspended turn, `answer` answering its waiting call. See
    /// [`Agent::resume`].
    fn resume<'a>(
        &'a self,
        conversation: &'a mut Conversation,
        answer: impl Into<Answer>,
    ) -> TurnRun<'a, Self, Answer, (), (), impl StartsTurn<'a, Self, Answer, (), ()>> {
        start(self, conversation, answer.into())
    }

    /// Erases the agent's type, for storage beside agents of other types. See
    /// [`Agent::boxed`].
    fn boxed(self) -> BoxedAgent
    where
        Self: Sized + 'static,
    {
        self.into_boxed()
    }
}

impl<R: Runs + ?Sized> AnyAgent for R {}

/// What runs a session's task's steps before each: its `step_start` hooks. A turn run on its
/// own has `()`, which costs nothing.
pub trait TurnGate: Sync {
    /// Whether there is anything to run: the loop skips the call at compile time otherwise.
    const GATES: bool = true;

    /// Runs the `step_start` hooks.
    fn step_start<O: Observer>(
        &self,
        turn: &mut Turn,
        observer: &O,
    ) -> impl Future<Output = Flow<StepStart>> + Send;
}

impl TurnGate for () {
    const GATES: bool = false;

    #[inline(always)]
    fn step_start<O: Observer>(
        &self,
        _turn: &mut Turn,
        _observer: &O,
    ) -> impl Future<Output = Flow<StepStart>> + Send {
        ready(Flow::Continue)
    }
}

/// The loop's side of [`AnyAgent`]. Public in name only (this module is private).
pub trait Runs: Send + Sync {
    /// Whether the final answer is text: a typed agent's is JSON, which a stream does not show
    /// as it comes (its `Finished` carries it whole).
    const ANSWERS_TEXT: bool = true;

    /// What the agent answers with: its output type, or the final message.
    type Answer: Send + 'static;

    /// The agent's answer of a turn's final message ([`TurnRun::answer`]).
    fn read_answer(&self, message: AssistantMessage) -> Result<Self::Answer, Error>;

    /// A turn opened by `message`.
    fn open<'a, O: Observer, E: Effects + 'a>(
        &'a self,
        conversation: &'a mut Conversation,
        message: Message,
        observer: &'a O,
        effects: E,
    ) -> impl Future<Output = Outcome> + Send + 'a;

    /// The suspended turn `conversation`'s log ends with, going on with `answer`.
    fn reopen<'a, O: Observer, E: Effects + 'a>(
        &'a self,
        conversation: &'a mut Conversation,
        answer: Answer,
        observer: &'a O,
        effects: E,
    ) -> impl Future<Output = Outcome> + Send + 'a;

    /// A session's task's turn: `message` opens it, `gate` runs before each step.
    fn run_task<'a, O: Observer, G: TurnGate, E: Effects>(
        &'a self,
        conversation: &'a mut Conversation,
        message: Message,
        observer: &'a O,
        gate: &'a G,
        task: TaskContext,
        effects: &'a E,
    ) -> impl Future<Output = Outcome> + Send + 'a;

    /// The agent, its type erased.
    fn into_boxed(self) -> BoxedAgent
    where
        Self: Sized + 'static,
    {
        BoxedAgent::erase(self)
    }
}

impl<M: Model, T: ToolSet, P: Pipeline, A: Approver, X: StreamTransformer> Runs
    for Agent<M, T, P, A, X>
{
    const ANSWERS_TEXT: bool = !<P::Answering as Answering>::CHECKS;
    type Answer = <P::Answering as Answering>::Answer;

    fn read_answer(&self, message: AssistantMessage) -> Result<Self::Answer, Error> {
        self.hooks.answering().answer(message)
    }

    #[inline(always)]
    fn open<'a, O: Observer, E: Effects + 'a>(
        &'a self,
        conversation: &'a mut Conversation,
        message: Message,
        observer: &'a O,
        effects: E,
    ) -> impl Future<Output = Outcome> + Send + 'a {
        self.observed(conversation, message, observer, &(), None, effects)
    }

    #[inline(always)]
    fn reopen<'a, O: Observer, E: Effects + 'a>(
        &'a self,
        conversation: &'a mut Conversation,
        answer: Answer,
        observer: &'a O,
        effects: E,
    ) -> impl Future<Output = Outcome> + Send + 'a {
        self.resumed(conversation, answer, observer, effects)
    }

    fn run_task<'a, O: Observer, G: TurnGate, E: Effects>(
        &'a self,
        conversation: &'a mut Conversation,
        message: Message,
        observer: &'a O,
        gate: &'a G,
        task: TaskContext,
        effects: &'a E,
    ) -> impl Future<Output = Outcome> + Send + 'a {
        self.observed(conversation, message, observer, gate, Some(Box::new(task)), effects)
    }
}

/// A reference or an `Arc` runs turns as what it points to.
macro_rules! forwarded {
    ($($pointer:ty),*) => {$(
        impl<R: Runs + ?Sized> Runs for $pointer {
            const ANSWERS_TEXT: bool = R::ANSWERS_TEXT;
            type Answer = R::Answer;

            fn read_answer(&self, message: AssistantMessage) -> Result<R::Answer, Error> {
                (**self).read_answer(message)
            }

            fn open<'a, O: Observer, E: Effects + 'a>(
                &'a self,
                conversation: &'a mut Conversation,
                message: Message,
                observer: &'a O,
                effects: E,
            ) -> impl Future<Output = Outcome> + Send + 'a {
                (**self).open(conversation, message, observer, effects)
            }

            fn reopen<'a, O: Observer, E: Effects + 'a>(
                &'a self,
                conversation: &'a mut Conversation,
                answer: Answer,
                observer: &'a O,
                effects: E,
            ) -> impl Future<Output = Outcome> + Send + 'a {
                (**self).reopen(conversation, answer, observer, effects)
            }

            fn run_task<'a, O: Observer, G: TurnGate, E: Effects>(
                &'a self,
                conversation: &'a mut Conversation,
                message: Message,
                observer: &'a O,
                gate: &'a G,
                task: TaskContext,
                effects: &'a E,
            ) -> impl Future<Output = Outcome> + Send + 'a {
                (**self).run_task(conversation, message, observer, gate, task, effects)
            }
        }
    )*};
}

forwarded!(&R, Arc<R>);
