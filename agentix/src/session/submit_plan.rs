//! The built-in `submit_plan` tool: how the model proposes a plan to its session.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use crate::agent::AgentBuilder;
use crate::support::lock;
use crate::tool::{Tool, ToolSet, Toolbox};
use crate::turn::Turn;

use serde::Deserialize;

use crate::task::{Plan, Task};

/// Plans the model submitted during a task, waiting for the session to review them
/// (`plan_submit`) when the task's turn ends. The session keeps it in its conversation's scope
/// as a resource, where the tool finds it.
#[derive(Debug, Default)]
pub(crate) struct PlanInbox(Mutex<VecDeque<Plan>>);

impl PlanInbox {
    pub(crate) fn submit(&self, plan: Plan) {
        lock(&self.0).push_back(plan);
    }

    /// The first plan waiting, left in place: a review dropped midway is run again.
    pub(crate) fn first(&self) -> Option<Plan> {
        lock(&self.0).front().cloned()
    }

    /// Removes the first plan, once its review ended.
    pub(crate) fn reviewed(&self) {
        lock(&self.0).pop_front();
    }
}

/// The `submit_plan` tool: the model proposes a plan of tasks (each a prompt it will be given,
/// in order) and a title. The session reviews it with its `plan_submit` hooks when the current
/// task's turn ends, and queues its tasks after those queued. What the model cannot set is the
/// application's: a task's `max_steps` (its budget) and the plan's `clear_existing` (whether it
/// cancels the tasks queued before it) — a `plan_submit` hook may set either.
/// Add it with [`AgentBuilder::submit_plan`](crate::AgentBuilder::submit_plan); outside a
/// [`Session`](super::Session) a call fails, saying so.
#[derive(Clone, Copy, Debug, Default)]
pub struct SubmitPlan;

/// Why a `submit_plan` call failed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SubmitPlanError {
    /// The plan has no task.
    #[error("a plan needs at least one task")]
    Empty,
    /// A task's prompt is empty.
    #[error("task {index} of the plan has an empty prompt")]
    EmptyPrompt {
        /// The task's position in the plan, from 1.
        index: usize,
    },
    /// The agent was not run by a session.
    #[error("submit_plan works only in a session: this turn runs no session's task")]
    NoSession,
}

/// A plan as the model proposes it: the arguments of `submit_plan`.
#[derive(Clone, Debug, Deserialize, schemars::JsonSchema)]
pub struct ProposedPlan {
    /// A short title for the plan.
    #[serde(default)]
    pub title: Option<String>,
    /// The tasks, in the order they are to run.
    pub tasks: Vec<ProposedTask>,
}

/// A task as the model proposes it.
#[derive(Clone, Debug, Deserialize, schemars::JsonSchema)]
pub struct ProposedTask {
    /// A short title for the task.
    #[serde(default)]
    pub title: Option<String>,
    /// The task, self-contained: the prompt you will be given when it runs.
    pub prompt: String,
}

impl From<ProposedPlan> for Plan {
    fn from(proposed: ProposedPlan) -> Self {
        let tasks = proposed
            .tasks
            .into_iter()
            .map(|task| Task { title: task.title, prompt: task.prompt, max_steps: None })
            .collect();
        Plan { title: proposed.title, tasks, clear_existing: false }
    }
}

impl Tool for SubmitPlan {
    const NAME: &'static str = "submit_plan";
    type Args = ProposedPlan;
    type Output = String;
    type Error = SubmitPlanError;

    fn description(&self) -> &str {
        "Propose a plan: a list of tasks, each a self-contained prompt you will be given in \
         order after the current task ends. Give it a title."
    }

    async fn call(&self, plan: ProposedPlan, turn: &Turn) -> Result<String, SubmitPlanError> {
        if plan.tasks.is_empty() {
            return Err(SubmitPlanError::Empty);
        }
        if let Some(index) = plan.tasks.iter().position(|task| task.prompt.trim().is_empty()) {
            return Err(SubmitPlanError::EmptyPrompt { index: index + 1 });
        }
        let inbox = turn.scope().resource::<Arc<PlanInbox>>().ok_or(SubmitPlanError::NoSession)?;
        let count = plan.tasks.len();
        inbox.submit(plan.into());
        Ok(format!(
            "Plan received ({count} task{}): it is reviewed when this task ends, and its tasks \
             run after it.",
            if count == 1 { "" } else { "s" }
        ))
    }
}

/// The session's tool on the agent's builder: the layer above lends the agent its tool.
impl<M, T: ToolSet, P, A, X> AgentBuilder<M, T, P, A, X> {
    /// Adds the built-in [`submit_plan`](SubmitPlan) tool: the model proposes a plan of tasks
    /// to the [`Session`](super::Session) running it.
    pub fn submit_plan(self) -> AgentBuilder<M, Toolbox<T, SubmitPlan>, P, A, X> {
        self.tool(SubmitPlan)
    }
}
