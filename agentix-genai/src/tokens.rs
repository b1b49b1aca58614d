//! Token counts for the context budget: OpenAI's own tokenizers, built into the crate (nothing is
//! downloaded at run time).

use agentix::context::TokenCounter;

/// One of OpenAI's tokenizers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Encoding {
    /// `o200k_base`: GPT-4o, GPT-4.1, GPT-5, o1, o3, o4.
    O200k,
    /// `cl100k_base`: GPT-4, GPT-3.5.
    Cl100k,
}

impl Encoding {
    /// The encoding `model` uses; `None` for a model that is not OpenAI's.
    pub fn for_model(model: &str) -> Option<Self> {
        let model = model.rsplit("::").next().unwrap_or(model);
        if model.starts_with("gpt-4o")
            || model.starts_with("gpt-4.1")
            || model.starts_with("gpt-4.5")
            || model.starts_with("gpt-5")
            || model.starts_with("chatgpt")
            || ["o1", "o3", "o4"].iter().any(|family| model.starts_with(family))
        {
            Some(Encoding::O200k)
        } else if model.starts_with("gpt-4") || model.starts_with("gpt-3.5") {
            Some(Encoding::Cl100k)
        } else {
            None
        }
    }
}

/// Counts tokens exactly as OpenAI's models do, with their byte-pair encoding.
#[derive(Clone, Copy)]
pub struct BpeCounter {
    tokenizer: &'static bpe_openai::Tokenizer,
}

impl BpeCounter {
    /// A counter for `encoding`.
    pub fn new(encoding: Encoding) -> Self {
        let tokenizer = match encoding {
            Encoding::O200k => bpe_openai::o200k_base(),
            Encoding::Cl100k => bpe_openai::cl100k_base(),
        };
        BpeCounter { tokenizer }
    }
}

impl std::fmt::Debug for BpeCounter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BpeCounter").finish_non_exhaustive()
    }
}

impl TokenCounter for BpeCounter {
    fn count(&self, text: &str) -> usize {
        self.tokenizer.count(text)
    }
}
