//! Ambient state that hooks and tools read from one place.

use std::any::{Any, TypeId, type_name};
use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::OnceLock;

use serde::de::DeserializeOwned;
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A value kept in a [`Scope`] as part of the conversation's durable state: it is serialized with
/// the conversation and comes back when the conversation is revived.
///
/// ```
/// use agentix::scope::{Scope, ScopeValue};
/// use serde::{Deserialize, Serialize};
///
/// #[derive(Serialize, Deserialize)]
/// struct CurrentUser {
///     id: u64,
/// }
///
/// impl ScopeValue for CurrentUser {
///     const KEY: &'static str = "current_user";
/// }
///
/// let scope = Scope::new().with(CurrentUser { id: 7 });
/// let json = serde_json::to_string(&scope).unwrap();
/// let revived: Scope = serde_json::from_str(&json).unwrap();
/// assert_eq!(revived.get::<CurrentUser>().unwrap().id, 7);
/// ```
pub trait ScopeValue: Serialize + DeserializeOwned + Send + Sync + 'static {
    /// The name it is serialized under. Keep it stable: a revived conversation finds the value
    /// by it.
    const KEY: &'static str;
}

/// Per-conversation ambient state — the current user, the tenant, a database handle — keyed by
/// type. Hooks and tools reach it through the [`Turn`](crate::Turn), so both read the same values.
///
/// It holds two kinds of thing. *Values* ([`ScopeValue`]s) are durable: they serialize with the
/// conversation. *Resources* (any `Send + Sync` type: a connection pool, a client) are supplied by
/// the application and are not serialized; a revived conversation gets them again from whoever
/// revives it.
#[derive(Default)]
pub struct Scope {
    /// `None` until something is stored: every conversation has a scope, and most hold nothing,
    /// so an empty one costs nothing to make, move or drop.
    maps: Option<Box<Maps>>,
}

#[derive(Default)]
struct Maps {
    values: TypeMap<Value>,
    revived: BTreeMap<String, Revived>,
    resources: TypeMap<Resource>,
}

/// What an empty scope reads from.
static EMPTY: Maps = Maps {
    values: HashMap::with_hasher(BuildHasherDefault::new()),
    revived: BTreeMap::new(),
    resources: HashMap::with_hasher(BuildHasherDefault::new()),
};

/// A map keyed by type. A `TypeId` is already a hash, so the map needs no random state.
type TypeMap<V> = HashMap<TypeId, V, BuildHasherDefault<TypeIdHasher>>;

/// Hashes a `TypeId` as the hash it already is.
#[derive(Default)]
struct TypeIdHasher(u64);

impl Hasher for TypeIdHasher {
    fn write(&mut self, bytes: &[u8]) {
        // `TypeId` writes whole integers; anything else still hashes, byte by byte (FNV-1a).
        for byte in bytes {
            self.0 = (self.0 ^ u64::from(*byte)).wrapping_mul(0x0100_0000_01b3);
        }
    }

    fn write_u64(&mut self, value: u64) {
        self.0 ^= value;
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

type Erased = Box<dyn Any + Send + Sync>;

struct Value {
    key: &'static str,
    value: Erased,
    to_json: fn(&Erased) -> Result<serde_json::Value, serde_json::Error>,
}

/// A value read back from a serialized scope, typed on first access.
struct Revived {
    json: serde_json::Value,
    typed: OnceLock<Value>,
}

struct Resource {
    type_name: &'static str,
    value: Erased,
}

impl Value {
    fn new<T: ScopeValue>(value: T) -> Self {
        Value { key: T::KEY, value: Box::new(value), to_json: to_json::<T> }
    }
}

fn to_json<T: ScopeValue>(value: &Erased) -> Result<serde_json::Value, serde_json::Error> {
    let value = value.downcast_ref::<T>().expect("a scope value is stored under its own type");
    serde_json::to_value(value)
}

impl Scope {
    /// An empty scope.
    pub fn new() -> Self {
        Scope::default()
    }

    /// This scope with `value` added.
    pub fn with<T: ScopeValue>(mut self, value: T) -> Self {
        self.insert(value);
        self
    }

    /// This scope with `resource` added.
    pub fn with_resource<T: Send + Sync + 'static>(mut self, resource: T) -> Self {
        self.insert_resource(resource);
        self
    }

    /// Stores a durable value, replacing any value of the same type.
    ///
    /// # Panics
    ///
    /// If another value type already uses `T::KEY`: the two would overwrite each other when the
    /// conversation is serialized.
    pub fn insert<T: ScopeValue>(&mut self, value: T) {
        let maps = self.maps_mut();
        let clash =
            maps.values.iter().any(|(id, stored)| stored.key == T::KEY && *id != TypeId::of::<T>());
        assert!(
            !clash,
            "scope key `{}` is used by `{}` and by another type",
            T::KEY,
            type_name::<T>()
        );
        maps.revived.remove(T::KEY);
        maps.values.insert(TypeId::of::<T>(), Value::new(value));
    }

    /// The durable value of type `T`. A value read back from a serialized conversation is
    /// deserialized on first access; if it no longer deserializes, this is `None` and
    /// [`require`](Scope::require) says why.
    pub fn get<T: ScopeValue>(&self) -> Option<&T> {
        self.require().ok()
    }

    /// The durable value of type `T`, or an error naming what is missing or malformed.
    pub fn require<T: ScopeValue>(&self) -> Result<&T, ScopeError> {
        let maps = self.maps();
        if let Some(stored) = maps.values.get(&TypeId::of::<T>()) {
            return Ok(stored.value.downcast_ref().expect("stored under its own type"));
        }
        let revived =
            maps.revived.get(T::KEY).ok_or(ScopeError::Missing { name: type_name::<T>() })?;
        if revived.typed.get().is_none() {
            let value: T = serde_json::from_value(revived.json.clone()).map_err(|error| {
                ScopeError::Malformed { key: T::KEY, message: error.to_string() }
            })?;
            let _ = revived.typed.set(Value::new(value));
        }
        let typed = revived.typed.get().expect("set above");
        typed.value.downcast_ref().ok_or(ScopeError::Missing { name: type_name::<T>() })
    }

    /// The durable value of type `T`, mutably; `None` if it is missing or, read back from a
    /// serialized conversation, no longer deserializes — it then stays stored as it was, and
    /// [`require_mut`](Scope::require_mut) says why.
    pub fn get_mut<T: ScopeValue>(&mut self) -> Option<&mut T> {
        self.require_mut().ok()
    }

    /// The durable value of type `T`, mutably, or an error naming what is missing or malformed.
    /// A malformed value is left as it was stored, never dropped.
    pub fn require_mut<T: ScopeValue>(&mut self) -> Result<&mut T, ScopeError> {
        let missing = ScopeError::Missing { name: type_name::<T>() };
        let maps = self.maps.as_deref_mut().ok_or(missing.clone())?;
        if !maps.values.contains_key(&TypeId::of::<T>()) {
            let value: T = maps.take_revived()?.ok_or(missing.clone())?;
            maps.values.insert(TypeId::of::<T>(), Value::new(value));
        }
        maps.values
            .get_mut(&TypeId::of::<T>())
            .and_then(|stored| stored.value.downcast_mut())
            .ok_or(missing)
    }

    /// Removes and returns the durable value of type `T`. A value read back from a serialized
    /// conversation that no longer deserializes is not removed: this is `None`, and
    /// [`require`](Scope::require) says why.
    pub fn remove<T: ScopeValue>(&mut self) -> Option<T> {
        let maps = self.maps.as_deref_mut()?;
        match maps.values.remove(&TypeId::of::<T>()) {
            Some(stored) => stored.value.downcast().ok().map(|boxed| *boxed),
            None => maps.take_revived().ok().flatten(),
        }
    }

    /// Stores a resource (not serialized), replacing any resource of the same type.
    pub fn insert_resource<T: Send + Sync + 'static>(&mut self, resource: T) {
        let resource = Resource { type_name: type_name::<T>(), value: Box::new(resource) };
        self.maps_mut().resources.insert(TypeId::of::<T>(), resource);
    }

    /// The resource of type `T`.
    pub fn resource<T: Send + Sync + 'static>(&self) -> Option<&T> {
        self.maps().resources.get(&TypeId::of::<T>()).and_then(|stored| stored.value.downcast_ref())
    }

    /// The resource of type `T`, mutably.
    pub fn resource_mut<T: Send + Sync + 'static>(&mut self) -> Option<&mut T> {
        let maps = self.maps.as_deref_mut()?;
        maps.resources.get_mut(&TypeId::of::<T>()).and_then(|stored| stored.value.downcast_mut())
    }

    /// Removes and returns the resource of type `T`.
    pub fn remove_resource<T: Send + Sync + 'static>(&mut self) -> Option<T> {
        let stored = self.maps.as_deref_mut()?.resources.remove(&TypeId::of::<T>())?;
        stored.value.downcast().ok().map(|boxed| *boxed)
    }

    fn maps(&self) -> &Maps {
        self.maps.as_deref().unwrap_or(&EMPTY)
    }

    fn maps_mut(&mut self) -> &mut Maps {
        self.maps.get_or_insert_with(Box::default)
    }
}

impl Maps {
    /// Takes the revived value under `T`'s key out, typed: `Ok(None)` if there is none, and an
    /// error — the value left where it was — if it does not deserialize as `T`.
    fn take_revived<T: ScopeValue>(&mut self) -> Result<Option<T>, ScopeError> {
        let Some(revived) = self.revived.get(T::KEY) else {
            return Ok(None);
        };
        // Typed already (by `require`), or deserialized now; the entry goes only once it reads.
        let read = match revived.typed.get() {
            Some(_) => None,
            None => Some(T::deserialize(&revived.json).map_err(|error| ScopeError::Malformed {
                key: T::KEY,
                message: error.to_string(),
            })?),
        };
        let revived = self.revived.remove(T::KEY).expect("looked up above");
        Ok(read.or_else(|| {
            let typed = revived.typed.into_inner()?;
            typed.value.downcast().ok().map(|boxed| *boxed)
        }))
    }
}

impl fmt::Debug for Scope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let maps = self.maps();
        let values: Vec<&str> = maps
            .values
            .values()
            .map(|stored| stored.key)
            .chain(maps.revived.keys().map(String::as_str))
            .collect();
        let resources: Vec<&str> = maps.resources.values().map(|stored| stored.type_name).collect();
        f.debug_struct("Scope").field("values", &values).field("resources", &resources).finish()
    }
}

impl Serialize for Scope {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let maps = self.maps();
        let mut entries = BTreeMap::new();
        for (key, revived) in &maps.revived {
            entries.insert(key.as_str(), revived.json.clone());
        }
        for stored in maps.values.values() {
            let json = (stored.to_json)(&stored.value).map_err(serde::ser::Error::custom)?;
            entries.insert(stored.key, json);
        }
        let mut map = serializer.serialize_map(Some(entries.len()))?;
        for (key, json) in entries {
            map.serialize_entry(key, &json)?;
        }
        map.end()
    }
}

impl<'de> Deserialize<'de> for Scope {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let entries = BTreeMap::<String, serde_json::Value>::deserialize(deserializer)?;
        if entries.is_empty() {
            return Ok(Scope::default());
        }
        let revived = entries
            .into_iter()
            .map(|(key, json)| (key, Revived { json, typed: OnceLock::new() }))
            .collect();
        Ok(Scope { maps: Some(Box::new(Maps { revived, ..Maps::default() })) })
    }
}

/// A value the scope was required to hold is not there, or no longer reads as its type.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ScopeError {
    /// No value of the type is present.
    #[error("the scope holds no `{name}`")]
    Missing {
        /// The missing value's type.
        name: &'static str,
    },
    /// A revived value under the type's key does not deserialize as the type.
    #[error("the scope value `{key}` does not deserialize: {message}")]
    Malformed {
        /// The value's key.
        key: &'static str,
        /// The deserializer's complaint.
        message: String,
    },
}
