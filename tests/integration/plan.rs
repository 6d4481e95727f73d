//! `--plan`: the printed schedule, without running anything.

use crate::support::harness::{Scratch, retry, shell};

#[test]
fn prints_one_row_per_attempt_and_runs_nothing() {
    let scratch = Scratch::new();
    let marker = scratch.path("ran");
    let touch = format!("touch {}", marker.display());
    let run = retry([
        "--plan", "-n", "4", "--jitter", "none", "--base", "1s", "--", "sh", "-c", &touch,
    ])
    .run();
    run.expect_code(0).expect_stdout(
        "plan for 4 attempts: jitter none, base 1s, cap 1m, multiplier 2\n\
             \x20attempt   wait before   waited so far\n\
             \x20      1             -              0s\n\
             \x20      2            1s              1s\n\
             \x20      3            2s              3s\n\
             \x20      4            4s              7s\n\
             total wait: 7s\n\
             worst case: none; an attempt has no time limit and the run no deadline (--timeout \
             or --max-time bounds it)\n\
             retry budget: this machine's default one for this command line: 20/5m; a retry \
             waits for its token, spacing retries out to that rate (--budget off, or \
             RETRY_BUDGET=off, turns it off)\n\
             waits the command asks for (RETRY_AFTER_FILE, --retry-after-output) may be longer, \
             up to 15m each\n\
             what an attempt's end means, the first rule that holds deciding:\n\
             \x20 status 130: stop: the tool's: the command was interrupted (Ctrl-C); --retry-on \
             130 retries it\n\
             \x20 status 141: stop: the tool's: the command's reader went away (SIGPIPE); \
             --retry-on 141 retries it\n\
             \x20 status 0: success: the default: a success status\n\
             \x20 any: retry: the default: any other end\n",
    );
    assert!(!marker.exists(), "--plan ran the command");
}

#[test]
fn random_plans_print_their_seed_and_repeat_with_it() {
    let first = retry(["--plan", "-n", "5"]).run();
    first
        .expect_code(0)
        .expect_stdout_contains("repeat these waits with --seed ");
    let seed = first
        .stdout()
        .split("repeat these waits with --seed ")
        .nth(1)
        .and_then(|rest| rest.lines().next())
        .unwrap()
        .to_string();
    let again = retry(["--plan", "-n", "5", "--seed", &seed]).run();
    again.expect_stdout(&first.stdout());
    assert!(
        first
            .stdout()
            .contains("total wait over 10000 sampled schedules: min "),
        "{first}"
    );
}

#[test]
fn unlimited_plans_end() {
    let run = retry([
        "--plan",
        "-n",
        "unlimited",
        "--base",
        "100ms",
        "--cap",
        "10s",
    ])
    .run();
    run.expect_code(0)
        .expect_stdout_contains("and so on without end");
    assert!(run.stdout().lines().count() < 26, "{run}");
}

#[test]
fn json_plans_give_rows_and_a_total() {
    let run = retry(["--plan", "--log-format", "json", "-n", "3", "--seed", "9"]).run();
    let rows: Vec<serde_json::Value> = run
        .stdout()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    assert_eq!(rows.len(), 5, "{run}");
    for (index, row) in rows[..3].iter().enumerate() {
        assert_eq!(row["attempt"], index as u64 + 1);
        assert!(row["wait_ms"].is_number() && row["elapsed_ms"].is_number());
    }
    assert_eq!(rows[3]["event"], "plan_total");
    assert_eq!(rows[3]["seed"], 9);
    assert_eq!(rows[4]["event"], "plan_rules");
    let verdicts: Vec<&str> = rows[4]["rules"]
        .as_array()
        .unwrap()
        .iter()
        .map(|rule| rule["verdict"].as_str().unwrap())
        .collect();
    assert_eq!(verdicts, ["stop", "stop", "success", "retry"]);
}

#[test]
fn a_closed_stdout_ends_a_plan_quietly() {
    let run = shell("\"$RETRY\" --plan -n 100000 | head -n 1").run();
    run.expect_code(0);
    assert_eq!(run.stderr(), "", "{run}");
}

#[test]
fn the_plan_examples_of_the_readme_and_guides_are_what_the_tool_prints() {
    let readme = crate::recipes::readme_commands();
    let mut lines = readme.lines().peekable();
    let mut checked = 0;
    while let Some(line) = lines.next() {
        let Some(command) = line.strip_prefix("    $ retry --plan ") else {
            continue;
        };
        let mut shown = String::new();
        while let Some(output) =
            lines.next_if(|next| next.starts_with("    ") && !next.starts_with("    $"))
        {
            shown += &output[4..];
            shown.push('\n');
        }
        let args: Vec<&str> = std::iter::once("--plan")
            .chain(command.split_whitespace())
            .collect();
        retry(args).run().expect_stdout(&shown);
        checked += 1;
    }
    assert!(checked >= 2, "the plan examples were not found");
}

#[test]
fn the_plan_stops_where_max_time_would_stop_the_run() {
    let run = retry([
        "--plan",
        "-n",
        "10",
        "--jitter",
        "none",
        "--max-time",
        "10s",
    ])
    .run();
    run.expect_code(0)
        .expect_stdout_contains("max-time 10s")
        .expect_stdout_contains(
            "no attempt 5 or later: the wait before it would end past --max-time (10s)",
        )
        .expect_stdout_contains("the attempts' own run time counts toward --max-time too");
    assert!(!run.stdout().contains("4m3s"), "{run}");
    let json = retry([
        "--plan",
        "--log-format",
        "json",
        "-n",
        "10",
        "--jitter",
        "none",
    ])
    .args(["--max-time", "10s"])
    .run();
    let total: serde_json::Value = json
        .stdout()
        .lines()
        .map(|line| serde_json::from_str::<serde_json::Value>(line).unwrap())
        .find(|line| line["event"] == "plan_total")
        .unwrap();
    assert_eq!(total["planned_attempts"], 4, "{json}");
    assert_eq!(total["cut_by_max_time"], true, "{json}");
}

#[test]
fn the_plan_bounds_the_whole_run_and_tells_how_long_the_jobs_past_runs_took() {
    let scratch = Scratch::new();
    let store = crate::support::harness::file_store(&scratch.path("store"));
    let plan = |format: &str| {
        retry([
            "--plan",
            "--log-format",
            format,
            "--job",
            "nightly",
            "-n",
            "3",
        ])
        .args(["-t", "20s", "--kill-after", "5s", "--jitter", "none"])
        .args(["--budget-store", &store, "--budget", "api"])
        .run()
    };
    let before = plan("text");
    before
        .expect_code(0)
        .expect_stdout_contains(
            "worst case: 1m18s: 3 attempts of at most 25s each (--timeout and --kill-after), the \
             waits at their longest\n",
        )
        .expect_stdout_contains("job nightly: no past run's duration is kept yet\n");
    for pause in ["0.2", "0.4"] {
        retry([
            "-q",
            "--job",
            "nightly",
            "--budget",
            "api",
            "--budget-store",
            &store,
        ])
        .args(["sh", "-c", &format!("sleep {pause}")])
        .run()
        .expect_code(0);
    }
    plan("text").expect_stdout_contains("job nightly's last 2 runs took ");
    let json = plan("json");
    let total = json
        .stdout()
        .lines()
        .map(|line| serde_json::from_str::<serde_json::Value>(line).unwrap())
        .find(|line| line["event"] == "plan_total")
        .unwrap();
    assert_eq!(total["worst_case"]["total_ms"], 78_000.0, "{json}");
    assert_eq!(total["worst_case"]["attempts"], 3, "{json}");
    let past = &total["past_runs"];
    assert_eq!(past["runs"], 2, "{json}");
    let (median, p95) = (
        past["p50_ms"].as_f64().unwrap(),
        past["p95_ms"].as_f64().unwrap(),
    );
    assert!(200.0 <= median && median <= p95 && 400.0 <= p95, "{json}");
}
