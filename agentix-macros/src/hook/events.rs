//! The events a hook attaches to: the turn's and the session's, with what each
//! one's hook function receives.

/// An event, by attribute word.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Event {
    Pre,
    BeforeModel,
    Tripwire,
    WrapModel,
    AfterModel,
    BeforeTool,
    WrapTool,
    AfterTool,
    ToolError,
    BeforeFinal,
    Post,
    SessionStart,
    TaskStart,
    StepStart,
    PlanSubmit,
    TaskComplete,
    PlanComplete,
    AllTasksComplete,
    SessionEnd,
}

impl Event {
    const ALL: [Event; 19] = [
        Event::Pre,
        Event::BeforeModel,
        Event::Tripwire,
        Event::WrapModel,
        Event::AfterModel,
        Event::BeforeTool,
        Event::WrapTool,
        Event::AfterTool,
        Event::ToolError,
        Event::BeforeFinal,
        Event::Post,
        Event::SessionStart,
        Event::TaskStart,
        Event::StepStart,
        Event::PlanSubmit,
        Event::TaskComplete,
        Event::PlanComplete,
        Event::AllTasksComplete,
        Event::SessionEnd,
    ];

    /// The attribute word.
    pub fn word(self) -> &'static str {
        match self {
            Event::Pre => "pre",
            Event::BeforeModel => "before_model",
            Event::Tripwire => "tripwire",
            Event::WrapModel => "wrap_model",
            Event::AfterModel => "after_model",
            Event::BeforeTool => "before_tool",
            Event::WrapTool => "wrap_tool",
            Event::AfterTool => "after_tool",
            Event::ToolError => "tool_error",
            Event::BeforeFinal => "before_final",
            Event::Post => "post",
            Event::SessionStart => "session_start",
            Event::TaskStart => "task_start",
            Event::StepStart => "step_start",
            Event::PlanSubmit => "plan_submit",
            Event::TaskComplete => "task_complete",
            Event::PlanComplete => "plan_complete",
            Event::AllTasksComplete => "all_tasks_complete",
            Event::SessionEnd => "session_end",
        }
    }

    /// The event's type, and its trait in `agentix::on`.
    pub fn type_name(self) -> &'static str {
        match self {
            Event::Pre => "Pre",
            Event::BeforeModel => "BeforeModel",
            Event::Tripwire => "Tripwire",
            Event::WrapModel => "WrapModel",
            Event::AfterModel => "AfterModel",
            Event::BeforeTool => "BeforeTool",
            Event::WrapTool => "WrapTool",
            Event::AfterTool => "AfterTool",
            Event::ToolError => "ToolError",
            Event::BeforeFinal => "BeforeFinal",
            Event::Post => "Post",
            Event::SessionStart => "SessionStart",
            Event::TaskStart => "TaskStart",
            Event::StepStart => "StepStart",
            Event::PlanSubmit => "PlanSubmit",
            Event::TaskComplete => "TaskComplete",
            Event::PlanComplete => "PlanComplete",
            Event::AllTasksComplete => "AllTasksComplete",
            Event::SessionEnd => "SessionEnd",
        }
    }

    /// What the event's value parameter is, for messages; empty for events whose value is the
    /// turn or the session itself.
    pub fn value(self) -> &'static str {
        match self {
            Event::Pre | Event::SessionStart | Event::AllTasksComplete | Event::SessionEnd => "",
            Event::BeforeModel => "the request (`&ModelRequest` or `&mut ModelRequest`)",
            Event::WrapModel | Event::Tripwire => "the request (`&ModelRequest`)",
            Event::AfterModel => {
                "the assistant message (`&AssistantMessage` or `&mut AssistantMessage`)"
            }
            Event::BeforeFinal => {
                "the answer (`&AssistantMessage` or `&mut AssistantMessage`; a typed agent's, \
                 `&T` or `&mut T` of its output type)"
            }
            Event::BeforeTool => "the tool call (`&ToolCall` or `&mut ToolCall`)",
            Event::WrapTool => "the tool call (`&ToolCall`)",
            Event::AfterTool | Event::ToolError => {
                "the tool result (`&ToolResult` or `&mut ToolResult`)"
            }
            Event::Post => "the outcome (`&Outcome`)",
            Event::TaskStart => "the task (`&QueuedTask` or `&mut QueuedTask`)",
            Event::StepStart => "the task's turn (`&Turn` or `&mut Turn`)",
            Event::PlanSubmit => "the plan (`&Plan` or `&mut Plan`)",
            Event::TaskComplete => "the task's report (`&TaskReport`)",
            Event::PlanComplete => "the plan's report (`&PlanReport`)",
        }
    }

    pub fn is_wrap(self) -> bool {
        matches!(self, Event::WrapModel | Event::WrapTool)
    }

    /// Whether the event is a session's: its hooks go on a `Session`, and take the session.
    pub fn is_session(self) -> bool {
        matches!(
            self,
            Event::SessionStart
                | Event::TaskStart
                | Event::StepStart
                | Event::PlanSubmit
                | Event::TaskComplete
                | Event::PlanComplete
                | Event::AllTasksComplete
                | Event::SessionEnd
        )
    }

    /// Whether the hook's value parameter is lent mutably: the hook may edit it.
    pub fn edits_value(self) -> bool {
        !matches!(
            self,
            Event::WrapModel
                | Event::Tripwire
                | Event::WrapTool
                | Event::Post
                | Event::TaskComplete
                | Event::PlanComplete
        )
    }

    pub fn from_word(word: &str) -> Option<Event> {
        // Turin's word for a step's start, as the seed fixes it.
        if word == "turn_start" {
            return Some(Event::StepStart);
        }
        Event::ALL.into_iter().find(|event| event.word() == word)
    }
}
