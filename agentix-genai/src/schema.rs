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
        AdapterKind::OpenAI | AdapterKind::OpenAIResp if is_strict(schema, kind) => {
            (strict(&inline_refs(schema)), true)
        }
        AdapterKind::Gemini => (inline_refs(schema), false),
        _ => (schema.clone(), false),
    }
}

/// Whether a tool of `schema` is declared strict to `kind`: OpenAI's own APIs, for an object
/// schema (strict mode takes no other).
pub(crate) fn is_strict(schema: &Value, kind: AdapterKind) -> bool {
    matches!(kind, AdapterKind::OpenAI | AdapterKind::OpenAIResp)
        && schema.get("type").and_then(Value::as_str) == Some("object")
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
        let mut body = map.clone();
        body.remove("$defs");
        body.remove("definitions");
        // A recursive type still refers to its definition: keep them then.
        if !refers(&Value::Object(body.clone())) {
            *map = body;
        }
    }
    inlined
}

/// Whether `schema` holds a `$ref` anywhere.
fn refers(schema: &Value) -> bool {
    match schema {
        Value::Object(map) => map.contains_key("$ref") || map.values().any(refers),
        Value::Array(items) => items.iter().any(refers),
        _ => false,
    }
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

/// The arguments of a call made under the strict form of `schema`, as the tool's own schema
/// reads them: strict mode makes the model send `null` for a property it means to leave out,
/// and a tool whose field has a default (not an `Option`) would fail on that `null`; such nulls
/// are dropped, at every level.
pub(crate) fn unstrict(arguments: &mut Value, schema: &Value) {
    let defs = schema.get("$defs").or_else(|| schema.get("definitions")).unwrap_or(&Value::Null);
    drop_added_nulls(arguments, schema, defs, 0);
}

fn drop_added_nulls(value: &mut Value, schema: &Value, defs: &Value, depth: usize) {
    // A value is finite, but a schema that refers to itself under a value that does not end is
    // not worth following far.
    if depth > 64 {
        return;
    }
    let schema = match schema.get("$ref").and_then(Value::as_str).and_then(def_name) {
        Some(name) => defs.get(name).unwrap_or(schema),
        None => schema,
    };
    for branch in ["anyOf", "oneOf", "allOf"] {
        for alternative in schema.get(branch).and_then(Value::as_array).into_iter().flatten() {
            drop_added_nulls(value, alternative, defs, depth + 1);
        }
    }
    match value {
        Value::Object(fields) => {
            let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
                return;
            };
            let required = schema.get("required").and_then(Value::as_array);
            let is_required =
                |name: &str| required.is_some_and(|names| names.iter().any(|n| n == name));
            fields.retain(|name, field| {
                !(field.is_null() && properties.contains_key(name) && !is_required(name))
            });
            for (name, field) in fields.iter_mut() {
                if let Some(property) = properties.get(name) {
                    drop_added_nulls(field, property, defs, depth + 1);
                }
            }
        }
        Value::Array(items) => {
            if let Some(item) = schema.get("items") {
                for element in items {
                    drop_added_nulls(element, item, defs, depth + 1);
                }
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_recursive_definition_stays_a_reference_and_keeps_its_definitions() {
        let schema = json!({
            "type": "object",
            "properties": { "root": { "$ref": "#/$defs/Node" } },
            "$defs": { "Node": { "type": "object", "properties": {
                "name": { "type": "string" },
                "children": { "type": "array", "items": { "$ref": "#/$defs/Node" } },
            }}},
        });
        let inlined = inline_refs(&schema);
        let root = &inlined["properties"]["root"];
        assert_eq!(root["properties"]["name"]["type"], "string", "the first level inlined");
        assert_eq!(root["properties"]["children"]["items"], json!({ "$ref": "#/$defs/Node" }));
        assert!(inlined.get("$defs").is_some(), "so the reference still resolves");
    }

    #[test]
    fn strict_makes_a_reference_or_a_union_nullable_by_wrapping_it() {
        let schema = json!({
            "type": "object",
            "properties": { "pet": { "anyOf": [{ "type": "string" }, { "type": "integer" }] } },
        });
        let strict = strict(&schema);
        assert_eq!(
            strict["properties"]["pet"],
            json!({ "anyOf": [{ "anyOf": [{ "type": "string" }, { "type": "integer" }] }, { "type": "null" }] })
        );
        assert_eq!(strict["required"], json!(["pet"]));
    }

    #[test]
    fn unstrict_drops_the_nulls_of_optional_properties_only() {
        let schema = json!({
            "type": "object",
            "properties": {
                "name": { "type": ["string", "null"] },
                "note": { "type": "string" },
                "items": { "type": "array", "items": { "$ref": "#/$defs/Item" } },
            },
            "required": ["name"],
            "$defs": { "Item": { "type": "object", "properties": { "size": { "type": "integer" } } } },
        });
        let mut arguments =
            json!({ "name": null, "note": null, "items": [{ "size": null }, { "size": 2 }] });
        unstrict(&mut arguments, &schema);
        assert_eq!(arguments, json!({ "name": null, "items": [{}, { "size": 2 }] }));
    }
}
