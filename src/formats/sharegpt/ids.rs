//! Tool call ids for ShareGPT, which usually has none: the assignment of the
//! module docs ("Tool call ids"), run when reading, and again when writing to
//! find which ids must be written for reading to pair calls and results as the
//! session does.

use super::synthetic_id;
use std::collections::HashSet;

/// What one entry says about tool call ids, for [`assign`].
#[derive(Clone, Debug)]
pub(super) enum IdTurn {
    /// Calls: name and explicit id.
    Calls(Vec<(String, Option<String>)>),
    /// Results: explicit `tool_call_id` and written tool name.
    Results(Vec<(Option<String>, Option<String>)>),
    Other,
}

/// Ids given to calls and results, and the name of the call each result answers.
#[derive(Debug, Default)]
pub(super) struct Assigned {
    pub(super) calls: Vec<Vec<String>>,
    pub(super) results: Vec<Vec<Option<String>>>,
    pub(super) answered_name: Vec<Vec<Option<String>>>,
}

/// The id assignment of the module docs.
pub(super) fn assign(turns: &[IdTurn]) -> Assigned {
    let mut claimed: Vec<Vec<bool>> = turns
        .iter()
        .map(|t| match t {
            IdTurn::Results(r) => vec![false; r.len()],
            _ => Vec::new(),
        })
        .collect();
    let mut out = Assigned {
        calls: turns
            .iter()
            .map(|t| match t {
                IdTurn::Calls(c) => vec![String::new(); c.len()],
                _ => Vec::new(),
            })
            .collect(),
        results: claimed.iter().map(|c| vec![None; c.len()]).collect(),
        answered_name: claimed.iter().map(|c| vec![None; c.len()]).collect(),
    };
    // Explicit call ids first take the first later result with the same id.
    for (t, turn) in turns.iter().enumerate() {
        let IdTurn::Calls(calls) = turn else { continue };
        for (k, (_, id)) in calls.iter().enumerate() {
            let Some(id) = id else { continue };
            out.calls[t][k] = id.clone();
            'scan: for u in t + 1..turns.len() {
                if let IdTurn::Results(rs) = &turns[u] {
                    for (r, (rid, _)) in rs.iter().enumerate() {
                        if !claimed[u][r] && rid.as_deref() == Some(id.as_str()) {
                            claimed[u][r] = true;
                            break 'scan;
                        }
                    }
                }
            }
        }
    }
    // Calls without an id take the first free result naming the same tool in
    // the run of call / result turns that follows.
    for (t, turn) in turns.iter().enumerate() {
        let IdTurn::Calls(calls) = turn else { continue };
        for (k, (name, id)) in calls.iter().enumerate() {
            if id.is_some() {
                continue;
            }
            let mut found = None;
            'find: for u in t + 1..turns.len() {
                match &turns[u] {
                    IdTurn::Results(rs) => {
                        for (r, (rid, rname)) in rs.iter().enumerate() {
                            if claimed[u][r] {
                                continue;
                            }
                            if let Some(rid) = rid
                                && rname.as_deref().is_none_or(|n| n == name)
                            {
                                claimed[u][r] = true;
                                found = Some(rid.clone());
                                break 'find;
                            }
                        }
                    }
                    IdTurn::Calls(_) => {}
                    IdTurn::Other => break,
                }
            }
            out.calls[t][k] = found.unwrap_or_else(|| synthetic_id(t, k));
        }
    }
    // Results pair with the oldest unanswered call. A result without an id
    // never takes a call whose id a result names explicitly: that result is
    // its answer (fuzz finding `sharegpt_anonymous_result_takes_a_named_call`).
    let named: HashSet<&str> = turns
        .iter()
        .filter_map(|t| match t {
            IdTurn::Results(rs) => Some(rs.iter().filter_map(|(rid, _)| rid.as_deref())),
            _ => None,
        })
        .flatten()
        .collect();
    let mut pending: Vec<(String, String)> = Vec::new();
    for (t, turn) in turns.iter().enumerate() {
        match turn {
            IdTurn::Calls(calls) => {
                for (k, (name, _)) in calls.iter().enumerate() {
                    pending.push((out.calls[t][k].clone(), name.clone()));
                }
            }
            IdTurn::Results(rs) => {
                for (r, (rid, rname)) in rs.iter().enumerate() {
                    let pick = match rid {
                        Some(id) => pending.iter().position(|(p, _)| p == id),
                        None => {
                            let free = |p: &(String, String)| !named.contains(p.0.as_str());
                            rname
                                .as_ref()
                                .and_then(|n| pending.iter().position(|p| free(p) && p.1 == *n))
                                .or_else(|| pending.iter().position(free))
                        }
                    };
                    let call = pick.map(|i| pending.remove(i));
                    out.results[t][r] = rid.clone().or_else(|| call.as_ref().map(|c| c.0.clone()));
                    out.answered_name[t][r] = call.map(|c| c.1);
                }
            }
            IdTurn::Other => {}
        }
    }
    out
}
