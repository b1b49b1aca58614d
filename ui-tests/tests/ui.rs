//! The compile-time contract: every rule of DESIGN.md's "Compile-time contract checks" has
//! compile-fail cases (`tests/ui/fail/<rule>/`, with the exact compiler output in `.stderr`)
//! and compile-pass cases (`tests/ui/pass/`), which also run.

#[test]
fn contract_rules() {
    let cases = trybuild::TestCases::new();
    cases.pass("tests/ui/pass/*.rs");
    cases.compile_fail("tests/ui/fail/*/*.rs");
}
