//! The resilient_model example: transport errors are retried, the fallback answers when the
//! primary stays down, and the failed tool call runs again.

#[tokio::test]
async fn retries_back_off_the_fallback_answers_and_the_tool_runs_again() {
    let lines = std::sync::Mutex::new(Vec::new());
    let (outcome, conversation, [primary, fallback]) =
        examples::resilient_model::run(&|line| lines.lock().unwrap().push(line.to_owned())).await;
    assert_eq!(
        outcome.expect("the fallback answers").joined_text(),
        "Take the train: 6 h 40 min from Oslo to Bergen."
    );
    assert_eq!([primary, fallback], [6, 1], "3 attempts per step; the fallback once");
    let lines = lines.into_inner().unwrap();
    let waits: Vec<&String> = lines.iter().filter(|line| line.contains("trying again")).collect();
    assert_eq!(waits.len(), 4);
    assert!(waits[0].ends_with("in 10ms") && waits[1].ends_with("in 20ms"), "the backoff doubles");
    let tool = conversation.log().iter().find_map(|entry| match entry {
        agentix::Entry::ToolResults { results, .. } => Some(results[0].clone()),
        _ => None,
    });
    let tool = tool.expect("the tool ran");
    assert!(tool.error.is_none(), "the retry succeeded: {}", tool.output);
}
