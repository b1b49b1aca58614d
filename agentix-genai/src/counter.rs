//! The token counter that goes with a model: exact where a tokenizer is at hand, an estimate
//! corrected from what the provider reports otherwise.

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

use agentix::{
    context::{CharsPerToken, TokenCounter},
    model::ModelRequest,
};

/// The model's counter: see [`GenaiModel::token_counter`](crate::GenaiModel::token_counter).
#[derive(Clone, Debug)]
pub enum ProviderCounter {
    /// OpenAI's own tokenizer.
    #[cfg(feature = "bpe")]
    Bpe(crate::BpeCounter),
    /// Characters per token, scaled by what the provider reported of the requests so far.
    Calibrated(Arc<Calibration>),
}

impl TokenCounter for ProviderCounter {
    fn count(&self, text: &str) -> usize {
        match self {
            #[cfg(feature = "bpe")]
            ProviderCounter::Bpe(counter) => counter.count(text),
            ProviderCounter::Calibrated(calibration) => calibration.count(text),
        }
    }
}

/// A characters-per-token estimate, corrected after each call by the ratio of the input tokens
/// the provider reported to the tokens the estimate gave the same request (a running average:
/// one odd request moves it a quarter of the way).
#[derive(Debug)]
pub struct Calibration {
    estimate: CharsPerToken,
    /// Reported over estimated, in thousandths.
    ratio: AtomicU32,
}

impl Default for Calibration {
    fn default() -> Self {
        Calibration { estimate: CharsPerToken::default(), ratio: AtomicU32::new(1000) }
    }
}

impl Calibration {
    /// The correction so far: reported tokens per estimated token.
    pub fn ratio(&self) -> f64 {
        f64::from(self.ratio.load(Ordering::Relaxed)) / 1000.0
    }

    fn count(&self, text: &str) -> usize {
        let estimated = self.estimate.count(text) as f64;
        (estimated * self.ratio()).ceil() as usize
    }

    /// Learns from a call: `request` was estimated, the provider read `reported` tokens.
    pub(crate) fn observe(&self, request: &ModelRequest, reported: u32) {
        let estimated = self.raw_estimate(request);
        if reported == 0 || estimated == 0 {
            return;
        }
        let observed = (f64::from(reported) / estimated as f64).clamp(0.25, 4.0);
        // Calls that finish together each move the ratio; none is lost.
        let _ = self.ratio.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |ratio| {
            let blended = f64::from(ratio) / 1000.0 * 0.75 + observed * 0.25;
            Some((blended * 1000.0).round() as u32)
        });
    }

    /// The uncorrected estimate of everything a request sends.
    fn raw_estimate(&self, request: &ModelRequest) -> usize {
        let system = request.system.as_deref().map_or(0, |system| self.estimate.count(system));
        let messages: usize =
            request.messages.iter().map(|message| self.estimate.count_message(message)).sum();
        let tools: usize = request.tools.iter().map(|tool| self.estimate.count_tool(tool)).sum();
        system + messages + tools
    }
}
