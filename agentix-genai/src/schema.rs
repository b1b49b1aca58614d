//! Tool schemas as each provider takes them. agentix's schemas are schemars' JSON Schema; some
//! providers want less, or more.

use genai::adapter::AdapterKind;
use serde_json::{Map, Value};

/// `schema` for `kind`, and whether the tool is declared strict.
///
/// - OpenAI (chat completions and responses): strict mode, which holds the model to the schema,
///   when the schema can be said in strict mode's subset (see [`openai_strict`]); otherwise the
///   schema as it is, not strict.
/// - Gemini: `$ref`s inlined from `$defs` (its function declarations have no references).
/// - Every other provider: the schema as it is.
pub(crate) fn for_provider(schema: &Value, kind: AdapterKind) -> (Value, bool) {
    match kind {
        AdapterKind::OpenAI | AdapterKind::OpenAIResp => match openai_strict(schema) {
            Some(strict) => (strict, true),
            None => (schema.clone(), false),
        },
        AdapterKind::Gemini => (inline_refs(schema), false),
        _ => (schema.clone(), false),
    }
}

/// Whether a tool of `schema` is declared strict to `kind`.
pub(crate) fn is_strict(schema: &Value, kind: AdapterKind) -> bool {
    matches!(kind, AdapterKind::OpenAI | AdapterKind::OpenAIResp) && openai_strict(schema).is_some()
}

/// OpenAI's strict form of an object schema: references inlined, then at every level every
/// property required, the optional ones made nullable, no other properties
/// (`additionalProperties: false`), `oneOf` as `anyOf`, a `default` moved into the description
/// (strict mode refuses the keyword; the tool's own default still applies, see [`agentix::model::unstrict`]),
/// and formats strict mode does not know (schemars' `uint32`, `double`…) left out. `None` when
/// the schema holds what strict mode cannot say — a map (`additionalProperties` with a schema),
/// a value of any type, `allOf`, `not`, conditionals, length limits — or its root is not an
/// object: such a tool is sent as it is, not strict.
pub(crate) fn openai_strict(schema: &Value) -> Option<Value> {
    let is_object = schema.get("type").and_then(Value::as_str) == Some("object")
        && schema.get("properties").is_some();
    if !is_object {
        return None;
    }
    let mut inlined = inline_refs(schema);
    if let Value::Object(root) = &mut inlined {
        root.remove("$schema");
    }
    strict(&inlined)
}

/// Keywords strict mode takes as they are.
const STRICT_KEEPS: &[&str] = &[
    "type",
    "enum",
    "const",
    "$ref",
    "description",
    "title",
    "pattern",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minItems",
    "maxItems",
];

/// The string formats strict mode knows.
const STRICT_FORMATS: &[&str] =
    &["date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"];

/// The strict form of one schema, walking only where schemas sit: `properties`' values,
/// `items`, `anyOf`/`oneOf`'s members, `$defs`' values.
fn strict(schema: &Value) -> Option<Value> {
    let map = schema.as_object()?;
    let typed = ["type", "enum", "const", "$ref", "anyOf", "oneOf"];
    if !typed.iter().any(|key| map.contains_key(*key)) {
        return None; // a value of any type
    }
    let mut out = Map::new();
    let mut default = None;
    for (key, value) in map {
        match key.as_str() {
            "properties" => {
                let properties = value.as_object()?;
                let required: Vec<&str> = map
                    .get("required")
                    .and_then(Value::as_array)
                    .map(|names| names.iter().filter_map(Value::as_str).collect())
                    .unwrap_or_default();
                let mut strict_properties = Map::new();
                for (name, property) in properties {
                    let mut property = strict(property)?;
                    if !required.contains(&name.as_str()) {
                        nullable(&mut property);
                    }
                    strict_properties.insert(name.clone(), property);
                }
                let all = properties.keys().cloned().map(Value::String).collect();
                out.insert("properties".into(), Value::Object(strict_properties));
                out.insert("required".into(), Value::Array(all));
                out.insert("additionalProperties".into(), Value::Bool(false));
            }
            "required" => {} // written with the properties
            "additionalProperties" if value == &Value::Bool(false) => {}
            "items" => {
                out.insert(key.clone(), strict(value)?);
            }
            "anyOf" | "oneOf" => {
                let members: Option<Vec<Value>> = value.as_array()?.iter().map(strict).collect();
                out.insert("anyOf".into(), Value::Array(members?));
            }
            "$defs" | "definitions" => {
                let defs: Option<Map<String, Value>> = value
                    .as_object()?
                    .iter()
                    .map(|(name, def)| Some((name.clone(), strict(def)?)))
                    .collect();
                out.insert(key.clone(), Value::Object(defs?));
            }
            "default" => default = Some(value),
            "format" => {
                if value.as_str().is_some_and(|format| STRICT_FORMATS.contains(&format)) {
                    out.insert(key.clone(), value.clone());
                }
            }
            "examples" | "$schema" => {}
            keep if STRICT_KEEPS.contains(&keep) => {
                out.insert(key.clone(), value.clone());
            }
            _ => return None,
        }
    }
    if out.get("type").and_then(Value::as_str) == Some("object") && !out.contains_key("properties")
    {
        out.insert("properties".into(), Value::Object(Map::new()));
        out.insert("required".into(), Value::Array(Vec::new()));
        out.insert("additionalProperties".into(), Value::Bool(false));
    }
    if let Some(default) = default {
        let said = match out.get("description").and_then(Value::as_str) {
            Some(description) => format!("{description} (default: {default})"),
            None => format!("Default: {default}."),
        };
        out.insert("description".into(), Value::String(said));
    }
    Some(Value::Object(out))
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

/// Lets `property` be `null` as well: in its type, and in its `enum` or `const` if it has one.
fn nullable(property: &mut Value) {
    let Value::Object(map) = property else { return };
    if let Some(constant) = map.remove("const") {
        map.insert("enum".into(), Value::Array(vec![constant]));
    }
    if let Some(Value::Array(values)) = map.get_mut("enum")
        && !values.contains(&Value::Null)
    {
        values.push(Value::Null);
    }
    if !map.contains_key("type") && map.contains_key("enum") {
        return; // null is one of its values now
    }
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
    fn strict_makes_a_union_nullable_by_wrapping_it() {
        let schema = json!({
            "type": "object",
            "properties": { "pet": { "oneOf": [{ "type": "string" }, { "type": "integer" }] } },
        });
        let strict = openai_strict(&schema).unwrap();
        assert_eq!(
            strict["properties"]["pet"],
            json!({ "anyOf": [{ "anyOf": [{ "type": "string" }, { "type": "integer" }] }, { "type": "null" }] }),
            "oneOf becomes anyOf"
        );
        assert_eq!(strict["required"], json!(["pet"]));
    }

    #[test]
    fn strict_walks_only_where_schemas_sit() {
        // A property named `properties` is a property, not a schema's keyword.
        let schema = json!({
            "type": "object",
            "properties": { "properties": { "type": "string" }, "required": { "type": "boolean" } },
            "required": ["properties"],
        });
        let strict = openai_strict(&schema).unwrap();
        assert_eq!(
            strict,
            json!({
                "type": "object",
                "properties": {
                    "properties": { "type": "string" },
                    "required": { "type": ["boolean", "null"] },
                },
                "required": ["properties", "required"],
                "additionalProperties": false,
            })
        );
    }

    #[test]
    fn strict_moves_a_default_into_the_description_and_lets_an_enum_be_null() {
        let schema = json!({
            "type": "object",
            "properties": {
                "unit": { "type": "string", "enum": ["celsius", "fahrenheit"], "default": "celsius", "description": "The unit." },
                "count": { "type": "integer", "format": "uint32", "minimum": 0, "default": 1 },
                "kind": { "const": "weather" },
            },
            "required": [],
        });
        let strict = openai_strict(&schema).unwrap();
        let unit = &strict["properties"]["unit"];
        assert_eq!(unit["enum"], json!(["celsius", "fahrenheit", null]));
        assert_eq!(unit["type"], json!(["string", "null"]));
        assert_eq!(unit["description"], "The unit. (default: \"celsius\")");
        assert!(unit.get("default").is_none(), "strict mode refuses `default`");
        let count = &strict["properties"]["count"];
        assert_eq!(
            count,
            &json!({ "type": ["integer", "null"], "minimum": 0, "description": "Default: 1." }),
            "no schemars format"
        );
        assert_eq!(strict["properties"]["kind"], json!({ "enum": ["weather", null] }));
    }

    #[test]
    fn what_strict_mode_cannot_say_leaves_the_tool_not_strict() {
        let cases = [
            // A map.
            json!({ "type": "object", "properties": { "tags": { "type": "object", "additionalProperties": { "type": "string" } } } }),
            // A value of any type.
            json!({ "type": "object", "properties": { "data": true } }),
            json!({ "type": "object", "properties": { "data": {} } }),
            // Length limits, allOf, not.
            json!({ "type": "object", "properties": { "name": { "type": "string", "minLength": 1 } } }),
            json!({ "type": "object", "properties": { "a": { "allOf": [{ "type": "string" }] } } }),
            json!({ "type": "object", "properties": { "a": { "not": { "type": "string" } } } }),
            // A root that is not an object.
            json!({ "oneOf": [{ "type": "string" }, { "type": "integer" }] }),
        ];
        for schema in cases {
            assert_eq!(openai_strict(&schema), None, "{schema}");
            assert_eq!(for_provider(&schema, AdapterKind::OpenAI), (schema.clone(), false));
        }
    }
}
