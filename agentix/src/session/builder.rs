//! Building a session: its agent, its hooks, its conversation, its limits.

use std::sync::Arc;

use crate::agent::AnyAgent;
use crate::conversation::Conversation;
use crate::task::SessionState;

use super::chain::{RegisterSession, Then};
use super::{PlanInbox, Session};

/// Builds a [`Session`]: its hooks, its conversation, its limits.
pub struct SessionBuilder<R, S = ()> {
    agent: R,
    hooks: S,
    conversation: Conversation,
    max_follow_ups: u32,
    name: Option<Arc<str>>,
}

impl<R: AnyAgent> Session<R> {
    /// A builder for a session running its tasks on `agent` (an [`Agent`](crate::Agent), a
    /// reference to one, or an `Arc`).
    pub fn builder(agent: R) -> SessionBuilder<R> {
        SessionBuilder {
            agent,
            hooks: (),
            conversation: Conversation::new(),
            max_follow_ups: 16,
            name: None,
        }
    }
}

impl<R, S> SessionBuilder<R, S> {
    /// Adds a hook on session events: a `#[hook(task_complete)]` function (or any other
    /// session event), a type implementing one trait of [`on`](crate::on) for a session
    /// event, or a [`SessionHook`](super::SessionHook). Hooks of one event run in the order they were added; the
    /// first that does not continue decides.
    pub fn hook<H, Role>(self, hook: H) -> SessionBuilder<R, Then<S, H::Hook>>
    where
        H: RegisterSession<Role>,
    {
        SessionBuilder {
            agent: self.agent,
            hooks: Then { rest: self.hooks, hook: hook.session_hook() },
            conversation: self.conversation,
            max_follow_ups: self.max_follow_ups,
            name: self.name,
        }
    }

    /// Names the session: its runs' spans are `invoke_workflow {name}`, with
    /// `gen_ai.workflow.name` (see [`trace`](crate::trace)).
    pub fn name(mut self, name: impl Into<Arc<str>>) -> Self {
        self.name = Some(name.into());
        self
    }

    /// The conversation the session's tasks run in; a new one by default.
    pub fn conversation(mut self, conversation: Conversation) -> Self {
        self.conversation = conversation;
        self
    }

    /// How many times `all_tasks_complete` hooks may enqueue follow-up work in the session
    /// (16 by default); one more ends the session with [`Error::FollowUpLimit`](crate::Error::FollowUpLimit).
    pub fn max_follow_ups(mut self, limit: u32) -> Self {
        self.max_follow_ups = limit;
        self
    }

    /// The session.
    pub fn build(self) -> Session<R, S> {
        let inbox = Arc::new(PlanInbox::default());
        let mut conversation = self.conversation;
        conversation.scope_mut().insert_resource(Arc::clone(&inbox));
        Session {
            agent: self.agent,
            hooks: self.hooks,
            conversation,
            state: SessionState::default(),
            inbox,
            max_follow_ups: self.max_follow_ups,
            name: self.name,
            span: None,
            plan_spans: Default::default(),
        }
    }
}
