//! The compiler output the README quotes is the blessed `.stderr` it names, byte for byte: when a
//! diagnostic changes, re-blessing the suite and this test keep the README honest.

#[test]
fn readme_quotes_blessed_stderr() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
    let readme = std::fs::read_to_string(format!("{root}/README.md")).unwrap();
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
    assert!(quoted > 0, "the README quotes no compiler output");
}
