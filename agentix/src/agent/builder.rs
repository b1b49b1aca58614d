//! The builder, growing an agent's type with each tool and hook.

use std::sync::Arc;

use crate::approval::{Approver, NoApprover};
use crate::context::{AuditSink, Counter, Summarizer, TokenCounter};
use crate::model::{Model, ModelParams, OutputType};
use crate::pipeline::{
    Answering, Hooks, Pipeline, Policy, ReadFrom, Text, Typed, Validator,
    node::{Chain, Governs, HasTool, ModelWraps, Register, StartsUnder, ToolWraps, Within},
};
use crate::tool::{Arguments, IntoTool, NoTools, ToolSet, Toolbox};
use crate::transform::StreamTransformer;

use super::delegate::{AgentTool, Delegates, Handoff, Handoffs, SubAgent, SubAgents};
use super::{Agent, Settings};

/// Builds an [`Agent`], growing its type with each tool and hook.
#[must_use = "an agent builder does nothing until `build` is called"]
pub struct AgentBuilder<M, T = NoTools, P = Hooks, A = NoApprover, X = ()> {
    model: M,
    tools: T,
    hooks: P,
    approver: A,
    transformer: X,
    settings: Settings,
}

impl<M: Model> Agent<M> {
    /// Starts building an agent around `model`.
    pub fn builder(model: M) -> AgentBuilder<M> {
        AgentBuilder {
            model,
            tools: NoTools,
            hooks: Hooks::default(),
            approver: NoApprover,
            transformer: (),
            settings: Settings::default(),
        }
    }
}

impl<M, T, P, A, X> AgentBuilder<M, T, P, A, X> {
    /// Names the agent: its turns' spans are `invoke_agent {name}`, with `gen_ai.agent.name`
    /// (see [`trace`](crate::trace)).
    pub fn name(mut self, name: impl Into<Arc<str>>) -> Self {
        self.settings.name = Some(name.into());
        self
    }

    /// Sets the system prompt.
    pub fn system(mut self, prompt: impl Into<Arc<str>>) -> Self {
        self.settings.system = Some(prompt.into());
        self
    }

    /// Names the model to request, for adapters that serve several.
    pub fn model_name(mut self, name: impl Into<String>) -> Self {
        self.settings.model_name = Some(name.into());
        self
    }

    /// Sets the sampling parameters.
    pub fn params(mut self, params: ModelParams) -> Self {
        self.settings.params = params;
        self
    }

    /// Counts tokens with `counter` (for the context budget and the injection reserve) instead
    /// of the [`CharsPerToken`](crate::context::CharsPerToken) estimate.
    pub fn token_counter(mut self, counter: impl TokenCounter + 'static) -> Self {
        self.settings.counter = Counter::new(counter);
        self
    }

    /// Summarizes the turns compaction drops, instead of dropping them silently.
    pub fn summarizer(mut self, summarizer: impl Summarizer + 'static) -> Self {
        self.settings.summarizer = Some(Arc::new(summarizer));
        self
    }

    /// Records every model request, exactly as sent, in `audit`.
    pub fn audit(mut self, audit: Arc<dyn AuditSink>) -> Self {
        self.settings.audit = Some(audit);
        self
    }

    /// Adds a tool: a `#[tool]` function (`.tool(get_weather)`) or a [`Tool`](crate::Tool) value.
    /// A second tool of a name the agent has does not build: the model could not tell them apart.
    pub fn tool<U, Via>(self, tool: U) -> AgentBuilder<M, Toolbox<T, U::Tool>, P, A, X>
    where
        T: ToolSet,
        U: IntoTool<Via>,
    {
        let () = Toolbox::<T, U::Tool>::ONE_TOOL_A_NAME;
        AgentBuilder {
            tools: Toolbox::new(self.tools, tool.into_tool()),
            model: self.model,
            hooks: self.hooks,
            approver: self.approver,
            settings: self.settings,
            transformer: self.transformer,
        }
    }

    /// Replaces the tool set with a hand-written [`ToolSet`] (for tools known only at run time);
    /// [`tool`](AgentBuilder::tool) adds typed tools to the set instead. It comes before any
    /// per-tool hook: those were checked against the set it replaces, so an agent that has one
    /// already does not compile.
    pub fn tools<U: ToolSet>(self, tools: U) -> AgentBuilder<M, U, P, A, X>
    where
        P: Pipeline,
    {
        let () = NoPerToolHooks::<P>::YET;
        AgentBuilder {
            tools,
            model: self.model,
            hooks: self.hooks,
            approver: self.approver,
            settings: self.settings,
            transformer: self.transformer,
        }
    }

    /// Adds a hook after those already added: a `#[hook]` function, a [`Hook`](crate::Hook), or
    /// a hook of [`on`](crate::on). Hooks of one event run in the order they are added; wrap
    /// hooks nest with the first added outermost; consecutive parallel `pre` hooks run together.
    ///
    /// A per-tool hook (`#[hook(before_tool, tool = get_weather)]`) is checked here: the agent
    /// must already have its tool, so add tools before the hooks that name them; an agent
    /// without it does not compile. So is a typed `before_final` hook (one that takes `&T` or `&mut T`):
    /// the agent must answer with `T` already ([`output`](AgentBuilder::output)).
    ///
    /// `Event` is found from the one hook trait `H` implements; a type that implements two
    /// [`on`](crate::on) traits names it: `.hook::<_, event::Pre, _>(timer)`.
    // The `Register` bound inline: a type that is not a hook reads it in two lines, not four.
    pub fn hook<H: Register<Event, P>, Event, Index>(
        self,
        hook: H,
    ) -> AgentBuilder<M, T, H::Output, A, X>
    where
        T: HasTool<H::Tool, Index>,
        P: Pipeline,
        H::Reads: ReadFrom<P::Answering>,
    {
        AgentBuilder {
            hooks: hook.register(self.hooks),
            model: self.model,
            tools: self.tools,
            approver: self.approver,
            settings: self.settings,
            transformer: self.transformer,
        }
    }

    /// Adds a sub-agent the model may call as a tool ([`AgentTool`]): its turn runs inside the
    /// call, as the parent turn's work. A parent built under a [`Policy`]
    /// ([`policy`](AgentBuilder::policy)) takes only a sub-agent built under the same one — the
    /// policy's hooks then fire on the child's model and tool calls too — and one built
    /// without it does not compile here.
    ///
    /// # Panics
    ///
    /// If the agent already has a tool of the sub-agent's name: the model could not tell them
    /// apart.
    // The policy's bound beside the name: an error's note quotes one line.
    #[rustfmt::skip]
    pub fn sub_agent<R: SubAgent<Policy: Within<<P::Chain as Governs>::Policy>>, I>(
        self,
        agent: AgentTool<R, I>,
    ) -> AgentBuilder<M, SubAgents<T, R, I>, P, A, X>
    where
        T: ToolSet,
        I: Arguments + 'static,
        P: Pipeline<Chain: Governs>,
    {
        let mut specs = Vec::new();
        self.tools.specs(&mut specs);
        assert!(
            !specs.iter().any(|spec| spec.name == agent.name()),
            "the agent already has a tool named `{}`: a sub-agent needs a name of its own",
            agent.name()
        );
        AgentBuilder {
            tools: Delegates::new(self.tools, agent),
            model: self.model,
            hooks: self.hooks,
            approver: self.approver,
            settings: self.settings,
            transformer: self.transformer,
        }
    }

    /// Adds an agent the model may hand the rest of its turn to ([`Handoff`]), through the
    /// tool `transfer_to_<name>`: that agent answers the user, seeing the conversation as the
    /// handoff's [`History`](crate::delegate::History) says, and its answer is the turn's, through this
    /// agent's `after_model` and `before_final` hooks. Checked against the agent's policy as
    /// [`sub_agent`](AgentBuilder::sub_agent) is.
    ///
    /// # Panics
    ///
    /// If the agent already has a tool of the handoff's name.
    #[rustfmt::skip]
    pub fn handoff<R: SubAgent<Policy: Within<<P::Chain as Governs>::Policy>>>(self, handoff: Handoff<R>) -> AgentBuilder<M, Handoffs<T, R>, P, A, X>
    where
        T: ToolSet,
        P: Pipeline<Chain: Governs>,
    {
        let mut specs = Vec::new();
        self.tools.specs(&mut specs);
        assert!(
            !specs.iter().any(|spec| spec.name == handoff.tool_name()),
            "the agent already has a tool named `{}`: a handoff needs a name of its own",
            handoff.tool_name()
        );
        AgentBuilder {
            tools: Delegates::new(self.tools, handoff),
            model: self.model,
            hooks: self.hooks,
            approver: self.approver,
            settings: self.settings,
            transformer: self.transformer,
        }
    }

    /// Adds a stream transformer after those already added: the model's text passes through
    /// each, in order, as it streams (and whole, when it does not), before any hook sees it.
    pub fn transformer<Y: StreamTransformer>(
        self,
        transformer: Y,
    ) -> AgentBuilder<M, T, P, A, (X, Y)> {
        AgentBuilder {
            transformer: (self.transformer, transformer),
            model: self.model,
            tools: self.tools,
            hooks: self.hooks,
            approver: self.approver,
            settings: self.settings,
        }
    }

    /// Sets who decides escalated tool calls. Without one, every escalation is rejected.
    pub fn approver<B: Approver>(self, approver: B) -> AgentBuilder<M, T, P, B, X> {
        AgentBuilder {
            approver,
            model: self.model,
            tools: self.tools,
            hooks: self.hooks,
            settings: self.settings,
            transformer: self.transformer,
        }
    }

    /// Finishes the agent.
    ///
    /// # Panics
    ///
    /// If two of its tools have one name (a typed tool and a sub-agent, say): the model could
    /// not tell them apart.
    pub fn build(self) -> Agent<M, T, P, A, X>
    where
        T: ToolSet,
        P: Pipeline,
    {
        let mut specs = Vec::new();
        self.tools.specs(&mut specs);
        if let Some(name) = duplicate_name(&specs) {
            panic!("the agent has two tools named `{name}`: the model could not tell them apart");
        }
        let tool_names = specs.iter().map(|spec| spec.name.clone()).collect();
        // The system prompt and the specs never change after build (unless the set says its
        // list can: then each step counts its own): counting them once keeps their tokenizing
        // (and the schemas' JSON serialization) out of every request.
        let counter = &*self.settings.counter;
        let system_tokens =
            self.settings.system.as_deref().map_or(0, |system| counter.count(system));
        let fixed_tokens =
            system_tokens + specs.iter().map(|spec| counter.count_tool(spec)).sum::<usize>();
        let mut settings = self.settings;
        // A typed agent's answer has its output type's schema, whatever `params` said.
        if let Some(output) = self.hooks.answering().output() {
            settings.params.output = Some(output);
        }
        Agent {
            model: self.model,
            tools: self.tools,
            hooks: self.hooks,
            approver: self.approver,
            settings,
            transformer: self.transformer,
            tool_specs: specs.into(),
            tool_names,
            fixed_tokens,
            system_tokens,
        }
    }
}

impl<M, A, X> AgentBuilder<M, NoTools, Hooks, A, X> {
    /// Builds the agent under `policy`: it runs the policy's hooks before the ones added to it
    /// after, and its type says so — a parent under the policy takes it as a sub-agent
    /// ([`sub_agent`](AgentBuilder::sub_agent)), and one built without it does not compile
    /// there. Called first, before any tool or hook: a sub-agent added before it would not be
    /// checked against it.
    pub fn policy<C, Mw, Tw>(
        self,
        policy: &Policy<Hooks<C, Mw, Tw, Text>>,
    ) -> AgentBuilder<M, NoTools, StartsUnder<C, Mw, Tw>, A, X>
    where
        C: Chain + Clone,
        Mw: ModelWraps + Clone,
        Tw: ToolWraps + Clone,
    {
        AgentBuilder {
            hooks: policy.start(),
            model: self.model,
            tools: self.tools,
            approver: self.approver,
            settings: self.settings,
            transformer: self.transformer,
        }
    }
}

impl<M, T, C, Mw, Tw, A, X> AgentBuilder<M, T, Hooks<C, Mw, Tw, Text>, A, X> {
    /// Makes the agent answer with a value of `O` rather than text: requests carry `O`'s JSON
    /// schema (`ModelParams::output`, which a provider holds the model to where it can), the
    /// final answer is read as `O` — tools are still called on the way — and an answer that
    /// does not read (or that a [`validate`](AgentBuilder::validate) check refuses) is sent
    /// back with why, counted against `max_retries`; past them the turn fails with
    /// [`Error::InvalidAnswer`](crate::Error::InvalidAnswer). A turn's
    /// [`answer`](crate::TurnRun::answer) is the `T`; the log keeps it as the model's JSON.
    ///
    /// ```
    /// use agentix::{Agent, Conversation, ScriptedModel};
    /// use agentix::prelude::{Deserialize, JsonSchema, Serialize};
    ///
    /// #[derive(Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
    /// #[serde(crate = "agentix::serde")]
    /// #[schemars(crate = "agentix::schemars")]
    /// struct City {
    ///     name: String,
    ///     population: u64,
    /// }
    ///
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// let model = ScriptedModel::new()
    ///     .text("Oslo has about 700 000 people.")
    ///     .text(r#"{"name": "Oslo", "population": 709000}"#);
    /// let agent = Agent::builder(model).output::<City>().build();
    /// let city = agent.turn(&mut Conversation::new(), "Tell me about Oslo.").answer().await?;
    /// assert_eq!(city, City { name: "Oslo".into(), population: 709_000 });
    /// # Ok::<_, agentix::Error>(())
    /// # }).unwrap();
    /// ```
    // The builder's type spelled out: an alias would hide which part changes.
    #[allow(clippy::type_complexity)]
    pub fn output<O: OutputType>(self) -> AgentBuilder<M, T, Hooks<C, Mw, Tw, Typed<O>>, A, X> {
        AgentBuilder {
            hooks: self.hooks.typed::<O>(),
            model: self.model,
            tools: self.tools,
            approver: self.approver,
            settings: self.settings,
            transformer: self.transformer,
        }
    }
}

impl<M, T, C, Mw, Tw, A, X, O> AgentBuilder<M, T, Hooks<C, Mw, Tw, Typed<O>>, A, X> {
    /// Adds a check of the typed answer beyond its type (a total that adds up, a date in the
    /// future): `Err(why)` sends the answer back to the model with `why`, as an answer that
    /// does not read is.
    pub fn validate(mut self, validator: Validator<O>) -> Self {
        self.hooks = self.hooks.validate(validator);
        self
    }
}

/// A name two of `specs` share, if any.
fn duplicate_name(specs: &[crate::tool::ToolSpec]) -> Option<&str> {
    let mut names: Vec<&str> = specs.iter().map(|spec| spec.name.as_str()).collect();
    names.sort_unstable();
    names.windows(2).find(|pair| pair[0] == pair[1]).map(|pair| pair[0])
}

/// Fails to compile where [`AgentBuilder::tools`] would replace the tool set a per-tool hook
/// was checked against: the hook would then never run.
struct NoPerToolHooks<P>(std::marker::PhantomData<P>);

impl<P: Pipeline> NoPerToolHooks<P> {
    #[expect(clippy::unnecessary_literal_unwrap, reason = "a message with no panic! quoted")]
    const YET: () = if <P::Chain as Chain>::PER_TOOL || <P::Chain as Chain>::OUTPUT_HOOKS {
        // `expect` rather than `panic!`: the error then quotes no macro invocation.
        None.expect("call `.tools(...)` before adding per-tool hooks: it replaces their tools")
    };
}

impl<M, T, P, A, X> std::fmt::Debug for AgentBuilder<M, T, P, A, X> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AgentBuilder")
            .field("system", &self.settings.system)
            .finish_non_exhaustive()
    }
}
