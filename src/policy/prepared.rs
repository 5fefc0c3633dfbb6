//! A prepared input: one session with what compaction learns of it whatever
//! the policy (token counts, anchors, retention searches, replay keys),
//! computed at most once and shared by every compaction of it.

use super::Caches;
use super::anchors::AnchorSet;
use super::anchors::Category;
use super::micro_compact::index_calls;
use super::summary;
use super::text::{Piece, push_read, read_texts};
use super::tool_families::ToolFamilies;
use crate::model::{Message, Session};
use crate::tokens::{CounterKind, Meter};
use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};
use std::sync::{Mutex, OnceLock, PoisonError};

/// One input, with what compaction learns of it whatever the policy, computed
/// at most once: `report` compacts each session under three policies, and the
/// input's anchors (for the retention figures) are the same for all three.
/// It borrows the session, so the facts cannot outlive or miss a change to it.
#[derive(Debug)]
pub struct Prepared<'a> {
    session: &'a Session,
    /// What the run's compactions remember (owned by the caller).
    caches: &'a Caches,
    /// The input's anchors, with the tool families they were read with.
    anchors: OnceLock<(ToolFamilies, AnchorSet)>,
    /// The input's per-message token counts, with the counter and image cost
    /// they were counted with: each mode would otherwise look every text up
    /// in the count cache again (hashing it whole).
    tokens: OnceLock<((CounterKind, u64), Vec<u64>)>,
    /// The input anchors found in each output text searched so far, by text
    /// (see [`Prepared::retention`]): `report`'s modes keep the same head and
    /// tail, and each would search them again.
    occurring: Mutex<HashMap<PieceKey, Box<[u32]>>>,
    /// Each message's identity for replay's shared-prefix test: `report`
    /// replays every session under each mode.
    keys: OnceLock<Vec<u128>>,
}

/// An output text by its hash and length ([`crate::hash::text_key`]) and what it is.
type PieceKey = ((u128, usize), Piece);

impl<'a> Prepared<'a> {
    /// `session`, compacted with the run's `caches`.
    pub fn new(session: &'a Session, caches: &'a Caches) -> Prepared<'a> {
        Prepared {
            session,
            caches,
            anchors: OnceLock::new(),
            tokens: OnceLock::new(),
            occurring: Mutex::default(),
            keys: OnceLock::new(),
        }
    }

    /// An input whose per-message tokens under `meter` the caller already
    /// holds: `replay` keeps the size of every message of its live history as
    /// a running sum, and a compaction of that history would otherwise look
    /// every text up in the count cache again. `tokens` must be what
    /// `meter.messages` gives for the session (asserted in unit tests).
    pub(crate) fn with_tokens(
        session: &'a Session,
        caches: &'a Caches,
        meter: &Meter,
        tokens: Vec<u64>,
    ) -> Prepared<'a> {
        #[cfg(test)]
        assert_eq!(tokens, meter.messages(&session.messages), "the tokens given are the meter's");
        let counted = OnceLock::from(((meter.kind(), meter.image_tokens()), tokens));
        Prepared { tokens: counted, ..Prepared::new(session, caches) }
    }

    /// The run's caches.
    pub(crate) fn caches(&self) -> &'a Caches {
        self.caches
    }

    /// The session it prepares.
    pub fn session(&self) -> &'a Session {
        self.session
    }

    /// The tokens of each input message under `meter`: counted once, then
    /// shared (counted afresh, not kept, under another counter or image cost).
    pub(crate) fn tokens(&self, meter: &Meter) -> Cow<'_, [u64]> {
        let key = (meter.kind(), meter.image_tokens());
        let (counted_with, tokens) =
            self.tokens.get_or_init(|| (key, meter.messages(&self.session.messages)));
        if *counted_with == key {
            Cow::Borrowed(tokens)
        } else {
            Cow::Owned(meter.messages(&self.session.messages))
        }
    }

    /// Each input message's key for the shared-prefix test of
    /// [`crate::replay`]: computed once, then shared.
    pub(crate) fn message_keys(&self) -> &[u128] {
        self.keys.get_or_init(|| {
            self.session.messages.iter().map(crate::model::key::message_key).collect()
        })
    }

    /// The anchors of the whole input, read with `families`: computed once,
    /// then shared (computed afresh, not kept, for other families).
    pub(crate) fn anchors(&self, families: &ToolFamilies) -> Cow<'_, AnchorSet> {
        let (read_with, set) =
            self.anchors.get_or_init(|| (families.clone(), self.read_anchors(families)));
        if read_with == families {
            Cow::Borrowed(set)
        } else {
            Cow::Owned(self.read_anchors(families))
        }
    }

    fn read_anchors(&self, families: &ToolFamilies) -> AnchorSet {
        session_anchors(&self.session.messages, families, self.caches)
    }

    /// Per category: (distinct anchors of the input read with `families`, how
    /// many appear verbatim in `output`): what [`AnchorSet::retention`] gives for
    /// [`session_text`] of `output`, searched text by text (no anchor spans the
    /// newline that joins two). What each text holds is kept: an output that
    /// keeps a text searched for an earlier output does not search it again.
    pub(crate) fn retention(
        &self,
        families: &ToolFamilies,
        output: &[Message],
    ) -> BTreeMap<Category, (usize, usize)> {
        let set = self.anchors(families);
        let mut found = vec![false; set.len()];
        // Only the set this input keeps has its results kept.
        let mut kept = matches!(set, Cow::Borrowed(_))
            .then(|| self.occurring.lock().unwrap_or_else(PoisonError::into_inner));
        for (text, piece) in read_texts(output) {
            let search = || match piece {
                Piece::Text => set.occurring(text),
                Piece::Arguments => {
                    let mut joined = String::new();
                    push_read(text, piece, &mut joined);
                    set.occurring(&joined)
                }
            };
            let mut put = |ids: &[u32]| ids.iter().for_each(|&i| found[i as usize] = true);
            match kept.as_mut() {
                Some(kept) if text.len() >= MIN_KEPT_SEARCH_BYTES => put(kept
                    .entry((crate::hash::text_key(text), piece))
                    .or_insert_with(|| search().into_boxed_slice())),
                _ => put(&search()),
            }
        }
        set.retention_of(&found)
    }
}

/// Shorter output texts are searched again rather than kept by
/// [`Prepared::retention`]: hashing and a map entry would cost more.
const MIN_KEPT_SEARCH_BYTES: usize = 64;

/// The anchors of a session (all of its messages).
pub fn session_anchors(
    messages: &[Message],
    families: &ToolFamilies,
    caches: &Caches,
) -> AnchorSet {
    let mut set = AnchorSet::new();
    let calls = index_calls(messages);
    for (i, m) in messages.iter().enumerate() {
        summary::add_message_anchors(&mut set, m, i as u64, families, caches, &calls);
    }
    set
}

/// `compactor anchors`' line for a session: `{"source", "id", "anchors": {category:
/// [{"value", "count"}...]}}`, ranked; `middle`: only what lean compaction
/// would fold; `budget`: only what an anchor index of that many chars holds.
/// (The CLI and the Python package both print this.)
pub fn session_anchors_line(
    session: &crate::model::Session,
    middle: bool,
    budget: Option<usize>,
    policy: &super::Policy,
    meter: &crate::tokens::Meter,
    caches: &Caches,
) -> serde_json::Value {
    use super::anchors::{AnchorSet, Category, build_index};
    use super::{boundaries, micro_compact::index_calls};
    let msgs = &session.messages;
    let set = if middle {
        let tokens = meter.messages(msgs);
        let head = boundaries::head_end(msgs, policy.protect_first_n);
        let tail =
            boundaries::tail_start(msgs, &tokens, head, policy.tail(crate::Mode::Lean)).max(head);
        let calls = index_calls(msgs);
        let mut set = AnchorSet::new();
        for (i, m) in msgs[head..tail].iter().enumerate() {
            let families = &policy.families;
            summary::add_message_anchors(&mut set, m, (head + i) as u64, families, caches, &calls);
        }
        set
    } else {
        session_anchors(msgs, &policy.families, caches)
    };
    let kept: Option<String> = budget.map(|b| build_index(&set, b).body);
    let mut by_cat = serde_json::Map::new();
    for cat in Category::ALL {
        let items: Vec<serde_json::Value> = set
            .ranked(cat)
            .into_iter()
            .filter(|a| kept.as_ref().is_none_or(|body| body.contains(&a.value)))
            .map(|a| serde_json::json!({"value": a.value, "count": a.count}))
            .collect();
        by_cat.insert(cat.name().to_string(), serde_json::Value::Array(items));
    }
    serde_json::json!({"source": session.source.to_string(), "id": session.id, "anchors": by_cat})
}
