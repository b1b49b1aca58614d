//! The bicameral_critic example: the critique reaches the creator, and the bound holds.

use agentix::Error;

#[tokio::test]
async fn the_creator_retries_with_the_critique_until_it_passes_or_the_bound_ends_it() {
    let (first, second, _conversation, [creator, critic]) =
        examples::bicameral_critic::run(&|_| {}).await;
    let answer = first.expect("the third draft passes");
    assert!(answer.joined_text().contains("10:00, in room 4"));
    assert!(matches!(second, Err(Error::RetryLimit { hook: "critic", limit: 2, .. })));
    assert_eq!([creator, critic], [6, 6], "every draft went to the critic, once");
}
