//! The committed completions and man page must match what the clap definition generates now.
//!
//! Regenerate them with `RETRY_REGENERATE=1 cargo test --test integration generated`.

use std::path::{Path, PathBuf};

use clap_complete::Shell;

use crate::completions;
use crate::harness::program;
use crate::man;

/// Every generated file: its path in the repository and its content.
fn generated() -> Vec<(PathBuf, Vec<u8>)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let command = retry_exec::full_command();
    let mut files = vec![
        (
            root.join("man/retry.1"),
            man::retry_page(&command).into_bytes(),
        ),
        (
            root.join("man/retry-simulate.1"),
            man::simulate_page(&command).into_bytes(),
        ),
        (
            root.join("man/retry-budget.1"),
            man::budget_page(&command).into_bytes(),
        ),
    ];
    let completions = root.join("completions");
    files.push((
        completions.join("retry.bash"),
        completions::bash(&command).into_bytes(),
    ));
    files.push((
        completions.join("_retry"),
        completions::zsh(&command).into_bytes(),
    ));
    files.push((
        completions.join("retry.fish"),
        completions::fish(&command).into_bytes(),
    ));
    for (shell, name) in [
        (Shell::Elvish, "retry.elv"),
        (Shell::PowerShell, "_retry.ps1"),
    ] {
        let mut content = Vec::new();
        clap_complete::generate(
            shell,
            &mut retry_exec::full_command(),
            "retry",
            &mut content,
        );
        files.push((completions.join(name), content));
    }
    files
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

#[test]
fn the_man_pages_pass_mandoc_and_groff_without_a_warning() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    for page in ["man/retry.1", "man/retry-simulate.1", "man/retry-budget.1"] {
        let page = root.join(page);
        let lint = program("mandoc").args(["-T", "lint"]).args([&page]).run();
        assert_eq!(
            lint.stdout() + &lint.stderr(),
            "",
            "mandoc -T lint (apt-get install mandoc)\n{lint}"
        );
        let groff = program("groff")
            .args(["-ww", "-man", "-Tutf8", "-z"])
            .args([&page])
            .run();
        groff.expect_code(0);
        assert_eq!(
            groff.stderr(),
            "",
            "groff -ww (apt-get install groff)\n{groff}"
        );
    }
}

#[test]
fn every_example_of_the_help_is_in_the_readme() {
    let readme = crate::recipes::readme_commands();
    for (_, command) in retry_exec::docs::examples().concat() {
        assert!(readme.contains(command), "the README lacks {command:?}");
    }
}
