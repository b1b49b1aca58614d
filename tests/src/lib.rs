//! Shared helpers for the behaviour tests.
