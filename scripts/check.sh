#!/usr/bin/env bash
# The project's own checks, in the order CI runs them.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo fmt --check
python3 scripts/import_cycles.py
cargo test --release
cargo clippy --all-targets -- -D warnings
RUSTDOCFLAGS="-D warnings" cargo doc --no-deps -q
