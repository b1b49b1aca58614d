use agentix::{ModelError, ModelRequest, ModelResponse, NextModel, hook};

#[hook(wrap_model, durable)]
async fn record(request: &ModelRequest, next: &impl NextModel) -> Result<ModelResponse, ModelError> {
    next.call(request).await
}

fn main() {}
