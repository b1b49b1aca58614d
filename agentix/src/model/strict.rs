//! Strict mode's nulls, taken back: a provider's strict mode (OpenAI's) makes the model send
//! every property, `null` for those it means to leave out; the reader's own schema may not
//! allow that `null` (a field with a default, not an `Option`).

use serde_json::Value;

/// A value made under the strict form of `schema` (a call's arguments, a typed answer), as
/// `schema` itself reads it: a `null` for a property `schema` does not require is dropped, at
/// every level (through `$ref`s, `anyOf`, arrays' items). Used by `agentix-genai` on a strict
/// call's arguments, and on a typed answer before it is read.
pub fn unstrict(arguments: &mut Value, schema: &Value) {
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

fn def_name(reference: &str) -> Option<&str> {
    reference.strip_prefix("#/$defs/").or_else(|| reference.strip_prefix("#/definitions/"))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use crate::model::strict::unstrict;

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
