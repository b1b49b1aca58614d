//! Usage limits: tokens and cost per turn and per conversation, from what providers report and
//! a price table.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::{Arc, Mutex, PoisonError};

use agentix::event::{AfterModel, BeforeModel, Post};
use agentix::{
    AssistantMessage, Outcome, Turn, Verdict,
    context::{CharsPerToken, TokenCounter},
    conversation::TurnRef,
    hook,
    model::{ModelError, ModelRequest, ModelResponse, NextModel, Usage},
    scope::{Scope, ScopeValue},
    tool::ToolSpec,
};
use serde::{Deserialize, Serialize};

use crate::limits::Reached;

/// What one model's tokens cost, in a currency of your choosing per million tokens. Cache reads
/// and writes are priced apart (by default as input).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Price {
    input: f64,
    output: f64,
    cache_read: Option<f64>,
    cache_write: Option<f64>,
}

impl Price {
    /// `input` and `output` per million tokens.
    pub fn per_million(input: f64, output: f64) -> Self {
        Price { input, output, cache_read: None, cache_write: None }
    }

    /// Per million tokens read from the provider's prompt cache.
    pub fn cache_read(mut self, price: f64) -> Self {
        self.cache_read = Some(price);
        self
    }

    /// Per million tokens written to the provider's prompt cache.
    pub fn cache_write(mut self, price: f64) -> Self {
        self.cache_write = Some(price);
        self
    }

    /// What `usage` costs: cached tokens at their prices, the rest of the input at input's.
    pub fn of(&self, usage: &Usage) -> f64 {
        let cached = usage.cache_read_tokens.saturating_add(usage.cache_write_tokens);
        let plain = usage.input_tokens.saturating_sub(cached);
        let read = usage.cache_read_tokens;
        let written = usage.cache_write_tokens;
        (f64::from(plain) * self.input
            + f64::from(read) * self.cache_read.unwrap_or(self.input)
            + f64::from(written) * self.cache_write.unwrap_or(self.input)
            + f64::from(usage.output_tokens) * self.output)
            / 1_000_000.0
    }
}

/// The price of each model, by the name a request gives it ([`ModelRequest::model`]), and of
/// the agent's own model (a request that names none). A model the table does not price is
/// priced as the dearest it does: a limit errs on the side of stopping.
#[derive(Clone, Debug, Default)]
pub struct Prices {
    models: BTreeMap<String, Price>,
    default: Option<Price>,
}

impl Prices {
    /// An empty table.
    pub fn new() -> Self {
        Prices::default()
    }

    /// The price of the model a request names `name` (`gpt-4o`, `anthropic:claude-sonnet-4-5`).
    pub fn model(mut self, name: impl Into<String>, price: Price) -> Self {
        self.models.insert(name.into(), price);
        self
    }

    /// The price of the agent's own model: what a request that names no model goes to.
    pub fn default_model(mut self, price: Price) -> Self {
        self.default = Some(price);
        self
    }

    /// The price of the model `name` names (`None`: the agent's own).
    pub fn of(&self, name: Option<&str>) -> Price {
        let named = match name {
            Some(name) => self.models.get(name),
            None => self.default.as_ref(),
        };
        named.copied().unwrap_or_else(|| self.dearest())
    }

    fn dearest(&self) -> Price {
        let all = self.models.values().chain(&self.default);
        all.copied()
            .max_by(|a, b| (a.input + a.output).total_cmp(&(b.input + b.output)))
            .unwrap_or(Price::per_million(0.0, 0.0))
    }
}

/// The most a turn (or a conversation) may spend; what is `None` is not limited.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Budget {
    input_tokens: Option<u64>,
    output_tokens: Option<u64>,
    total_tokens: Option<u64>,
    cost: Option<f64>,
}

impl Budget {
    /// Nothing limited yet.
    pub fn new() -> Self {
        Budget::default()
    }

    /// At most `tokens` read (cached or not).
    pub fn input_tokens(mut self, tokens: u64) -> Self {
        self.input_tokens = Some(tokens);
        self
    }

    /// At most `tokens` written.
    pub fn output_tokens(mut self, tokens: u64) -> Self {
        self.output_tokens = Some(tokens);
        self
    }

    /// At most `tokens` read and written together.
    pub fn total_tokens(mut self, tokens: u64) -> Self {
        self.total_tokens = Some(tokens);
        self
    }

    /// At most `cost`, in the price table's currency ([`Prices`], given to [`UsageLimit::new`]).
    pub fn cost(mut self, cost: f64) -> Self {
        self.cost = Some(cost);
        self
    }

    /// What `spent`, and a call that reads `input` more tokens at `price`, would pass: its
    /// description.
    fn passed_by(&self, spent: &Spending, input: u64, price: f64) -> Option<String> {
        let read = spent.input_tokens.saturating_add(input);
        if let Some(most) = self.input_tokens
            && (read > most || spent.input_tokens >= most)
        {
            return Some(format!("{most} input tokens ({} read)", spent.input_tokens));
        }
        if let Some(most) = self.output_tokens
            && spent.output_tokens >= most
        {
            return Some(format!("{most} output tokens ({} written)", spent.output_tokens));
        }
        if let Some(most) = self.total_tokens
            && (read.saturating_add(spent.output_tokens) > most || spent.total_tokens() >= most)
        {
            return Some(format!("{most} tokens ({} so far)", spent.total_tokens()));
        }
        if let Some(most) = self.cost
            && (spent.cost + input as f64 * price / 1_000_000.0 > most || spent.cost >= most)
        {
            return Some(format!("a cost of {most} ({:.4} so far)", spent.cost));
        }
        None
    }
}

/// What was spent: tokens as providers reported them, and their cost by the price table.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Spending {
    /// Tokens read, cached or not.
    pub input_tokens: u64,
    /// Tokens written.
    pub output_tokens: u64,
    /// Of the tokens read, those read from a prompt cache.
    pub cache_read_tokens: u64,
    /// Of the tokens read, those written to a prompt cache.
    #[serde(default)]
    pub cache_write_tokens: u64,
    /// What they cost.
    pub cost: f64,
}

impl Spending {
    fn add(&mut self, usage: &Usage, cost: f64) {
        self.input_tokens = self.input_tokens.saturating_add(usage.input_tokens.into());
        self.output_tokens = self.output_tokens.saturating_add(usage.output_tokens.into());
        let read = usage.cache_read_tokens.into();
        self.cache_read_tokens = self.cache_read_tokens.saturating_add(read);
        let written = usage.cache_write_tokens.into();
        self.cache_write_tokens = self.cache_write_tokens.saturating_add(written);
        self.cost += cost;
    }

    fn join(&mut self, other: &Spending) {
        self.input_tokens = self.input_tokens.saturating_add(other.input_tokens);
        self.output_tokens = self.output_tokens.saturating_add(other.output_tokens);
        self.cache_read_tokens = self.cache_read_tokens.saturating_add(other.cache_read_tokens);
        self.cache_write_tokens = self.cache_write_tokens.saturating_add(other.cache_write_tokens);
        self.cost += other.cost;
    }

    fn total_tokens(&self) -> u64 {
        self.input_tokens.saturating_add(self.output_tokens)
    }
}

/// What the limit has counted, in the conversation's scope: durable with it.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
struct Spent {
    /// The turn `this_turn` is of.
    turn: TurnRef,
    this_turn: Spending,
    /// Every turn's, this one's included.
    conversation: Spending,
}

impl ScopeValue for Spent {
    const KEY: &'static str = "agentix_hooks.usage";
}

/// What calls answered since the spending was last brought into the scope: the `wrap_model`
/// layer, which holds only the turn, notes each call here (a resource of the conversation's
/// scope, not serialized).
#[derive(Debug, Default)]
struct Meter(Mutex<Spending>);

impl Meter {
    fn take(&self) -> Spending {
        std::mem::take(&mut *self.0.lock().unwrap_or_else(PoisonError::into_inner))
    }
}

/// Limits the tokens and the cost of a turn and of a conversation (a session's tasks share its
/// conversation): from the usage each model call reports, priced by a table of [`Prices`]
/// (cache reads and writes apart). It is checked before each model call the loop makes, with
/// what was spent so far and the tokens the request is about to read (estimated by a
/// [`TokenCounter`]: [`CharsPerToken`] unless told), so a call that would pass a limit is not
/// made; past a limit, the turn ends with an error naming it, or with an answer of your
/// choosing ([`Reached`]). Every call the model answers counts — a `wrap_model` hook's
/// retries and fallbacks too, each priced by the model it named (register the limit after
/// them: inside, it sees each call). Add one per agent; a sub-agent's calls count against its
/// own.
///
/// ```
/// use agentix_hooks::{Budget, Price, Prices, UsageLimit};
///
/// let prices = Prices::new()
///     .default_model(Price::per_million(3.0, 15.0).cache_read(0.3).cache_write(3.75))
///     .model("gpt-4o-mini", Price::per_million(0.15, 0.6));
/// let limit = UsageLimit::new(prices)
///     .per_turn(Budget::new().input_tokens(200_000).cost(0.50))
///     .per_conversation(Budget::new().cost(5.0));
/// # drop(limit);
/// ```
#[derive(Clone)]
pub struct UsageLimit {
    prices: Prices,
    per_turn: Budget,
    per_conversation: Budget,
    counter: Arc<dyn TokenCounter>,
    /// The last tool list estimated, held (so its address is not reused) with its tokens: an
    /// agent's list is the same `Arc` from one request to the next, its schemas counted once.
    tools_counted: Arc<Mutex<Option<Counted>>>,
    reached: Reached,
}

/// A tool list and its tokens.
type Counted = (Arc<[ToolSpec]>, u64);

impl UsageLimit {
    /// The hook's name, in errors and traces.
    pub const NAME: &'static str = "usage_limit";

    /// Prices calls by `prices`; nothing limited yet.
    pub fn new(prices: Prices) -> Self {
        UsageLimit {
            prices,
            per_turn: Budget::new(),
            per_conversation: Budget::new(),
            counter: Arc::new(CharsPerToken::default()),
            tools_counted: Arc::default(),
            reached: Reached::Error,
        }
    }

    /// What one turn may spend.
    pub fn per_turn(mut self, budget: Budget) -> Self {
        self.per_turn = budget;
        self
    }

    /// What the conversation may spend, all its turns together.
    pub fn per_conversation(mut self, budget: Budget) -> Self {
        self.per_conversation = budget;
        self
    }

    /// Estimates the tokens a request reads with `counter` (the agent's, for the same figures).
    pub fn estimate_with(mut self, counter: impl TokenCounter + 'static) -> Self {
        self.counter = Arc::new(counter);
        self.tools_counted = Arc::default();
        self
    }

    /// How a reached limit ends the turn: with an error by default.
    pub fn when_reached(mut self, reached: Reached) -> Self {
        self.reached = reached;
        self
    }

    /// What a conversation has spent, as the limit counted it (its turn in flight included up
    /// to its last answer); `None` if the limit never counted a call of it.
    pub fn spent(scope: &Scope) -> Option<Spending> {
        scope.get::<Spent>().map(|spent| spent.conversation)
    }

    /// The tokens `request` reads, as estimated.
    fn estimate(&self, request: &ModelRequest) -> u64 {
        let counter = &*self.counter;
        let system = request.system.as_deref().map_or(0, |system| counter.count(system));
        let messages: usize = request.messages.iter().map(|m| counter.count_message(m)).sum();
        let mut counted = self.tools_counted.lock().unwrap_or_else(PoisonError::into_inner);
        let tools = match &*counted {
            Some((list, tokens)) if Arc::ptr_eq(list, &request.tools) => *tokens,
            _ => {
                let tokens: usize = request.tools.iter().map(|spec| counter.count_tool(spec)).sum();
                let tokens = u64::try_from(tokens).unwrap_or(u64::MAX);
                *counted = Some((Arc::clone(&request.tools), tokens));
                tokens
            }
        };
        let text = u64::try_from(system + messages).unwrap_or(u64::MAX);
        text.saturating_add(tools)
    }
}

impl fmt::Debug for UsageLimit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("UsageLimit")
            .field("prices", &self.prices)
            .field("per_turn", &self.per_turn)
            .field("per_conversation", &self.per_conversation)
            .field("reached", &self.reached)
            .finish_non_exhaustive()
    }
}

/// The spending as it stands: the meter's calls brought into the scope, a new turn's count
/// begun.
fn settle(turn: &mut Turn) -> &mut Spent {
    let at = turn.turn_ref();
    let scope = turn.scope_mut();
    let unsettled = match scope.resource::<Meter>() {
        Some(meter) => meter.take(),
        None => {
            scope.insert_resource(Meter::default());
            Spending::default()
        }
    };
    if scope.get::<Spent>().is_none() {
        scope.insert(Spent { turn: at, ..Spent::default() });
    }
    let spent = scope.get_mut::<Spent>().expect("inserted above");
    // Calls of a turn that ended without settling them (dropped) count for the conversation.
    spent.conversation.join(&unsettled);
    if spent.turn == at {
        spent.this_turn.join(&unsettled);
    } else {
        spent.turn = at;
        spent.this_turn = Spending::default();
    }
    spent
}

#[hook]
impl agentix::Hook for UsageLimit {
    fn name(&self) -> &'static str {
        Self::NAME
    }

    async fn before_model(
        &self,
        request: &mut ModelRequest,
        turn: &mut Turn,
    ) -> Verdict<BeforeModel> {
        let input = self.estimate(request);
        let price = self.prices.of(request.model.as_deref()).input;
        let spent = settle(turn);
        let passed = match self.per_turn.passed_by(&spent.this_turn, input, price) {
            Some(limit) => Some(format!("the turn reached its limit of {limit}")),
            None => self
                .per_conversation
                .passed_by(&spent.conversation, input, price)
                .map(|limit| format!("the conversation reached its limit of {limit}")),
        };
        match passed {
            None => Verdict::Continue,
            Some(why) => match &self.reached {
                Reached::Answer(text) => Verdict::stop(AssistantMessage::text(text.clone())),
                _ => Verdict::halt(why),
            },
        }
    }

    async fn wrap_model(
        &self,
        request: &ModelRequest,
        turn: &Turn,
        next: &impl NextModel,
    ) -> Result<ModelResponse, ModelError> {
        let answered = next.call(request).await;
        if let Ok(response) = &answered
            && let Some(meter) = turn.scope().resource::<Meter>()
        {
            let cost = self.prices.of(request.model.as_deref()).of(&response.usage);
            let mut unsettled = meter.0.lock().unwrap_or_else(PoisonError::into_inner);
            unsettled.add(&response.usage, cost);
        }
        answered
    }

    async fn after_model(
        &self,
        _message: &mut AssistantMessage,
        turn: &mut Turn,
    ) -> Verdict<AfterModel> {
        settle(turn);
        Verdict::Continue
    }

    async fn post(&self, _outcome: &Outcome, turn: &mut Turn) -> Verdict<Post> {
        settle(turn);
        Verdict::Continue
    }
}
