//! A conversation kept in a SQLite file across runs: run it twice, and the second run remembers
//! the first.
//!
//! Run it with `cargo run -p examples-io --example persistent_chat` (again, with another message:
//! `cargo run -p examples-io --example persistent_chat -- "What did I say?"`). The file is
//! `agentix-persistent-chat.db` in the system's temporary directory; `AGENTIX_CHAT_DB` names
//! another.

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let path = std::env::var_os("AGENTIX_CHAT_DB")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| std::env::temp_dir().join("agentix-persistent-chat.db"));
    let message = std::env::args().nth(1).unwrap_or_else(|| "My name is Ada.".to_owned());
    if let Err(error) =
        examples_io::persistent_chat::run(&path, &message, &|line| println!("{line}")).await
    {
        eprintln!("error: {error}");
        std::process::exit(1);
    }
}
