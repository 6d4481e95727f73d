# Print, one a line, what zsh's completion offers for a command line: `zsh -f capture.zsh DIR
# LINE` runs an interactive zsh in a pseudo-terminal (zpty) with DIR first on its $fpath, types
# LINE and a TAB, and prints every match handed to compadd.
#
# The completing shell echoes what it is sent, so the markers it prints are written in capitals
# and printed in lower case: only its output, never its echo, holds them in lower case.
zmodload zsh/zpty || exit 2
local dir=$1 line=$2 out match

zpty completing zsh -f -i
zpty -w completing "PROMPT='' RPROMPT='' PS2=''; unsetopt zle_bracketed_paste"
zpty -w completing "fpath=(${(q)dir} \$fpath); autoload -Uz compinit; compinit -u -D"
zpty -w completing 'zstyle ":completion:*" list-grouped false; zstyle ":completion:*" menu no'
zpty -w completing 'compadd() {
  local -a found
  builtin compadd -O found "$@"
  local each
  for each in $found; do print -r -- "${(L):-@@MATCH@@}$each" >/dev/tty; done
  builtin compadd "$@"
}'
zpty -w completing 'finished() { print -r -- ${(L):-@@DONE@@} >/dev/tty }'
zpty -w completing 'comppostfuncs=(finished); bindkey "^I" complete-word'
zpty -w completing 'print -r -- ${(L):-@@READY@@}'
zpty -r completing out '*@@ready@@*' || exit 2
zpty -n -w completing "$line"$'\t'
zpty -r completing out '*@@done@@*' || exit 2
for match in ${(f)${out//$'\r'/}}; do
  [[ $match == *@@match@@* ]] && print -r -- ${match#*@@match@@}
done
zpty -d completing
