use agentix::event::PlanComplete;
use agentix::session::PlanReport;
use agentix::{Verdict, hook};

#[hook(plan_complete)]
async fn judge(plan: &PlanReport) -> Verdict<PlanComplete> {
    if plan.succeeded < plan.total { Verdict::reject("not all succeeded") } else { Verdict::Continue }
}

fn main() {}
