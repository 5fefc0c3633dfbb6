//! Integration tests of the `sharegpt` format (see src/formats/sharegpt.rs or src/io/parquet.rs).
