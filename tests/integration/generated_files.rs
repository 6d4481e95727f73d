//! The committed man pages and completions are what the generator (`cargo xtask generate`)
//! makes of the clap definition now, the man pages pass `mandoc` and `groff` cleanly, and every
//! example of the help is in the README.

use std::path::Path;

use crate::support::harness::program;

/// The generator's own code, which writes what it finds here.
#[path = "../../xtask/src/completions.rs"]
mod completions;
#[path = "../../xtask/src/generated.rs"]
mod generated;
#[path = "../../xtask/src/man.rs"]
mod man;

#[test]
fn generated_files_are_fresh() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let stale: Vec<String> = generated::generated(root)
        .into_iter()
        .filter(|(path, content)| std::fs::read(path).ok().as_ref() != Some(content))
        .map(|(path, _)| path.display().to_string())
        .collect();
    assert!(
        stale.is_empty(),
        "stale generated files: {}\nregenerate them with: cargo xtask generate",
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

#[test]
fn the_man_pages_give_a_value_only_to_options_that_take_one() {
    let command = retry_exec::full_command();
    let pages = [
        man::retry_page(&command),
        man::simulate_page(&command),
        man::budget_page(&command),
    ];
    let switches = [
        "\\-\\-serial",
        "\\-\\-backoff",
        "\\-\\-shared",
        "\\-\\-quiet",
    ];
    for page in &pages {
        for switch in switches {
            assert!(
                !page.contains(&format!("\\fB{switch}\\fR \\fI")),
                "{switch} is shown taking a value"
            );
        }
        assert!(!page.contains("[default: false]"), "a switch's default");
    }
    assert!(pages[0].contains(".B retry simulate load"), "the SYNOPSIS");
    assert!(
        !pages[2].contains("RETRY_DEPTH"),
        "budget show has no COMMAND to be nested around"
    );
}
