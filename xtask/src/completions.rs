//! The bash, zsh and fish completions, written from the clap definition (the tests try them in
//! the real shells).
//!
//! A wrapper's completion does what those of `timeout`, `nohup` and `env` do: after the tool's
//! own options (and their values: strategies, formats, files), COMMAND completes as a command, and
//! its arguments with that command's own completion (bash-completion's `_command_offset`, zsh's
//! `_normal`, fish's `__fish_complete_subcommand`). clap_complete cannot say that, so these three
//! are written here; elvish and PowerShell keep clap_complete's.

use clap::{Arg, ArgAction, Command};

/// What an option of the tool takes.
enum Value {
    /// Nothing: a switch.
    Nothing,
    /// One of these words, each with what it means.
    OneOf(Vec<(String, String)>),
    /// A file name.
    File,
    /// A directory name.
    Directory,
    /// Free text: nothing to offer.
    Text,
}

/// One option of the tool, as the completions need it.
struct Flag {
    short: Option<char>,
    long: String,
    help: String,
    value: Value,
    /// Given more than once (`--retry-on`, `--report`): offered again after it is.
    repeatable: bool,
}

/// The signals offered for a value named SIGNAL (`--timeout-signal`): those a time limit is
/// asked to send, as `timeout -s` is; any other name or number is accepted all the same.
const SIGNALS: [(&str, &str); 7] = [
    ("TERM", "ask it to end (the default)"),
    ("INT", "as Ctrl-C does"),
    ("HUP", "as a closed terminal does"),
    ("QUIT", "end with a core dump"),
    ("USR1", "the program's own meaning"),
    ("USR2", "the program's own meaning"),
    ("KILL", "end it at once, with no say"),
];

/// The visible options of `command` (the tool, or a subcommand), with `--help` and `--version`.
fn flags(command: &Command) -> Vec<Flag> {
    let mut command = command.clone();
    command.build();
    command
        .get_arguments()
        .filter(|arg| !arg.is_positional() && !arg.is_hide_set())
        .map(|arg| Flag {
            short: arg.get_short(),
            long: arg
                .get_long()
                .expect("every option has a long name")
                .to_string(),
            help: arg.get_help().map(ToString::to_string).unwrap_or_default(),
            value: value_of(arg),
            repeatable: matches!(arg.get_action(), ArgAction::Append),
        })
        .collect()
}

/// What the positional arguments of `command` are called (`NAME`, `JOB`), in lower case.
fn positionals(command: &Command) -> Vec<String> {
    command
        .get_positionals()
        .filter(|arg| !arg.is_hide_set())
        .map(|arg| {
            let names = arg.get_value_names().unwrap_or_default();
            let name = names
                .first()
                .map_or(arg.get_id().as_str(), |name| name.as_str());
            name.to_ascii_lowercase()
        })
        .collect()
}

fn value_of(arg: &Arg) -> Value {
    if !matches!(arg.get_action(), ArgAction::Set | ArgAction::Append) {
        return Value::Nothing;
    }
    let possible: Vec<(String, String)> = arg
        .get_possible_values()
        .iter()
        .map(|value| {
            let help = value
                .get_help()
                .map(ToString::to_string)
                .unwrap_or_default();
            (value.get_name().to_string(), help)
        })
        .collect();
    if !possible.is_empty() {
        return Value::OneOf(possible);
    }
    let signals = || {
        let words = SIGNALS.map(|(name, what)| (name.to_string(), what.to_string()));
        Value::OneOf(words.to_vec())
    };
    // `FILE`, and `[FORMAT:]FILE` (`--report`), whose every example is a path.
    match arg.get_value_names().and_then(|names| names.first()) {
        Some(name) if name.ends_with("FILE") => Value::File,
        Some(name) if name == "DIR" => Value::Directory,
        Some(name) if name == "SIGNAL" => signals(),
        _ => Value::Text,
    }
}

impl Flag {
    fn takes_value(&self) -> bool {
        !matches!(self.value, Value::Nothing)
    }

    /// `-n --max-attempts`, or `--base`.
    fn names(&self) -> Vec<String> {
        let short = self.short.map(|short| format!("-{short}"));
        short
            .into_iter()
            .chain([format!("--{}", self.long)])
            .collect()
    }
}

/// The words of a value that is one of several.
fn names_of(words: &[(String, String)]) -> String {
    words
        .iter()
        .map(|(name, _)| name.as_str())
        .collect::<Vec<_>>()
        .join(" ")
}

/// The tool's own commands the completions know (`budget`, `job`), each with its
/// subcommands, whose options they take.
struct Group {
    /// `budget`.
    name: String,
    /// What it does, in a few words.
    about: String,
    /// Its subcommands: `show`, `set`.
    subcommands: Vec<Command>,
}

impl Group {
    /// The tool's own commands of `command`.
    fn all(command: &Command) -> Vec<Group> {
        command
            .get_subcommands()
            .map(|group| Group {
                name: group.get_name().to_string(),
                about: about(group),
                subcommands: group.get_subcommands().cloned().collect(),
            })
            .collect()
    }

    /// The subcommands' names, space-separated.
    fn names(&self) -> String {
        let names: Vec<&str> = self.subcommands.iter().map(Command::get_name).collect();
        names.join(" ")
    }
}

/// The names of `groups`, joined by `separator`.
fn group_names(groups: &[Group], separator: &str) -> String {
    let names: Vec<&str> = groups.iter().map(|group| group.name.as_str()).collect();
    names.join(separator)
}

/// What a subcommand does, in a few words, from its definition; a group without words of its
/// own (`budget`) takes its first subcommand's.
fn about(command: &Command) -> String {
    match command.get_about() {
        Some(about) => about.to_string().trim_end_matches('.').to_string(),
        None => command
            .get_subcommands()
            .next()
            .map(about)
            .unwrap_or_default(),
    }
}

/// The names of the options that take a value, for skipping their values.
fn value_names(flags: &[Flag]) -> Vec<String> {
    flags
        .iter()
        .filter(|flag| flag.takes_value())
        .flat_map(Flag::names)
        .collect()
}

const HEADER: &str = "completion for retry, written from its clap definition by \
                      `cargo xtask generate`; do not edit.";

/// The bash completion; it needs bash-completion.
pub(crate) fn bash(command: &Command) -> String {
    let own = flags(command);
    let groups = Group::all(command);
    let words = |flags: &[Flag]| {
        flags
            .iter()
            .flat_map(Flag::names)
            .collect::<Vec<_>>()
            .join(" ")
    };
    let mut script = format!(
        "# bash {HEADER}\n\
         # After retry's own options, COMMAND completes as a command, and its arguments with its\n\
         # own completion, as for timeout. Needs bash-completion (_init_completion,\n\
         # _command_offset).\n\n"
    );
    script += &format!(
        "_retry() {{\n\
         \x20   local cur prev words cword split\n\
         \x20   _init_completion -s || return\n\
         \x20   local i\n\
         \x20   for ((i = 1; i < cword; i++)); do\n\
         \x20       case ${{words[i]}} in\n\
         \x20           --) _command_offset $((i + 1)); return ;;\n\
         \x20           {skip}) ((i++)) ;;\n\
         \x20           -*) ;;\n\
         \x20           {tools}) if ((i == 1)); then _retry_${{words[i]}}; return; fi\n\
         \x20               _command_offset $i; return ;;\n\
         \x20           *) _command_offset $i; return ;;\n\
         \x20       esac\n\
         \x20   done\n\
         {values}\
         \x20   if [[ $cur == -* ]]; then\n\
         \x20       COMPREPLY=($(compgen -W '{own}' -- \"$cur\"))\n\
         \x20       return\n\
         \x20   fi\n\
         \x20   _command_offset $cword\n\
         \x20   if ((cword == 1)); then COMPREPLY+=($(compgen -W '{words}' -- \"$cur\")); fi\n\
         }}\n\n",
        tools = group_names(&groups, "|"),
        words = group_names(&groups, " "),
        skip = value_names(&own).join("|"),
        values = bash_values(&own),
        own = words(&own),
    );
    for group in &groups {
        script += &format!(
            "_retry_{group}() {{\n\
             \x20   if ((cword == 2)); then COMPREPLY=($(compgen -W '{names}' -- \"$cur\")); return; fi\n\
             \x20   case ${{words[2]}} in\n",
            group = group.name,
            names = group.names(),
        );
        for subcommand in &group.subcommands {
            let name = subcommand.get_name();
            script += &format!("        {name}) _retry_{}_{name} ;;\n", group.name);
        }
        script += "    esac\n}\n\n";
        for subcommand in &group.subcommands {
            let flags = flags(subcommand);
            script += &format!(
                "_retry_{group}_{name}() {{\n\
                 {values}\
                 \x20   COMPREPLY=($(compgen -W '{words}' -- \"$cur\"))\n\
                 }}\n\n",
                group = group.name,
                name = subcommand.get_name(),
                values = bash_values(&flags),
                words = words(&flags),
            );
        }
    }
    script + "complete -F _retry retry\n"
}

/// The `case $prev` that completes the value of an option, if the word is one.
fn bash_values(flags: &[Flag]) -> String {
    let mut case = String::from("    case $prev in\n");
    for flag in flags.iter().filter(|flag| flag.takes_value()) {
        let action = match &flag.value {
            Value::OneOf(words) => {
                format!(
                    "COMPREPLY=($(compgen -W '{}' -- \"$cur\"))",
                    names_of(words)
                )
            }
            Value::File => "_filedir".into(),
            Value::Directory => "_filedir -d".into(),
            _ => ":".into(),
        };
        case += &format!("        {}) {action}; return ;;\n", flag.names().join("|"));
    }
    case + "    esac\n"
}

/// The zsh completion, for a directory on `$fpath`.
pub(crate) fn zsh(command: &Command) -> String {
    let own = flags(command);
    let groups = Group::all(command);
    let described = |pairs: &[(&str, String)]| {
        pairs
            .iter()
            .map(|(name, about)| {
                let about = about.replace('"', "").replace('\'', "'\\''");
                format!("{name}\\:\"{about}\"")
            })
            .collect::<Vec<_>>()
            .join(" ")
    };
    let group_block = |group: &Group| {
        format!(
            "\x20 if [[ $words[2] == {name} ]] && (( CURRENT > 2 )); then\n\
             \x20   if (( CURRENT == 3 )); then\n\
             \x20     _alternative '{name}-commands:{name} command:(({words}))'\n\
             \x20   else\n\
             \x20     shift 2 words; (( CURRENT -= 2 ))\n\
             \x20     case $words[1] in\n\
             {arguments}\
             \x20     esac\n\
             \x20   fi\n\
             \x20   return\n\
             \x20 fi\n",
            name = group.name,
            arguments = group
                .subcommands
                .iter()
                .map(|subcommand| format!(
                    "      ({}) _arguments -S : \\\n{} ;;\n",
                    subcommand.get_name(),
                    zsh_specs_with_positionals(subcommand)
                ))
                .collect::<String>(),
            words = described(
                &group
                    .subcommands
                    .iter()
                    .map(|subcommand| (subcommand.get_name(), about(subcommand)))
                    .collect::<Vec<_>>()
            ),
        )
    };
    format!(
        "#compdef retry\n\
         # zsh {HEADER}\n\
         # After retry's own options, COMMAND completes as a command, and its arguments with its\n\
         # own completion (_normal), as for nice and env.\n\n\
         _retry() {{\n\
         \x20 local i\n\
         \x20 for (( i = 2; i < CURRENT; i++ )); do\n\
         \x20   case $words[i] in\n\
         \x20     (--) shift $i words; (( CURRENT -= i )); _normal; return ;;\n\
         \x20     ({skip}) (( i++ )) ;;\n\
         \x20     (-*) ;;\n\
         \x20     (*) break ;;\n\
         \x20   esac\n\
         \x20 done\n\
         {groups}\
         \x20 if (( CURRENT == 2 )) && [[ $PREFIX != -* ]]; then\n\
         \x20   _alternative 'commands:command:_command_names -e' \\\n\
         \x20     'retry-commands:retry command:(({tools}))'\n\
         \x20   return\n\
         \x20 fi\n\
         \x20 _arguments -S -A '-*' : \\\n{own} \\\n\
         \x20   '*::command and its arguments:_normal'\n\
         }}\n\n\
         _retry \"$@\"\n",
        skip = value_names(&own).join("|"),
        own = zsh_specs(&own),
        groups = groups.iter().map(group_block).collect::<String>(),
        tools = described(
            &groups
                .iter()
                .map(|group| (group.name.as_str(), group.about.clone()))
                .collect::<Vec<_>>()
        ),
    )
}

/// The `_arguments` specs of a subcommand: its options, then its positional arguments (after
/// which its options still complete: `retry budget set NAME --rate`).
fn zsh_specs_with_positionals(subcommand: &Command) -> String {
    let mut specs = zsh_specs(&flags(subcommand));
    for (index, name) in positionals(subcommand).iter().enumerate() {
        specs += &format!(" \\\n    '{}:{name}: '", index + 1);
    }
    specs
}

/// `_arguments` specs, one a line, joined by continuations.
fn zsh_specs(flags: &[Flag]) -> String {
    let mut specs = Vec::new();
    for flag in flags {
        let help = flag.help.replace('\'', "'\\''").replace(['[', ']'], "");
        let names = flag.names();
        // A repeatable option is offered again: no exclusion, and zsh's `*`.
        let exclusive = match flag.repeatable {
            true => "*".to_string(),
            false => format!("({})", names.join(" ")),
        };
        let action = match &flag.value {
            Value::Nothing => String::new(),
            Value::OneOf(words) => format!(":value:({})", names_of(words)),
            Value::File => ":file:_files".into(),
            Value::Directory => ":directory:_files -/".into(),
            Value::Text => ":value: ".into(),
        };
        for name in &names {
            // A value may follow the flag in the next word, or after = (long) or at once (short).
            let attached = match (flag.takes_value(), name.starts_with("--")) {
                (false, _) => "",
                (true, true) => "=",
                (true, false) => "+",
            };
            specs.push(format!("    '{exclusive}{name}{attached}[{help}]{action}'"));
        }
    }
    specs.join(" \\\n")
}

/// The fish completion, for `~/.config/fish/completions`.
pub(crate) fn fish(command: &Command) -> String {
    let own = flags(command);
    let groups = Group::all(command);
    let mut script = format!(
        "# fish {HEADER}\n\
         # After retry's own options, COMMAND completes as a command, and its arguments with its\n\
         # own completion (__fish_complete_subcommand), as for sudo and env.\n\n\
         # The tokens from COMMAND on, when the token being completed is COMMAND or one of its\n\
         # arguments; nothing (and false) while it is one of retry's own.\n\
         function __retry_command_tokens\n\
         \x20   set -l tokens (commandline -opc)\n\
         \x20   set -l current (commandline -ct)\n\
         \x20   set -l skip_value 0\n\
         \x20   for i in (seq 2 (count $tokens))\n\
         \x20       set -l token $tokens[$i]\n\
         \x20       if test $skip_value = 1\n\
         \x20           set skip_value 0\n\
         \x20           continue\n\
         \x20       end\n\
         \x20       switch $token\n\
         \x20           case --\n\
         \x20               string join \\n -- $tokens[(math $i + 1)..-1] $current\n\
         \x20               return 0\n\
         \x20           case {skip}\n\
         \x20               set skip_value 1\n\
         \x20           case '-*'\n\
         \x20           case '*'\n\
         \x20               string join \\n -- $tokens[$i..-1] $current\n\
         \x20               return 0\n\
         \x20       end\n\
         \x20   end\n\
         \x20   if test $skip_value = 0; and not string match -q -- '-*' $current\n\
         \x20       echo $current\n\
         \x20       return 0\n\
         \x20   end\n\
         \x20   return 1\n\
         end\n\n\
         # Whether the line so far is `retry WORDS...`, with at least as many tokens.\n\
         function __retry_words\n\
         \x20   set -l tokens (commandline -opc)\n\
         \x20   for i in (seq (count $argv))\n\
         \x20       set -l at (math $i + 1)\n\
         \x20       test \"$tokens[$at]\" = $argv[$i]; or return 1\n\
         \x20   end\n\
         end\n\n\
         # Whether the token being completed is the one after `retry WORDS...`.\n\
         function __retry_after\n\
         \x20   __retry_words $argv; and test (count (commandline -opc)) = (math (count $argv) + 1)\n\
         end\n\n\
         function __retry_subcommand\n\
         \x20   {subcommand}\n\
         end\n\n\
         function __retry_own\n\
         \x20   not __retry_subcommand; and not __retry_command_tokens >/dev/null\n\
         end\n\n\
         complete -c retry -f\n\
         complete -c retry -n 'not __retry_subcommand; and __retry_command_tokens >/dev/null' \
         -a '(__fish_complete_subcommand --commandline (__retry_command_tokens))'\n",
        skip = value_names(&own)
            .iter()
            .map(|name| format!("'{name}'"))
            .collect::<Vec<_>>()
            .join(" "),
        subcommand = groups
            .iter()
            .map(|group| format!("__retry_words {}", group.name))
            .collect::<Vec<_>>()
            .join("; or "),
    );
    let tools = groups
        .iter()
        .map(|group| (String::new(), group.name.clone(), group.about.clone()));
    let subcommand_words = groups.iter().flat_map(|group| {
        group.subcommands.iter().map(|subcommand| {
            let name = subcommand.get_name().to_string();
            (group.name.clone(), name, about(subcommand))
        })
    });
    for (words, name, what) in tools.chain(subcommand_words) {
        let condition = match words.as_str() {
            "" => "not __retry_subcommand; and test (count (commandline -opc)) = 1".to_string(),
            words => format!("__retry_after {words}"),
        };
        script += &format!(
            "complete -c retry -n '{condition}' -a {name} -d '{}'\n",
            what.replace('\'', "\\'")
        );
    }
    for flag in &own {
        script += &fish_line(flag, "__retry_own");
    }
    for group in &groups {
        for subcommand in &group.subcommands {
            let condition = format!("'__retry_words {} {}'", group.name, subcommand.get_name());
            for flag in &flags(subcommand) {
                script += &fish_line(flag, &condition);
            }
        }
    }
    script
}

/// Words with what each means, as fish offers them: a command substitution that prints each
/// word, a tab and its description.
fn fish_described(words: &[(String, String)]) -> String {
    let quoted = |text: &str| {
        let escaped = text
            .replace('\\', "\\\\")
            .replace('"', "\\\"")
            .replace('$', "\\$");
        format!("\"{}\"", escaped.replace('\'', "\\'"))
    };
    let pairs: Vec<String> = words
        .iter()
        .map(|(name, help)| format!("{} {}", quoted(name), quoted(help)))
        .collect();
    format!("(printf \"%s\\t%s\\n\" {})", pairs.join(" "))
}

fn fish_line(flag: &Flag, condition: &str) -> String {
    let mut line = format!("complete -c retry -n {condition}");
    if let Some(short) = flag.short {
        line += &format!(" -s {short}");
    }
    line += &format!(" -l {}", flag.long);
    line += &match &flag.value {
        Value::Nothing => String::new(),
        Value::OneOf(words) => format!(" -x -a '{}'", fish_described(words)),
        Value::File | Value::Directory => " -r -F".into(),
        Value::Text => " -x".into(),
    };
    format!("{line} -d '{}'\n", flag.help.replace('\'', "\\'"))
}
