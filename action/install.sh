#!/usr/bin/env bash
# The action's first step: find the retry binary the step runs, and give its absolute path as
# the step output `binary`, so that the next step runs it from any working_directory. The
# `binary` input (INPUT_BINARY) names one already on the runner: an absolute path, a path
# relative to the workspace ($GITHUB_WORKSPACE, where this step runs), or a bare name found on
# PATH; otherwise the tool is built from the action's own checkout with cargo, once per job,
# under $RUNNER_TEMP.
set -euo pipefail

if [ -n "${INPUT_BINARY-}" ]; then
  case $INPUT_BINARY in
    /*) binary=$INPUT_BINARY ;;
    */*) binary="${GITHUB_WORKSPACE:-$PWD}/${INPUT_BINARY#./}" ;;
    *)
      binary=$(command -v -- "$INPUT_BINARY") && [ "${binary#/}" != "$binary" ] || {
        echo "retry action: the binary input names no program on PATH: $INPUT_BINARY" >&2
        exit 125
      }
      ;;
  esac
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
