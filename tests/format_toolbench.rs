//! Integration tests of the `toolbench` format (see src/formats/toolbench.rs or src/io/parquet.rs).
