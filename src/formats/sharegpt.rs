//! The `sharegpt` dialect (not implemented yet: detection never claims a file).

use super::{Adapter, DecodeError, Record, Unit, not_yet};
use crate::model::Session;
use serde_json::Value;

/// The sharegpt dialect.
pub struct ShareGpt;

impl Adapter for ShareGpt {
    fn name(&self) -> &'static str {
        "sharegpt"
    }

    fn unit(&self) -> Unit {
        Unit::Record
    }

    fn detect(&self, _first: &[Value]) -> bool {
        false
    }

    fn decode(&self, _records: Vec<Record>) -> Result<Session, DecodeError> {
        Err(not_yet(self.name()))
    }

    fn encode(&self, _session: &Session, _compaction: Option<&Value>) -> Vec<Value> {
        Vec::new()
    }
}
