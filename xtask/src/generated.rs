//! Every file generated from the clap definition and the tables `--help` prints: the man pages,
//! the completions and the reference's tables (its options among them), with where each goes in
//! the repository.

use std::path::{Path, PathBuf};

use clap_complete::Shell;

use super::{completions, man, readme, reference};

/// Every generated file of `retry`: its path in the repository and its content.
pub(crate) fn generated(root: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let command = retry_exec::full_command();
    let mut files = vec![(
        root.join("man/retry.1"),
        man::retry_page(&command).into_bytes(),
    )];
    for (name, page) in man::group_pages(&command) {
        files.push((root.join(format!("man/{name}.1")), page.into_bytes()));
    }
    let reference = std::fs::read_to_string(root.join("docs/reference.md")).expect("reference.md");
    let reference = readme::with_options(&reference::with_tables(&reference), &command);
    files.push((root.join("docs/reference.md"), reference.into_bytes()));
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
