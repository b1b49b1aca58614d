//! What makes a log valid: the rules every log the loop writes keeps, checked where a log comes
//! from outside (a stored conversation read back), so that the next request is one every
//! provider accepts.

use std::fmt;

use crate::approval::record::{Approval, Suspension};
use crate::message::ToolCall;

use super::{Conversation, Entry, TurnRef};

/// A log that breaks a rule of the loop's logs, and the entry where it does.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("log entry {index}: {problem}")]
pub struct InvalidLog {
    /// The index in the log of the first entry that breaks a rule.
    pub index: usize,
    /// The rule it breaks.
    pub problem: LogProblem,
}

/// A rule of the loop's logs, broken.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum LogProblem {
    /// The entry belongs to no turn: it comes before the first user message.
    OutsideAnyTurn,
    /// The entry's turn is before the turn of the entry it follows.
    TurnWentBackwards {
        /// The turn of the entry before.
        previous: TurnRef,
        /// This entry's turn.
        found: TurnRef,
    },
    /// A turn starts with something other than its user message.
    TurnWithoutUserMessage {
        /// The turn.
        turn: TurnRef,
    },
    /// A second user message in one turn.
    SecondUserMessage {
        /// The turn.
        turn: TurnRef,
    },
    /// The conversation's turn counter is behind the turns its log holds.
    CounterBehind {
        /// The counter.
        counter: u64,
        /// The entry's turn.
        found: TurnRef,
    },
    /// An assistant message's tool calls are not answered by the entry right after it.
    UnansweredCalls {
        /// The ids of the calls.
        calls: Vec<String>,
    },
    /// Tool results that follow no assistant message calling tools.
    OrphanResults,
    /// The results do not answer the calls before them, one each, in order.
    ResultsMismatch {
        /// The ids the calls have.
        calls: Vec<String>,
        /// The ids the results answer.
        results: Vec<String>,
    },
    /// Two tool calls of one assistant message share an id.
    DuplicateCallId {
        /// The id.
        id: String,
    },
    /// A suspended step whose waiting call is not one of its unanswered calls, or waits twice.
    WaitingCallMismatch {
        /// The id of the step's first unanswered call, if it has one.
        next: Option<String>,
        /// The id of the call the suspension says waits.
        waiting: String,
    },
    /// A suspended turn that is not resumed by the entry after it.
    NotResumed {
        /// The turn.
        turn: TurnRef,
    },
    /// A resumption that follows no suspended step of its turn, or that answers with
    /// [`Approval::Suspend`](crate::approval::Approval::Suspend), which answers nothing.
    ResumedWithoutSuspension,
    /// A resumption not followed by the step it resumed (that step whole, or suspended again).
    ResumedStepMissing {
        /// The turn.
        turn: TurnRef,
    },
    /// A suspended step whose waiting call, as shown to the person, is not the call in its
    /// message that would run.
    WaitingCallDiffers {
        /// The call's id.
        id: String,
    },
    /// A summary whose end is not the start of a turn (its own, or an earlier one) past the
    /// end of the summary before it.
    SummaryOutOfPlace {
        /// Where it says the summarized entries end.
        through: usize,
    },
    /// A sub-agent's kept entries that do not follow the results of the step that ran it.
    DelegatedOutOfPlace {
        /// The sub-agent.
        agent: String,
    },
}

impl fmt::Display for LogProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LogProblem::OutsideAnyTurn => f.write_str("it comes before the first user message"),
            LogProblem::TurnWentBackwards { previous, found } => {
                write!(f, "its {found} comes after {previous}: turns only go forward")
            }
            LogProblem::TurnWithoutUserMessage { turn } => {
                write!(f, "{turn} starts without a user message")
            }
            LogProblem::SecondUserMessage { turn } => {
                write!(f, "a second user message in {turn}")
            }
            LogProblem::CounterBehind { counter, found } => {
                write!(f, "it belongs to {found}, but the conversation counts only {counter} turns")
            }
            LogProblem::UnansweredCalls { calls } => write!(
                f,
                "the tool calls {} are not answered by the entry after them",
                calls.join(", ")
            ),
            LogProblem::OrphanResults => {
                f.write_str("tool results that follow no assistant message calling tools")
            }
            LogProblem::ResultsMismatch { calls, results } => write!(
                f,
                "the results answer [{}], but the calls before them are [{}]",
                results.join(", "),
                calls.join(", ")
            ),
            LogProblem::DuplicateCallId { id } => {
                write!(f, "two tool calls share the id `{id}`")
            }
            LogProblem::WaitingCallMismatch { next: Some(next), waiting } => write!(
                f,
                "the suspended step waits on the call `{waiting}`, which is not one of its \
                 unanswered calls (the first is `{next}`)"
            ),
            LogProblem::WaitingCallMismatch { next: None, waiting } => write!(
                f,
                "the suspended step waits on the call `{waiting}`, but every other call it has \
                 is answered"
            ),
            LogProblem::NotResumed { turn } => {
                write!(f, "{turn} was suspended by the entry before, and this does not resume it")
            }
            LogProblem::ResumedStepMissing { turn } => write!(
                f,
                "{turn} was resumed by the entry before, and this is not the step it resumed"
            ),
            LogProblem::WaitingCallDiffers { id } => write!(
                f,
                "the suspended step's waiting call `{id}` differs from the call its message holds"
            ),
            LogProblem::ResumedWithoutSuspension => f.write_str(
                "a resumption that follows no suspended step, or that answers by suspending again",
            ),
            LogProblem::SummaryOutOfPlace { through } => write!(
                f,
                "a summary through entry {through}, which is not the start of a turn before \
                 it, past the end of the summary before it"
            ),
            LogProblem::DelegatedOutOfPlace { agent } => write!(
                f,
                "the kept entries of the sub-agent `{agent}` do not follow the results of the \
                 step that ran it"
            ),
        }
    }
}

impl Conversation {
    /// Checks that the log keeps the rules of every log the loop writes: entries in turns that
    /// only go forward, each opened by its one user message and counted by the conversation;
    /// every assistant message that calls tools answered by the entry right after it, one result
    /// per call in call order, and no results without calls; no two calls of one message with
    /// one id. A conversation read back with serde is checked this way as it is read.
    pub fn validate(&self) -> Result<(), InvalidLog> {
        validate_log(&self.log, self.turns)
    }
}

/// [`Conversation::validate`] over a log and a turn counter.
pub(crate) fn validate_log(log: &[Entry], counter: u64) -> Result<(), InvalidLog> {
    let mut current: Option<TurnRef> = None;
    // The calls the entry before left to answer, if it was an assistant message calling tools.
    let mut waiting: Option<Vec<&ToolCall>> = None;
    // The turn the entry before suspended, if it was a suspended step.
    let mut suspended: Option<TurnRef> = None;
    // The turn the entry before resumed, if it was a resumption.
    let mut resumed: Option<TurnRef> = None;
    // Where the latest summary's entries end.
    let mut summarized = 0;
    for (index, entry) in log.iter().enumerate() {
        let invalid = |problem| Err(InvalidLog { index, problem });
        let turn = entry.turn();
        match (current, entry) {
            (None, Entry::User { .. }) => {}
            (None, _) => return invalid(LogProblem::OutsideAnyTurn),
            (Some(previous), _) if turn < previous => {
                return invalid(LogProblem::TurnWentBackwards { previous, found: turn });
            }
            (Some(previous), Entry::User { .. }) if turn == previous => {
                return invalid(LogProblem::SecondUserMessage { turn });
            }
            (Some(previous), entry) if turn > previous && !matches!(entry, Entry::User { .. }) => {
                return invalid(LogProblem::TurnWithoutUserMessage { turn });
            }
            _ => {}
        }
        if turn.0 > counter {
            return invalid(LogProblem::CounterBehind { counter, found: turn });
        }
        current = Some(turn);

        if let Some(turn) = resumed.take() {
            let goes_on = matches!(entry, Entry::Assistant { turn: step, .. }
                | Entry::Suspended { turn: step, .. } if *step == turn);
            if !goes_on {
                return invalid(LogProblem::ResumedStepMissing { turn });
            }
        }
        if let Entry::Resumed { turn, .. } = entry {
            resumed = Some(*turn);
        }
        match (suspended.take(), entry) {
            (Some(turn), Entry::Resumed { turn: resumed, approval, .. })
                if *resumed == turn && !matches!(**approval, Approval::Suspend) => {}
            (Some(turn), _) => return invalid(LogProblem::NotResumed { turn }),
            (None, Entry::Resumed { .. }) => return invalid(LogProblem::ResumedWithoutSuspension),
            (None, _) => {}
        }
        if let Entry::Suspended { turn, suspension } = entry {
            check_suspension(suspension).map_err(|problem| InvalidLog { index, problem })?;
            suspended = Some(*turn);
        }
        match (waiting.take(), entry) {
            (Some(calls), Entry::ToolResults { results, .. }) => {
                let answered = calls.len() == results.len()
                    && calls.iter().zip(results).all(|(call, result)| call.id == result.call_id);
                if !answered {
                    return invalid(LogProblem::ResultsMismatch {
                        calls: calls.iter().map(|call| call.id.clone()).collect(),
                        results: results.iter().map(|result| result.call_id.clone()).collect(),
                    });
                }
            }
            (Some(calls), _) => {
                let calls = calls.iter().map(|call| call.id.clone()).collect();
                return Err(InvalidLog {
                    index: index - 1,
                    problem: LogProblem::UnansweredCalls { calls },
                });
            }
            (None, Entry::ToolResults { .. }) => return invalid(LogProblem::OrphanResults),
            (None, _) => {}
        }
        if let Entry::Delegated { agent, .. } = entry {
            let after_results = index > 0
                && matches!(log[index - 1], Entry::ToolResults { turn: step, .. }
                    | Entry::Delegated { turn: step, .. } if step == turn);
            if !after_results {
                return invalid(LogProblem::DelegatedOutOfPlace { agent: agent.clone() });
            }
        }
        if let Entry::Summary { through, .. } = *entry {
            let at_a_turn = through < index && matches!(log[through], Entry::User { .. });
            if !at_a_turn || through <= summarized {
                return invalid(LogProblem::SummaryOutOfPlace { through });
            }
            summarized = through;
        }
        if let Entry::Assistant { message, .. } = entry {
            if let Some(id) = message.duplicate_call_id() {
                return invalid(LogProblem::DuplicateCallId { id: id.to_owned() });
            }
            let calls: Vec<&ToolCall> = message.tool_calls().collect();
            waiting = (!calls.is_empty()).then_some(calls);
        }
    }
    if let Some(turn) = resumed {
        return Err(InvalidLog {
            index: log.len() - 1,
            problem: LogProblem::ResumedStepMissing { turn },
        });
    }
    match waiting {
        Some(calls) => Err(InvalidLog {
            index: log.len() - 1,
            problem: LogProblem::UnansweredCalls {
                calls: calls.iter().map(|call| call.id.clone()).collect(),
            },
        }),
        None => Ok(()),
    }
}

/// A suspended step's rules: its calls have distinct ids, its results answer some of them in
/// call order (those that ran, or were refused, beside the waiting ones), and each call that
/// waits is one of its unanswered calls, as its message holds it, waiting once.
fn check_suspension(suspension: &Suspension) -> Result<(), LogProblem> {
    let Suspension { pending, also_waiting, message, results, .. } = suspension;
    if let Some(id) = message.duplicate_call_id() {
        return Err(LogProblem::DuplicateCallId { id: id.to_owned() });
    }
    let calls: Vec<&ToolCall> = message.tool_calls().collect();
    let mut answered = vec![false; calls.len()];
    let mut from = 0;
    for result in results {
        let Some(at) = calls[from..].iter().position(|call| call.id == result.call_id) else {
            return Err(LogProblem::ResultsMismatch {
                calls: calls.iter().map(|call| call.id.clone()).collect(),
                results: results.iter().map(|result| result.call_id.clone()).collect(),
            });
        };
        answered[from + at] = true;
        from += at + 1;
    }
    for waiting in std::iter::once(pending).chain(also_waiting) {
        let at = calls.iter().position(|call| call.id == waiting.call.id);
        match at {
            Some(at) if answered[at] => {}
            Some(at) if *calls[at] != waiting.call => {
                return Err(LogProblem::WaitingCallDiffers { id: waiting.call.id.clone() });
            }
            Some(at) => {
                // A call waits once: marked, a second wait on it is a mismatch.
                answered[at] = true;
                continue;
            }
            None => {}
        }
        let next = answered.iter().position(|answered| !answered);
        return Err(LogProblem::WaitingCallMismatch {
            next: next.map(|at| calls[at].id.clone()),
            waiting: waiting.call.id.clone(),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::message::{AssistantMessage, Message, ToolResult};

    fn user(turn: u64) -> Entry {
        Entry::User { turn: TurnRef(turn), message: Message::user("hi"), task: None }
    }

    fn calling(turn: u64, call: &ToolCall) -> Entry {
        let message = AssistantMessage::text("checking").with_tool_call(call.clone());
        Entry::Assistant { turn: TurnRef(turn), message }
    }

    fn answer(turn: u64) -> Entry {
        Entry::Assistant { turn: TurnRef(turn), message: AssistantMessage::text("done") }
    }

    fn problem(log: &[Entry], counter: u64) -> Option<(usize, LogProblem)> {
        validate_log(log, counter).err().map(|invalid| (invalid.index, invalid.problem))
    }

    #[test]
    fn a_whole_turn_with_its_calls_answered_is_valid() {
        let call = ToolCall::new("call_1", "clock", json!({}));
        let results = vec![ToolResult::success(&call, "noon")];
        let log = [
            user(1),
            calling(1, &call),
            Entry::ToolResults { turn: TurnRef(1), results },
            answer(1),
        ];
        assert_eq!(problem(&log, 1), None);
    }

    #[test]
    fn each_broken_rule_names_the_first_entry_that_breaks_it() {
        assert_eq!(problem(&[answer(1)], 1), Some((0, LogProblem::OutsideAnyTurn)));
        assert!(matches!(
            problem(&[user(2), user(1)], 2),
            Some((1, LogProblem::TurnWentBackwards { .. }))
        ));
        assert!(matches!(
            problem(&[user(1), user(1)], 1),
            Some((1, LogProblem::SecondUserMessage { .. }))
        ));
        assert!(matches!(
            problem(&[user(1), answer(2)], 2),
            Some((1, LogProblem::TurnWithoutUserMessage { .. }))
        ));
        assert!(matches!(problem(&[user(3)], 1), Some((_, LogProblem::CounterBehind { .. }))));
        let call = ToolCall::new("call_1", "clock", json!({}));
        assert!(matches!(
            // Named at the message whose calls the next entry leaves unanswered.
            problem(&[user(1), calling(1, &call), answer(1)], 1),
            Some((1, LogProblem::UnansweredCalls { .. }))
        ));
        let results = vec![ToolResult::success(&call, "noon")];
        assert_eq!(
            problem(
                &[user(1), Entry::ToolResults { turn: TurnRef(1), results: results.clone() }],
                1
            ),
            Some((1, LogProblem::OrphanResults))
        );
        // A kept sub-agent's entries follow the results of the step that ran it, and only those.
        let kept = Entry::Delegated {
            turn: TurnRef(1),
            call: "call_1".into(),
            agent: "notes".into(),
            log: vec![user(1), answer(1)],
        };
        let stepped = [
            user(1),
            calling(1, &call),
            Entry::ToolResults { turn: TurnRef(1), results },
            kept.clone(),
            kept.clone(),
            answer(1),
        ];
        assert_eq!(problem(&stepped, 1), None);
        assert_eq!(
            problem(&[user(1), kept.clone()], 1),
            Some((1, LogProblem::DelegatedOutOfPlace { agent: "notes".into() }))
        );
        assert_eq!(
            problem(&[user(1), answer(1), kept], 1),
            Some((2, LogProblem::DelegatedOutOfPlace { agent: "notes".into() }))
        );
    }
}
