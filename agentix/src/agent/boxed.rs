//! The agent with its type erased.

use std::future::Future;
use std::pin::Pin;

use crate::Outcome;
use crate::approval::Answer;
use crate::conversation::Conversation;
use crate::error::Error;
use crate::event::StepStart;
use crate::message::{AssistantMessage, Message};
use crate::model::Model;
use crate::observe::{Observation, Observer};
use crate::pipeline::{Flow, Pipeline};
use crate::task::TaskContext;
use crate::tool::ToolSet;
use crate::transform::StreamTransformer;
use crate::turn::Turn;

use super::effects::{Committed, Effects, ErasedCommit, ErasedEffects, ErasedJournal, Journaled};
use super::run::{StartsTurn, TurnRun, start};
use super::runs::{Runs, TurnGate};
use super::{Agent, Approver};

impl<M: Model, T: ToolSet, P: Pipeline, A: Approver, X: StreamTransformer> Agent<M, T, P, A, X> {
    /// Erases the agent's type, for storage beside agents of other types (a map of agents by
    /// name, a field of a server's state). Each turn then costs one allocation for its future
    /// (or its stream); the hooks inside stay as static as before.
    pub fn boxed(self) -> BoxedAgent
    where
        Self: 'static,
    {
        BoxedAgent::erase(self)
    }
}

/// An [`Agent`] with its type erased: one type for agents of any type, run the same way —
/// [`run`](BoxedAgent::run), [`turn`](BoxedAgent::turn) (observed, streamed, committed,
/// journaled) and [`resume`](BoxedAgent::resume).
///
/// ```
/// use std::collections::HashMap;
/// use agentix::{Agent, BoxedAgent, Conversation, ScriptedModel};
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let mut agents: HashMap<&str, BoxedAgent> = HashMap::new();
/// agents.insert("greeter", Agent::builder(ScriptedModel::new().text("Hello!")).build().boxed());
/// agents.insert(
///     "terse",
///     Agent::builder(ScriptedModel::new().text("Hi.")).system("Be terse.").build().boxed(),
/// );
/// let reply = agents["terse"].run(&mut Conversation::new(), "Hello").await?;
/// assert_eq!(reply.joined_text(), "Hi.");
/// # Ok::<_, agentix::Error>(())
/// # }).unwrap();
/// ```
///
/// What erasing costs: each turn one allocation for its future; an observer, a committer, a
/// journal and a session's `step_start` hooks are called through `dyn` (a commit and each
/// journaled step one allocation more).
pub struct BoxedAgent {
    agent: Box<dyn DynAgent>,
}

impl BoxedAgent {
    /// Erases `agent`'s type.
    pub(crate) fn erase<R: Runs + 'static>(agent: R) -> BoxedAgent {
        BoxedAgent { agent: Box::new(agent) }
    }

    /// Runs one turn; see [`Agent::run`].
    pub fn run<'a>(
        &'a self,
        conversation: &'a mut Conversation,
        message: impl Into<Message>,
    ) -> impl Future<Output = Outcome> + Send + 'a {
        start(self, conversation, message.into()).into_future()
    }

    /// One turn to set up, then await or stream; see [`Agent::turn`].
    pub fn turn<'a>(
        &'a self,
        conversation: &'a mut Conversation,
        message: impl Into<Message>,
    ) -> TurnRun<'a, Self, Message, (), (), impl StartsTurn<'a, Self, Message, (), ()>> {
        start(self, conversation, message.into())
    }

    /// Goes on with a suspended turn; see [`Agent::resume`].
    pub fn resume<'a>(
        &'a self,
        conversation: &'a mut Conversation,
        answer: impl Into<Answer>,
    ) -> TurnRun<'a, Self, Answer, (), (), impl StartsTurn<'a, Self, Answer, (), ()>> {
        start(self, conversation, answer.into())
    }
}

impl std::fmt::Debug for BoxedAgent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BoxedAgent").finish_non_exhaustive()
    }
}

type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// How an erased turn opens.
enum DynOpening {
    Message(Message),
    Answer(Answer),
}

/// A turn's observer, its type erased; `None` for one that observes nothing.
type DynObserver<'a> = Option<(&'a dyn ObserveDyn, bool)>;

/// An agent's turns, callable through `dyn`.
trait DynAgent: Send + Sync {
    /// A turn: opened, observed, its effects, and, for a session's task, its gate and context.
    fn turn<'a>(
        &'a self,
        conversation: &'a mut Conversation,
        opening: DynOpening,
        observer: DynObserver<'a>,
        effects: ErasedEffects<'a>,
        task: Option<(&'a dyn GateDyn, TaskContext)>,
    ) -> BoxFuture<'a, Outcome>;
}

impl<R: Runs> DynAgent for R {
    fn turn<'a>(
        &'a self,
        conversation: &'a mut Conversation,
        opening: DynOpening,
        observer: DynObserver<'a>,
        effects: ErasedEffects<'a>,
        task: Option<(&'a dyn GateDyn, TaskContext)>,
    ) -> BoxFuture<'a, Outcome> {
        // A turn that observes nothing and keeps nothing runs as the typed agent's plain turn;
        // otherwise the observer's type carries whether the model's answer streams.
        match (observer, effects, task) {
            (None, ErasedEffects::Plain, None) => match opening {
                DynOpening::Message(message) => Box::pin(self.open(conversation, message, &(), ())),
                DynOpening::Answer(answer) => Box::pin(self.reopen(conversation, answer, &(), ())),
            },
            (observer, effects, task) => {
                let (observer, streams) = observer.unwrap_or((&() as &dyn ObserveDyn, false));
                if streams {
                    Box::pin(erased::<_, true>(
                        self,
                        conversation,
                        opening,
                        observer,
                        effects,
                        task,
                    ))
                } else {
                    Box::pin(erased::<_, false>(
                        self,
                        conversation,
                        opening,
                        observer,
                        effects,
                        task,
                    ))
                }
            }
        }
    }
}

/// A turn of `agent` reporting to an erased observer of the `STREAMS` it had, with erased
/// effects; a session's task with its erased gate.
async fn erased<R: Runs, const STREAMS: bool>(
    agent: &R,
    conversation: &mut Conversation,
    opening: DynOpening,
    observer: &dyn ObserveDyn,
    effects: ErasedEffects<'_>,
    task: Option<(&dyn GateDyn, TaskContext)>,
) -> Outcome {
    let observer = Erased::<STREAMS>(observer);
    match effects {
        ErasedEffects::Plain => with(agent, conversation, opening, &observer, (), task).await,
        ErasedEffects::Committed(committer) => {
            let committer = ErasedCommit(committer);
            let effects = Committed(&committer);
            with(agent, conversation, opening, &observer, effects, task).await
        }
        ErasedEffects::Journaled(journal, committer) => {
            let journal = ErasedJournal(journal);
            let committer = committer.map(ErasedCommit);
            let effects = Journaled { journal: &journal, inner: committer.as_ref().map(Committed) };
            with(agent, conversation, opening, &observer, effects, task).await
        }
    }
}

/// The erased turn with its effects' types known again.
async fn with<R: Runs, O: Observer, E: Effects>(
    agent: &R,
    conversation: &mut Conversation,
    opening: DynOpening,
    observer: &O,
    effects: E,
    task: Option<(&dyn GateDyn, TaskContext)>,
) -> Outcome {
    match (opening, task) {
        (DynOpening::Message(message), None) => {
            agent.open(conversation, message, observer, effects).await
        }
        (DynOpening::Message(message), Some((gate, task))) => {
            let gate = ErasedGate(gate);
            agent.run_task(conversation, message, observer, &gate, task, &effects).await
        }
        (DynOpening::Answer(answer), _) => {
            agent.reopen(conversation, answer, observer, effects).await
        }
    }
}

/// An erased agent runs turns as the agent it holds, each through one allocation.
impl Runs for BoxedAgent {
    // Erased, an agent answers with its final message (a typed agent's: the answer's JSON).
    type Answer = AssistantMessage;

    fn read_answer(&self, message: AssistantMessage) -> Result<AssistantMessage, Error> {
        Ok(message)
    }

    async fn open<'a, O: Observer, E: Effects + 'a>(
        &'a self,
        conversation: &'a mut Conversation,
        message: Message,
        observer: &'a O,
        effects: E,
    ) -> Outcome {
        self.start(conversation, DynOpening::Message(message), observer, effects).await
    }

    async fn reopen<'a, O: Observer, E: Effects + 'a>(
        &'a self,
        conversation: &'a mut Conversation,
        answer: Answer,
        observer: &'a O,
        effects: E,
    ) -> Outcome {
        self.start(conversation, DynOpening::Answer(answer), observer, effects).await
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
        let observer = Some((observer as &dyn ObserveDyn, O::STREAMS));
        let opening = DynOpening::Message(message);
        let task = Some((gate as &dyn GateDyn, task));
        self.agent.turn(conversation, opening, observer, effects.erased(), task)
    }

    fn into_boxed(self) -> BoxedAgent {
        self
    }
}

impl BoxedAgent {
    /// A turn on its own (no session's task), its observer and effects erased.
    async fn start<O: Observer, E: Effects>(
        &self,
        conversation: &mut Conversation,
        opening: DynOpening,
        observer: &O,
        effects: E,
    ) -> Outcome {
        let observer = erase_observer(observer);
        self.agent.turn(conversation, opening, observer, effects.erased(), None).await
    }
}

/// An observer that observes nothing is not called at all.
fn erase_observer<O: Observer>(observer: &O) -> DynObserver<'_> {
    (!O::SILENT).then_some((observer as &dyn ObserveDyn, O::STREAMS))
}

/// [`TurnGate::step_start`], callable through `dyn`.
trait GateDyn: Sync {
    fn step_start<'a>(
        &'a self,
        turn: &'a mut Turn,
        observer: &'a dyn ObserveDyn,
    ) -> BoxFuture<'a, Flow<StepStart>>;
}

impl<G: TurnGate> GateDyn for G {
    fn step_start<'a>(
        &'a self,
        turn: &'a mut Turn,
        observer: &'a dyn ObserveDyn,
    ) -> BoxFuture<'a, Flow<StepStart>> {
        Box::pin(async move { TurnGate::step_start(self, turn, &Erased::<false>(observer)).await })
    }
}

/// A gate whose type was erased.
struct ErasedGate<'g>(&'g dyn GateDyn);

impl TurnGate for ErasedGate<'_> {
    async fn step_start<O: Observer>(&self, turn: &mut Turn, observer: &O) -> Flow<StepStart> {
        self.0.step_start(turn, observer).await
    }
}

/// [`Observer::observe`], callable through `dyn` (`Observer` itself is not, for its constant).
trait ObserveDyn: Sync {
    fn observe(&self, observation: &Observation<'_>);
}

impl<O: Observer> ObserveDyn for O {
    fn observe(&self, observation: &Observation<'_>) {
        Observer::observe(self, observation);
    }
}

/// An observer whose type was erased, with the `STREAMS` of the type it had.
struct Erased<'o, const STREAMS: bool>(&'o dyn ObserveDyn);

impl<const STREAMS: bool> Observer for Erased<'_, STREAMS> {
    const STREAMS: bool = STREAMS;

    fn observe(&self, observation: &Observation<'_>) {
        self.0.observe(observation);
    }
}
