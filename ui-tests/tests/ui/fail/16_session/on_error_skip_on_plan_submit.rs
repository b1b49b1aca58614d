use agentix::session::Plan;
use agentix::hook;

#[hook(plan_submit, on_error = skip)]
async fn check(_plan: &Plan) {}

fn main() {}
