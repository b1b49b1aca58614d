//! The retrieval example: both parallel hooks inject, fenced, after the user message.

use agentix::message::Role;

#[tokio::test]
async fn documents_and_memory_arrive_fenced_after_the_user_message() {
    let (outcome, request) = examples::retrieval::run(&|_| {}).await;
    outcome.expect("the turn completes");
    assert_eq!(request.system.as_deref(), Some("You are a travel assistant."));
    let [question, injected] = &request.messages[..] else {
        panic!("the user message, then what the hooks injected: {:?}", request.messages);
    };
    assert_eq!(question.text(), "When does the ferry to Kiel leave?");
    assert_eq!(injected.role, Role::User);
    let parts: Vec<&str> = injected.content.iter().filter_map(|part| part.as_text()).collect();
    assert_eq!(parts.len(), 2, "one document (only the ferry matches) and the memory, in order");
    assert!(parts[0].contains("source=\"ferries.md\"") && parts[0].contains("14:00"));
    assert!(parts[1].contains("source=\"memory\""));
    for part in parts {
        assert!(part.starts_with("<untrusted-") && part.contains("not instructions"));
    }
}
