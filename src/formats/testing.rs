//! What the dialects' tests share: a value read as the one record of its
//! unit, and the comparison every round-trip test makes (value and bytes).

use super::{Adapter, DecodeError, Record};
use crate::model::{Session, Source};
use serde_json::Value;

/// `dialect`'s session of `value` read as a unit's single record (of no
/// file, line or element: a record dialect's record or a one-document file).
pub(crate) fn decode_one(dialect: &dyn Adapter, value: Value) -> Result<Session, DecodeError> {
    dialect.decode(vec![Record { source: Source::default(), value }], crate::model::History::Full)
}

/// `out` is `expected`: equal as values and as JSON text (so in key order too).
pub(crate) fn assert_same_json(out: &Value, expected: &Value) {
    assert_eq!(out, expected);
    assert_eq!(out.to_string(), expected.to_string());
}
