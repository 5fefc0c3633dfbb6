//! The command line: `args` parses (clap), `config` resolves.

pub mod args;
pub mod config;

pub use args::{Cli, Command};
