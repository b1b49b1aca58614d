//! Tool schemas as each provider takes them. agentix's schemas are schemars' JSON Schema; some
//! providers want less, or more.

use genai::adapter::AdapterKind;
use serde_json::{Map, Value};

/// `schema` for `kind`, and whether the tool is declared strict.
///
/// - OpenAI (chat completions and responses): strict mode, which holds the model to the
///   schema: every property required, the optional ones nullable instead, no property beyond
///   them (`additionalProperties: false`), at every level.
/// - Gemini: `$ref`s inlined from `$defs` (its function declarations have no references).
/// - Every other provider: the schema as it is.
pub(crate) fn for_provider(schema: &Value, kind: AdapterKind) -> (Value, bool) {
    match kind {
        AdapterKind::OpenAI | AdapterKind::OpenAIResp if is_object_schema(schema) => {
            (strict(&inline_refs(schema)), true)
        }
        AdapterKind::Gemini => (inline_refs(schema), false),
        _ => (schema.clone(), false),
    }
}

fn is_object_schema(schema: &Value) -> bool {
    schema.get("type").and_then(Value::as_str) == Some("object")
        && schema.get("properties").is_some()
}

/// `schema` with every `{"$ref": "#/$defs/Name"}` replaced by the definition it names (its
/// sibling keywords kept), and `$defs` dropped. A recursive definition is left a reference
/// past its first level, where inlining could not end.
pub(crate) fn inline_refs(schema: &Value) -> Value {
    let defs =
        schema.get("$defs").or_else(|| schema.get("definitions")).cloned().unwrap_or(Value::Null);
    let mut inlined = inline(schema, &defs, &mut Vec::new());
    if let Value::Object(map) = &mut inlined {
        map.remove("$defs");
        map.remove("definitions");
    }
    inlined
}

fn inline(value: &Value, defs: &Value, open: &mut Vec<String>) -> Value {
    match value {
        Value::Object(map) => {
            if let Some(name) = map.get("$ref").and_then(Value::as_str).and_then(def_name)
                && let Some(definition) = defs.get(name)
                && !open.iter().any(|seen| seen == name)
            {
                open.push(name.to_owned());
                let mut resolved = match inline(definition, defs, open) {
                    Value::Object(resolved) => resolved,
                    other => return other,
                };
                open.pop();
                for (key, sibling) in map {
                    if key != "$ref" {
                        resolved.insert(key.clone(), inline(sibling, defs, open));
                    }
                }
                return Value::Object(resolved);
            }
            Value::Object(
                map.iter().map(|(key, value)| (key.clone(), inline(value, defs, open))).collect(),
            )
        }
        Value::Array(items) => {
            Value::Array(items.iter().map(|item| inline(item, defs, open)).collect())
        }
        other => other.clone(),
    }
}

fn def_name(reference: &str) -> Option<&str> {
    reference.strip_prefix("#/$defs/").or_else(|| reference.strip_prefix("#/definitions/"))
}

/// OpenAI's strict form of an object schema, at every level: all properties required, the
/// ones that were optional made nullable, and no others allowed.
pub(crate) fn strict(schema: &Value) -> Value {
    match schema {
        Value::Object(map) => {
            let mut out: Map<String, Value> =
                map.iter().map(|(key, value)| (key.clone(), strict(value))).collect();
            if let Some(Value::Object(properties)) = out.get_mut("properties") {
                let required: Vec<String> = map
                    .get("required")
                    .and_then(Value::as_array)
                    .map(|names| {
                        names.iter().filter_map(Value::as_str).map(str::to_owned).collect()
                    })
                    .unwrap_or_default();
                let mut all = Vec::with_capacity(properties.len());
                for (name, property) in properties.iter_mut() {
                    if !required.contains(name) {
                        nullable(property);
                    }
                    all.push(Value::String(name.clone()));
                }
                out.insert("required".into(), Value::Array(all));
                out.insert("additionalProperties".into(), Value::Bool(false));
            }
            Value::Object(out)
        }
        Value::Array(items) => Value::Array(items.iter().map(strict).collect()),
        other => other.clone(),
    }
}

/// Lets `property` be `null` as well.
fn nullable(property: &mut Value) {
    let Value::Object(map) = property else { return };
    match map.get_mut("type") {
        Some(Value::String(kind)) if kind != "null" => {
            let kind = std::mem::take(kind);
            map.insert(
                "type".into(),
                Value::Array(vec![Value::String(kind), Value::String("null".into())]),
            );
        }
        Some(Value::Array(kinds)) if !kinds.iter().any(|kind| kind == "null") => {
            kinds.push(Value::String("null".into()));
        }
        Some(_) => {}
        None => {
            // No type of its own (a `$ref`, an `anyOf`): one of it, or null.
            let inner = Value::Object(std::mem::take(map));
            map.insert(
                "anyOf".into(),
                Value::Array(vec![inner, serde_json::json!({ "type": "null" })]),
            );
        }
    }
}
