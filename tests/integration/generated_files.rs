//! The committed man pages, completions and reference tables are what the generator (`cargo xtask generate`)
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
#[path = "../../xtask/src/options.rs"]
mod options;
#[path = "../../xtask/src/readme.rs"]
mod readme;
#[path = "../../xtask/src/reference.rs"]
mod reference;
#[path = "../../xtask/src/roff.rs"]
mod roff;

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
    for page in [
        "man/retry.1",
        "crates/sim/man/retry-sim.1",
        "man/retry-budget.1",
        "man/retry-job.1",
    ] {
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
    for (_, command) in retry_exec::docs::examples() {
        assert!(readme.contains(command), "the README lacks {command:?}");
    }
}

#[test]
fn the_man_pages_give_a_value_only_to_options_that_take_one() {
    let command = retry_exec::full_command();
    let mut pages = vec![man::retry_page(&command)];
    pages.extend(man::group_pages(&command).into_iter().map(|(_, page)| page));
    let switches = ["\\-\\-quiet", "\\-\\-plan", "\\-\\-shell"];
    for page in &pages {
        for switch in switches {
            assert!(
                !page.contains(&format!("\\fB{switch}\\fR \\fI")),
                "{switch} is shown taking a value"
            );
        }
        assert!(!page.contains("[default: false]"), "a switch's default");
    }
    assert!(pages[0].contains(".B retry budget show"), "the SYNOPSIS");
    assert!(
        !pages[1].contains("RETRY_DEPTH"),
        "budget show has no COMMAND to be nested around"
    );
}

#[test]
fn the_readmes_man_page_step_makes_man_retry_work() {
    // The README's step, as written, after `cargo install` (retry in ~/.cargo/bin).
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let step = readme
        .lines()
        .find(|line| line.contains("cp man/*.1"))
        .expect("the README's man-page step");
    let home = crate::support::harness::Scratch::new();
    std::fs::create_dir_all(home.path(".cargo/bin")).unwrap();
    let mut copy = program("sh").args(["-c", step.trim()]);
    copy = copy.env("HOME", home.path("")).current_dir(root);
    copy.run().expect_code(0);
    let path = format!("{}:/usr/bin:/bin", home.path(".cargo/bin").display());
    for page in ["retry", "retry-budget", "retry-job"] {
        let found = program("man")
            .args(["-w", page])
            .env("HOME", home.path(""))
            .env("PATH", &path)
            .env_remove("MANPATH")
            .run();
        found.expect_code(0);
        assert!(found.stdout().ends_with(&format!("/{page}.1\n")), "{found}");
    }
}

#[test]
fn the_readme_starts_with_the_first_minute_fits_100_columns_and_names_every_man_page() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let first_screen: Vec<&str> = readme.lines().take(40).collect();
    assert!(
        first_screen.contains(&"## Quick start"),
        "the quick start is past the first screen"
    );
    for (number, line) in readme.lines().enumerate() {
        assert!(
            line.chars().count() <= 100,
            "README.md:{}: {line}",
            number + 1
        );
    }
    let pages: Vec<String> = std::fs::read_dir(root.join("man"))
        .unwrap()
        .chain(std::fs::read_dir(root.join("crates/sim/man")).unwrap())
        .flatten()
        .filter_map(|entry| entry.file_name().into_string().ok())
        .filter_map(|name| name.strip_suffix(".1").map(str::to_string))
        .collect();
    assert!(pages.len() >= 4, "{pages:?}");
    let man_retry = std::fs::read_to_string(root.join("man/retry.1")).unwrap();
    for page in &pages {
        assert!(
            readme.contains(&format!("`man {page}`")),
            "the README names no {page}"
        );
        let roff = format!("\\fB{}\\fR(1)", page.replace('-', "\\-"));
        assert!(
            page == "retry" || man_retry.contains(&roff),
            "man retry names no {page}"
        );
    }
    let help = crate::support::harness::retry(["--help"]).run();
    for line in help.stdout().lines() {
        assert!(line.chars().count() <= 80, "retry --help: {line}");
    }
}
