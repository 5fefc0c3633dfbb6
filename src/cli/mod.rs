//! The command line: `args` parses (clap), `config` resolves.

pub mod args;
pub mod config;
#[cfg(test)]
mod help_defaults;
pub mod values;

pub use args::{Cli, Command};
