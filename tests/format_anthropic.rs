//! Integration tests of the `anthropic` format (see src/formats/anthropic.rs or src/io/parquet.rs).
