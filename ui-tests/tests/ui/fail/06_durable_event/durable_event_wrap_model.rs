use agentix::{hook, model::{ModelError, ModelRequest, ModelResponse, NextModel}};

#[hook(wrap_model, durable)]
async fn record(request: &ModelRequest, next: &impl NextModel) -> Result<ModelResponse, ModelError> {
    next.call(request).await
}

fn main() {}
