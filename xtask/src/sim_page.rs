//! The man page of `retry-sim`, written from its clap definition and its examples, as `retry`'s
//! are.

use std::path::{Path, PathBuf};

use clap::{Command, CommandFactory};
use retry_sim::examples;

use super::roff::Roff;

/// `retry-sim(1)`.
pub(crate) fn sim_page(simulate: &Command) -> String {
    let load = simulate
        .find_subcommand("load")
        .expect("the simulate load subcommand");
    let metastable = simulate
        .find_subcommand("metastable")
        .expect("the simulate metastable subcommand");
    let mut page = Roff::new("RETRY\\-SIM", simulate);
    page.section("NAME");
    page.line("retry\\-sim \\- rerun the experiments behind retry(1)'s defaults with its own");
    page.line("backoff and budget");
    page.section("SYNOPSIS");
    page.line(".B retry\\-sim");
    page.line("[\\fBcontention\\fR] [\\fIOPTIONS\\fR]");
    page.line(".br");
    page.line(".B retry\\-sim load");
    page.line("[\\fIOPTIONS\\fR]");
    page.line(".br");
    page.line(".B retry\\-sim metastable");
    page.line("[\\fIOPTIONS\\fR]");
    page.section("DESCRIPTION");
    page.paragraphs(&simulate.get_long_about().expect("a long about").to_string());
    page.options(simulate, "OPTIONS");
    page.examples(&examples::CONTENTION);
    page.section("LOAD");
    page.paragraphs(&load.get_long_about().expect("a long about").to_string());
    page.options(load, "LOAD OPTIONS");
    page.examples_titled("LOAD EXAMPLES", &examples::LOAD);
    page.section("METASTABLE");
    page.paragraphs(
        &metastable
            .get_long_about()
            .expect("a long about")
            .to_string(),
    );
    page.options(metastable, "METASTABLE OPTIONS");
    page.examples_titled("METASTABLE EXAMPLES", &examples::METASTABLE);
    page.section("SEE ALSO");
    page.line("\\fBretry\\fR(1)");
    page.finish()
}

/// The man page of `retry-sim`: its path in the repository and its content.
pub(crate) fn sim_generated(root: &Path) -> (PathBuf, Vec<u8>) {
    let command = retry_sim::options::SimulateCommand::command();
    (
        root.join("crates/sim/man/retry-sim.1"),
        sim_page(&command).into_bytes(),
    )
}
