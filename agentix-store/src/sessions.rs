//! Sessions in the store: a session's tasks and plans as its runs leave them, written by a
//! committer at each point its state changes, and read back — to watch a session from
//! elsewhere, or to go on with its unfinished tasks after a crash.

use agentix::conversation::TurnRef;
use agentix::session::{PlanId, PlanProgress, QueuedTask, SessionState, Task, TaskId, TaskStatus};
use sqlx::Row;

use crate::{Store, StoreError, Version, sql, to_i64, to_u64};

/// A session as the store keeps it.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct StoredSession {
    /// The session's id.
    pub id: String,
    /// The conversation its tasks run in.
    pub conversation: String,
    /// Whether `session_end` has fired: it runs no more.
    pub ended: bool,
    /// Why it stopped early (a session hook's halt or failure, a failed commit), displayed.
    pub stopped: Option<String>,
    /// Steps its tasks started, in all.
    pub steps: u64,
    /// How many times `all_tasks_complete` hooks queued follow-up work.
    pub follow_ups: u32,
    /// Its tasks: those that ended, in the order they ended, then the one running, then the
    /// queue in the order it runs.
    pub tasks: Vec<StoredTask>,
    /// Its plans, with their progress.
    pub plans: Vec<PlanProgress>,
}

impl StoredSession {
    /// The tasks it had not finished — the one running when it stopped, then those queued —
    /// to queue in a new session after a crash. (A task that was running may have left steps
    /// in the conversation: it runs again from its prompt.) None if the session was stopped
    /// (`stopped`): its tasks left were cancelled on purpose, whether or not the store had
    /// heard of it when the process died.
    pub fn unfinished(&self) -> Vec<Task> {
        if self.stopped.is_some() {
            return Vec::new();
        }
        self.tasks
            .iter()
            .filter(|task| matches!(task.state, TaskState::Running | TaskState::Queued))
            .map(|task| task.task.clone())
            .collect()
    }
}

/// A session's task, as stored.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct StoredTask {
    /// Its id in its session.
    pub id: TaskId,
    /// Its plan, if it belongs to one.
    pub plan: Option<PlanId>,
    /// The work.
    pub task: Task,
    /// Where it is.
    pub state: TaskState,
    /// The turn it ran in, once it ran.
    pub turn: Option<TurnRef>,
    /// Steps it started, once it ended.
    pub steps: Option<u32>,
    /// Why it did not succeed, when it did not.
    pub reason: Option<String>,
    /// Its final answer's text, when it succeeded.
    pub answer: Option<String>,
}

/// Where a stored task is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TaskState {
    /// Waiting in the queue.
    Queued,
    /// Running when the state was committed.
    Running,
    /// Ended, and how.
    Ended(TaskStatus),
}

impl TaskState {
    fn as_str(self) -> String {
        match self {
            TaskState::Queued => "queued".to_owned(),
            TaskState::Running => "running".to_owned(),
            TaskState::Ended(status) => status.to_string(),
        }
    }

    fn parse(text: &str) -> Option<Self> {
        Some(match text {
            "queued" => TaskState::Queued,
            "running" => TaskState::Running,
            ended => TaskState::Ended(serde_json::from_value(ended.into()).ok()?),
        })
    }
}

/// A task's row, before it is written.
struct TaskRow<'a> {
    id: TaskId,
    plan: Option<PlanId>,
    task: &'a Task,
    state: TaskState,
    turn: Option<TurnRef>,
    steps: Option<u32>,
    reason: Option<&'a str>,
    answer: Option<String>,
}

impl<'a> TaskRow<'a> {
    /// The row of a task that has not ended.
    fn waiting(task: &'a QueuedTask, state: TaskState) -> Self {
        TaskRow {
            id: task.id(),
            plan: task.plan(),
            task: &task.task,
            state,
            turn: None,
            steps: None,
            reason: None,
            answer: None,
        }
    }
}

impl Store {
    /// Writes a session's state under `session` (the session of conversation `conversation`),
    /// replacing what was stored of it, in one transaction.
    pub async fn save_session(
        &self,
        session: &str,
        conversation: &str,
        state: &SessionState,
    ) -> Result<(), StoreError> {
        self.save_session_at(session, conversation, state, None).await
    }

    /// [`save_session`](Store::save_session), if the conversation is still at `expected` (a
    /// committer's): a session whose turns lost the race writes nothing over the winner's.
    pub(crate) async fn save_session_at(
        &self,
        session: &str,
        conversation: &str,
        state: &SessionState,
        expected: Option<Version>,
    ) -> Result<(), StoreError> {
        let mut transaction = self.dialect.begin(&self.pool).await?;
        if let Some(expected) = expected {
            // Locks the conversation's row until the session is written.
            let current = sqlx::query(sql(
                self.dialect,
                "UPDATE conversations SET version = version WHERE id = ? AND version = ?",
            ))
            .bind(conversation)
            .bind(expected.0)
            .execute(&mut *transaction)
            .await?;
            if current.rows_affected() == 0 {
                return Err(self
                    .conflict_or_missing(&mut transaction, conversation, expected)
                    .await?);
            }
        }
        sqlx::query(sql(
            self.dialect,
            "INSERT INTO sessions (id, conversation_id, status, stopped, steps, follow_ups) \
             VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO UPDATE SET \
             conversation_id = excluded.conversation_id, status = excluded.status, \
             stopped = excluded.stopped, steps = excluded.steps, \
             follow_ups = excluded.follow_ups",
        ))
        .bind(session)
        .bind(conversation)
        .bind(if state.has_ended() { "ended" } else { "open" })
        .bind(state.stopped().map(ToString::to_string))
        .bind(to_i64(state.steps()))
        .bind(i64::from(state.follow_ups()))
        .execute(&mut *transaction)
        .await?;
        for table in
            ["DELETE FROM tasks WHERE session_id = ?", "DELETE FROM plans WHERE session_id = ?"]
        {
            sqlx::query(sql(self.dialect, table)).bind(session).execute(&mut *transaction).await?;
        }
        for plan in state.plans() {
            sqlx::query(sql(
                self.dialect,
                "INSERT INTO plans (session_id, plan_id, title, total, completed, succeeded) \
                 VALUES (?, ?, ?, ?, ?, ?)",
            ))
            .bind(session)
            .bind(to_i64(plan.id.get()))
            .bind(plan.title.as_deref())
            .bind(i64::from(plan.total))
            .bind(i64::from(plan.completed))
            .bind(i64::from(plan.succeeded))
            .execute(&mut *transaction)
            .await?;
        }
        let ended = state.completed().iter().map(|report| TaskRow {
            id: report.task.id(),
            plan: report.task.plan(),
            task: &report.task.task,
            state: TaskState::Ended(report.status),
            turn: report.turn,
            steps: Some(report.steps),
            reason: report.reason.as_deref(),
            answer: report.answer.as_ref().map(|answer| answer.joined_text().into_owned()),
        });
        let running = state.running().map(|task| TaskRow::waiting(task, TaskState::Running));
        let queued = state.queue().map(|task| TaskRow::waiting(task, TaskState::Queued));
        for (position, row) in (0_i64..).zip(ended.chain(running).chain(queued)) {
            sqlx::query(sql(
                self.dialect,
                "INSERT INTO tasks (session_id, task_id, position, plan_id, title, prompt, \
                 max_turns, status, turn, steps, reason, answer) \
                 VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            ))
            .bind(session)
            .bind(to_i64(row.id.get()))
            .bind(position)
            .bind(row.plan.map(|plan| to_i64(plan.get())))
            .bind(row.task.title.as_deref())
            .bind(&row.task.prompt)
            .bind(row.task.max_steps.map(i64::from))
            .bind(row.state.as_str())
            .bind(row.turn.map(|turn| to_i64(turn.0)))
            .bind(row.steps.map(i64::from))
            .bind(row.reason)
            .bind(row.answer)
            .execute(&mut *transaction)
            .await?;
        }
        transaction.commit().await?;
        Ok(())
    }

    /// The session stored under `id`: its tasks in order, its plans, how far it got.
    pub async fn load_session(&self, id: &str) -> Result<StoredSession, StoreError> {
        let mut snapshot = self.dialect.begin_read(&self.pool).await?;
        let row = sqlx::query(sql(
            self.dialect,
            "SELECT conversation_id, status, stopped, steps, follow_ups FROM sessions WHERE id = ?",
        ))
        .bind(id)
        .fetch_optional(&mut *snapshot)
        .await?
        .ok_or_else(|| StoreError::SessionNotFound { session: id.to_owned() })?;
        let corrupt = |what: &str| StoreError::CorruptSession {
            session: id.to_owned(),
            message: what.to_owned(),
        };
        let plans = sqlx::query(sql(
            self.dialect,
            "SELECT plan_id, title, total, completed, succeeded FROM plans \
             WHERE session_id = ? ORDER BY plan_id",
        ))
        .bind(id)
        .fetch_all(&mut *snapshot)
        .await?
        .iter()
        .map(|row| {
            let count = |column| Ok::<_, StoreError>(to_u64(row.try_get::<i64, _>(column)?));
            Ok(PlanProgress {
                id: PlanId::new(count("plan_id")?).ok_or_else(|| corrupt("a plan id of 0"))?,
                title: row.try_get("title")?,
                total: count("total")? as u32,
                completed: count("completed")? as u32,
                succeeded: count("succeeded")? as u32,
            })
        })
        .collect::<Result<Vec<_>, StoreError>>()?;
        let tasks = sqlx::query(sql(
            self.dialect,
            "SELECT task_id, plan_id, title, prompt, max_turns, status, turn, steps, reason, \
             answer FROM tasks WHERE session_id = ? ORDER BY position",
        ))
        .bind(id)
        .fetch_all(&mut *snapshot)
        .await?
        .iter()
        .map(|row| {
            let optional = |column| -> Result<Option<u64>, StoreError> {
                Ok(row.try_get::<Option<i64>, _>(column)?.map(to_u64))
            };
            let status: String = row.try_get("status")?;
            let task_id = to_u64(row.try_get::<i64, _>("task_id")?);
            Ok(StoredTask {
                id: TaskId::new(task_id).ok_or_else(|| corrupt("a task id of 0"))?,
                plan: optional("plan_id")?.and_then(PlanId::new),
                task: Task {
                    title: row.try_get("title")?,
                    prompt: row.try_get("prompt")?,
                    max_steps: optional("max_turns")?.map(|turns| turns as u32),
                },
                state: TaskState::parse(&status)
                    .ok_or_else(|| corrupt(&format!("task {task_id} has no status `{status}`")))?,
                turn: optional("turn")?.map(TurnRef),
                steps: optional("steps")?.map(|steps| steps as u32),
                reason: row.try_get("reason")?,
                answer: row.try_get("answer")?,
            })
        })
        .collect::<Result<Vec<_>, StoreError>>()?;
        snapshot.commit().await?;
        let status: String = row.try_get("status")?;
        Ok(StoredSession {
            id: id.to_owned(),
            conversation: row.try_get("conversation_id")?,
            ended: status == "ended",
            stopped: row.try_get("stopped")?,
            steps: to_u64(row.try_get::<i64, _>("steps")?),
            follow_ups: to_u64(row.try_get::<i64, _>("follow_ups")?) as u32,
            tasks,
            plans,
        })
    }
}
