use agentix::{hook, model::{ModelError, ModelRequest, ModelResponse, NextModel}};

#[hook(wrap_model)]
async fn retry(request: &mut ModelRequest, next: &impl NextModel) -> Result<ModelResponse, ModelError> {
    request.params.temperature = Some(0.0);
    next.call(request).await
}

fn main() {}
