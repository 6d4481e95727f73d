//! The option table of the reference (docs/reference.md, which the README links to), written
//! from the clap definition between two markers: each option's names and value, its default,
//! and its long help, so that the table never says what the definition does not.

use clap::{Arg, Command};

use super::options;

/// The line before the table.
pub(crate) const START: &str =
    "<!-- options: written by cargo xtask generate from src/options/ -->";
/// The line after it.
pub(crate) const END: &str = "<!-- end of options -->";

/// `readme` with the table between its markers written anew from `command`.
pub(crate) fn with_options(readme: &str, command: &Command) -> String {
    let start = readme.find(START).expect("the README's options marker") + START.len();
    let end = readme[start..]
        .find(END)
        .expect("the reference's end-of-options marker")
        + start;
    format!("{}\n{}{}", &readme[..start], table(command), &readme[end..])
}

/// The table: one row an option, in the order `--help` gives them.
fn table(command: &Command) -> String {
    let mut table = String::from("| option | default | meaning |\n|---|---|---|\n");
    let arguments =
        options::listed(command).filter(|arg| !matches!(arg.get_long(), Some("help" | "version")));
    for arg in arguments {
        let help = options::help(arg);
        let defaults: Vec<String> = options::defaults(arg)
            .iter()
            .map(|value| format!("`{value}`"))
            .collect();
        let default = defaults.join(", ");
        table += &format!(
            "| {} | {default} | {} |\n",
            cell(&names(arg)),
            cell(&help.replace("\n\n", " ").replace('\n', " "))
        );
    }
    table
}

/// An option's names and value, as `--help` writes them: `` `-n, --max-attempts N` ``.
fn names(arg: &Arg) -> String {
    let mut names = Vec::new();
    if let Some(short) = arg.get_short() {
        names.push(format!("-{short}"));
    }
    if let Some(long) = arg.get_long() {
        names.push(format!("--{long}"));
    }
    let mut text = names.join(", ");
    if arg.get_action().takes_values() {
        for value in arg.get_value_names().unwrap_or_default() {
            text += &format!(" {value}");
        }
    }
    format!("`{text}`")
}

/// `text` as a Markdown table cell: a `|` escaped.
fn cell(text: &str) -> String {
    text.replace('|', "\\|")
}
