//! The record size limit (`--max-record-bytes`): a record longer than the
//! limit is rejected without being held in memory.
//!
//! ## What it does
//! [`read_line`] reads one JSONL line into a buffer, but never more than the
//! limit: once a line passes it, the bytes held so far and the rest of the line
//! are streamed past, into a [`Spill`] (an unnamed temporary file) when the
//! caller keeps rejected records (`--rejects`), into nothing otherwise, and the
//! line becomes an [`Oversized`] record: its length and, if kept, its spill.
//! [`read_document`] does the same for an input read as one JSON document.
//! The reader then goes on with the next line.
//!
//! ## Why
//! One record is parsed whole (serde builds its tree), so a single 1 GB line, a
//! gzip bomb of one record, took several times its size in memory before this
//! limit (issue 36; the figures: `benches/RESULTS.md`, 2026-12-04 and 2026-12-05).
//! DuckDB's `read_json` guards the same way (`maximum_object_size`).
//!
//! ## Example
//! With `--max-record-bytes 1MiB`, a 3 MB line 7 of `a.jsonl` is reported as
//! `a.jsonl:7: record of 3000000 bytes over --max-record-bytes (1048576)`,
//! written whole to `--rejects`, and lines 8 onwards are read as usual.
//!
//! ## Invariants
//! - Memory for one line is at most the limit plus one read buffer: the line
//!   buffer is never grown past `limit + 1` bytes (the newline).
//! - A spilled record holds exactly the bytes a held record would: the line
//!   without its line ending (`\n` or `\r\n`).
//! - The limit counts the record's bytes as read (after gzip / zstd), not its
//!   compressed size.

use std::fs::File;
use std::io::{self, BufRead, BufWriter, Read, Seek, Write};
use std::path::{Path, PathBuf};

/// The default limit: 256 MiB. Above the 200 MB single line that the load test
/// compacts (`tests/load.rs`), and far above any real session line we have seen
/// (the corpus's largest is a few MB); our choice, not a reference's constant.
pub const DEFAULT_MAX_RECORD_BYTES: u64 = 256 << 20;

/// A line buffer grows by doubling up to this size, then straight to the
/// limit: the memory of a buffer is touched only as the line fills it, while
/// every doubling past this leaves the allocator holding the block it grew
/// from (doubling all the way to the limit left the smaller blocks resident
/// beside the last: benches/RESULTS.md, 2026-12-04).
const DOUBLING_MAX_BYTES: usize = 64 << 20;

/// Bytes copied per write when a record is streamed into its spill.
const SPILL_BUFFER_BYTES: usize = 1 << 20;

/// Where a record over the limit goes: its length, and its bytes when kept.
#[derive(Debug)]
pub struct Oversized {
    /// The record's length in bytes (without its line ending).
    pub bytes: u64,
    /// The limit it is over.
    pub limit: u64,
    /// Its bytes, when the reader was asked to keep oversized records.
    pub spill: Option<Spill>,
}

impl Oversized {
    /// Why the record is rejected: `record of N bytes over --max-record-bytes (LIMIT)`.
    pub fn reason(&self) -> String {
        format!("record of {} bytes over --max-record-bytes ({})", self.bytes, self.limit)
    }
}

/// A record's bytes kept in an unnamed temporary file (deleted when dropped),
/// not in memory.
#[derive(Debug)]
pub struct Spill {
    file: File,
    len: u64,
}

impl Spill {
    fn create(dir: &Path) -> io::Result<Spill> {
        Ok(Spill { file: tempfile::tempfile_in(dir)?, len: 0 })
    }

    /// The record's length in bytes.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Returns true if and only if the spill holds no byte.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The record's bytes, read from the start.
    pub fn reader(&mut self) -> io::Result<impl Read + '_> {
        self.file.rewind()?;
        Ok(io::BufReader::with_capacity(SPILL_BUFFER_BYTES, &mut self.file))
    }
}

/// The bytes of a rejected record, for the rejects file: held in memory, or
/// spilled to a temporary file (a record over `--max-record-bytes`).
#[derive(Debug)]
pub enum Raw {
    Held(Vec<u8>),
    Spilled(Spill),
}

impl Raw {
    /// Returns true if and only if there is no record to keep (an input that
    /// could not be read at all, or an oversized record nobody asked to keep).
    pub fn is_empty(&self) -> bool {
        match self {
            Raw::Held(b) => b.is_empty(),
            Raw::Spilled(s) => s.is_empty(),
        }
    }

    /// The bytes held in memory (none for a spilled record).
    pub fn held(&self) -> &[u8] {
        match self {
            Raw::Held(b) => b,
            Raw::Spilled(_) => &[],
        }
    }
}

impl Default for Raw {
    fn default() -> Raw {
        Raw::Held(Vec::new())
    }
}

impl From<Vec<u8>> for Raw {
    fn from(bytes: Vec<u8>) -> Raw {
        Raw::Held(bytes)
    }
}

impl From<Option<Spill>> for Raw {
    fn from(spill: Option<Spill>) -> Raw {
        spill.map_or_else(Raw::default, Raw::Spilled)
    }
}

/// The size limit and where oversized records are kept.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RecordLimit {
    /// Longest record read, in bytes.
    pub max_bytes: u64,
    /// Keep oversized records in spills in this directory (`None`: count them only).
    pub keep_in: Option<PathBuf>,
}

impl Default for RecordLimit {
    fn default() -> RecordLimit {
        RecordLimit { max_bytes: DEFAULT_MAX_RECORD_BYTES, keep_in: None }
    }
}

/// What [`read_line`] read.
#[derive(Debug)]
pub enum Line {
    /// The end of the input: nothing was read.
    End,
    /// A line, now in the buffer (with its newline, if it had one); the bytes consumed.
    Held(u64),
    /// A line over the limit, streamed past; the bytes consumed.
    Over(u64, Oversized),
}

/// Where a record over the limit is streamed: a spill, or nowhere.
struct Past {
    spill: Option<BufWriter<Spill>>,
    bytes: u64,
    /// A `\r` held back: written only if more of the line follows it.
    cr: bool,
}

impl Write for Spill {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.file.write(buf)?;
        self.len += n as u64;
        Ok(n)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.file.flush()
    }
}

impl Past {
    fn start(limit: &RecordLimit) -> io::Result<Past> {
        let spill = match &limit.keep_in {
            Some(dir) => Some(BufWriter::with_capacity(SPILL_BUFFER_BYTES, Spill::create(dir)?)),
            None => None,
        };
        Ok(Past { spill, bytes: 0, cr: false })
    }

    /// Takes more of the record (no line ending in `chunk` but a last `\r`,
    /// held back until the next chunk shows whether it ends the line).
    fn take(&mut self, chunk: &[u8]) -> io::Result<()> {
        if chunk.is_empty() {
            return Ok(());
        }
        if std::mem::take(&mut self.cr) {
            self.put(b"\r")?;
        }
        let (body, cr) = match chunk.split_last() {
            Some((b'\r', body)) => (body, true),
            _ => (chunk, false),
        };
        self.cr = cr;
        self.put(body)
    }

    fn put(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.bytes += bytes.len() as u64;
        match self.spill.as_mut() {
            Some(w) => w.write_all(bytes),
            None => Ok(()),
        }
    }

    /// The record, at its line's end (a held-back `\r` was its line ending).
    fn finish(self, limit: u64) -> io::Result<Oversized> {
        let spill = match self.spill {
            Some(w) => Some(w.into_inner().map_err(|e| e.into_error())?),
            None => None,
        };
        Ok(Oversized { bytes: self.bytes, limit, spill })
    }
}

/// Reads one line (up to and including `\n`) into `buf`, which must be empty,
/// unless it is longer than `limit.max_bytes` (line ending excluded): then the
/// line is streamed past (into a spill when `limit.keep_in` is set) and `buf`
/// is left empty with its memory released.
pub fn read_line(
    inner: &mut dyn BufRead,
    buf: &mut Vec<u8>,
    limit: &RecordLimit,
) -> io::Result<Line> {
    let max = usize::try_from(limit.max_bytes).unwrap_or(usize::MAX);
    let mut consumed = 0u64;
    loop {
        let available = inner.fill_buf()?;
        if available.is_empty() {
            return Ok(if consumed == 0 { Line::End } else { Line::Held(consumed) });
        }
        let (take, ends) = match memchr::memchr(b'\n', available) {
            Some(i) => (i + 1, true),
            None => (available.len(), false),
        };
        // The record's length so far: a last `\r` may be (or, before a `\n`,
        // is) its line ending, so it does not count yet.
        let body = take - usize::from(ends);
        let last = if body > 0 { available.get(body - 1) } else { buf.last() };
        let length = buf.len() + body - usize::from(last == Some(&b'\r'));
        if length > max {
            return over(inner, buf, consumed, limit).map(|(n, o)| Line::Over(n, o));
        }
        // Grown by doubling, then straight to the limit and its line ending.
        let needed = buf.len() + take;
        if needed > buf.capacity() {
            let doubled = needed.max(buf.capacity().saturating_mul(2));
            let ceiling = max.saturating_add(2);
            let want = if doubled > DOUBLING_MAX_BYTES { ceiling } else { doubled.min(ceiling) };
            buf.reserve_exact(want.max(needed) - buf.len());
        }
        buf.extend_from_slice(&available[..take]);
        inner.consume(take);
        consumed += take as u64;
        if ends {
            return Ok(Line::Held(consumed));
        }
    }
}

/// The rest of a line found over the limit: what `buf` holds, then the input
/// up to and including the line's `\n`, streamed past.
fn over(
    inner: &mut dyn BufRead,
    buf: &mut Vec<u8>,
    mut consumed: u64,
    limit: &RecordLimit,
) -> io::Result<(u64, Oversized)> {
    let mut past = Past::start(limit)?;
    past.take(buf)?;
    *buf = Vec::new();
    loop {
        let available = inner.fill_buf()?;
        if available.is_empty() {
            return Ok((consumed, past.finish(limit.max_bytes)?));
        }
        let (take, ends) = match memchr::memchr(b'\n', available) {
            Some(i) => (i + 1, true),
            None => (available.len(), false),
        };
        past.take(&available[..take - usize::from(ends)])?;
        inner.consume(take);
        consumed += take as u64;
        if ends {
            return Ok((consumed, past.finish(limit.max_bytes)?));
        }
    }
}

/// Reads the rest of an input read as one JSON document into `all` (which
/// holds its start), unless the whole is longer than `limit.max_bytes`: then
/// it is streamed past like an oversized line, and `all` is released.
///
/// `size_hint` is the input's size on disk when known (a compressed input's is
/// below what it holds): `all` is given that room at once, within the limit,
/// instead of growing by doubling, each growth a copy of what was read (half of
/// the time the reader thread spent on a document before).
pub fn read_document(
    inner: &mut dyn BufRead,
    all: &mut Vec<u8>,
    limit: &RecordLimit,
    size_hint: Option<u64>,
) -> io::Result<Option<Oversized>> {
    let room = limit.max_bytes.saturating_sub(all.len() as u64).saturating_add(1);
    if let Some(size) = size_hint {
        let more = size.saturating_sub(all.len() as u64).min(room);
        all.reserve(usize::try_from(more).unwrap_or(0));
    }
    inner.take(room).read_to_end(all)?;
    if all.len() as u64 <= limit.max_bytes {
        return Ok(None);
    }
    let mut past = Past::start(limit)?;
    // A document's bytes are kept as they are: no line ending is taken off.
    past.put(all)?;
    *all = Vec::new();
    loop {
        let available = inner.fill_buf()?;
        if available.is_empty() {
            return Ok(Some(past.finish(limit.max_bytes)?));
        }
        let n = available.len();
        past.put(available)?;
        inner.consume(n);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limit(max_bytes: u64, keep: Option<&Path>) -> RecordLimit {
        RecordLimit { max_bytes, keep_in: keep.map(Path::to_path_buf) }
    }

    fn spilled(o: &mut Oversized) -> Vec<u8> {
        let mut out = Vec::new();
        o.spill.as_mut().unwrap().reader().unwrap().read_to_end(&mut out).unwrap();
        out
    }

    /// Reads every line of `input` through a reader of `chunk` bytes at a time.
    fn lines(input: &[u8], chunk: usize, l: &RecordLimit) -> Vec<Result<Vec<u8>, Oversized>> {
        let mut r = io::BufReader::with_capacity(chunk, input);
        let mut out = Vec::new();
        loop {
            let mut buf = Vec::new();
            match read_line(&mut r, &mut buf, l).unwrap() {
                Line::End => return out,
                Line::Held(n) => {
                    assert_eq!(n as usize, buf.len());
                    out.push(Ok(buf));
                }
                Line::Over(_, o) => {
                    assert!(buf.is_empty() && buf.capacity() == 0, "the held part is released");
                    out.push(Err(o));
                }
            }
        }
    }

    #[test]
    fn a_line_over_the_limit_is_streamed_past_whole_and_the_next_is_read() {
        let dir = tempfile::tempdir().unwrap();
        let big = "x".repeat(100);
        let input = format!("{{\"a\":1}}\n{big}\r\n{{\"b\":2}}\n{big}");
        for chunk in [1, 3, 7, 64, 4096] {
            let mut got = lines(input.as_bytes(), chunk, &limit(10, Some(dir.path())));
            assert_eq!(got.len(), 4, "chunk {chunk}");
            assert_eq!(got[0].as_ref().unwrap(), b"{\"a\":1}\n");
            assert_eq!(got[2].as_ref().unwrap(), b"{\"b\":2}\n");
            for o in got.iter_mut().skip(1).step_by(2) {
                let o = o.as_mut().unwrap_err();
                assert_eq!(o.bytes, 100, "chunk {chunk}: the line ending is not counted");
                assert_eq!(spilled(o), big.as_bytes(), "chunk {chunk}");
                assert_eq!(o.reason(), "record of 100 bytes over --max-record-bytes (10)");
            }
        }
    }

    #[test]
    fn a_line_of_exactly_the_limit_is_held_and_nothing_is_kept_unless_asked() {
        let input = b"0123456789\r\n01234567890\n";
        let got = lines(input, 4, &limit(10, None));
        assert_eq!(got[0].as_ref().unwrap(), b"0123456789\r\n");
        let o = got.into_iter().nth(1).unwrap().unwrap_err();
        assert_eq!((o.bytes, o.spill.is_none()), (11, true));
    }

    #[test]
    fn a_carriage_return_inside_a_long_line_is_kept() {
        let dir = tempfile::tempdir().unwrap();
        let input = b"abc\rdef\rghi\r\n";
        for chunk in [1, 2, 4, 8] {
            let mut o = lines(input, chunk, &limit(3, Some(dir.path()))).remove(0).unwrap_err();
            assert_eq!(spilled(&mut o), b"abc\rdef\rghi", "chunk {chunk}");
        }
    }

    #[test]
    fn the_line_buffer_never_grows_past_the_limit() {
        let l = limit(300_000, None);
        let mut buf = Vec::new();
        let line = vec![b'y'; 300_000];
        let mut r = io::BufReader::with_capacity(1000, &line[..]);
        assert!(matches!(read_line(&mut r, &mut buf, &l).unwrap(), Line::Held(300_000)));
        assert!(buf.capacity() <= 300_002, "capacity {}", buf.capacity());
        buf.clear();
        let longer = vec![b'y'; 1 << 20];
        let mut r = io::BufReader::with_capacity(1000, &longer[..]);
        assert!(matches!(read_line(&mut r, &mut buf, &l).unwrap(), Line::Over(_, _)));
        assert_eq!(buf.capacity(), 0, "released");
    }

    #[test]
    fn a_line_of_exactly_the_limit_split_before_its_line_ending_is_held() {
        let input = b"0123456789\r\nnext\n";
        for chunk in [1, 2, 11, 12] {
            let got = lines(input, chunk, &limit(10, None));
            assert_eq!(got[0].as_ref().unwrap(), b"0123456789\r\n", "chunk {chunk}");
        }
    }

    #[test]
    fn a_document_over_the_limit_is_streamed_past() {
        let dir = tempfile::tempdir().unwrap();
        let doc = format!("{{\n \"messages\": [\"{}\"]\n}}\n", "z".repeat(50));
        let mut all = b"{\n".to_vec();
        let mut rest = io::BufReader::with_capacity(8, &doc.as_bytes()[2..]);
        let mut o = read_document(&mut rest, &mut all, &limit(20, Some(dir.path())), None)
            .unwrap()
            .unwrap();
        assert_eq!(o.bytes, doc.len() as u64);
        assert_eq!(spilled(&mut o), doc.as_bytes());
        assert!(all.is_empty());
        // Under the limit: read whole.
        let mut all = b"{\n".to_vec();
        let mut rest = io::BufReader::new(&doc.as_bytes()[2..]);
        assert!(read_document(&mut rest, &mut all, &limit(1000, None), None).unwrap().is_none());
        assert_eq!(all, doc.as_bytes());
    }

    /// With the input's size, a document is read into room made once; a size
    /// past the limit makes room for the limit only.
    #[test]
    fn a_document_of_known_size_is_read_into_room_made_once() {
        let doc = format!("{{\n \"messages\": [\"{}\"]\n}}\n", "z".repeat(100_000));
        for (hint, max, most) in [
            (doc.len() as u64, 1 << 20, doc.len()),
            (1 << 40, 200_000, 200_001),
            (10, 1 << 20, usize::MAX),
        ] {
            let mut all = b"{\n".to_vec();
            let mut rest = io::BufReader::new(&doc.as_bytes()[2..]);
            let over = read_document(&mut rest, &mut all, &limit(max, None), Some(hint)).unwrap();
            assert!(over.is_none(), "hint {hint}");
            assert_eq!(all, doc.as_bytes(), "hint {hint}");
            assert!(all.capacity() <= most, "hint {hint}: capacity {}", all.capacity());
        }
    }
}
