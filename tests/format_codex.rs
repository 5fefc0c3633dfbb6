//! Integration tests of the `codex` format (see src/formats/codex.rs or src/io/parquet.rs).
