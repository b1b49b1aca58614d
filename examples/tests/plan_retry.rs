//! The plan_retry example: the missing plan is retried with feedback, and the bound holds.

use agentix::event::EventKind;
use agentix::{Error, message::Role};

#[tokio::test]
async fn the_answer_is_retried_until_it_plans_and_the_bound_ends_a_stubborn_turn() {
    let (first, second, conversation, requests, stubborn) =
        examples::plan_retry::run(&|_| {}).await;
    let answer = first.expect("the second draft plans");
    assert!(answer.joined_text().starts_with("<plan>"));
    assert_eq!(requests.len(), 2, "one retry");
    // The retry shows the model its rejected draft, then the feedback.
    let retry = &requests[1].messages;
    assert_eq!(retry[retry.len() - 2].text(), "Paris is the capital of France.");
    assert!(retry[retry.len() - 1].text().starts_with("Start with a <plan>"));
    assert!(matches!(
        second,
        Err(Error::RetryLimit { event: EventKind::AfterModel, hook: "require_plan", limit: 2 })
    ));
    assert_eq!(stubborn, 3, "the first try and two retries");
    // The log keeps the answer that passed, never a rejected draft.
    let logged: Vec<String> = conversation
        .log()
        .iter()
        .filter_map(|entry| entry.to_message())
        .filter(|message| message.role == Role::Assistant)
        .map(|message| message.text().into_owned())
        .collect();
    assert_eq!(logged, [answer.joined_text().into_owned()]);
}
