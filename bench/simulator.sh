#!/usr/bin/env bash
# The default `retry simulate` sweep (19 client counts x 5 strategies x 100 trials), timed with
# hyperfine. The blog's Python simulator needs about seven minutes for the same sweep.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v hyperfine >/dev/null || apt-get install -y hyperfine
cargo build --release --quiet
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"
hyperfine --warmup 1 --runs 5 --export-markdown "${RESULTS:-/dev/null}" \
  'target/release/retry simulate --seed 1 > /dev/null'
