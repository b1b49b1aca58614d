//! The events by name: what the log, errors and traces say of an event, and sets of them.
//! Data: the events' types and contracts are in [`event`](super).

use std::fmt;

use serde::{Deserialize, Serialize};

/// The events by name, from the list of events.
macro_rules! event_kinds {
    ($(
        $(#[$doc:meta])*
        $ty:ident = $word:literal $(| $alias:literal)?, $kind:ident {
            value: $value:ty, stop: $stop:ty, retry: $retry:ty, reject: $reject:ty, escalate: $escalate:ty
            $(, enqueue: $enqueue:ty)? $(,)?
        } $(impl $contract:ident)*;
    )*) => {
        /// An event, named at run time: in traces, errors and the log.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
        #[serde(rename_all = "snake_case")]
        pub enum EventKind {
            $( #[doc = concat!("`", $word, "`")] $(#[serde(alias = $alias)])? $kind, )*
        }

        impl EventKind {
            /// Every event: the turn's, then the session's.
            pub const ALL: [EventKind; 19] = [$(EventKind::$kind),*];

            /// The event's attribute word, as written in `#[hook(...)]`.
            pub const fn name(self) -> &'static str {
                match self { $(EventKind::$kind => $word,)* }
            }
        }
    };
}

with_events!(event_kinds);

impl EventKind {
    /// The turn's events, in the order they fire (a tripwire beside the first step's
    /// model call).
    pub const TURN: [EventKind; 11] = [
        EventKind::Pre,
        EventKind::BeforeModel,
        EventKind::Tripwire,
        EventKind::WrapModel,
        EventKind::AfterModel,
        EventKind::BeforeTool,
        EventKind::WrapTool,
        EventKind::AfterTool,
        EventKind::ToolError,
        EventKind::BeforeFinal,
        EventKind::Post,
    ];

    /// The session's events.
    pub const SESSION: [EventKind; 8] = [
        EventKind::SessionStart,
        EventKind::TaskStart,
        EventKind::StepStart,
        EventKind::PlanSubmit,
        EventKind::TaskComplete,
        EventKind::PlanComplete,
        EventKind::AllTasksComplete,
        EventKind::SessionEnd,
    ];

    /// Whether this is one of the session's events, hooked on a
    /// [`Session`](crate::session::Session) rather than an agent.
    pub const fn is_session(self) -> bool {
        self as u32 >= EventKind::SessionStart as u32
    }
}

impl fmt::Display for EventKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A set of events, known at compile time: the events a [`Hook`](crate::Hook) handles.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct EventSet(u32);

impl EventSet {
    /// No event.
    pub const NONE: EventSet = EventSet(0);
    /// Every event.
    pub const ALL: EventSet = EventSet((1 << EventKind::ALL.len()) - 1);

    /// The set of one event.
    pub const fn of(event: EventKind) -> Self {
        EventSet(1 << event as u32)
    }

    /// This set and one more event.
    pub const fn with(self, event: EventKind) -> Self {
        EventSet(self.0 | EventSet::of(event).0)
    }

    /// The events in either set.
    pub const fn union(self, other: EventSet) -> Self {
        EventSet(self.0 | other.0)
    }

    /// The events of this set that are not in `other`.
    pub const fn without(self, other: EventSet) -> Self {
        EventSet(self.0 & !other.0)
    }

    /// Whether the set holds the event.
    pub const fn contains(self, event: EventKind) -> bool {
        self.0 & EventSet::of(event).0 != 0
    }
}
