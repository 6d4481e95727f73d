//! The repository's own tasks, run as `cargo xtask TASK`:
//!
//! - `generate`: write the man pages (`man/`, `crates/sim/man/`), the completions
//!   (`completions/`), the reference's tables of options, variables and
//!   events from the clap definitions (`retry`'s and `retry-sim`'s), the tables `--help` prints
//!   and the definitions of the variables and events. A test fails,
//!   naming this command, when the committed files are not what it writes.

#![forbid(unsafe_code)]

mod completions;
mod generated;
mod man;
mod options;
mod readme;
mod reference;
mod roff;
mod sim_page;

use std::path::Path;
use std::process::ExitCode;

fn main() -> ExitCode {
    let task = std::env::args().nth(1);
    match task.as_deref() {
        Some("generate") => match generate() {
            Ok(()) => ExitCode::SUCCESS,
            Err(err) => {
                eprintln!("xtask generate: {err}");
                ExitCode::FAILURE
            }
        },
        _ => {
            eprintln!("usage: cargo xtask generate");
            ExitCode::from(2)
        }
    }
}

/// Write every generated file in the repository, and say which changed.
fn generate() -> std::io::Result<()> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let every = generated::generated(&root).into_iter();
    for (path, content) in every.chain([sim_page::sim_generated(&root)]) {
        if std::fs::read(&path).ok().as_ref() == Some(&content) {
            continue;
        }
        std::fs::create_dir_all(path.parent().expect("a file in a folder"))?;
        std::fs::write(&path, &content)?;
        println!(
            "wrote {}",
            path.strip_prefix(&root).unwrap_or(&path).display()
        );
    }
    Ok(())
}
