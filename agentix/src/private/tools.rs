//! Per-tool hooks and `#[tool]`: the tool's typed values, and the arguments struct's fields.

use crate::turn::Turn;
use ::{schemars, serde};
use std::fmt::Display;

/// A parameter that can receive `V` — the arguments, the output or the error of tool `T` — for
/// a per-tool hook.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not what a hook on `{T}`'s calls receives",
    label = "expected `&mut {V}` or `&{V}`",
    note = "a per-tool hook takes its tool's arguments (`before_tool`), output (`after_tool`) or error (`tool_error`) first: `&mut {V}` to edit it, `&{V}` to read it"
)]
pub trait ToolValueParam<'a, T, V> {
    /// Lends the value to the hook.
    fn lend(value: &'a mut V) -> Self;
}

#[diagnostic::do_not_recommend]
impl<'a, T, V> ToolValueParam<'a, T, V> for &'a mut V {
    fn lend(value: &'a mut V) -> Self {
        value
    }
}

#[diagnostic::do_not_recommend]
impl<'a, T, V> ToolValueParam<'a, T, V> for &'a V {
    fn lend(value: &'a mut V) -> Self {
        value
    }
}

/// A parameter that can receive the turn of a per-tool `after_tool` or `tool_error` hook, which
/// runs inside the tool call: a shared borrow only.
#[diagnostic::on_unimplemented(
    message = "a per-tool `after_tool` or `tool_error` hook cannot take `{Self}`",
    label = "expected `&Turn`",
    note = "the hook runs inside the tool call, where the turn is shared: take `&Turn`; a hook that changes the turn is an `after_tool` hook without `tool = ...`"
)]
pub trait InCallTurnParam<'a> {
    /// Lends the turn to the hook.
    fn lend(turn: &'a Turn) -> Self;
}

#[diagnostic::do_not_recommend]
impl<'a> InCallTurnParam<'a> for &'a Turn {
    fn lend(turn: &'a Turn) -> Self {
        turn
    }
}

/// What a `#[tool]` function's parameter must be: the model's JSON deserializes into it, a hook's
/// edit serializes back, and its JSON schema is what the model is shown.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a tool's argument",
    label = "not `Deserialize`, `Serialize` and `JsonSchema`",
    note = "a tool's arguments are read from the model's JSON and shown to it as a JSON schema: derive `Deserialize`, `Serialize` and `JsonSchema` for `{Self}` (through `agentix::serde` and `agentix::schemars`, or `agentix::prelude`)"
)]
pub trait ToolArgument: Sized {
    /// Deserializes one argument of a `#[tool]` function: the one place its type is checked.
    fn deserialize_argument<'de, D: serde::Deserializer<'de>>(
        deserializer: D,
    ) -> Result<Self, D::Error>;
}

#[diagnostic::do_not_recommend]
impl<T: serde::de::DeserializeOwned + serde::Serialize + schemars::JsonSchema> ToolArgument for T {
    fn deserialize_argument<'de, D: serde::Deserializer<'de>>(
        deserializer: D,
    ) -> Result<Self, D::Error> {
        T::deserialize(deserializer)
    }
}

/// Takes the generated arguments struct's doc comment, written for its Rust readers, out of the
/// schema the model reads; the tool's description is the function's.
pub fn undocumented_root(schema: &mut schemars::Schema) {
    schema.remove("description");
}

/// Stands for the type `T` in the method calls of [`SerializeArgument`] and [`ArgumentSchema`],
/// which resolve to their fallbacks, silently, for a type [`ToolArgument`] has already reported.
pub struct Probe<T: ?Sized>(core::marker::PhantomData<T>);

impl<T: ?Sized> Probe<T> {
    /// The probe.
    #[allow(clippy::new_without_default)]
    pub fn new() -> Self {
        Probe(core::marker::PhantomData)
    }
}

/// Serializes an argument of a type that can be one.
pub trait SerializeArgument<T: ?Sized> {
    /// Serializes `value`.
    fn serialize_argument<S: serde::Serializer>(
        &self,
        value: &T,
        serializer: S,
    ) -> Result<S::Ok, S::Error>;
}

impl<T: serde::Serialize + ?Sized> SerializeArgument<T> for &Probe<T> {
    fn serialize_argument<S: serde::Serializer>(
        &self,
        value: &T,
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        value.serialize(serializer)
    }
}

/// The fallback of [`SerializeArgument`], for a type that cannot be an argument: a crate that
/// reaches it does not compile, so it never runs.
pub trait SerializeFallback<T: ?Sized> {
    /// Fails.
    fn serialize_argument<S: serde::Serializer>(
        &self,
        value: &T,
        serializer: S,
    ) -> Result<S::Ok, S::Error>;
}

impl<T: ?Sized> SerializeFallback<T> for Probe<T> {
    fn serialize_argument<S: serde::Serializer>(
        &self,
        _value: &T,
        _serializer: S,
    ) -> Result<S::Ok, S::Error> {
        Err(serde::ser::Error::custom("not a tool argument"))
    }
}

/// The schema of an argument of a type that can be one.
pub trait ArgumentSchema {
    /// The schema.
    fn argument_schema(&self, generator: &mut schemars::SchemaGenerator) -> schemars::Schema;
}

impl<T: schemars::JsonSchema + ?Sized> ArgumentSchema for &Probe<T> {
    fn argument_schema(&self, generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        generator.subschema_for::<T>()
    }
}

/// The fallback of [`ArgumentSchema`], for a type that cannot be an argument: a crate that
/// reaches it does not compile, so it never runs.
pub trait ArgumentSchemaFallback {
    /// An empty schema.
    fn argument_schema(&self, generator: &mut schemars::SchemaGenerator) -> schemars::Schema;
}

impl<T: ?Sized> ArgumentSchemaFallback for Probe<T> {
    fn argument_schema(&self, _generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::Schema::default()
    }
}

/// What a fallible `#[tool]` function returns: `Result<T, E>`, `T` the output the model reads,
/// `E` the failure it is told.
#[diagnostic::on_unimplemented(
    message = "a tool cannot return `{Self}`",
    label = "expected `Result<T, E>` with `T: Serialize` and `E: Display`",
    note = "a tool returns `Result<T, E>` (`T` serialized for the model, `E` displayed to it) or a plain `T` that cannot fail"
)]
pub trait ToolReturn {
    /// What the model reads.
    type Output: serde::Serialize + Send + 'static;
    /// What the model is told of a failure.
    type Error: Display + Send;

    /// The call's result.
    fn into_result(self) -> Result<Self::Output, Self::Error>;
}

#[diagnostic::do_not_recommend]
impl<T: serde::Serialize + Send + 'static, E: Display + Send> ToolReturn for Result<T, E> {
    type Output = T;
    type Error = E;

    fn into_result(self) -> Result<T, E> {
        self
    }
}
