//! The README's table of options says what the clap definition says: each row's flags, value
//! name (or accepted values) and default are the definition's, and every option of a run has a
//! row. A table left stale fails here.

use clap::Arg;

/// The rows of the README's options table: (the option cell, the default cell), unquoted.
fn rows() -> Vec<(String, String)> {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md"))
        .expect("read the README");
    let table = readme
        .split("| option | default | meaning |")
        .nth(1)
        .expect("the README's options table");
    table
        .lines()
        .skip(2)
        .take_while(|line| line.starts_with('|'))
        .map(|line| {
            let cells: Vec<&str> = line.split(" | ").collect();
            let cell = |index: usize| cells[index].trim_matches(['|', ' ']).replace("\\|", "|");
            (cell(0), cell(1))
        })
        .collect()
}

/// How the table writes `arg`: its flags, then its value name or its accepted values.
fn spelled(arg: &Arg) -> String {
    let mut flags = Vec::new();
    if let Some(short) = arg.get_short() {
        flags.push(format!("-{short}"));
    }
    flags.push(format!("--{}", arg.get_long().expect("a long flag")));
    let mut text = flags.join(", ");
    if arg.get_action().takes_values() {
        let values: Vec<String> = arg
            .get_possible_values()
            .iter()
            .map(|value| value.get_name().to_string())
            .collect();
        let value = match values.is_empty() {
            true => arg.get_value_names().expect("a value name")[0].to_string(),
            false => values.join("|"),
        };
        text = format!("{text} {value}");
    }
    text
}

/// How the table writes `arg`'s default: the value in backticks, or a word for none.
fn default_of(arg: &Arg) -> Option<String> {
    let defaults = arg.get_default_values();
    match (defaults.first(), arg.get_action().takes_values()) {
        (Some(value), true) => Some(format!("`{}`", value.to_string_lossy())),
        (_, false) => Some("off".into()),
        (None, true) => None,
    }
}

#[test]
fn every_row_says_what_the_definition_says_and_every_option_has_one() {
    let command = retry_exec::full_command();
    let rows = rows();
    let options: Vec<&Arg> = command
        .get_arguments()
        .filter(|arg| {
            arg.get_long()
                .is_some_and(|long| !["help", "version"].contains(&long))
        })
        .collect();
    for arg in &options {
        let flags = spelled(arg);
        let Some((_, default)) = rows
            .iter()
            .find(|(cell, _)| cell.trim_matches('`') == flags)
        else {
            panic!("the README's options table has no row `{flags}`");
        };
        if let Some(expected) = default_of(arg) {
            assert_eq!(default, &expected, "the README's default of {flags}");
        } else {
            assert!(
                !default.starts_with('`') || default.starts_with("`$"),
                "the README gives {flags} a default ({default}) the definition has not"
            );
        }
    }
    for (cell, _) in &rows {
        assert!(
            options
                .iter()
                .any(|arg| spelled(arg) == cell.trim_matches('`')),
            "the README's options table has a row `{cell}` for no option"
        );
    }
}
