//! The research_team example: the writer answers, the policy's guard refused the researcher's
//! delete, and the team's usage sums into the planner's turn.

use examples::research_team::run;

#[tokio::test]
async fn the_writer_answers_and_the_policy_guards_the_researcher() {
    let report = run(&|_| {}).await;
    let answer = report.answer.unwrap();
    assert!(answer.joined_text().starts_with("Rust turned 1.0 on 15 May 2015"), "{answer:?}");
    assert_eq!(
        report.researcher_calls,
        ["refused by no_deletes: this team deletes nothing", "search ran"]
    );
    // The planner's two calls at 100, the researcher's three at 10, the writer's one at 5.
    assert_eq!((report.usage.input_tokens, report.usage.output_tokens), (235, 235));
}
