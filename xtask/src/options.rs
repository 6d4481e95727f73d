//! The options every generated page lists, and what it shows of each: the options of a command
//! that `--help` shows (not its positionals, not the hidden ones), each one's long help, and its
//! default, so that the README's table and the man pages say the same from one reading of the
//! definition.

use clap::{Arg, Command};

/// The options of `command` a page lists, in the order `--help` gives them.
pub(crate) fn listed(command: &Command) -> impl Iterator<Item = &Arg> {
    command
        .get_arguments()
        .filter(|arg| !arg.is_positional() && !arg.is_hide_set())
}

/// The option's long help, or its short one when it has no other.
pub(crate) fn help(arg: &Arg) -> String {
    arg.get_long_help()
        .or(arg.get_help())
        .map(ToString::to_string)
        .unwrap_or_default()
}

/// The option's default values; none for a switch, whose default (off) says nothing its help
/// does not.
pub(crate) fn defaults(arg: &Arg) -> Vec<String> {
    match arg.get_action().takes_values() {
        true => arg
            .get_default_values()
            .iter()
            .map(|value| value.to_string_lossy().into_owned())
            .collect(),
        false => Vec::new(),
    }
}
