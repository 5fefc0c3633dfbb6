//! Session outputs: where results go ([`Target`]), how sessions are laid out
//! ([`Layout`]) and the writer of a whole output ([`SessionWriter`]), always
//! through an [`AtomicFile`] (see [`crate::io::atomic`]).

use crate::io::atomic::AtomicFile;
use crate::io::parquet::ParquetWriter;
use crate::io::pretty::Pretty;
use serde_json::Value;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

/// Where results go.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Target {
    Stdout,
    /// One file holding every session, in input order.
    File(PathBuf),
    /// One file per input under this directory, with the input's relative name.
    Dir(PathBuf),
}

impl Target {
    /// `-` is stdout; a trailing slash or an existing directory is a directory;
    /// anything else is one file.
    pub fn parse(arg: &str) -> Target {
        if arg == "-" {
            Target::Stdout
        } else if arg.ends_with('/')
            || arg.ends_with(std::path::MAIN_SEPARATOR)
            || Path::new(arg).is_dir()
        {
            Target::Dir(PathBuf::from(arg))
        } else {
            Target::File(PathBuf::from(arg))
        }
    }
}

/// How sessions are laid out in an output.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layout {
    /// One compact JSON value per line.
    Jsonl,
    /// One pretty-printed JSON document holding one session.
    Document,
    /// One pretty-printed JSON array of sessions.
    Array,
    /// A Parquet table, one row per (OpenAI-shaped) session.
    Parquet,
}

/// The layouts of a text file ([`SessionWriter::file`]): every [`Layout`] but
/// Parquet, whose rows need their mapping ([`SessionWriter::parquet`]), so that
/// asking for a Parquet file without it is not a call that compiles.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TextLayout {
    Jsonl,
    Document,
    Array,
}

impl Layout {
    /// The layout as a text file's, or `None` for Parquet.
    pub fn text(self) -> Option<TextLayout> {
        match self {
            Layout::Jsonl => Some(TextLayout::Jsonl),
            Layout::Document => Some(TextLayout::Document),
            Layout::Array => Some(TextLayout::Array),
            Layout::Parquet => None,
        }
    }
}

impl From<TextLayout> for Layout {
    fn from(t: TextLayout) -> Layout {
        match t {
            TextLayout::Jsonl => Layout::Jsonl,
            TextLayout::Document => Layout::Document,
            TextLayout::Array => Layout::Array,
        }
    }
}

enum Sink {
    Stdout(BufWriter<io::Stdout>),
    File(BufWriter<AtomicFile>),
    Gzip(flate2::write::GzEncoder<BufWriter<AtomicFile>>),
    Zstd(zstd::stream::write::Encoder<'static, BufWriter<AtomicFile>>),
    Parquet(Box<ParquetWriter>),
}

/// Writes encoded sessions to a target file or stdout.
pub struct SessionWriter {
    sink: Sink,
    layout: Layout,
    written: usize,
    /// A document's one session, laid out, until a second one makes the
    /// output an array or the output finishes.
    pending_document: Option<Pretty>,
    void: io::Sink,
    /// The id and source of the session whose records come next (Parquet's
    /// `id` and `source` columns).
    origin: (String, String),
}

impl SessionWriter {
    /// Standard output, always JSONL.
    pub fn stdout() -> SessionWriter {
        SessionWriter::new(
            Sink::Stdout(BufWriter::with_capacity(1 << 16, io::stdout())),
            Layout::Jsonl,
        )
    }

    /// A file at `path`, gzip- or zstd-compressed when its name ends in `.gz` / `.zst`.
    /// A Parquet file needs its rows' mapping: [`SessionWriter::parquet`].
    pub fn file(path: &Path, layout: TextLayout) -> anyhow::Result<SessionWriter> {
        let atomic = BufWriter::with_capacity(1 << 16, AtomicFile::create(path)?);
        let sink = match path.extension().and_then(|e| e.to_str()) {
            Some("gz") => {
                Sink::Gzip(flate2::write::GzEncoder::new(atomic, flate2::Compression::default()))
            }
            Some("zst") => Sink::Zstd(zstd::stream::write::Encoder::new(atomic, 3)?),
            _ => Sink::File(atomic),
        };
        Ok(SessionWriter::new(sink, layout.into()))
    }

    /// A Parquet table written by `writer` (for sessions:
    /// `formats::parquet::writer`).
    pub fn parquet(writer: ParquetWriter) -> SessionWriter {
        SessionWriter::new(Sink::Parquet(Box::new(writer)), Layout::Parquet)
    }

    fn new(sink: Sink, layout: Layout) -> SessionWriter {
        SessionWriter {
            sink,
            layout,
            written: 0,
            pending_document: None,
            void: io::sink(),
            origin: (String::new(), String::new()),
        }
    }

    /// Names the session whose records are written next: its id and its
    /// source (`path:line`), which a Parquet output has as columns.
    pub fn origin(&mut self, id: &str, source: &str) {
        id.clone_into(&mut self.origin.0);
        source.clone_into(&mut self.origin.1);
    }

    fn out(&mut self) -> &mut dyn Write {
        match &mut self.sink {
            Sink::Stdout(w) => w,
            Sink::File(w) => w,
            Sink::Gzip(w) => w,
            Sink::Zstd(w) => w,
            // Parquet never writes bytes through here; see `write`.
            Sink::Parquet(_) => &mut self.void,
        }
    }

    pub fn write(&mut self, value: &Value) -> io::Result<()> {
        if let Sink::Parquet(w) = &mut self.sink {
            w.write(value, &self.origin.0, &self.origin.1).map_err(io::Error::other)?;
            self.written += 1;
            return Ok(());
        }
        match self.layout {
            // Only a Parquet sink takes this layout (above).
            Layout::Parquet => {
                self.written += 1;
                Ok(())
            }
            Layout::Jsonl => {
                let w = self.out();
                serde_json::to_writer(&mut *w, value)?;
                w.write_all(b"\n")?;
                self.written += 1;
                Ok(())
            }
            Layout::Document | Layout::Array => self.write_pretty(Pretty::of_value(value)),
        }
    }

    /// Writes a record given as its JSON bytes (an unchanged input line, or
    /// one a worker serialized). A document or an array lays them out pretty
    /// as they are read ([`Pretty`]), as the `Value` they hold would be.
    pub fn write_raw(&mut self, bytes: &[u8]) -> io::Result<()> {
        match self.layout {
            Layout::Jsonl => {
                let w = self.out();
                w.write_all(bytes)?;
                w.write_all(b"\n")?;
                self.written += 1;
                Ok(())
            }
            Layout::Document | Layout::Array => self.write_pretty(Pretty::of(bytes)?),
            Layout::Parquet => {
                let value: Value = serde_json::from_slice(bytes)?;
                self.write(&value)
            }
        }
    }

    /// Writes a record laid out pretty by a worker (for a document output,
    /// where it is only copied). In another layout it is read again as the
    /// `Value` it holds.
    pub fn write_laid_out(&mut self, record: Pretty) -> io::Result<()> {
        match self.layout {
            Layout::Document | Layout::Array => self.write_pretty(record),
            Layout::Jsonl | Layout::Parquet => {
                let value: Value = serde_json::from_slice(record.as_bytes())?;
                self.write(&value)
            }
        }
    }

    /// Writes one pretty record of a document or an array.
    fn write_pretty(&mut self, record: Pretty) -> io::Result<()> {
        if self.layout == Layout::Document {
            // A document holds one session; a second one turns it into an array.
            let Some(first) = self.pending_document.take() else {
                self.pending_document = Some(record);
                return Ok(());
            };
            self.layout = Layout::Array;
            self.write_pretty(first)?;
        }
        let sep: &[u8] = if self.written == 0 { b"[\n" } else { b",\n" };
        let w = self.out();
        w.write_all(sep)?;
        w.write_all(record.as_bytes())?;
        self.written += 1;
        Ok(())
    }

    /// Finishes the layout, flushes, and (for files) renames into place.
    pub fn finish(self) -> anyhow::Result<()> {
        match self.finish_unsynced()? {
            Some(file) => file.commit(),
            None => Ok(()),
        }
    }

    /// Finishes the layout and flushes, and returns the file still under its
    /// temporary name, for the caller to commit (alone or in a
    /// [`super::sync_batch::SyncBatch`]); `None` for standard output.
    pub fn finish_unsynced(mut self) -> anyhow::Result<Option<AtomicFile>> {
        if let Some(doc) = self.pending_document.take() {
            let w = self.out();
            w.write_all(doc.as_bytes())?;
            w.write_all(b"\n")?;
        }
        if self.layout == Layout::Array {
            let tail: &[u8] = if self.written == 0 { b"[]\n" } else { b"\n]\n" };
            self.out().write_all(tail)?;
        }
        let file = match self.sink {
            Sink::Stdout(mut w) => {
                w.flush()?;
                return Ok(None);
            }
            Sink::File(w) => w.into_inner().map_err(|e| e.into_error())?,
            Sink::Gzip(w) => w.finish()?.into_inner().map_err(|e| e.into_error())?,
            Sink::Zstd(w) => w.finish()?.into_inner().map_err(|e| e.into_error())?,
            Sink::Parquet(w) => w.finish_unsynced()?,
        };
        Ok(Some(file))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::io::atomic::write_atomic;
    use serde_json::json;

    /// A writer of `layout` to `path` that has been given `values`, not finished.
    fn writer_given(path: &Path, layout: TextLayout, values: &[Value]) -> SessionWriter {
        let mut w = SessionWriter::file(path, layout).unwrap();
        for v in values {
            w.write(v).unwrap();
        }
        w
    }

    /// Writes `values` to `path` in `layout` and finishes.
    fn write_finished(path: &Path, layout: TextLayout, values: &[Value]) {
        writer_given(path, layout, values).finish().unwrap();
    }

    fn read_json(path: &Path) -> Value {
        serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
    }

    /// Every layout but Parquet is a text file's, and converts back to itself.
    #[test]
    fn text_layouts_are_every_layout_but_parquet() {
        for layout in [Layout::Jsonl, Layout::Document, Layout::Array, Layout::Parquet] {
            match layout.text() {
                Some(t) => assert_eq!(Layout::from(t), layout),
                None => assert_eq!(layout, Layout::Parquet),
            }
        }
    }

    #[test]
    fn target_parsing() {
        assert_eq!(Target::parse("-"), Target::Stdout);
        assert_eq!(Target::parse("out/"), Target::Dir("out/".into()));
        assert_eq!(Target::parse("out.jsonl"), Target::File("out.jsonl".into()));
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path().display().to_string();
        assert_eq!(Target::parse(&d), Target::Dir(d.clone().into()));
    }

    #[test]
    fn nothing_appears_until_finish() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("o.jsonl");
        let w = writer_given(&p, TextLayout::Jsonl, &[json!({"a": 1})]);
        assert!(!p.exists());
        w.finish().unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "{\"a\":1}\n");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            assert_eq!(std::fs::metadata(&p).unwrap().permissions().mode() & 0o777, 0o644);
        }
        let leftovers: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(leftovers.len(), 1, "no temporary file is left");
    }

    /// `-o /dev/null` (or a FIFO) is written through, never renamed over:
    /// the special file must still be one afterwards.
    #[cfg(unix)]
    #[test]
    #[allow(clippy::print_stderr)] // a skipped test says why
    fn special_files_are_written_through_not_replaced() {
        use std::os::unix::fs::FileTypeExt;
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("pipe");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        if !matches!(made, Ok(s) if s.success()) {
            eprintln!("skipped: mkfifo is not available");
            return;
        }
        let reader = {
            let fifo = fifo.clone();
            std::thread::spawn(move || std::fs::read_to_string(fifo).unwrap())
        };
        write_finished(&fifo, TextLayout::Jsonl, &[json!({"a": 1})]);
        assert_eq!(reader.join().unwrap(), "{\"a\":1}\n");
        assert!(std::fs::metadata(&fifo).unwrap().file_type().is_fifo());
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1, "no temporary file");

        let null = Path::new("/dev/null");
        if std::fs::metadata(null).map(|m| m.file_type().is_char_device()).unwrap_or(false) {
            write_atomic(null, b"discarded").unwrap();
            assert!(std::fs::metadata(null).unwrap().file_type().is_char_device());
        }
    }

    #[test]
    fn dropped_writer_leaves_no_file() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("o.jsonl");
        drop(writer_given(&p, TextLayout::Jsonl, &[json!({"a": 1})]));
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    #[test]
    fn document_layouts() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("o.json");
        write_finished(&p, TextLayout::Document, &[json!({"a": 1})]);
        assert_eq!(read_json(&p), json!({"a": 1}));
        write_finished(&p, TextLayout::Array, &[json!(1), json!(2)]);
        assert_eq!(read_json(&p), json!([1, 2]));
    }

    #[test]
    fn gzip_output_by_name() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("o.jsonl.gz");
        write_finished(&p, TextLayout::Jsonl, &[json!({"a": 1})]);
        let bytes = std::fs::read(&p).unwrap();
        assert_eq!(&bytes[..2], &[0x1f, 0x8b]);
    }
}
