//! `#[hook]` goes on a function or on an `impl Hook` block, not on another trait's impl.

use agentix::hook;

struct Shown;

#[hook]
impl std::fmt::Display for Shown {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("shown")
    }
}

fn main() {}
