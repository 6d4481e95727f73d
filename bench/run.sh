#!/usr/bin/env bash
# Every benchmark of the tool, in one run; writes BENCHMARKS.md. Not part of CI's test step.
#
#   bench/run.sh            # all of them (about five minutes, the builds included)
#
# It builds the two ways a user gets the binary: the default build (`cargo install --path .`: an
# ordinary optimized build, glibc, dynamically linked, position-independent) and the release
# archive's (scripts/dist: musl, static, position-independent, with `tls`); and the peers it
# compares with: a C program that only spawns and waits (the floor), Debian's `retry` (minfrin's)
# and attempt-cli. It installs what it measures with (hyperfine, valgrind, GNU time) and builds
# with (musl-tools) from Debian's packages when missing, and records the machine and the command beside every figure.
# Two tables are quoted from files kept in git, because they take long to make: what each change
# of a series did (bench/steps.sh writes bench/steps.md) and the live metastable experiment
# (bench/metastable/run writes bench/metastable/results.md).
set -euo pipefail
cd "$(dirname "$0")/.."

source bench/install.sh
need hyperfine hyperfine
need valgrind valgrind
need redis-server redis-server
# The release archive's build (scripts/dist) compiles ring's C for musl with musl-gcc.
need musl-gcc musl-tools
[ -x /usr/bin/time ] || { apt-get update -qq && apt-get install -y -qq time; }

peers=target/bench-peers
mkdir -p "$peers"

cargo build --release --locked --quiet --package retry-exec --package retry-sim
export RETRY_BIN="$PWD/target/release/retry"
# The default build without its default `tls` feature, to say what TLS costs a run's start.
CARGO_TARGET_DIR="$PWD/target/bench-no-tls" cargo build --release --locked --quiet --no-default-features
export RETRY_NO_TLS="$PWD/target/bench-no-tls/release/retry"
export RETRY_SIM_BIN="$PWD/target/release/retry-sim"
scripts/dist x86_64 >/dev/null
export RETRY_RELEASE="$PWD/target/x86_64-unknown-linux-musl/release/retry"

cc -O2 -static -o "$peers/spawn" bench/spawn.c
export SPAWN_FLOOR="$PWD/$peers/spawn"
cc -O2 -o "$peers/starts" bench/starts.c
export STARTS_BIN="$PWD/$peers/starts"
unpack_debian_retry "$peers"
[ -x "$peers/attempt/bin/attempt" ] || cargo install --quiet --locked attempt-cli --root "$peers/attempt"
export PEER_ATTEMPT="$PWD/$peers/attempt/bin/attempt"

python3 bench/measure.py > BENCHMARKS.md
cat BENCHMARKS.md
