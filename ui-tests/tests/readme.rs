//! The compiler output the README quotes is the blessed `.stderr` it names, byte for byte: when a
//! diagnostic changes, re-blessing the suite and this test keep the README honest.

const ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/..");

#[test]
fn readme_quotes_blessed_stderr() {
    let readme = std::fs::read_to_string(format!("{ROOT}/README.md")).unwrap();
    assert!(quotes_blessed(&readme) > 0, "the README quotes no compiler output");
}

/// The crate docs' front page quotes it too, from `agentix/docs/overview.md`, which `lib.rs`
/// includes.
#[test]
fn crate_docs_quote_blessed_stderr() {
    let docs = std::fs::read_to_string(format!("{ROOT}/agentix/docs/overview.md")).unwrap();
    assert!(quotes_blessed(&docs) > 0, "the crate docs quote no compiler output");
    let lib = std::fs::read_to_string(format!("{ROOT}/agentix/src/lib.rs")).unwrap();
    assert!(lib.contains(r#"#![doc = include_str!("../docs/overview.md")]"#));
}

/// Checks each quote in `text` against the blessed file it names; returns how many there are.
fn quotes_blessed(readme: &str) -> usize {
    let root = ROOT;
    let mut quoted = 0;
    for (index, _) in readme.match_indices("<!-- stderr: ") {
        let rest = &readme[index + "<!-- stderr: ".len()..];
        let path = &rest[..rest.find(" -->").unwrap()];
        let block = rest.split("```text\n").nth(1).unwrap();
        let block = &block[..block.find("```").unwrap()];
        let blessed = std::fs::read_to_string(format!("{root}/{path}")).unwrap();
        assert_eq!(block, blessed, "README quotes {path} differently from the blessed file");
        quoted += 1;
    }
    quoted
}

/// The guide's table of events and vocabularies (`docs/hooks.md`) is the one the `event`
/// module's docs include.
#[test]
fn readme_includes_the_guide_the_docs_include() {
    let readme = std::fs::read_to_string(format!("{ROOT}/docs/hooks.md")).unwrap();
    let guide = std::fs::read_to_string(format!("{ROOT}/agentix/docs/choosing.md")).unwrap();
    let start = readme.find("<!-- include: agentix/docs/choosing.md").expect("the include mark");
    let included = &readme[start..];
    let included = &included[included.find("-->\n").unwrap() + 4..];
    let included = &included[..included.find("<!-- end include -->").unwrap()];
    assert_eq!(included, guide, "docs/hooks.md and agentix/docs/choosing.md differ");
    let event_docs = std::fs::read_to_string(format!("{ROOT}/agentix/src/event/mod.rs")).unwrap();
    assert!(event_docs.contains(r#"#![doc = include_str!("../../docs/choosing.md")]"#));
}
