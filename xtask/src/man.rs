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
    page.section("DESCRIPTION");
    page.paragraphs(&command.get_long_about().expect("a long about").to_string());
    page.line(".PP");
    page.text(
        "Instead of a COMMAND, the words budget show print a retry budget's state, and budget \
         set its terms; see retry-budget(1).",
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
    page.line("\\fBretry\\-budget\\fR(1), \\fBretry\\-sim\\fR(1), \\fBtimeout\\fR(1)");
    page.finish()
}

/// `retry-budget(1)`, the page of `retry budget show` and `retry budget set`.
pub(crate) fn budget_page(command: &Command) -> String {
    let budget = command
        .find_subcommand("budget")
        .expect("the budget subcommand");
    let mut page = Roff::new("RETRY\\-BUDGET", command);
    page.section("NAME");
    page.line("retry budget \\- show a retry budget of retry(1), or set its terms");
    page.section("SYNOPSIS");
    let subcommands: Vec<&Command> = budget.get_subcommands().collect();
    for (index, subcommand) in subcommands.iter().enumerate() {
        if index > 0 {
            page.line(".br");
        }
        page.line(&format!(".B retry budget {}", subcommand.get_name()));
        page.line("\\fINAME\\fR [\\fIOPTIONS\\fR]");
    }
    page.section("DESCRIPTION");
    page.paragraphs(
        "A retry budget holds the tokens every run that names it (--budget) takes one of for each \
         retry. Its state and its terms live in its store (--budget-store): show prints them, set \
         changes the terms.",
    );
    for subcommand in subcommands {
        let name = subcommand.get_name();
        page.section(&format!("RETRY BUDGET {}", name.to_uppercase()));
        page.paragraphs(
            &subcommand
                .get_long_about()
                .expect("a long about")
                .to_string(),
        );
        page.options_under(subcommand, "Options");
    }
    page.section("ENVIRONMENT");
    // Of the variables a run reads, only the store's concerns `budget show`: the others tell a
    // run about the retries around its COMMAND, which `budget show` does not have.
    let store: Vec<_> = docs::environment()[2]
        .iter()
        .filter(|(name, _)| *name == "RETRY_BUDGET_STORE")
        .cloned()
        .collect();
    page.rows(&store);
    page.section("SEE ALSO");
    page.line("\\fBretry\\fR(1)");
    page.finish()
}
