#!/usr/bin/env bash
# The action's second step: run INPUT_COMMAND under retry (RETRY_BINARY), each INPUT_* that is
# set becoming the option it names, and --ci github, so that the tool writes the step's outputs
# and summary itself. The step ends with retry's exit status.
set -euo pipefail

args=(--ci github)
add() { # add OPTION VALUE: the option, when its input is set
  if [ -n "$2" ]; then args+=("$1" "$2"); fi
}
add_each() { # add_each OPTION LINES: the option once for each line of its input
  while IFS= read -r line; do
    add "$1" "$line"
  done <<<"$2"
}
add --max-attempts "${INPUT_MAX_ATTEMPTS-}"
add --timeout "${INPUT_TIMEOUT-}"
add --max-time "${INPUT_MAX_TIME-}"
add --base "${INPUT_BASE-}"
add --cap "${INPUT_CAP-}"
add --jitter "${INPUT_JITTER-}"
add_each --retry-on "${INPUT_RETRY_ON-}"
add_each --stop-on "${INPUT_STOP_ON-}"
while IFS= read -r line; do
  if [ -n "$line" ]; then args+=("$line"); fi
done <<<"${INPUT_EXTRA_ARGS-}"

case "${INPUT_SHELL:-bash}" in
  bash) shell=(bash --noprofile --norc -eo pipefail -c) ;;
  sh) shell=(sh -e -c) ;;
  *)
    echo "retry action: the shell input must be bash or sh" >&2
    exit 125
    ;;
esac
exec "$RETRY_BINARY" "${args[@]}" -- "${shell[@]}" "${INPUT_COMMAND:?the command input is required}"
