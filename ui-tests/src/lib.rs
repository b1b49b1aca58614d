//! Compile-pass and compile-fail cases of the `#[hook]` contract rules; see `tests/ui.rs`.
