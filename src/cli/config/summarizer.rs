//! `--summarizer*` resolved once per run: the endpoint or command, the key
//! read from the environment variable named by `--summarizer-key-env`, the
//! cache directory, and the run-wide bound on requests in flight.

use crate::cli::args::SummarizerArgs;
use anyhow::{Context, bail};
use compactor::policy::summary_writer::SummaryWriter;
use compactor::summarizer::{Backend, Slots, Summarizer, cache::Cache, command, http, timeout};
use std::sync::Arc;

/// The model name sent when `--summarizer-cmd` is given without `--summarizer-model`.
pub const COMMAND_MODEL: &str = "default";

/// The summarizer these options ask for, or `None` without `--summarizer*`.
pub fn summarizer(args: &SummarizerArgs) -> anyhow::Result<Option<Arc<dyn SummaryWriter>>> {
    let wait = timeout(args.summarizer_timeout);
    let backend = match (&args.summarizer, &args.summarizer_cmd) {
        (None, None) => {
            if args.summary_cache.is_some() || args.summarizer_model.is_some() {
                bail!(
                    "--summary-cache and --summarizer-model need --summarizer URL or --summarizer-cmd CMD"
                );
            }
            return Ok(None);
        }
        (Some(url), None) => {
            let key = match &args.summarizer_key_env {
                Some(var) => Some(http::Key::new(key_from_env(var)?)),
                None => None,
            };
            Backend::Http(http::Client::new(&base_url(url)?, key, wait))
        }
        (None, Some(cmd)) => {
            if cmd.trim().is_empty() {
                bail!("--summarizer-cmd: the command is empty");
            }
            Backend::Command(command::Runner::new(cmd.clone(), wait))
        }
        (Some(_), Some(_)) => bail!("give --summarizer URL or --summarizer-cmd CMD, not both"),
    };
    let model = match (&args.summarizer_model, &backend) {
        (Some(m), _) => m.clone(),
        (None, Backend::Command(_)) => COMMAND_MODEL.to_string(),
        (None, Backend::Http(_)) => bail!(
            "--summarizer needs --summarizer-model NAME (the name the server serves, e.g. the one given to `vllm serve`)"
        ),
    };
    if args.summarizer_concurrency == 0 {
        bail!("--summarizer-concurrency must be at least 1");
    }
    if !(0.0..=2.0).contains(&args.summarizer_temperature) {
        bail!("--summarizer-temperature must be between 0 and 2");
    }
    let cache = match &args.summary_cache {
        Some(dir) => {
            std::fs::create_dir_all(dir)
                .with_context(|| format!("{}: cannot create the summary cache", dir.display()))?;
            Some(Cache::new(dir))
        }
        None => None,
    };
    Ok(Some(Arc::new(Summarizer {
        backend,
        model,
        window: args.summarizer_window,
        temperature: args.summarizer_temperature,
        cache,
        cache_only: args.summary_cache_only,
        slots: Slots::new(args.summarizer_concurrency),
    })))
}

/// The key, from the environment variable `var` (named in errors, never its value).
fn key_from_env(var: &str) -> anyhow::Result<String> {
    match std::env::var(var) {
        Ok(k) if !k.trim().is_empty() => Ok(k.trim().to_string()),
        Ok(_) => bail!("--summarizer-key-env {var}: the variable is empty"),
        Err(_) => bail!("--summarizer-key-env {var}: the variable is not set"),
    }
}

/// The base URL, checked: plain `http://` (local servers speak it; see the README).
fn base_url(url: &str) -> anyhow::Result<String> {
    if url.starts_with("https://") {
        bail!(
            "--summarizer {url}: HTTPS is not built in (local servers speak plain HTTP); \
             reach a TLS endpoint with --summarizer-cmd, e.g. curl"
        );
    }
    let Some(rest) = url.strip_prefix("http://") else {
        bail!("--summarizer {url}: expected an http:// base URL, e.g. http://localhost:8000/v1");
    };
    if rest.is_empty() || rest.starts_with('/') {
        bail!("--summarizer {url}: the URL names no host");
    }
    Ok(url.trim_end_matches('/').to_string())
}

/// The options that change the summary bytes, for the `--resume` options hash
/// (`None` without a summarizer; never the key).
pub fn options_text(args: &SummarizerArgs) -> Option<String> {
    if args.summarizer.is_none() && args.summarizer_cmd.is_none() {
        return None;
    }
    Some(format!(
        " summarizer={:?} summarizer_cmd={:?} summarizer_model={:?} summarizer_window={} summarizer_temperature={}",
        args.summarizer,
        args.summarizer_cmd,
        args.summarizer_model,
        args.summarizer_window,
        args.summarizer_temperature
    ))
}
