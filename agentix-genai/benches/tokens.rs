#![allow(missing_docs)] // criterion_group! generates an undocumented `pub fn`.

//! What counting a request's tokens costs: OpenAI's tokenizer (`BpeCounter`, o200k) against the
//! characters-per-token estimate (`CharsPerToken`) and the estimate the provider's usage corrects
//! (`ProviderCounter::Calibrated`), over a request of a system prompt, a tool and a conversation
//! of 20 messages. The agent counts a request when it plans its budget, and remembers what it
//! has counted, so a turn pays this for its new messages only.

use std::hint::black_box;

use agentix::{
    Message, Part,
    context::{CharsPerToken, TokenCounter},
    tool::ToolSpec,
};
use agentix_genai::{BpeCounter, Encoding, GenaiModel};
use criterion::{Criterion, criterion_group};
use serde_json::json;

/// Prose that varies from message to message, as a conversation does.
fn prose(seed: usize, words: usize) -> String {
    const WORDS: [&str; 24] = [
        "the",
        "weather",
        "in",
        "Oslo",
        "is",
        "mild",
        "today,",
        "with",
        "light",
        "rain",
        "expected",
        "after",
        "noon;",
        "bring",
        "an",
        "umbrella",
        "and",
        "check",
        "the",
        "forecast",
        "again",
        "at",
        "18:30",
        "tomorrow.",
    ];
    let words: Vec<&str> = (0..words).map(|at| WORDS[(at * 7 + seed * 13) % WORDS.len()]).collect();
    words.join(" ")
}

struct Request {
    system: String,
    tool: ToolSpec,
    messages: Vec<Message>,
}

impl Request {
    fn new() -> Self {
        let messages = (0..20)
            .map(|at| {
                if at % 2 == 0 {
                    Message::user(prose(at, 40))
                } else {
                    Message::from(agentix::AssistantMessage::text(prose(at, 90)))
                }
            })
            .collect();
        let tool = ToolSpec {
            name: "get_weather".into(),
            description: "Current weather for a city.".into(),
            parameters: json!({ "type": "object", "properties": { "city": { "type": "string" } }, "required": ["city"] }),
        };
        Request { system: prose(99, 60), tool, messages }
    }

    fn characters(&self) -> usize {
        let text = |message: &Message| -> usize {
            message.content.iter().filter_map(Part::as_text).map(str::len).sum()
        };
        self.system.len() + self.messages.iter().map(text).sum::<usize>()
    }
}

fn count(counter: &impl TokenCounter, request: &Request) -> usize {
    counter.count(&request.system)
        + counter.count_tool(&request.tool)
        + request.messages.iter().map(|message| counter.count_message(message)).sum::<usize>()
}

fn bench(c: &mut Criterion) {
    let request = Request::new();
    let chars = CharsPerToken::default();
    let bpe = BpeCounter::new(Encoding::O200k);
    let model = GenaiModel::builder("anthropic:claude-sonnet-4-5").api_key("unused").build();
    let calibrated = model.expect("a known model").token_counter();
    println!(
        "a request of {} characters: {} tokens by o200k, {} estimated, {} calibrated (no usage yet)",
        request.characters(),
        count(&bpe, &request),
        count(&chars, &request),
        count(&calibrated, &request)
    );
    let mut group = c.benchmark_group("count a request");
    group.bench_function("chars_per_token", |b| {
        b.iter(|| count(black_box(&chars), black_box(&request)))
    });
    group.bench_function("calibrated", |b| {
        b.iter(|| count(black_box(&calibrated), black_box(&request)))
    });
    group.bench_function("bpe_o200k", |b| b.iter(|| count(black_box(&bpe), black_box(&request))));
    group.finish();
}

criterion_group!(benches, bench);

fn main() {
    benches();
    Criterion::default().configure_from_args().final_summary();
}
