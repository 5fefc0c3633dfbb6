//! `compactor anchors`: the anchors of each session as one JSON line.

use crate::cli::args::AnchorsArgs;
use crate::cli::config;
use crate::cmd::ExitStatus;
use crate::messages::err_message;
use compactor::Mode;
use compactor::formats::Format;
use compactor::io::{RecordReader, expand_inputs, parse_payload};
use compactor::policy::anchors::{AnchorSet, Category, build_index};
use compactor::policy::{boundaries, micro_compact::index_calls, session_anchors, summary};
use serde_json::{Map, Value, json};
use std::io::Write;

pub fn run(args: &AnchorsArgs) -> anyhow::Result<ExitStatus> {
    let inputs = expand_inputs(&args.inputs)?;
    let policy = config::policy(Mode::Lean, &args.window, true, None)?;
    let meter = config::meter(&args.window);
    let mut out = std::io::stdout().lock();
    let mut rejected = 0usize;
    for input in &inputs {
        let mut reader = match RecordReader::open(input) {
            Ok(r) => r,
            Err(e) => {
                err_message!("{}: {}", e.source, e.message);
                rejected += 1;
                continue;
            }
        };
        while let Some(record) = reader.next_record() {
            let record = match record {
                Ok(r) => r,
                Err(e) => {
                    err_message!("{}: {}", e.source, e.message);
                    rejected += 1;
                    break;
                }
            };
            let source = record.source.clone();
            let session = parse_payload(record.payload).and_then(|v| {
                let format = Format::detect(&v)
                    .ok_or_else(|| "not a session in any known format".to_string())?;
                format.adapter().decode(v, record.source).map_err(|e| e.0)
            });
            let session = match session {
                Ok(s) => s,
                Err(reason) => {
                    err_message!("{source}: {reason}");
                    rejected += 1;
                    continue;
                }
            };
            let msgs = &session.messages;
            let set = if args.region == "middle" {
                let tokens = meter.messages(msgs);
                let head = boundaries::head_end(msgs, policy.protect_first_n);
                let budget = compactor::window::lean_tail_budget(policy.window);
                let tail = boundaries::tail_start(msgs, &tokens, head, budget).max(head);
                let calls = index_calls(msgs);
                let mut set = AnchorSet::new();
                for (i, m) in msgs[head..tail].iter().enumerate() {
                    summary::add_message_anchors(
                        &mut set,
                        m,
                        (head + i) as u64,
                        &policy.families,
                        &calls,
                    );
                }
                set
            } else {
                session_anchors(msgs, &policy.families)
            };
            let kept: Option<String> = args.budget.map(|b| build_index(&set, b).body);
            let mut by_cat = Map::new();
            for cat in Category::ALL {
                let items: Vec<Value> = set
                    .ranked(cat)
                    .into_iter()
                    .filter(|a| kept.as_ref().is_none_or(|body| body.contains(&a.value)))
                    .map(|a| json!({"value": a.value, "count": a.count}))
                    .collect();
                by_cat.insert(cat.name().to_string(), Value::Array(items));
            }
            let line = json!({"source": source.to_string(), "id": session.id, "anchors": by_cat});
            serde_json::to_writer(&mut out, &line)?;
            out.write_all(b"\n")?;
        }
    }
    out.flush()?;
    Ok(if rejected > 0 { ExitStatus::Rejected } else { ExitStatus::Success })
}
