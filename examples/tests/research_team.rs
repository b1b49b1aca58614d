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
    // The writer got the user's message, and the planner's note of what was found.
    assert_eq!(report.writer_asked.len(), 2, "{:?}", report.writer_asked);
    assert!(report.writer_asked[1].contains("15 May 2015"), "{:?}", report.writer_asked);
    // The planner's two calls at 100, the researcher's three at 10, the writer's one at 5.
    assert_eq!((report.usage.input_tokens, report.usage.output_tokens), (235, 235));
}
