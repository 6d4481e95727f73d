//! The man pages of `retry`, written from the clap definition and from the tables and examples
//! `--help` prints, so that the three never disagree.

use clap::Command;
use retry_exec::docs;

use super::roff::Roff;

/// `retry(1)`.
pub(crate) fn retry_page(command: &Command) -> String {
    let mut page = Roff::new("RETRY", command);
    page.section("NAME");
    page.line("retry \\- run a command again when it fails, waiting longer each time");
    page.section("SYNOPSIS");
    page.line(".B retry");
    page.line("[\\fIOPTIONS\\fR] [\\fB\\-\\-\\fR] \\fICOMMAND\\fR [\\fIARG\\fR]...");
    page.line(".br");
    page.line(".B retry budget show|set");
    page.line("\\fINAME\\fR [\\fIOPTIONS\\fR]");
    page.line(".br");
    page.line(".B retry job show|set|history");
    page.line("\\fIJOB\\fR [\\fIOPTIONS\\fR]");
    page.section("DESCRIPTION");
    page.paragraphs(&command.get_long_about().expect("a long about").to_string());
    page.line(".PP");
    page.text(
        "Instead of a COMMAND, the words budget show print a retry budget's state, and budget \
         set its terms; see retry-budget(1). The words job show, job set and job history print \
         and set a job's terms and print its history; see retry-job(1).",
    );
    page.options(command, "OPTIONS");
    page.section("EXIT STATUS");
    page.rows(&docs::exit_statuses());
    page.section("SIGNALS");
    page.rows(&docs::signals());
    let [of_command, of_hook, read] = docs::environment();
    page.section("ENVIRONMENT");
    page.text("Every attempt of COMMAND finds these in its environment:");
    page.rows(&of_command);
    page.line(".PP");
    page.text("A hook (--on-retry, --on-give-up) finds COMMAND's, and:");
    page.rows(&of_hook);
    page.line(".PP");
    page.text("retry itself reads:");
    page.rows(&read);
    page.examples(docs::examples());
    page.section("SEE ALSO");
    page.line(
        "\\fBretry\\-budget\\fR(1), \\fBretry\\-job\\fR(1), \\fBretry\\-sim\\fR(1), \\fBtimeout\\fR(1)",
    );
    page.finish()
}

/// The tool's own commands, each with a page of its own: its name, what it does in a line, the
/// word its subcommands take, and what it is.
const GROUPS: [(&str, &str, &str, &str); 2] = [
    (
        "budget",
        "show a retry budget of retry(1), or set its terms",
        "NAME",
        "A retry budget holds the tokens every run that names it (--budget) takes one of for each \
         retry. Its state and its terms live in its store (--budget-store): show prints them, set \
         changes the terms.",
    ),
    (
        "job",
        "show a job of retry(1), its terms and its history, or set its terms",
        "JOB",
        "A job is what runs named with --job have in common: a history of their runs, and terms \
         that say whether they may overlap, both kept in the store their budget uses. show \
         prints the terms, set changes them, history prints the runs.",
    ),
];

/// The pages of the tool's own commands (`retry-budget(1)`, `retry-job(1)`): each page's name
/// (`retry-budget`) and text.
pub(crate) fn group_pages(command: &Command) -> Vec<(String, String)> {
    GROUPS
        .iter()
        .map(|&(name, line, word, what)| {
            (
                format!("retry-{name}"),
                group_page(command, name, line, word, what),
            )
        })
        .collect()
}

/// The page of the tool's command `name`: `line` says what it does, its subcommands take
/// `word`, and `what` says what it is.
fn group_page(command: &Command, name: &str, line: &str, word: &str, what: &str) -> String {
    let group = command.find_subcommand(name).expect("the tool's command");
    let title = format!("RETRY\\-{}", name.to_uppercase());
    let mut page = Roff::new(&title, command);
    page.section("NAME");
    page.line(&format!("retry {name} \\- {line}"));
    page.section("SYNOPSIS");
    let subcommands: Vec<&Command> = group.get_subcommands().collect();
    for (index, subcommand) in subcommands.iter().enumerate() {
        if index > 0 {
            page.line(".br");
        }
        page.line(&format!(".B retry {name} {}", subcommand.get_name()));
        page.line(&format!("\\fI{word}\\fR [\\fIOPTIONS\\fR]"));
    }
    page.section("DESCRIPTION");
    page.paragraphs(what);
    for subcommand in subcommands {
        let heading = format!("RETRY {} {}", group.get_name(), subcommand.get_name());
        page.section(&heading.to_uppercase());
        page.paragraphs(
            &subcommand
                .get_long_about()
                .expect("a long about")
                .to_string(),
        );
        page.options_under(subcommand, "Options");
    }
    page.section("ENVIRONMENT");
    // Of the variables a run reads, only the store's concerns these commands: the others tell a
    // run about the retries around its COMMAND, which they do not have.
    let store: Vec<_> = docs::environment()[2]
        .iter()
        .filter(|(name, _)| *name == "RETRY_BUDGET_STORE")
        .cloned()
        .collect();
    page.rows(&store);
    page.section("SEE ALSO");
    let others: Vec<String> = GROUPS
        .iter()
        .filter(|(other, ..)| *other != name)
        .map(|(other, ..)| format!("\\fBretry\\-{other}\\fR(1)"))
        .collect();
    page.line(&format!(
        "\\fBretry\\fR(1), {}, \\fBretry\\-sim\\fR(1)",
        others.join(", ")
    ));
    page.finish()
}
