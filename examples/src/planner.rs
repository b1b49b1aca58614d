//! A planning agent (Turin's session model, seed 004): the model proposes a plan through the
//! built-in `submit_plan` tool, a `plan_submit` hook rewrites it (every plan ends with a
//! review), the session runs its tasks one by one in one conversation, a `task_complete` hook
//! reports how each ended, and `all_tasks_complete` enqueues one follow-up once the queue is
//! empty. A `before_model` hook (Turin's `on_turn_prepare`) gives each task's first model call
//! a thinking budget, reading the task from the turn.
//!
//! The model is scripted, so the example runs offline; `real_model` shows how to reach a real
//! one, and a session runs on any agent.

use agentix::event::{AllTasksComplete, TaskComplete};
use agentix::session::{Plan, Session, SessionState, Task, TaskReport};
use agentix::{
    Agent, ScriptedModel, Turn, Verdict, hook, model::ModelRequest, observe::Observation,
};
use serde_json::json;

/// `plan_submit`: every plan ends with a review of its work.
#[hook(plan_submit)]
async fn add_review(plan: &mut Plan) {
    let title = plan.title.clone().unwrap_or_else(|| "the plan".to_owned());
    plan.tasks.push(Task::new(format!("Review the work of {title}.")).titled("review"));
}

/// `before_model` (Turin's `on_turn_prepare`): a task's first model call may think first.
#[hook(before_model)]
async fn think_first(request: &mut ModelRequest, turn: &Turn) {
    if turn.task_id().is_some() && turn.is_first_step_in_task() {
        request.params.thinking_budget = Some(1_024);
    }
}

/// `all_tasks_complete`: once the queue is empty, one follow-up, once.
#[hook(all_tasks_complete)]
async fn announce(session: &SessionState) -> Verdict<AllTasksComplete> {
    if session.follow_ups() == 0 {
        Verdict::enqueue([
            Task::new("Write a one-line announcement of the post.").titled("announce")
        ])
    } else {
        Verdict::Continue
    }
}

/// `task_complete`, written by hand: reports each task's status as it ends.
struct ReportStatus<'a> {
    out: &'a (dyn Fn(&str) + Sync),
}

impl agentix::on::TaskComplete for ReportStatus<'_> {
    async fn task_complete(
        &self,
        report: &TaskReport,
        session: &SessionState,
    ) -> Verdict<TaskComplete> {
        let title = report.task.task.title.as_deref().unwrap_or(&report.task.task.prompt);
        let plan = match report.task.plan().and_then(|plan| session.plan(plan)) {
            Some(plan) => format!(" [{} {}/{}]", plan.id, plan.completed, plan.total),
            None => String::new(),
        };
        (self.out)(&format!(
            "  {} {title:?}: {} after {} step(s){plan}",
            report.task.id(),
            report.status,
            report.steps
        ));
        Verdict::Continue
    }
}

/// The model: it plans in the first task, then does each task it is given.
pub fn model() -> ScriptedModel {
    ScriptedModel::new()
        .tool_call(
            "submit_plan",
            json!({
                "title": "a post on async Rust",
                "tasks": [
                    { "title": "outline", "prompt": "Outline a post on async Rust." },
                    { "title": "draft", "prompt": "Draft the post from the outline." },
                    { "title": "edit", "prompt": "Edit the draft for length." },
                ],
            }),
        )
        .text("I proposed a plan of three tasks.")
        .text("Outline: futures, executors, pinning.")
        .text("Draft: async Rust turns functions into state machines...")
        .text("Edited: cut to 800 words.")
        .text("Review: the post is accurate and reads well.")
        .text("New post: how async Rust works, in 800 words.")
}

/// Runs the session; returns its tasks' reports, the requests the model saw, and the
/// conversation.
pub async fn run(
    out: &(dyn Fn(&str) + Sync),
) -> (Vec<TaskReport>, Vec<ModelRequest>, agentix::Conversation) {
    let model = model();
    let agent = Agent::builder(&model).submit_plan().hook(think_first).build();
    let mut session =
        Session::builder(&agent).hook(add_review).hook(ReportStatus { out }).hook(announce).build();
    session
        .enqueue("Plan a blog post on async Rust, then we will write it.")
        .expect("a new session takes tasks");
    // The session's own events, as they happen (each turn's are in the same stream).
    let observer = |observation: &Observation<'_>| {
        if let Observation::Session(event) = observation {
            out(&format!("{event}"));
        }
    };
    let reports = session.run().observe(&observer).await.expect("the session runs to its end");
    out("answers:");
    for report in &reports {
        if let Some(answer) = &report.answer {
            out(&format!("  {}: {}", report.task.id(), answer.joined_text()));
        }
    }
    let conversation = session.into_conversation();
    (reports, model.requests(), conversation)
}
