#!/usr/bin/env bash
# Every benchmark of the tool, in one run; writes BENCHMARKS.md. Not part of CI's test step.
#
#   bench/run.sh            # all of them (about two minutes)
#
# It builds the static release binary (as README's install section describes), installs what
# it measures with (hyperfine, valgrind, GNU time) from Debian's packages when missing, and
# records the machine and the command beside every figure.
set -euo pipefail
cd "$(dirname "$0")/.."

need() { command -v "$1" >/dev/null || { apt-get update -qq && apt-get install -y -qq "$2"; }; }
need hyperfine hyperfine
need valgrind valgrind
[ -x /usr/bin/time ] || { apt-get update -qq && apt-get install -y -qq time; }

target=x86_64-unknown-linux-gnu
RUSTFLAGS="-C target-feature=+crt-static -C relocation-model=static" \
  cargo build --release --quiet --target "$target"
export RETRY_BIN="$PWD/target/$target/release/retry"

python3 bench/measure.py > BENCHMARKS.md
cat BENCHMARKS.md
