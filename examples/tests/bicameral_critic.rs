//! The bicameral_critic example: the critique reaches the creator, and the bound holds.

use agentix::Error;

#[tokio::test]
async fn the_creator_retries_with_the_critique_until_it_passes_or_the_bound_ends_it() {
    let (first, second, _conversation, creator, reviews) =
        examples::bicameral_critic::run(&|_| {}).await;
    let answer = first.expect("the third draft passes");
    assert!(answer.joined_text().contains("10:00, in room 4"));
    assert!(matches!(second, Err(Error::RetryLimit { hook: "critic", limit: 2, .. })));
    assert_eq!([creator.len(), reviews], [6, 6], "every draft went to the critic, once");
    // Each retry hands the creator the critic's words about its last draft.
    let feedback = |request: usize| creator[request].messages.last().unwrap().text().into_owned();
    assert_eq!(feedback(1), "A reviewer says: Too vague: give the day.");
    assert_eq!(feedback(2), "A reviewer says: Give the time and the place too.");
}
