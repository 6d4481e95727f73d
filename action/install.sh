#!/usr/bin/env bash
# The action's first step: find the retry binary the step runs, and give its path as the
# step output `binary`. The `binary` input (INPUT_BINARY) names one already on the runner;
# otherwise the tool is built from the action's own checkout with cargo, once per job, under
# $RUNNER_TEMP.
set -euo pipefail

if [ -n "${INPUT_BINARY-}" ]; then
  binary=$INPUT_BINARY
else
  version=$(sed -n 's/^version = "\(.*\)"$/\1/p' "$GITHUB_ACTION_PATH/Cargo.toml" | head -n 1)
  root="$RUNNER_TEMP/retry-exec-$version"
  binary="$root/bin/retry"
  if [ ! -x "$binary" ]; then
    cargo install --quiet --locked --path "$GITHUB_ACTION_PATH" --root "$root"
  fi
fi
if [ ! -x "$binary" ] || ! "$binary" --version >/dev/null; then
  echo "retry action: the binary input does not name a retry that runs: $binary" >&2
  exit 125
fi
echo "binary=$binary" >>"$GITHUB_OUTPUT"
