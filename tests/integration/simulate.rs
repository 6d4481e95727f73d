//! `retry simulate`: the contention experiment from the command line.

use crate::harness::{retry, Scratch};

#[test]
fn prints_a_table_and_writes_csv_and_svg() {
    let scratch = Scratch::new();
    let (csv, svg) = (scratch.path("sim.csv"), scratch.path("sim.svg"));
    let run = retry([
        "simulate",
        "--clients",
        "1,2",
        "--trials",
        "30",
        "--seed",
        "4",
    ])
    .args([
        "--csv",
        csv.to_str().unwrap(),
        "--svg",
        svg.to_str().unwrap(),
    ])
    .run();
    run.expect_code(0)
        .expect_stdout_contains("repeat with --seed 4");
    for strategy in ["no backoff", "none", "full", "equal", "decorrelated"] {
        assert!(
            run.stdout()
                .contains(&format!("\n{strategy:<14}       2       3.0")),
            "{strategy}\n{run}"
        );
    }
    let rows: Vec<String> = scratch.read("sim.csv").lines().map(String::from).collect();
    assert_eq!(
        rows.len(),
        1 + 5 * 2,
        "a header and a row per strategy and client count"
    );
    assert!(rows[0].starts_with("strategy,clients,trials,work_mean,work_p5,work_p50,work_p95,"));
    assert!(
        rows[1].starts_with("no backoff,1,30,1,1,1,1,"),
        "{}",
        rows[1]
    );
    let picture = scratch.read("sim.svg");
    assert!(picture.starts_with("<svg") && picture.matches("<polyline").count() == 10);
}

#[test]
fn the_same_seed_gives_the_same_results() {
    let table = || {
        retry([
            "simulate",
            "--clients",
            "20",
            "--trials",
            "10",
            "--seed",
            "9",
        ])
        .run()
        .stdout()
    };
    let strip_timing = |text: String| {
        text.lines()
            .filter(|l| !l.contains(" trials in "))
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert_eq!(strip_timing(table()), strip_timing(table()));
}

#[test]
fn simulate_is_the_subcommand_only_as_the_first_word() {
    for args in [
        &["-n", "1", "--", "simulate"][..],
        &["--", "simulate"],
        &["-n", "1", "simulate"],
    ] {
        retry(args)
            .run()
            .expect_code(127)
            .expect_stderr("command not found: simulate");
    }
    retry(["help"])
        .run()
        .expect_code(127)
        .expect_stderr("command not found: help");
}

#[test]
fn bad_simulator_input_exits_125() {
    for args in [
        &["simulate", "--clients", "0"][..],
        &["simulate", "--trials", "0"],
        &["simulate", "--jitter", "some"],
        &["simulate", "--clients", "1-4294967295"],
    ] {
        retry(args).run().expect_code(125).expect_stderr(args[1]);
    }
    retry(["simulate", "--base", "5s", "--cap", "1s"])
        .run()
        .expect_code(125)
        .expect_stderr("--cap (1s)");
}

#[test]
fn a_reader_that_goes_away_ends_the_simulator_quietly() {
    // 5000 rows, more than a pipe holds: the writes after head has gone meet a broken pipe.
    let clients = vec!["1"; 1000].join(",");
    let run =
        crate::harness::shell("\"$RETRY\" simulate --clients $CLIENTS --trials 1 | head -n 1")
            .env("CLIENTS", clients)
            .run();
    run.expect_code(0);
    assert_eq!(run.stderr(), "", "{run}");
}
