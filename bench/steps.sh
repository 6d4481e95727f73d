#!/usr/bin/env bash
# What each change of a series did to a short run: builds the two binaries users get (the
# release archive's, scripts/dist's recipe, and the default build, `cargo install`'s) at each
# commit given, in a worktree of its own under target/steps/, and counts with callgrind the
# instructions of `retry -- true` and of one more attempt (1,001 attempts of `false` less 1,
# over 1,000), in this shell's environment (its size is said). The first commit is the starting
# point. Writes bench/steps.md, which BENCHMARKS.md quotes; about a minute a commit.
#
#   bench/steps.sh de82749 2b5951a d1ad0e8 d28f461 195bb41
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -gt 0 ] || { echo "usage: bench/steps.sh COMMIT..." >&2; exit 2; }
command -v valgrind >/dev/null || { echo "bench/steps.sh: needs valgrind (apt-get install valgrind)" >&2; exit 1; }
command -v musl-gcc >/dev/null || { echo "bench/steps.sh: needs musl-gcc (apt-get install musl-tools)" >&2; exit 1; }

musl=x86_64-unknown-linux-musl
tree=target/steps/tree
state=$(mktemp -d)
# The worktree goes too when a build fails or the script is stopped; one left by an earlier run
# that was killed is removed before the first is made.
trap 'rm -rf "$state" bench/steps.md.new; git worktree remove --force "$tree" 2>/dev/null || true' EXIT
git worktree remove --force "$tree" 2>/dev/null || true
export XDG_STATE_HOME=$state

# Instructions of the command's own process.
count() {
  valgrind --tool=callgrind --callgrind-out-file=/dev/null "$@" 2>&1 >/dev/null |
    sed -n 's/.*Collected : \([0-9]*\).*/\1/p'
}

# `$1` with a comma between each three digits.
grouped() {
  echo "$1" | sed ':a;s/\B[0-9]\{3\}\>/,&/;ta'
}

# `retry -- true`, and one more attempt, of the binary `$1`.
measure() {
  local start one many
  start=$(count "$1" -- true)
  one=$(count "$1" -q --budget off -n 1 --base 0s -- false)
  many=$(count "$1" -q --budget off -n 1001 --base 0s -- false)
  echo "$(grouped "$start") | $(grouped $(((many - one) / 1000)))"
}

{
  echo "| commit | change | release archive: \`retry -- true\` | per attempt | default build: \`retry -- true\` | per attempt |"
  echo "|---|---|---|---|---|---|"
  # One target directory for them all, so that only the workspace's own crates build again.
  export CARGO_TARGET_DIR=$PWD/target/steps/target
  for commit in "$@"; do
    git worktree add --quiet --detach "$tree" "$commit"
    (cd "$tree" && cargo build --release --quiet --locked --features tls --target "$musl" &&
      cargo build --release --quiet --locked) >&2
    git worktree remove --force "$tree"
    change=$(git log -1 --format=%s "$commit")
    [ "$commit" = "$1" ] && change="the starting point"
    echo "| $(git rev-parse --short "$commit") | $change |" \
      "$(measure "$CARGO_TARGET_DIR/$musl/release/retry") |" \
      "$(measure "$CARGO_TARGET_DIR/release/retry") |"
  done
} > bench/steps.md.new
{
  echo "Measured by \`bench/steps.sh $*\` on $(date +%F), in an environment of $(env | wc -l) variables:"
  echo
  cat bench/steps.md.new
} > bench/steps.md
rm bench/steps.md.new
cat bench/steps.md
