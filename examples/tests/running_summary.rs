//! The running_summary example: durable summaries reach every later turn; transient content
//! only its own.

use examples::running_summary::{QUESTIONS, run};

#[tokio::test]
async fn each_turn_sees_the_summaries_of_the_turns_before_it() {
    let (_conversation, requests) = run(&|_| {}).await;
    assert_eq!(requests.len(), QUESTIONS.len());
    for (turn, request) in requests.iter().enumerate() {
        let text: String = request.messages.iter().map(|m| m.text().into_owned() + "\n").collect();
        for earlier in 1..=turn {
            assert!(
                text.contains(&format!("Summary of turn {earlier}:")),
                "turn {} sees turn {earlier}",
                turn + 1
            );
        }
        assert!(!text.contains(&format!("Summary of turn {}:", turn + 1)), "not its own, yet");
        assert_eq!(text.matches("Today is").count(), 1, "the transient note, this turn's only");
    }
}
