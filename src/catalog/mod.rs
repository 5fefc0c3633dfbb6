//! The model catalog: what a model's name says about it, by the longest name
//! fragment it contains. [`window`]: context windows (SPEC 5, with the trigger
//! thresholds and budgets derived from them); [`prices`]: token prices for
//! replay's costs (SPEC 8).
//!
//! Both tables are a [`fragments::FragmentTable`], one lookup.
//!
//! A leaf: built-in tables, extended by the user, and pure functions of them.

pub mod fragments;
pub mod prices;
pub mod window;
