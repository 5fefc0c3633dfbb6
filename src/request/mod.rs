//! Requests: a converted session in the shape its API accepts as it is (SPEC 3).
//!
//! `--to openai`, `--to anthropic`, `--to sharegpt` and `--to parquet` first
//! [`normalize()`] the decoded session (roles, parts, steps, pairing, call ids;
//! every change counted in [`Repairs`]); compaction then works on the request
//! as it will be written (but for tool-result images, kept as the Messages API
//! takes them until [`fit_images`] fits the survivors to the target after
//! compaction), and the writer only changes the envelope: the OpenAI
//! adapter writes a normalized session as a Chat Completions request, and
//! [`messages::encode`] writes it as a Messages request. `--keep-source-fields`
//! keeps the source dialect's fields (and the lossless dialect writers).

pub mod messages;
pub mod normalize;
pub mod repairs;

pub use normalize::{Api, check, fit_images, normalize};
pub use repairs::{Repair, Repairs};
