//! Real model providers for [agentix](https://docs.rs/agentix), through
//! [genai](https://docs.rs/genai): OpenAI (chat completions and responses), Anthropic, Gemini,
//! Ollama, Groq, DeepSeek, xAI, and any OpenAI-compatible endpoint, each an [`agentix::Model`].
//!
//! ```no_run
//! use agentix::{Agent, Conversation};
//! use agentix_genai::GenaiModel;
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! // The key comes from the provider's usual variable (here ANTHROPIC_API_KEY).
//! let model = GenaiModel::new("anthropic:claude-sonnet-4-5")?;
//! let agent = Agent::builder(model).system("Be brief.").build();
//! let reply = agent.run(&mut Conversation::new(), "Hello!").await?;
//! println!("{}", reply.joined_text());
//! # Ok(())
//! # }
//! ```
//!
//! A model is named `provider:model` — `openai:gpt-4.1-mini`, `anthropic:claude-sonnet-4-5`,
//! `gemini:gemini-2.5-flash`, `ollama:llama3.2`, `groq:llama-3.3-70b-versatile`,
//! `deepseek:deepseek-chat`, `xai:grok-3`, `openai_resp:gpt-5` for OpenAI's responses API —
//! or by a bare name genai recognizes (`gpt-4.1-mini`, `claude-…`, `gemini-…`). An
//! OpenAI-compatible server (vLLM, LM Studio, a gateway) is `openai:MODEL` with an
//! [`endpoint`](GenaiModelBuilder::endpoint).
//!
//! **The prompt cache.** agentix keeps `[system, history]` byte-identical from one request to
//! the next, whatever a turn injects ([`agentix::model::ModelRequest::history`]). For a provider whose
//! cache is opt-in (Anthropic), the adapter marks the system prompt and the last message of the
//! history as cache breakpoints — what the next turn repeats, whatever this one injects — and
//! the request's last message, which the turn's next step repeats; every message is written as
//! content blocks, so a breakpoint that moves on to a later message leaves the bytes before it
//! as they were. OpenAI, Gemini and
//! the others cache a repeated prefix on their own. Either way the tokens read from and written
//! to the cache are in the call's [`Usage`](agentix::model::Usage), which an `after_model` hook reads
//! with [`Turn::last_usage`](agentix::Turn::last_usage).
//!
//! **Tool schemas** are adapted where a provider needs it: OpenAI's strict mode (every property
//! required, the optional ones nullable, no others; the nulls it makes the model send are
//! dropped again before the tool reads its arguments), Gemini's schemas without `$ref`s.
//!
//! **Failures** are typed [`ModelError`]s that name the provider: `Provider` with the HTTP
//! status, the provider's message and, for a 429, when to retry (`retry-after`,
//! `retry-after-ms`, or Google's `RetryInfo`); `InvalidResponse` for an answer that cannot be
//! read or a stream that ended early; `Refused` for a refusal or a safety filter; `Transport`
//! for a connection that failed. A missing key names the variable to set.
//!
//! **Not carried yet.** Extended thinking: agentix's messages have no place for reasoning
//! blocks, so they are not sent back on the next step, and Anthropic refuses a tool loop with
//! thinking on without them; leave it off for an agent with tools. Streamed refusals from
//! OpenAI (chat and responses) end the turn in [`EmptyAnswer`](agentix::Error::EmptyAnswer),
//! and Gemini's blocked prompt, streamed, in `InvalidResponse`: genai does not read them. A
//! whole answer's refusal is `Refused` from every provider.
//!
//! **Token counts.** [`GenaiModel::token_counter`] gives the agent a counter in the model's own
//! tokens: with the `bpe` feature, OpenAI's tokenizers (o200k, cl100k; built in, nothing
//! downloaded) for OpenAI's models; otherwise an estimate the provider's reported usage corrects.

mod answer;
mod convert;
mod counter;
mod error;
mod schema;
#[cfg(feature = "bpe")]
mod tokens;
mod trace;

use std::fmt;
use std::sync::Arc;

use agentix::{
    Model,
    model::{Chunk, ModelError, ModelRequest, ModelResponse},
};
use futures::{Stream, StreamExt};
use genai::adapter::AdapterKind;
use genai::chat::{ChatOptions, ChatStreamEvent};
use genai::resolver::{AuthData, AuthResolver, Endpoint, ServiceTargetResolver};
use genai::{Client, ModelIden, ServiceTarget};

pub use counter::{Calibration, ProviderCounter};
#[cfg(feature = "bpe")]
pub use tokens::{BpeCounter, Encoding};

/// Re-exported for what the adapter does not wrap: a client of your own, chat options.
pub use genai;

use convert::{CallIds, Dialect};

/// A model of a real provider, through genai.
#[derive(Clone)]
pub struct GenaiModel {
    client: Client,
    /// The model, as genai names it (`anthropic::claude-sonnet-4-5`).
    model: String,
    kind: AdapterKind,
    options: ChatOptions,
    /// What the provider's reported usage taught the estimate of its token counts.
    calibration: Arc<Calibration>,
    /// Ids for the calls of a provider that gives them none.
    ids: Arc<CallIds>,
}

impl fmt::Debug for GenaiModel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("GenaiModel")
            .field("model", &self.model)
            .field("provider", &self.kind)
            .finish()
    }
}

/// A model name the adapter cannot place with a provider.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("no provider for model `{spec}`: name one, as in `openai:gpt-4.1-mini` ({why})")]
pub struct UnknownModel {
    /// The model as it was given.
    pub spec: String,
    /// Why it could not be placed.
    pub why: String,
}

impl GenaiModel {
    /// The model `spec` (`provider:model`, or a name genai recognizes), with its provider's
    /// default endpoint and the key from its usual environment variable.
    pub fn new(spec: &str) -> Result<Self, UnknownModel> {
        Self::builder(spec).build()
    }

    /// A model to configure: an endpoint, a key, options.
    pub fn builder(spec: &str) -> GenaiModelBuilder {
        GenaiModelBuilder {
            spec: spec.to_owned(),
            endpoint: None,
            api_key: None,
            options: ChatOptions::default(),
        }
    }

    /// The adapter that serves it, as genai names it (`openai`, `openai_resp`, `anthropic`,
    /// `gemini`…); its provider as OpenTelemetry names it is [`Model::provider`].
    pub fn adapter(&self) -> &'static str {
        self.kind.as_lower_str()
    }

    /// The environment variable the provider's key is read from when the builder was given
    /// none (`OPENAI_API_KEY`, `ANTHROPIC_API_KEY`…); `None` for a provider that needs no key,
    /// such as a local Ollama.
    pub fn key_variable(&self) -> Option<&'static str> {
        self.kind.default_key_env_name()
    }

    /// The model this adapter asks for when a request names none.
    pub fn model(&self) -> &str {
        &self.model
    }

    /// The token counter to give the agent ([`AgentBuilder::token_counter`]) for budgets in this
    /// model's tokens: OpenAI's own tokenizer for an OpenAI model (with the `bpe` feature), and
    /// otherwise a characters-per-token estimate that every call's reported input tokens
    /// correct (Anthropic and Gemini publish no local tokenizer).
    ///
    /// [`AgentBuilder::token_counter`]: agentix::AgentBuilder::token_counter
    pub fn token_counter(&self) -> ProviderCounter {
        #[cfg(feature = "bpe")]
        if let Some(encoding) = Encoding::for_model(&self.model)
            && matches!(self.kind, AdapterKind::OpenAI | AdapterKind::OpenAIResp)
        {
            return ProviderCounter::Bpe(BpeCounter::new(encoding));
        }
        ProviderCounter::Calibrated(Arc::clone(&self.calibration))
    }

    /// A call the model made, as agentix's: with an id of its own (see [`CallIds`]), and its
    /// arguments as the tool's own schema reads them (see [`agentix::model::unstrict`]).
    fn tool_call(
        &self,
        call: genai::chat::ToolCall,
        request: &ModelRequest,
        kind: AdapterKind,
    ) -> agentix::ToolCall {
        let mut call = self.ids.tool_call(call);
        if let Some(spec) = request.tools.iter().find(|spec| spec.name == call.name)
            && schema::is_strict(&spec.parameters, kind)
        {
            agentix::model::unstrict(&mut call.arguments, &spec.parameters);
        }
        call
    }

    /// The provider a request for `model` goes to (`None`: the default), as [`target`] places
    /// it.
    ///
    /// [`target`]: GenaiModel::target
    fn kind_of(&self, model: Option<&str>) -> AdapterKind {
        match model.and_then(|spec| spec.split_once(':')) {
            Some((provider, _)) => AdapterKind::from_lower_str(provider).unwrap_or(self.kind),
            None => self.kind,
        }
    }

    /// The model and provider for `request`: its own model if it names one, else the default.
    /// A bare name is a model of this adapter's provider; `provider:model` may name another.
    fn target(&self, request: &ModelRequest) -> Result<(String, AdapterKind), ModelError> {
        match &request.model {
            None => Ok((self.model.clone(), self.kind)),
            Some(spec) => match spec.split_once(':') {
                Some((provider, _)) if AdapterKind::from_lower_str(provider).is_some() => {
                    place(spec).map_err(|unknown| ModelError::Other(unknown.to_string()))
                }
                // `llama3.2:3b` is a name with a tag, not a provider.
                _ => Ok((format!("{}::{spec}", self.kind.as_lower_str()), self.kind)),
            },
        }
    }
}

/// Builds a [`GenaiModel`].
#[derive(Debug)]
#[must_use = "a model builder does nothing until `build` is called"]
pub struct GenaiModelBuilder {
    spec: String,
    endpoint: Option<String>,
    api_key: Option<String>,
    options: ChatOptions,
}

impl GenaiModelBuilder {
    /// Sends requests to `base_url` (ending in `/`, as `http://localhost:8000/v1/`) instead of
    /// the provider's own: an OpenAI-compatible server, a gateway, a local model.
    pub fn endpoint(mut self, base_url: impl Into<String>) -> Self {
        let mut url: String = base_url.into();
        if !url.ends_with('/') {
            url.push('/');
        }
        self.endpoint = Some(url);
        self
    }

    /// Uses `key` rather than the provider's environment variable.
    pub fn api_key(mut self, key: impl Into<String>) -> Self {
        self.api_key = Some(key.into());
        self
    }

    /// genai options every call starts from (headers, timeouts of the HTTP stream, extra body).
    pub fn options(mut self, options: ChatOptions) -> Self {
        self.options = options;
        self
    }

    /// The environment variable the provider's key is read from if [`api_key`](Self::api_key)
    /// gives none; `None` for a provider that needs no key. An error for a model no provider
    /// serves, as [`build`](Self::build) would give.
    pub fn key_variable(&self) -> Result<Option<&'static str>, UnknownModel> {
        Ok(place(&self.spec)?.1.default_key_env_name())
    }

    /// The model.
    pub fn build(self) -> Result<GenaiModel, UnknownModel> {
        let (model, kind) = place(&self.spec)?;
        let mut client = Client::builder();
        // The key and the endpoint are this provider's: a request that names another provider
        // goes to that provider's own endpoint with its own key, never with these.
        if let Some(key) = self.api_key {
            client = client.with_auth_resolver(AuthResolver::from_resolver_fn(
                move |model: ModelIden| -> Result<Option<AuthData>, genai::resolver::Error> {
                    Ok((model.adapter_kind == kind).then(|| AuthData::from_single(key.clone())))
                },
            ));
        }
        if let Some(url) = self.endpoint {
            client = client.with_service_target_resolver(ServiceTargetResolver::from_resolver_fn(
                move |mut target: ServiceTarget| -> Result<ServiceTarget, genai::resolver::Error> {
                    if target.model.adapter_kind == kind {
                        target.endpoint = Endpoint::from_owned(url.clone());
                    }
                    Ok(target)
                },
            ));
        }
        let client = client
            .build()
            .map_err(|error| UnknownModel { spec: self.spec.clone(), why: error.to_string() })?;
        Ok(GenaiModel {
            client,
            model,
            kind,
            options: self.options,
            calibration: Arc::default(),
            ids: Arc::default(),
        })
    }
}

/// genai's name for `spec` and its provider: `provider:model` becomes `provider::model`.
fn place(spec: &str) -> Result<(String, AdapterKind), UnknownModel> {
    let unknown = |why: String| UnknownModel { spec: spec.to_owned(), why };
    let model = match spec.split_once(':') {
        Some((provider, name)) if !name.starts_with(':') => {
            if AdapterKind::from_lower_str(provider).is_none() {
                return Err(unknown(format!("no provider is called `{provider}`")));
            }
            format!("{provider}::{name}")
        }
        _ => spec.to_owned(),
    };
    let kind = AdapterKind::from_model(&model).map_err(|error| unknown(error.to_string()))?;
    Ok((model, kind))
}

impl Model for GenaiModel {
    fn provider(&self, model: Option<&str>) -> &str {
        trace::provider_name(self.kind_of(model))
    }

    fn model_name<'a>(&'a self, model: Option<&'a str>) -> Option<&'a str> {
        Some(match model {
            // A request that names its provider goes to that provider's model.
            Some(spec) => match spec.split_once(':') {
                Some((provider, name)) if AdapterKind::from_lower_str(provider).is_some() => name,
                _ => spec,
            },
            None => self.model.split_once("::").map_or(self.model.as_str(), |(_, name)| name),
        })
    }

    async fn complete(&self, request: &ModelRequest) -> Result<ModelResponse, ModelError> {
        let (model, kind) = self.target(request)?;
        let chat = convert::chat_request(request, Dialect { kind });
        // The raw body holds what genai does not read: OpenAI's refusal, Gemini's block reason.
        let options = convert::chat_options(&self.options, &request.params, kind)
            .with_capture_raw_body(error::refusal_in_body(kind));
        let provider = kind.as_lower_str();
        trace::record_server(&self.client, &model).await;
        let response = self
            .client
            .exec_chat(model.as_str(), chat, Some(&options))
            .await
            .map_err(|error| error::model_error(provider, &error))?;
        let answered = &response.provider_model_iden.model_name;
        let (id, stop) = (response.response_id.as_deref(), response.stop_reason.as_ref());
        trace::record_answer(id, Some(answered), stop);
        let usage = convert::usage(&response.usage);
        if request.model.is_none() {
            // The estimate is of this model's tokens; another model's would skew it.
            self.calibration.observe(request, usage.input_tokens);
        }
        if let Some(refused) = error::refusal(
            provider,
            response.stop_reason.as_ref(),
            response.captured_raw_body.as_ref(),
        ) {
            return Err(refused);
        }
        let mut message = convert::assistant_message(response.content, |call| {
            self.tool_call(call, request, kind)
        });
        if answer::through_tool(request, kind) {
            answer::read(&mut message);
        }
        Ok(ModelResponse { usage, message })
    }

    fn stream(
        &self,
        request: &ModelRequest,
    ) -> impl Stream<Item = Result<Chunk, ModelError>> + Send {
        let target = self.target(request);
        let kind = target.as_ref().map_or(self.kind, |(_, kind)| *kind);
        let options = convert::chat_options(&self.options, &request.params, kind);
        let chat = target
            .as_ref()
            .ok()
            .map(|(_, kind)| convert::chat_request(request, Dialect { kind: *kind }));
        async_stream::stream! {
            let (model, kind) = match target {
                Ok(target) => target,
                Err(error) => {
                    yield Err(error);
                    return;
                }
            };
            let provider = kind.as_lower_str();
            let chat = chat.expect("made with the target");
            trace::record_server(&self.client, &model).await;
            let response = match self.client.exec_chat_stream(model.as_str(), chat, Some(&options)).await {
                Ok(response) => response,
                Err(error) => {
                    yield Err(error::model_error(provider, &error));
                    return;
                }
            };
            let mut events = response.stream;
            let mut ended = false;
            while let Some(event) = events.next().await {
                match event {
                    Ok(ChatStreamEvent::Chunk(chunk)) if !chunk.content.is_empty() => {
                        yield Ok(Chunk::Text(chunk.content));
                    }
                    Ok(ChatStreamEvent::End(end)) => {
                        let (id, stop) = (end.captured_response_id.as_deref(), end.captured_stop_reason.as_ref());
                        trace::record_answer(id, None, stop);
                        if let Some(usage) = &end.captured_usage
                            && request.model.is_none()
                        {
                            self.calibration.observe(request, convert::usage(usage).input_tokens);
                        }
                        if let Some(refused) = error::refusal(provider, end.captured_stop_reason.as_ref(), None) {
                            yield Err(refused);
                            return;
                        }
                        // Whole calls, reassembled by genai from their streamed fragments.
                        if let Some(content) = end.captured_content {
                            let calls: Vec<agentix::ToolCall> = content
                                .into_tool_calls()
                                .into_iter()
                                .map(|call| self.tool_call(call, request, kind))
                                .collect();
                            let answered = answer::through_tool(request, kind)
                                .then(|| calls.iter().find(|call| call.name == answer::FINAL_ANSWER))
                                .flatten();
                            match answered {
                                // The answer, as text: final, and the loop never sees the tool.
                                Some(call) => yield Ok(Chunk::Text(call.arguments.to_string())),
                                None => {
                                    for call in calls {
                                        yield Ok(Chunk::ToolCall(call));
                                    }
                                }
                            }
                        }
                        if let Some(usage) = &end.captured_usage {
                            yield Ok(Chunk::Usage(convert::usage(usage)));
                        }
                        ended = true;
                    }
                    Ok(_) => {}
                    Err(error) => {
                        yield Err(error::model_error(provider, &error));
                        return;
                    }
                }
            }
            if !ended {
                yield Err(ModelError::InvalidResponse {
                    provider: provider.to_owned(),
                    message: "the stream ended before the answer did".into(),
                });
            }
        }
    }
}
