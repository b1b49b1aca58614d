//! The agent with its type erased.

use std::future::Future;
use std::pin::Pin;

use futures::Stream;

use crate::Outcome;
use crate::approval::{Approval, Approver};
use crate::commit::{Commit, CommitError, ModelCall};
use crate::conversation::Conversation;
use crate::event::TurnStart;
use crate::message::Message;
use crate::model::Model;
use crate::observe::{Observation, Observer};
use crate::pipeline::{Flow, Pipeline};
use crate::session::{TaskContext, TaskRunner, TurnGate};
use crate::stream::StreamEvent;
use crate::tool::ToolSet;
use crate::transform::StreamTransformer;
use crate::turn::Turn;

use super::Agent;

impl<M: Model, T: ToolSet, P: Pipeline, A: Approver, X: StreamTransformer> Agent<M, T, P, A, X> {
    /// Erases the agent's type, for storage beside agents of other types (a map of agents by
    /// name, a field of a server's state). Each turn then costs one allocation for its future
    /// (or its stream); the hooks inside stay as static as before.
    pub fn boxed(self) -> BoxedAgent
    where
        Self: 'static,
    {
        BoxedAgent { agent: Box::new(self) }
    }
}

/// An [`Agent`] with its type erased: a turn run, observed, streamed, committed, or resumed,
/// behind one type.
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
pub struct BoxedAgent {
    agent: Box<dyn DynAgent>,
}

impl BoxedAgent {
    /// Runs one turn; see [`Agent::run`].
    pub fn run<'a>(
        &'a self,
        conversation: &'a mut Conversation,
        message: impl Into<Message>,
    ) -> impl Future<Output = Outcome> + Send + 'a {
        self.agent.run(conversation, message.into())
    }

    /// Runs one turn, reporting to `observer`; see [`Agent::run_observed`]. The observer is
    /// called through a reference to `dyn`: one indirect call per observation.
    pub fn run_observed<'a, O: Observer>(
        &'a self,
        conversation: &'a mut Conversation,
        message: impl Into<Message>,
        observer: &'a O,
    ) -> impl Future<Output = Outcome> + Send + 'a {
        self.agent.run_observed(conversation, message.into(), observer, O::STREAMS, None)
    }

    /// Runs one turn, committing each step; see [`Agent::run_committing`]. The committer is
    /// called through a reference to `dyn`: one allocation per commit.
    pub fn run_committing<'a, K: Commit>(
        &'a self,
        conversation: &'a mut Conversation,
        message: impl Into<Message>,
        committer: &'a K,
    ) -> impl Future<Output = Outcome> + Send + 'a {
        self.agent.run_committing(conversation, message.into(), committer)
    }

    /// Goes on with a suspended turn; see [`Agent::resume`].
    pub fn resume<'a>(
        &'a self,
        conversation: &'a mut Conversation,
        approval: Approval,
    ) -> impl Future<Output = Outcome> + Send + 'a {
        self.agent.resume(conversation, approval, None)
    }

    /// Goes on with a suspended turn, committing each step; see [`Agent::resume_committing`].
    pub fn resume_committing<'a, K: Commit>(
        &'a self,
        conversation: &'a mut Conversation,
        approval: Approval,
        committer: &'a K,
    ) -> impl Future<Output = Outcome> + Send + 'a {
        self.agent.resume(conversation, approval, Some(committer))
    }

    /// Runs one turn, streamed; see [`Agent::run_stream`].
    pub fn run_stream<'a>(
        &'a self,
        conversation: &'a mut Conversation,
        message: impl Into<Message>,
    ) -> impl Stream<Item = StreamEvent> + Send + 'a {
        self.agent.run_stream(conversation, message.into())
    }
}

impl std::fmt::Debug for BoxedAgent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BoxedAgent").finish_non_exhaustive()
    }
}

type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;
type BoxStream<'a, T> = Pin<Box<dyn Stream<Item = T> + Send + 'a>>;

/// [`Agent`]'s run methods, callable through `dyn`.
trait DynAgent: Send + Sync {
    fn run<'a>(
        &'a self,
        conversation: &'a mut Conversation,
        message: Message,
    ) -> BoxFuture<'a, Outcome>;

    /// A turn reporting to `observer`; a session's task passes its gate and context.
    fn run_observed<'a>(
        &'a self,
        conversation: &'a mut Conversation,
        message: Message,
        observer: &'a dyn ObserveDyn,
        streams: bool,
        task: Option<ErasedTask<'a>>,
    ) -> BoxFuture<'a, Outcome>;

    fn run_stream<'a>(
        &'a self,
        conversation: &'a mut Conversation,
        message: Message,
    ) -> BoxStream<'a, StreamEvent>;

    fn run_committing<'a>(
        &'a self,
        conversation: &'a mut Conversation,
        message: Message,
        committer: &'a dyn CommitDyn,
    ) -> BoxFuture<'a, Outcome>;

    fn resume<'a>(
        &'a self,
        conversation: &'a mut Conversation,
        approval: Approval,
        committer: Option<&'a dyn CommitDyn>,
    ) -> BoxFuture<'a, Outcome>;
}

impl<M: Model, T: ToolSet, P: Pipeline, A: Approver, X: StreamTransformer> DynAgent
    for Agent<M, T, P, A, X>
{
    fn run<'a>(
        &'a self,
        conversation: &'a mut Conversation,
        message: Message,
    ) -> BoxFuture<'a, Outcome> {
        Box::pin(Agent::run(self, conversation, message))
    }

    fn run_observed<'a>(
        &'a self,
        conversation: &'a mut Conversation,
        message: Message,
        observer: &'a dyn ObserveDyn,
        streams: bool,
        task: Option<ErasedTask<'a>>,
    ) -> BoxFuture<'a, Outcome> {
        // Whether the model's answer streams is the observer's type's choice, so the erased
        // observer's type carries it.
        if streams {
            Box::pin(erased_turn::<_, _, _, _, _, true>(
                self,
                conversation,
                message,
                observer,
                task,
            ))
        } else {
            Box::pin(erased_turn::<_, _, _, _, _, false>(
                self,
                conversation,
                message,
                observer,
                task,
            ))
        }
    }

    fn run_stream<'a>(
        &'a self,
        conversation: &'a mut Conversation,
        message: Message,
    ) -> BoxStream<'a, StreamEvent> {
        Box::pin(Agent::run_stream(self, conversation, message))
    }

    fn run_committing<'a>(
        &'a self,
        conversation: &'a mut Conversation,
        message: Message,
        committer: &'a dyn CommitDyn,
    ) -> BoxFuture<'a, Outcome> {
        Box::pin(async move {
            let committer = ErasedCommit(committer);
            Agent::run_committing(self, conversation, message, &committer).await
        })
    }

    fn resume<'a>(
        &'a self,
        conversation: &'a mut Conversation,
        approval: Approval,
        committer: Option<&'a dyn CommitDyn>,
    ) -> BoxFuture<'a, Outcome> {
        Box::pin(async move {
            match committer {
                None => Agent::resume(self, conversation, approval).await,
                Some(committer) => {
                    let committer = ErasedCommit(committer);
                    Agent::resume_committing(self, conversation, approval, &committer).await
                }
            }
        })
    }
}

/// A turn of `agent` reporting to an erased observer of the `STREAMS` it had; a session's task
/// with its erased gate.
async fn erased_turn<M, T, P, A, X, const STREAMS: bool>(
    agent: &Agent<M, T, P, A, X>,
    conversation: &mut Conversation,
    message: Message,
    observer: &dyn ObserveDyn,
    task: Option<ErasedTask<'_>>,
) -> Outcome
where
    M: Model,
    T: ToolSet,
    P: Pipeline,
    A: Approver,
    X: StreamTransformer,
{
    let observer = Erased::<STREAMS>(observer);
    match task {
        None => agent.observed(conversation, message, &observer, &(), None, &()).await,
        Some((gate, task, None)) => {
            let gate = ErasedGate(gate);
            agent.observed(conversation, message, &observer, &gate, Some(Box::new(task)), &()).await
        }
        Some((gate, task, Some(committer))) => {
            let (gate, committer) = (ErasedGate(gate), ErasedCommit(committer));
            let task = Some(Box::new(task));
            agent.observed(conversation, message, &observer, &gate, task, &committer).await
        }
    }
}

/// A session's task, its types erased: its `turn_start` gate, what the turn knows of it, and
/// the committer of its steps if the session commits.
type ErasedTask<'a> = (&'a dyn GateDyn, TaskContext, Option<&'a dyn CommitDyn>);

/// A session runs its tasks on a boxed agent as on a typed one. Each task's turn costs one
/// allocation for its future, and each of its steps one for the session's `turn_start` hooks,
/// called through `dyn`.
impl TaskRunner for BoxedAgent {
    fn run_task<'a, O: Observer, G: TurnGate, K: Commit>(
        &'a self,
        conversation: &'a mut Conversation,
        message: Message,
        observer: &'a O,
        gate: &'a G,
        task: TaskContext,
        committer: &'a K,
    ) -> impl Future<Output = Outcome> + Send + 'a {
        let committer = K::COMMITS.then_some(committer as &dyn CommitDyn);
        let task = Some((gate as &dyn GateDyn, task, committer));
        self.agent.run_observed(conversation, message, observer, O::STREAMS, task)
    }
}

/// [`Commit`], callable through `dyn`: a session's committer, for its tasks' turns.
trait CommitDyn: Sync {
    fn commit<'a>(&'a self, conversation: &'a Conversation) -> BoxFuture<'a, CommitResult>;
    fn model_call(&self, call: &ModelCall<'_>);
}

type CommitResult = Result<(), CommitError>;

impl<K: Commit> CommitDyn for K {
    fn commit<'a>(&'a self, conversation: &'a Conversation) -> BoxFuture<'a, CommitResult> {
        Box::pin(Commit::commit(self, conversation))
    }

    fn model_call(&self, call: &ModelCall<'_>) {
        Commit::model_call(self, call);
    }
}

/// A committer whose type was erased.
struct ErasedCommit<'k>(&'k dyn CommitDyn);

impl Commit for ErasedCommit<'_> {
    async fn commit(&self, conversation: &Conversation) -> CommitResult {
        self.0.commit(conversation).await
    }

    fn model_call(&self, call: &ModelCall<'_>) {
        self.0.model_call(call);
    }
}

/// [`TurnGate::turn_start`], callable through `dyn`.
trait GateDyn: Sync {
    fn turn_start<'a>(
        &'a self,
        turn: &'a mut Turn,
        observer: &'a dyn ObserveDyn,
    ) -> BoxFuture<'a, Flow<TurnStart>>;
}

impl<G: TurnGate> GateDyn for G {
    fn turn_start<'a>(
        &'a self,
        turn: &'a mut Turn,
        observer: &'a dyn ObserveDyn,
    ) -> BoxFuture<'a, Flow<TurnStart>> {
        Box::pin(async move { TurnGate::turn_start(self, turn, &Erased::<false>(observer)).await })
    }
}

/// A gate whose type was erased.
struct ErasedGate<'g>(&'g dyn GateDyn);

impl TurnGate for ErasedGate<'_> {
    async fn turn_start<O: Observer>(&self, turn: &mut Turn, observer: &O) -> Flow<TurnStart> {
        self.0.turn_start(turn, observer).await
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
