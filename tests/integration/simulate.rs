//! `retry simulate`: the contention and load experiments from the command line.

use crate::support::harness::{Scratch, retry};

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

/// `text` without its line of timing.
fn without_timing(text: String) -> String {
    text.lines()
        .filter(|line| !line.contains(" trials in "))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn the_same_seed_gives_the_same_results_whichever_way_it_is_named() {
    let table = |words: &[&str]| {
        retry(words)
            .args(["--clients", "20", "--trials", "10", "--seed", "9"])
            .run()
            .stdout()
    };
    let unnamed = without_timing(table(&["simulate"]));
    assert_eq!(unnamed, without_timing(table(&["simulate"])));
    assert_eq!(unnamed, without_timing(table(&["simulate", "contention"])));
}

#[test]
fn the_load_experiment_prints_a_table_and_writes_csv_and_svg() {
    let scratch = Scratch::new();
    let (csv, svg) = (scratch.path("load.csv"), scratch.path("load.svg"));
    let run = || {
        retry([
            "simulate",
            "load",
            "--failure-rates",
            "0,1",
            "--policies",
            "none,bucket",
        ])
        .args(["--duration", "5s", "--seed", "3"])
        .args([std::ffi::OsStr::new("--csv"), csv.as_os_str()])
        .args([std::ffi::OsStr::new("--svg"), svg.as_os_str()])
        .run()
    };
    let first = run();
    first
        .expect_code(0)
        .expect_stdout_contains("repeat with --seed 3");
    assert!(first.stdout().contains("\nbucket          1"), "{first}");
    assert_eq!(
        without_timing(first.stdout()),
        without_timing(run().stdout())
    );
    let rows: Vec<String> = scratch.read("load.csv").lines().map(String::from).collect();
    assert_eq!(
        rows[0],
        "policy,failure_rate,clients,first_tries_mean,success_mean,success_sd,load_mean,load_sd"
    );
    assert_eq!(rows.len(), 1 + 2 * 2, "{rows:?}");
    assert!(rows[1].starts_with("none,0,100,"), "{}", rows[1]);
    assert!(
        rows[4].starts_with("bucket,1,100,") && rows[4].contains(",0,0,"),
        "{}",
        rows[4]
    );
    let picture = scratch.read("load.svg");
    assert_eq!(
        picture.matches("<polyline").count(),
        4,
        "two policies in two panels"
    );
    assert!(picture.contains(">failure rate</text>"));
}

#[test]
fn the_load_experiment_refuses_what_it_cannot_simulate() {
    for (args, says) in [
        (
            &["--failure-rates", "1.5"][..],
            "'1.5' is not a failure rate",
        ),
        (&["--rate", "10"], "expected N/DURATION"),
        (&["--policies", "hope"], "invalid value 'hope'"),
        (&["--clients", "100000", "--duration", "1h"], "too large"),
    ] {
        let run = retry(["simulate", "load"]).args(args).run();
        run.expect_code(125).expect_stderr(says);
        assert_eq!(run.stderr().lines().count(), 1, "{run}");
    }
}

#[test]
fn the_metastable_experiment_reproduces_the_papers_four_runs() {
    let scratch = Scratch::new();
    let (csv, svg) = (scratch.path("meta.csv"), scratch.path("meta.svg"));
    let run = retry([
        "simulate",
        "metastable",
        "--policies",
        "resend,ratio-shared",
    ])
    .args([
        "--trigger-capacities",
        "0.225,0.2",
        "--trigger-seconds",
        "9s,10s",
    ])
    .args(["--seed", "2"])
    .args([std::ffi::OsStr::new("--csv"), csv.as_os_str()])
    .args([std::ffi::OsStr::new("--svg"), svg.as_os_str()])
    .run();
    run.expect_code(0)
        .expect_stdout_contains("repeat with --seed 2")
        .expect_stdout_contains("policy             load  capacity      9s     10s\n");
    let rows: Vec<String> = scratch.read("meta.csv").lines().map(String::from).collect();
    assert_eq!(
        rows[0],
        "policy,trigger_capacity,trigger_seconds,load,recovered,recovery_seconds,\
         attempts_per_request,failed"
    );
    assert_eq!(rows.len(), 1 + 2 * 2 * 2 * 2, "{rows:?}");
    let outcome = |policy: &str, capacity: &str, seconds: &str, load: &str| {
        let start = format!("{policy},{capacity},{seconds},{load},");
        let row = rows.iter().find(|row| row.starts_with(&start));
        let row = row.unwrap_or_else(|| panic!("no {start}\n{rows:?}"));
        row.split(',').nth(4).unwrap().to_string()
    };
    // Huang et al. (OSDI 2022), section 4: a request every 75us, then every 100us.
    let (every_75us, every_100us) = ("0.381", "0.2857");
    assert_eq!(outcome("resend", "0.225", "10", every_75us), "true", "(a)");
    assert_eq!(outcome("resend", "0.2", "10", every_75us), "false", "(b)");
    assert_eq!(outcome("resend", "0.2", "9", every_75us), "true", "(c)");
    assert_eq!(outcome("resend", "0.2", "10", every_100us), "true", "(d)");
    let shared = rows.iter().filter(|row| row.starts_with("ratio-shared,"));
    assert!(shared.clone().count() == 8 && shared.clone().all(|row| row.contains(",true,")));
    let picture = scratch.read("meta.svg");
    assert_eq!(
        picture.matches("<polyline").count(),
        4,
        "two policies, two panels"
    );
    assert!(picture.contains(">Through 10s at 0.2 of capacity, from 60s, at load 0.381</text>"));
}

#[test]
fn the_metastable_experiment_refuses_what_it_cannot_simulate() {
    for (args, says) in [
        (
            &["--trigger-capacities", "1.5"][..],
            "'1.5' is not a fraction",
        ),
        (&["--trigger-seconds", "0s"], "'0s' is not a duration"),
        (
            &["--observe", "5s"],
            "--observe (5s) must be from 10s to 1h",
        ),
        (
            &["--intervals", "1us"],
            "a load of 28.6 times the --capacity",
        ),
        (&["--chart-trigger", "0.2"], "expected CAPACITY:DURATION"),
        (&["--trigger-seconds", "1h", "--observe", "1h"], "too large"),
    ] {
        let run = retry(["simulate", "metastable"]).args(args).run();
        run.expect_code(125).expect_stderr(says);
        assert_eq!(run.stderr().lines().count(), 1, "{run}");
    }
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
    let run = crate::support::harness::shell(
        "\"$RETRY\" simulate --clients $CLIENTS --trials 1 | head -n 1",
    )
    .env("CLIENTS", clients)
    .run();
    run.expect_code(0);
    assert_eq!(run.stderr(), "", "{run}");
}
