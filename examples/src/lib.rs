//! Runnable examples; see `examples/`.
