//! The committed completions and man page must match what the clap definition generates now.
//!
//! Regenerate them with `RETRY_REGENERATE=1 cargo test --test integration generated`.

use std::path::{Path, PathBuf};

use clap::CommandFactory;
use clap_complete::Shell;
use retry::{docs, Cli};
use roff::{bold, roman, Roff};

/// Every generated file: its path in the repository and its content.
fn generated() -> Vec<(PathBuf, Vec<u8>)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = vec![
        (root.join("man/retry.1"), man_page()),
        (root.join("man/retry-simulate.1"), simulate_man_page()),
    ];
    for shell in [
        Shell::Bash,
        Shell::Zsh,
        Shell::Fish,
        Shell::Elvish,
        Shell::PowerShell,
    ] {
        let mut content = Vec::new();
        clap_complete::generate(shell, &mut Cli::command(), "retry", &mut content);
        let name = match shell {
            Shell::Bash => "retry.bash",
            Shell::Zsh => "_retry",
            Shell::Fish => "retry.fish",
            Shell::Elvish => "retry.elv",
            _ => "_retry.ps1",
        };
        files.push((root.join("completions").join(name), content));
    }
    files
}

/// The man page: clap_mangen's sections, plus EXIT STATUS and ENVIRONMENT from the tables the
/// binary's own `--help` prints.
fn man_page() -> Vec<u8> {
    // The exit-status table and environment get sections of their own, so they are left out of
    // the text clap_mangen would copy from `--help`.
    let command = Cli::command().after_help("").after_long_help("");
    let man = clap_mangen::Man::new(command);
    let mut page = Vec::new();
    man.render_title(&mut page).unwrap();
    man.render_name_section(&mut page).unwrap();
    man.render_synopsis_section(&mut page).unwrap();
    man.render_description_section(&mut page).unwrap();
    man.render_options_section(&mut page).unwrap();
    let mut extra = Roff::new();
    table_section(&mut extra, "EXIT STATUS", &docs::exit_statuses());
    table_section(&mut extra, "SIGNALS", &docs::signals());
    table_section(&mut extra, "ENVIRONMENT", &docs::environment());
    extra.to_writer(&mut page).unwrap();
    man.render_version_section(&mut page).unwrap();
    page
}

/// The man page of `retry simulate`, as clap_mangen renders a subcommand.
fn simulate_man_page() -> Vec<u8> {
    let command = Cli::command();
    let simulate = command
        .find_subcommand("simulate")
        .expect("the simulate subcommand")
        .clone();
    let mut page = Vec::new();
    clap_mangen::Man::new(simulate.name("retry-simulate"))
        .render(&mut page)
        .unwrap();
    page
}

fn table_section(roff: &mut Roff, title: &str, rows: &[(&str, impl AsRef<str>)]) {
    roff.control("SH", [title]);
    for (term, meaning) in rows {
        roff.control("TP", []);
        roff.text([bold(*term)]);
        roff.text([roman(meaning.as_ref())]);
    }
}

#[test]
fn generated_files_are_fresh() {
    let regenerate = std::env::var_os("RETRY_REGENERATE").is_some();
    let mut stale = Vec::new();
    for (path, content) in generated() {
        if regenerate {
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, &content).unwrap();
        } else if std::fs::read(&path).ok().as_ref() != Some(&content) {
            stale.push(path.display().to_string());
        }
    }
    assert!(
        stale.is_empty(),
        "stale generated files: {}\nregenerate them with: \
         RETRY_REGENERATE=1 cargo test --test integration generated",
        stale.join(", ")
    );
}
