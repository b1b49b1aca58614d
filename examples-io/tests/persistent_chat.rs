//! The persistent_chat example: the second run, a new store opened on the same file, remembers
//! the first.

#[tokio::test]
async fn the_second_run_remembers_the_first() {
    let dir = std::env::temp_dir().join(format!("agentix-chat-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("chat.db");
    let (first, turns) =
        examples_io::persistent_chat::run(&path, "My name is Ada.", &|_| {}).await.unwrap();
    assert_eq!(turns, 1);
    assert!(first.starts_with("Nice to meet you"), "{first}");
    let printed = std::sync::Mutex::new(Vec::new());
    let (second, turns) = examples_io::persistent_chat::run(&path, "What is my name?", &|line| {
        printed.lock().unwrap().push(line.to_owned())
    })
    .await
    .unwrap();
    assert_eq!(turns, 2);
    assert_eq!(
        second,
        "You said \"What is my name?\". Before that, in earlier runs: My name is Ada."
    );
    assert!(
        printed.lock().unwrap()[0].ends_with("1 turn(s), version 3"),
        "{:?}",
        printed.lock().unwrap()
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
