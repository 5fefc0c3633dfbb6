//! Integration tests of the `swe_agent` format (see src/formats/swe_agent.rs or src/io/parquet.rs).
