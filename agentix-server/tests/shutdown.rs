//! The `agentix-server` binary, run as a process: SIGTERM during a running turn lets the turn
//! finish and exits 0; past the grace, the process exits 1 and the store holds whole steps.

mod support;
use support::{client, create};

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::{Value, json};

/// The server started with `args`, and its base URL (read from what it prints).
fn start(args: &[&str]) -> (Child, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_agentix-server"))
        // Who may call is `security.rs`'s: here, everyone.
        .args(["--addr", "127.0.0.1:0", "--anonymous"])
        .args(args)
        .env_remove("AGENTIX_MODEL")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let mut lines = BufReader::new(stdout).lines();
    let base = loop {
        let line = lines.next().expect("the server prints where it serves").unwrap();
        if let Some(rest) = line.strip_prefix("Serving an agent on ") {
            break rest.split(". Try").next().unwrap().to_owned();
        }
    };
    // Keep reading, so the server never blocks on a full pipe.
    std::thread::spawn(move || lines.for_each(drop));
    (child, base)
}

fn terminate(child: &Child) {
    let status = Command::new("kill").args(["-TERM", &child.id().to_string()]).status().unwrap();
    assert!(status.success());
}

/// Waits for the process to exit, at most `within`.
fn exit_code(child: &mut Child, within: Duration) -> Option<i32> {
    let deadline = std::time::Instant::now() + within;
    while std::time::Instant::now() < deadline {
        if let Some(status) = child.try_wait().unwrap() {
            return status.code();
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = child.kill();
    panic!("the server did not exit within {within:?}");
}

/// Waits until a turn runs on the conversation (a read of it is refused meanwhile).
async fn until_running(client: &reqwest::Client, base: &str, id: &str) {
    loop {
        let response = client.get(format!("{base}/conversations/{id}")).send().await.unwrap();
        if response.status() == 409 {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

#[tokio::test]
async fn sigterm_during_a_turn_lets_it_finish_and_exits_0() {
    // Two model calls of 700 ms each: the turn runs some 1.4 s.
    let (mut child, base) = start(&["--demo-latency", "700", "--grace", "30"]);
    let client = client();
    let id = create(&client, &base).await;
    let turn = tokio::spawn({
        let (client, url) = (client.clone(), format!("{base}/conversations/{id}/messages"));
        async move {
            let response = client.post(url).json(&json!({ "message": "Oslo" })).send().await;
            let response = response.unwrap();
            (response.status().as_u16(), response.json::<Value>().await.unwrap())
        }
    });
    until_running(&client, &base, &id).await;
    terminate(&child);
    let (status, body) = turn.await.unwrap();
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["text"], "Here is the weather: Oslo: clear sky, 21.");
    assert_eq!(exit_code(&mut child, Duration::from_secs(20)), Some(0));
    // Stopped: nothing listens any more.
    assert!(client.get(format!("{base}/health")).send().await.is_err());
}

#[tokio::test]
async fn a_turn_past_the_grace_is_cut_the_process_exits_1_and_the_store_holds_whole_steps() {
    let dir = std::env::temp_dir().join(format!("agentix-grace-{}", uuid::Uuid::new_v4()));
    std::fs::create_dir_all(&dir).unwrap();
    let url = format!("sqlite://{}", dir.join("chats.db").display());
    // Each model call 2 s; a grace of 3 s: the first step (a call, the tool) is committed,
    // the second call is cut.
    let (mut child, base) = start(&["--demo-latency", "2000", "--grace", "3", "--database", &url]);
    let client = client();
    let id = create(&client, &base).await;
    let url_of_turn = format!("{base}/conversations/{id}/messages");
    tokio::spawn({
        let client = client.clone();
        async move { client.post(url_of_turn).json(&json!({ "message": "Oslo" })).send().await }
    });
    until_running(&client, &base, &id).await;
    terminate(&child);
    assert_eq!(exit_code(&mut child, Duration::from_secs(20)), Some(1));
    // What the store holds reads back as a valid log: the turn opened, no half step.
    let store = agentix_store::Store::open(&url).await.unwrap();
    let stored = store.load(&id).await.unwrap();
    let log = stored.conversation.log();
    assert!(matches!(log.first(), Some(agentix::Entry::User { .. })), "{log:#?}");
    // The first step whole — the call asked for and its result — and no answer after it.
    assert!(matches!(log.last(), Some(agentix::Entry::ToolResults { .. })), "{log:#?}");
    let answered = log.iter().any(|entry| {
        matches!(entry, agentix::Entry::Assistant { message, .. } if !message.calls_tools())
    });
    assert!(!answered, "the turn was cut before its answer: {log:#?}");
    store.close().await;
    std::fs::remove_dir_all(dir).unwrap();
}

#[tokio::test]
async fn a_turn_whose_client_went_away_is_waited_for_however_long_the_server_ran() {
    // A grace of 2 s, and a server up for longer than that before the signal.
    let (mut child, base) = start(&["--demo-latency", "600", "--grace", "2"]);
    tokio::time::sleep(Duration::from_millis(2_500)).await;
    let client = client();
    let id = create(&client, &base).await;
    // The client gives up at once; the turn (two calls of 600 ms) runs on in its task.
    let impatient =
        reqwest::Client::builder().no_proxy().timeout(Duration::from_millis(100)).build().unwrap();
    let url = format!("{base}/conversations/{id}/messages");
    assert!(impatient.post(url).json(&json!({ "message": "Oslo" })).send().await.is_err());
    until_running(&client, &base, &id).await;
    terminate(&child);
    assert_eq!(exit_code(&mut child, Duration::from_secs(20)), Some(0), "the turn finished");
}

#[tokio::test]
async fn the_body_limit_is_the_command_lines() {
    let (mut child, base) = start(&["--body-limit", "1000"]);
    let client = client();
    let id = create(&client, &base).await;
    let response = client
        .post(format!("{base}/conversations/{id}/messages"))
        .json(&json!({ "message": "a".repeat(2_000) }))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 413);
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["error"]["code"], "body_too_large", "{body}");
    terminate(&child);
    assert_eq!(exit_code(&mut child, Duration::from_secs(20)), Some(0));
}
