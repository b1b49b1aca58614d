use agentix::{Turn, hook, model::{ModelRequest, NextModel}};

#[hook(wrap_model)]
async fn cache(request: &ModelRequest, _turn: &Turn, next: &impl NextModel) -> String {
    let _ = next.call(request).await;
    String::new()
}

fn main() {}
