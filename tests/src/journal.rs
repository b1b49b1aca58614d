//! A journal in memory, for the tests that replay a turn: the seam's own behaviour tests and
//! the traces' (a replayed call opens no span).

use std::future::Future;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use agentix::durable::{Journal, JournalError, JournalStep, replay_recorded};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

/// A journal in memory: replays the steps it holds, in order, then runs and records the rest.
#[derive(Default)]
pub struct Memory {
    steps: Mutex<Vec<(String, Value)>>,
    next: AtomicUsize,
}

impl Memory {
    /// The same steps, replayed from the first.
    pub fn replay(&self, keep: usize) -> Memory {
        let mut steps = self.steps.lock().unwrap().clone();
        steps.truncate(keep);
        Memory { steps: Mutex::new(steps), next: AtomicUsize::new(0) }
    }

    /// The names of the steps it holds, in order.
    pub fn names(&self) -> Vec<String> {
        self.steps.lock().unwrap().iter().map(|(name, _)| name.clone()).collect()
    }
}

impl Journal for Memory {
    fn journal<T, F>(
        &self,
        step: &JournalStep<'_>,
        effect: F,
    ) -> impl Future<Output = Result<T, JournalError>> + Send
    where
        T: Serialize + DeserializeOwned + Send,
        F: Future<Output = T> + Send,
    {
        let asked = step.to_string();
        async move {
            let at = self.next.load(Ordering::SeqCst);
            let recorded = self.steps.lock().unwrap().get(at).cloned();
            match recorded {
                Some((recorded, value)) => {
                    let replayed =
                        replay_recorded(asked, &recorded, || serde_json::from_value(value));
                    if !matches!(replayed, Err(JournalError::Diverged { .. })) {
                        self.next.store(at + 1, Ordering::SeqCst);
                    }
                    replayed
                }
                None => {
                    let value = effect.await;
                    let stored = serde_json::to_value(&value).unwrap();
                    self.steps.lock().unwrap().push((asked, stored));
                    self.next.store(at + 1, Ordering::SeqCst);
                    Ok(value)
                }
            }
        }
    }
}
