//! The upstream agent card: fetched, cached, validated against, and re-presented.

/// The upstream card as last fetched, shared by every configuration generation.
#[derive(Debug, Default)]
pub struct CardCache {}
