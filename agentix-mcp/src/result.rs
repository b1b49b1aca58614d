//! An MCP tool result as the model reads it: structured content as its JSON (its text blocks,
//! which MCP has a server repeat it in, left out), else the text blocks joined; images, audio
//! and resources described where they stand, never dropped.

use rmcp::model::{CallToolResult, ContentBlock, ResourceContents};

/// What the model reads of `result`.
pub(crate) fn output(result: &CallToolResult) -> String {
    if let Some(structured) = &result.structured_content {
        let others = result.content.iter().filter(|block| !matches!(block, ContentBlock::Text(_)));
        return std::iter::once(structured.to_string())
            .chain(others.map(describe))
            .collect::<Vec<_>>()
            .join("\n");
    }
    let parts: Vec<String> = result.content.iter().map(describe).collect();
    parts.join("\n")
}

/// One content block as text.
fn describe(block: &ContentBlock) -> String {
    match block {
        ContentBlock::Text(text) => text.text.clone(),
        ContentBlock::Image(image) => {
            format!("[image: {}, {} bytes of base64]", image.mime_type, image.data.len())
        }
        ContentBlock::Audio(audio) => {
            format!("[audio: {}, {} bytes of base64]", audio.mime_type, audio.data.len())
        }
        ContentBlock::Resource(embedded) => match &embedded.resource {
            ResourceContents::TextResourceContents { uri, text, .. } => {
                format!("[resource {uri}]\n{text}")
            }
            ResourceContents::BlobResourceContents { uri, mime_type, blob, .. } => format!(
                "[resource {uri}: {}, {} bytes of base64]",
                mime_type.as_deref().unwrap_or("binary"),
                blob.len()
            ),
            _ => "[a resource of a kind this client does not read]".to_owned(),
        },
        ContentBlock::ResourceLink(link) => {
            format!("[resource link: {} ({})]", link.uri, link.name)
        }
        // A kind of content newer than this crate: named, so that nothing vanishes unseen.
        _ => "[content of a kind this client does not read]".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use rmcp::model::{CallToolResult, ContentBlock};
    use serde_json::json;

    use super::output;

    #[test]
    fn text_is_joined_and_other_content_described() {
        let result = CallToolResult::success(vec![
            ContentBlock::text("first"),
            ContentBlock::image("aGVsbG8=", "image/png"),
            ContentBlock::text("second"),
        ]);
        assert_eq!(output(&result), "first\n[image: image/png, 8 bytes of base64]\nsecond");
    }

    #[test]
    fn structured_content_is_the_output() {
        let result = CallToolResult::structured(json!({ "temperature": 21 }));
        assert_eq!(output(&result), r#"{"temperature":21}"#);
    }

    #[test]
    fn beside_structured_content_only_the_repeated_text_is_left_out() {
        let mut result = CallToolResult::structured(json!({ "temperature": 21 }));
        result.content.push(ContentBlock::image("aGVsbG8=", "image/png"));
        assert_eq!(output(&result), "{\"temperature\":21}\n[image: image/png, 8 bytes of base64]");
    }
}
