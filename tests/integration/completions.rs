//! The committed bash, zsh and fish completions, tried in the real shells: COMMAND completes as a
//! command, its arguments with that command's own completion, and the tool's options with their
//! values. (`generated_files` proves they are what the definition makes today.)

use crate::support::harness::{Scratch, program};

/// What bash offers for `line` (the cursor at its end), with the completions in `scratch`.
fn bash_offers(line: &str) -> Vec<String> {
    let script = format!(
        "source /usr/share/bash-completion/bash_completion\n\
         source {}/completions/retry.bash\n\
         COMP_LINE='{line}'; COMP_POINT=${{#COMP_LINE}}\n\
         read -ra COMP_WORDS <<< \"$COMP_LINE\"\n\
         [[ $COMP_LINE == *' ' ]] && COMP_WORDS+=('')\n\
         COMP_CWORD=$((${{#COMP_WORDS[@]}} - 1))\n\
         _retry retry \"${{COMP_WORDS[COMP_CWORD]}}\" \"${{COMP_WORDS[COMP_CWORD-1]}}\"\n\
         printf '%s\\n' \"${{COMPREPLY[@]}}\"\n",
        env!("CARGO_MANIFEST_DIR")
    );
    let run = program("bash").args(["--norc", "-c", &script]).run();
    run.expect_code(0);
    run.stdout()
        .lines()
        .map(|word| word.trim().to_string())
        .collect()
}

/// What fish offers for `line`.
fn fish_offers(line: &str) -> Vec<String> {
    fish_lines(line)
        .iter()
        .map(|line| line.split('\t').next().unwrap_or_default().to_string())
        .collect()
}

/// What fish offers for `line`, each offer with its description after a tab.
fn fish_lines(line: &str) -> Vec<String> {
    let script = format!(
        "source {}/completions/retry.fish; complete -C '{line}'",
        env!("CARGO_MANIFEST_DIR")
    );
    // Not --no-config, which would leave fish without the completions it ships (git's, curl's);
    // a home of its own keeps the user's configuration out instead.
    let home = Scratch::new();
    let run = program("fish")
        .args(["-c", &script])
        .env("HOME", home.path(""))
        .env("XDG_CONFIG_HOME", home.path("config"))
        .env("XDG_DATA_HOME", home.path("data"))
        .run();
    run.expect_code(0);
    run.stdout().lines().map(String::from).collect()
}

/// What zsh offers for `line`, run in a pseudo-terminal with the completions on its `$fpath`.
fn zsh_offers(line: &str) -> Vec<String> {
    let scratch = Scratch::new();
    let run = program("zsh")
        .args([
            "-f",
            concat!(env!("CARGO_MANIFEST_DIR"), "/tests/support/capture.zsh"),
        ])
        .args([concat!(env!("CARGO_MANIFEST_DIR"), "/completions"), line])
        .env("HOME", scratch.path(""))
        .run();
    run.expect_code(0);
    run.stdout().lines().map(String::from).collect()
}

#[track_caller]
fn assert_offers(shell: &str, offered: &[String], wanted: &[&str], unwanted: &[&str]) {
    for word in wanted {
        assert!(
            offered.iter().any(|offer| offer == word),
            "{shell} does not offer {word:?}: {offered:?}"
        );
    }
    for word in unwanted {
        assert!(
            !offered.iter().any(|offer| offer == word),
            "{shell} offers {word:?}: {offered:?}"
        );
    }
}

/// What a shell offers for a line.
type Offers = fn(&str) -> Vec<String>;

/// Each shell, and what it offers for a line.
fn shells() -> [(&'static str, Offers); 3] {
    [
        ("bash", bash_offers),
        ("zsh", zsh_offers),
        ("fish", fish_offers),
    ]
}

#[test]
fn the_command_completes_as_a_command() {
    for (shell, offers) in shells() {
        assert_offers(shell, &offers("retry -- gi"), &["git"], &["--jitter"]);
        assert_offers(shell, &offers("retry -n 3 gi"), &["git"], &[]);
    }
}

#[test]
fn the_commands_arguments_complete_with_its_own_completion() {
    for (shell, offers) in shells() {
        assert_offers(shell, &offers("retry -- git chec"), &["checkout"], &[]);
        assert_offers(
            shell,
            &offers("retry --base 1s git chec"),
            &["checkout"],
            &[],
        );
        // curl's own options, never retry's.
        assert_offers(shell, &offers("retry -- curl --inc"), &["--include"], &[]);
        assert_offers(shell, &offers("retry -- curl --jit"), &[], &["--jitter"]);
        assert_offers(shell, &offers("retry -- curl "), &[], &["budget"]);
    }
}

#[test]
fn retrys_own_options_complete_with_their_values() {
    for (shell, offers) in shells() {
        assert_offers(shell, &offers("retry --jit"), &["--jitter"], &[]);
        let values = offers("retry --jitter ");
        assert_offers(shell, &values, &["full", "decorrelated"], &["Cargo.toml"]);
        assert_offers(shell, &offers("retry --log-format "), &["json"], &[]);
    }
}

#[test]
fn the_subcommands_complete_with_their_own_words_and_options() {
    for (shell, offers) in shells() {
        assert_offers(shell, &offers("retry bud"), &["budget"], &[]);
        assert_offers(shell, &offers("retry budget "), &["show", "set"], &[]);
        let show = offers("retry budget show --");
        assert_offers(
            shell,
            &show,
            &["--budget-store", "--log-format"],
            &["--rate"],
        );
        let set = offers("retry budget set --");
        assert_offers(
            shell,
            &set,
            &["--rate", "--ratio", "--window"],
            &["--log-format"],
        );
    }
}

#[test]
fn fish_says_what_each_value_means() {
    let offered = fish_lines("retry --jitter ");
    let described = |word: &str| {
        offered
            .iter()
            .find(|line| line.starts_with(&format!("{word}\t")))
            .map(|line| line.split('\t').nth(1).unwrap_or_default().to_string())
            .unwrap_or_else(|| panic!("fish offers no {word}: {offered:?}"))
    };
    assert_ne!(described("full"), described("none"), "{offered:?}");
}

#[test]
fn a_subcommands_options_complete_after_the_name_it_is_given() {
    for (shell, offers) in shells() {
        let budget = offers("retry budget set api --");
        assert_offers(shell, &budget, &["--rate", "--window", "--clear"], &[]);
        let job = offers("retry job set nightly --");
        assert_offers(shell, &job, &["--overlap", "--alert-after"], &[]);
    }
}

#[test]
fn a_files_option_completes_a_path_and_a_signals_the_signals() {
    for (shell, offers) in shells() {
        let report = offers("retry --report Cargo.to");
        assert_offers(shell, &report, &["Cargo.toml"], &[]);
        let signal = offers("retry --timeout-signal ");
        assert_offers(shell, &signal, &["TERM", "INT", "KILL"], &["Cargo.toml"]);
    }
}

#[test]
fn a_repeatable_option_is_offered_again() {
    for (shell, offers) in shells() {
        let again = offers("retry --retry-on exit:1 --retry-o");
        assert_offers(shell, &again, &["--retry-on"], &[]);
    }
    // zsh alone leaves out an option already given, as it should one given once.
    let twice = zsh_offers("retry --jitter full --jit");
    assert_offers("zsh", &twice, &[], &["--jitter"]);
}
