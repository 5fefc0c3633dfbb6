//! Integration tests of the `claude_code` format (see src/formats/claude_code.rs or src/io/parquet.rs).
