//! Ambient state that hooks and tools read from one place.

use std::any::{Any, TypeId, type_name};
use std::collections::HashMap;
use std::fmt;

/// Per-conversation ambient state — the current user, the tenant, a database handle — keyed by
/// type. Hooks and tools reach it through the [`Turn`](crate::Turn), so both read the same values.
///
/// The scope is not serialized with the conversation: it often holds handles that cannot be,
/// and a revived conversation gets the scope of the request that revives it.
#[derive(Default)]
pub struct Scope {
    values: HashMap<TypeId, Entry>,
}

struct Entry {
    type_name: &'static str,
    value: Box<dyn Any + Send + Sync>,
}

impl Scope {
    /// An empty scope.
    pub fn new() -> Self {
        Scope::default()
    }

    /// This scope with `value` added, replacing any value of the same type.
    pub fn with<T: Send + Sync + 'static>(mut self, value: T) -> Self {
        self.insert(value);
        self
    }

    /// Stores `value`, returning the value of the same type it replaces.
    pub fn insert<T: Send + Sync + 'static>(&mut self, value: T) -> Option<T> {
        let entry = Entry {
            type_name: type_name::<T>(),
            value: Box::new(value),
        };
        self.values
            .insert(TypeId::of::<T>(), entry)
            .and_then(Entry::downcast)
    }

    /// The value of type `T`.
    pub fn get<T: 'static>(&self) -> Option<&T> {
        self.values
            .get(&TypeId::of::<T>())
            .and_then(|entry| entry.value.downcast_ref())
    }

    /// The value of type `T`, mutably.
    pub fn get_mut<T: 'static>(&mut self) -> Option<&mut T> {
        self.values
            .get_mut(&TypeId::of::<T>())
            .and_then(|entry| entry.value.downcast_mut())
    }

    /// The value of type `T`, or an error naming the missing type.
    pub fn require<T: 'static>(&self) -> Result<&T, MissingScope> {
        self.get().ok_or(MissingScope {
            type_name: type_name::<T>(),
        })
    }

    /// Removes and returns the value of type `T`.
    pub fn remove<T: 'static>(&mut self) -> Option<T> {
        self.values
            .remove(&TypeId::of::<T>())
            .and_then(Entry::downcast)
    }

    /// Whether a value of type `T` is present.
    pub fn contains<T: 'static>(&self) -> bool {
        self.values.contains_key(&TypeId::of::<T>())
    }
}

impl Entry {
    fn downcast<T: 'static>(self) -> Option<T> {
        self.value.downcast().ok().map(|boxed| *boxed)
    }
}

impl fmt::Debug for Scope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set()
            .entries(self.values.values().map(|entry| entry.type_name))
            .finish()
    }
}

/// A value the scope was required to hold is not there.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("the scope holds no `{type_name}`")]
pub struct MissingScope {
    /// The missing value's type.
    pub type_name: &'static str,
}
