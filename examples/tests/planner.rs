//! The planner example: the model's plan is rewritten, run task by task, reported, and followed
//! up once.

use agentix::session::TaskStatus;
use std::sync::Mutex;

#[tokio::test]
async fn the_plan_is_rewritten_run_reported_and_followed_up_once() {
    let printed = Mutex::new(Vec::new());
    let (reports, requests, conversation) =
        examples::planner::run(&|line| printed.lock().unwrap().push(line.to_owned())).await;
    let titles: Vec<Option<&str>> =
        reports.iter().map(|report| report.task.task.title.as_deref()).collect();
    assert_eq!(
        titles,
        [None, Some("outline"), Some("draft"), Some("edit"), Some("review"), Some("announce")]
    );
    assert!(reports.iter().all(|report| report.status == TaskStatus::Success));
    // The plan's four tasks (three proposed, one added) share its id; the rest have none.
    let plan = reports[1].task.plan().expect("a planned task");
    assert!(reports[1..5].iter().all(|report| report.task.plan() == Some(plan)));
    assert_eq!((reports[0].task.plan(), reports[5].task.plan()), (None, None));
    // Each task's first model call was given a thinking budget; the second call of the first
    // task (after its tool call) was not.
    let budgets: Vec<Option<u32>> =
        requests.iter().map(|request| request.params.thinking_budget).collect();
    assert_eq!(
        budgets,
        [Some(1024), None, Some(1024), Some(1024), Some(1024), Some(1024), Some(1024)]
    );
    // Each task's turn opened with its prompt, tagged with its task.
    let prompts: Vec<u64> = (0..conversation.log().len())
        .filter(|&index| matches!(conversation.log()[index], agentix::Entry::User { .. }))
        .map(|index| conversation.task_of(index).unwrap().task.get())
        .collect();
    assert_eq!(prompts, [1, 2, 3, 4, 5, 6]);
    let printed = printed.into_inner().unwrap();
    let statuses: Vec<&String> =
        printed.iter().filter(|line| line.contains(": success after")).collect();
    assert_eq!(statuses.len(), 6, "the task_complete hook reported every task: {printed:#?}");
    assert!(
        printed.contains(&"  task 5 \"review\": success after 1 step(s) [plan 1 4/4]".to_owned())
    );
    assert_eq!(
        printed.iter().filter(|line| line.contains("follow-up task(s) enqueued")).count(),
        1
    );
}
