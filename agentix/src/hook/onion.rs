//! What the onions are made of, as the contracts see them: a layer of each onion, the onions
//! themselves, and where a tool call's result is kept while `wrap_tool` hooks hold it. Their
//! parts (`Lifecycle`, `Single`, the onions' calls) are the pipeline's.

use std::future::Future;
use std::marker::PhantomData;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use super::{NextModel, NextTool};
use crate::message::{ToolCall, ToolResult};
use crate::model::{ModelError, ModelRequest, ModelResponse};
use crate::observe::Observer;
use crate::turn::Turn;

/// One layer of the `wrap_model` onion.
pub trait ModelLayer: Send + Sync {
    /// Whether the layer's hook handles the event (and so is traced); one that does not only
    /// calls `next`.
    const ACTIVE: bool;
    /// How long one call of the layer's hook may take, `next` included.
    const TIMEOUT: Option<Duration> = None;
    /// Whether the layer's hook has a `when` condition, asked before each call.
    const CONDITIONAL: bool = false;
    /// [`MaySkip`] for a layer that can have a `when` condition, [`NeverSkipped`] for one
    /// that cannot: its call then holds no second future of the rest of the onion.
    type Skip: Skip;
    /// Whether the hook runs on this call; the layer passes a call it skips on to `next`.
    fn applies(&self, request: &ModelRequest, turn: &Turn) -> bool {
        let _ = (request, turn);
        true
    }
    /// The hook's name.
    fn name(&self) -> &'static str;
    /// Runs the hook around `next`.
    fn wrap(
        &self,
        request: &ModelRequest,
        turn: &Turn,
        next: &impl NextModel,
    ) -> impl Future<Output = Result<ModelResponse, ModelError>> + Send;
}

/// One layer of the `wrap_tool` onion.
pub trait ToolLayer: Send + Sync {
    /// Whether the layer's hook handles the event (and so is traced); one that does not only
    /// calls `next`.
    const ACTIVE: bool;
    /// How long one call of the layer's hook may take, `next` included.
    const TIMEOUT: Option<Duration> = None;
    /// Whether the layer's hook has a `when` condition, asked before each call.
    const CONDITIONAL: bool = false;
    /// As [`ModelLayer::Skip`].
    type Skip: Skip;
    /// Whether the hook runs on this call; the layer passes a call it skips on to `next`.
    fn applies(&self, call: &ToolCall, turn: &Turn) -> bool {
        let _ = (call, turn);
        true
    }
    /// The hook's name.
    fn name(&self) -> &'static str;
    /// Runs the hook around `next`.
    fn wrap(
        &self,
        call: &ToolCall,
        turn: &Turn,
        next: &impl NextTool,
    ) -> impl Future<Output = ToolResult> + Send;
}

/// What a layer's call runs when its `when` condition skips the hook: the rest of the onion.
/// A layer's call holds either its hook's future, which holds the rest's, or the rest's own:
/// the rest's future type twice, at every layer, which is 2^n types deep to the compiler for n
/// layers. A layer that can never be skipped holds no second one.
pub trait Skip: Send + Sync + 'static {
    /// What a skipped call runs, around the rest's future `G`.
    type Next<G: Future + Send>: Future<Output = G::Output> + Send;
    /// Skips the hook: the call runs `next`.
    fn skipped<G: Future + Send>(next: G) -> Self::Next<G>;
}

/// A layer whose hook may be skipped: a `when` condition.
#[derive(Debug)]
pub enum MaySkip {}

impl Skip for MaySkip {
    type Next<G: Future + Send> = G;

    fn skipped<G: Future + Send>(next: G) -> G {
        next
    }
}

/// A layer whose hook is never skipped (a [`Hook`](super::Hook) struct's).
#[derive(Debug)]
pub enum NeverSkipped {}

impl Skip for NeverSkipped {
    type Next<G: Future + Send> = Unreachable<G::Output>;

    fn skipped<G: Future + Send>(_next: G) -> Unreachable<G::Output> {
        unreachable!("a layer without a `when` condition is never skipped")
    }
}

/// A future that cannot be: what a layer that is never skipped holds in place of the rest's.
#[derive(Debug)]
pub struct Unreachable<T>(std::convert::Infallible, PhantomData<fn() -> T>);

impl<T> Future for Unreachable<T> {
    type Output = T;

    fn poll(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<T> {
        match self.0 {}
    }
}

/// An onion grown by one layer: `Rest`'s layers outside, `Layer` innermost.
#[derive(Clone, Debug, Default)]
pub struct Wraps<Rest, Layer> {
    pub(crate) rest: Rest,
    pub(crate) layer: Layer,
}

/// The `wrap_model` onion.
pub trait ModelWraps: Send + Sync {
    /// `innermost` with every layer around it, first declared outermost.
    fn around<'a, O: Observer>(
        &'a self,
        turn: &'a Turn,
        observer: &'a O,
        innermost: impl NextModel + 'a,
    ) -> impl NextModel + 'a;
}

/// The `wrap_tool` onion.
pub trait ToolWraps: Send + Sync {
    /// Where a call's result is kept while the onion's hooks hold it.
    type Kept: Keep;

    /// `innermost` with every layer around it, first declared outermost.
    fn around<'a, O: Observer>(
        &'a self,
        turn: &'a Turn,
        observer: &'a O,
        innermost: impl NextTool + 'a,
    ) -> impl NextTool + 'a;
}

/// Where a running tool call's result is kept while `wrap_tool` hooks hold it, so that a hook
/// that panics or times out after `next` returned cannot lose what the tool did.
pub trait Keep: Default + Send + Sync {
    /// Whether it keeps anything: without `wrap_tool` hooks, what the onion returns is what the
    /// tool set returned, and there is nothing to keep.
    const KEEPS: bool = true;

    /// Keeps what the tool set returned (its output and failure: the id and name are the
    /// call's).
    fn keep(&self, result: &ToolResult);
    /// What was kept, taken out.
    fn take(&mut self) -> Option<ToolResult>;
}
