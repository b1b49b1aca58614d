//! A first agent on a real model. Set `AGENTIX_MODEL` (`openai:gpt-4.1-mini`,
//! `anthropic:claude-sonnet-4-5`, `gemini:gemini-2.5-flash`, `ollama:llama3.2`…) and the
//! provider's key (`OPENAI_API_KEY`, `ANTHROPIC_API_KEY`, `GEMINI_API_KEY`; Ollama needs none);
//! `AGENTIX_ENDPOINT` points it at an OpenAI-compatible server of your own. Without them it runs
//! on a loopback stub.
//!
//! Run it with `cargo run -p examples-io --example real_model`.

use std::io::Write;

#[tokio::main]
async fn main() {
    let choice = match examples_io::real_model::choose(|name| std::env::var(name).ok()).await {
        Ok(choice) => choice,
        Err(unknown) => {
            eprintln!("{unknown}");
            std::process::exit(2);
        }
    };
    println!("{}\n", choice.note);
    let print = |text: &str| {
        print!("{text}");
        std::io::stdout().flush().ok();
    };
    if let Err(error) = examples_io::real_model::run(choice.model, &print).await {
        eprintln!("\nthe turn failed: {error}");
        std::process::exit(1);
    }
}
