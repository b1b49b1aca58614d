use agentix::session::TaskReport;
use agentix::{Agent, ScriptedModel, hook};

#[hook(task_complete)]
async fn report(report: &TaskReport) {
    println!("{}: {}", report.task.id(), report.status);
}

fn main() {
    let _agent = Agent::builder(ScriptedModel::new()).hook(report).build();
}
