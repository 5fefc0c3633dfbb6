//! Integration tests of the `parquet` format (see src/formats/parquet.rs or src/io/parquet.rs).
