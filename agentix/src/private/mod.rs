//! What `#[hook]` expands to, and nothing else: the code it generates names only this module,
//! so it works whatever the user calls the crate. Not a public API.
//!
//! Each contract rule the macro cannot see in the syntax is a trait bound here, with a
//! `#[diagnostic::on_unimplemented]` message that names the rule.

pub use crate::Outcome;
pub use crate::event::{
    AfterModel, AfterTool, AllTasksComplete, BeforeFinal, BeforeModel, BeforeTool, Event,
    PlanComplete, PlanSubmit, Post, Pre, SessionEnd, SessionStart, StepStart, TaskComplete,
    TaskStart, ToolError, Tripwire, WrapModel, WrapTool,
};
pub use crate::event::{EventKind, EventSet};
pub use crate::hook::{HookMethods, Joins, NextModel, NextTool, PassesBy};
pub use crate::message::{AssistantMessage, Part, ToolCall, ToolResult};
pub use crate::model::{ModelError, ModelRequest, ModelResponse};
pub use crate::on;
pub use crate::task::{Plan, PlanReport, QueuedTask, SessionState, TaskReport};
pub use crate::turn::Turn;
pub use crate::verdict::{Halt, Trip, Verdict};
pub use core::future::Future as CoreFuture;
pub use core::marker::{PhantomData, Send as CoreSend, Sync as CoreSync};
pub use core::option::Option;
pub use core::primitive::{bool, str};
pub use core::result::Result;
pub use core::time::Duration;
pub use std::vec::Vec;

pub use crate::tool::Tool;
pub use crate::tool::pattern::matches as tool_pattern_matches;
pub use core::convert::Infallible;
pub use schemars;
pub use serde;

/// What `#[hook]` and `#[tool]` leave for a function whose attribute has an error: the error is
/// reported there, and the stand-in registers as a hook or a tool, adding nothing, so that no
/// second error says it is not one.
pub trait StandIn {}

mod conditions;
mod parameters;
mod returns;
mod session;
mod tools;

pub use conditions::*;
pub use parameters::*;
pub use returns::*;
pub use session::*;
pub use tools::*;
