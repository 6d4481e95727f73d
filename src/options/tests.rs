//! The run's settings, resolved from command lines and environments given by each test.

use super::*;
use crate::options::from_environment::MAX_REQUESTED_WAIT;
use crate::report::verbosity::Verbosity;
use retry_budget::BudgetSettings;
use retry_budget::state_dir::StateHome;
use retry_budget::store::Location;
use std::path::{Path, PathBuf};

fn resolve(args: &[&str], env: &[(&str, &str)]) -> Result<Config, ConfigError> {
    let args: Vec<OsString> = std::iter::once("retry")
        .chain(args.iter().copied())
        .map(OsString::from)
        .collect();
    let cli = Cli::parse_args(&args);
    let env: Vec<(String, OsString)> = env
        .iter()
        .map(|(name, value)| (name.to_string(), OsString::from(value)))
        .collect();
    Config::resolve(cli.unwrap(), move |name| {
        env.iter()
            .find(|(key, _)| key == name)
            .map(|(_, value)| value.clone())
    })
}

fn config(args: &[&str]) -> Result<Config, ConfigError> {
    resolve(args, &[("XDG_STATE_HOME", "/home/someone/.local/state")])
}

#[test]
fn resolves_a_plain_run() {
    let config = config(&["--", "true"]).unwrap();
    assert_eq!(
        config.command.as_ref(),
        Some(&CommandLine::direct(vec!["true".into()]).unwrap())
    );
    assert_eq!(config.limit.count(), Some(5));
    assert_eq!(config.log.verbosity, Verbosity::Normal);
    assert_eq!(config.rules().splay, Duration::ZERO);
    assert_eq!(config.max_requested_wait, MAX_REQUESTED_WAIT);
}

#[test]
fn cap_below_base_names_both_values() {
    let err = config(&["--base", "2s", "--cap", "1s", "true"]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "--cap (1s) must not be below --base (2s); raise --cap or lower --base"
    );
}

#[test]
fn a_status_cannot_be_success_and_failure() {
    let err = config(&["--retry-on", "0-5", "true"])
        .unwrap_err()
        .to_string();
    assert!(
        err.starts_with("--retry-on 0-5 names status 0, a success status"),
        "{err}"
    );
    let err = config(&["--success-on", "0,3", "--stop-on", "3", "true"]).unwrap_err();
    assert!(
        err.to_string().starts_with("--stop-on 3 names status 3"),
        "{err}"
    );
    assert!(config(&["--retry-on", "0,stdout:pending", "true"]).is_ok());
}

#[test]
fn command_is_required_except_for_a_plan() {
    assert!(
        config(&[])
            .unwrap_err()
            .to_string()
            .starts_with("no COMMAND given")
    );
    assert!(config(&["--plan"]).unwrap().command.is_none());
    assert!(config(&["--plan", "true"]).unwrap().command.is_none());
}

#[test]
fn zero_time_limits_mean_no_limit_as_for_coreutils_timeout() {
    let unlimited = config(&["--timeout", "0s", "--max-time", "0ms", "true"]).unwrap();
    assert_eq!(unlimited.process.timeout, None);
    assert_eq!(unlimited.rules().deadline, None);
    let err = config(&["--reset-after", "0s", "true"]).unwrap_err();
    assert!(
        err.to_string()
            .starts_with("--reset-after (0s) must be more than 0s")
    );
    let config = config(&["-t", "2s", "--max-time", "1m", "--foreground", "true"]).unwrap();
    assert_eq!(config.process.timeout, Some(Duration::from_secs(2)));
    assert_eq!(config.process.kill_after, Duration::from_secs(10));
    assert_eq!(config.process.isolation, Isolation::Foreground);
    assert_eq!(config.max_time(), Some(Duration::from_secs(60)));
    let (at, source) = config
        .rules()
        .deadline
        .map(|deadline| (deadline.at, deadline.source))
        .unwrap();
    assert_eq!(source, DeadlineSource::MaxTime);
    assert_eq!(Some(at), config.deadline_at(), "one value, read once");
}

#[test]
fn output_rules_are_compiled_checked_and_read_their_streams() {
    let err = config(&["--stop-on", "output:a(", "true"])
        .unwrap_err()
        .to_string();
    assert!(
        err.starts_with("--stop-on 'output:a(' is not a valid regex"),
        "{err}"
    );
    let both = config(&[
        "--retry-on",
        "output:503",
        "--retry-on",
        "output:429",
        "true",
    ]);
    let both = both.unwrap();
    assert!(both.output.matches_stdout() && both.output.matches_stderr());
    assert_eq!(both.output.hold, Hold::Nothing);
    let stderr = config(&["--stop-on", "22,stderr:404", "true"]).unwrap();
    assert!(!stderr.output.pipes_stdout() && stderr.output.pipes_stderr());
    let held = config(&["--hold", "all", "true"]).unwrap();
    assert!(held.holds_everything() && held.output.pipes_stderr());
}

#[test]
fn splay_must_leave_room_before_the_deadline() {
    let err = config(&["--splay", "1m", "--max-time", "30s", "true"])
        .unwrap_err()
        .to_string();
    assert_eq!(
        err,
        "--splay (1m) must be below --max-time (30s), or no attempt could start"
    );
}

#[test]
fn the_splay_is_drawn_from_the_seed() {
    let config = config(&["--splay", "1m", "--seed", "5", "true"]).unwrap();
    let splay = config.rules().splay;
    assert_eq!(splay, backoff::splay(5, Duration::from_secs(60)));
    assert_eq!(config.plan().splay, Duration::from_secs(60));
}

/// The settings of a named budget.
fn named(budget: RunBudget) -> BudgetSettings {
    match budget {
        RunBudget::Named(settings) => *settings,
        other => panic!("not a named budget: {other:?}"),
    }
}

#[test]
fn a_budget_store_needs_a_named_budget_and_resolves_a_directory() {
    let err = config(&["--budget-store", "file", "true"]).unwrap_err();
    assert!(
        err.to_string()
            .starts_with("--budget-store says where a named budget")
    );
    let err = config(&["--budget", "off", "--budget-store", "file", "true"]).unwrap_err();
    assert!(
        err.to_string()
            .starts_with("--budget-store says where a named budget")
    );
    let config = config(&["--budget", "api", "--budget-store", "file:/tmp/b", "true"]);
    let budget = named(config.unwrap().budget);
    assert_eq!(budget.name.as_str(), "api");
    assert!(matches!(&budget.store.location, Location::File(dir) if dir == Path::new("/tmp/b")));
}

#[test]
fn without_a_named_budget_a_run_spends_from_the_default_one_for_its_target() {
    let home = [("HOME", "/h")];
    let run = |args: &[&str], env: &[(&str, &str)]| resolve(args, env).unwrap().budget;
    let RunBudget::Default(budget) = run(&["curl", "https://api.example.com/x"], &home) else {
        panic!("no default budget");
    };
    assert_eq!(budget.target.to_string(), "api.example.com");
    assert_eq!(budget.home, StateHome::Home("/h".into()));
    let RunBudget::Default(budget) = run(&["--cap", "5s", "make"], &[]) else {
        panic!("no default budget");
    };
    assert_eq!(budget.home, StateHome::Unset);
    assert!(matches!(
        run(&["--budget", "off", "true"], &home),
        RunBudget::Off("--budget off")
    ));
    let off = [("RETRY_BUDGET", "off")];
    assert!(matches!(
        run(&["true"], &off),
        RunBudget::Off("RETRY_BUDGET=off")
    ));
    let api = [("RETRY_BUDGET", "api"), ("XDG_STATE_HOME", "/h")];
    assert_eq!(named(run(&["true"], &api)).name.as_str(), "api");
    let off_at_home = [("RETRY_BUDGET", "off"), ("XDG_STATE_HOME", "/h")];
    assert_eq!(
        named(run(&["--budget", "other", "true"], &off_at_home))
            .name
            .as_str(),
        "other",
        "the flag wins"
    );
    let err = resolve(&["true"], &[("RETRY_BUDGET", "a/b")]).unwrap_err();
    assert!(err.to_string().starts_with("RETRY_BUDGET 'a/b': "), "{err}");
}

#[test]
fn the_budget_directory_comes_from_the_environment() {
    let dir = |env: &[(&str, &str)]| {
        resolve(&["--budget", "api", "true"], env).map(|config| {
            match named(config.budget).store.location {
                Location::File(dir) => dir,
                other => panic!("{other:?}"),
            }
        })
    };
    let home = tempfile::tempdir().unwrap();
    let home_var = home.path().to_str().unwrap();
    assert_eq!(
        dir(&[("HOME", home_var)]).unwrap(),
        home.path().join(".local/state/retry/budgets")
    );
    assert_eq!(
        dir(&[("HOME", "/h"), ("XDG_STATE_HOME", "/state")]).unwrap(),
        PathBuf::from("/state/retry/budgets")
    );
    assert_eq!(
        dir(&[("HOME", home_var), ("XDG_STATE_HOME", "relative")]).unwrap(),
        home.path().join(".local/state/retry/budgets"),
        "a relative XDG_STATE_HOME is ignored, as the spec says"
    );
    assert!(
        dir(&[])
            .unwrap_err()
            .to_string()
            .contains("set XDG_STATE_HOME")
    );
    let missing = dir(&[("HOME", "/nonexistent")]).unwrap_err().to_string();
    assert!(
        missing.contains("HOME (/nonexistent) does not exist"),
        "{missing}"
    );
}

#[test]
fn the_store_comes_from_the_flag_then_the_environment() {
    let store = |args: &[&str], env: &[(&str, &str)]| {
        let mut all = vec!["--budget", "api"];
        all.extend_from_slice(args);
        all.push("true");
        resolve(&all, env).map(|config| named(config.budget).store.location.to_string())
    };
    let home = ("XDG_STATE_HOME", "/h");
    let variable = ("RETRY_BUDGET_STORE", "redis://app:s3cret@cache:6379");
    assert_eq!(store(&[], &[home]).unwrap(), "file");
    assert_eq!(
        store(&[], &[home, variable]).unwrap(),
        "redis://app:***@cache:6379"
    );
    assert_eq!(
        store(&[], &[home, ("RETRY_BUDGET_STORE", "")]).unwrap(),
        "file",
        "an empty variable is none"
    );
    assert_eq!(
        store(&["--budget-store", "file"], &[home, variable]).unwrap(),
        "file",
        "the flag wins"
    );
    assert_eq!(
        store(&["--budget-store", "redis+unix:///run/r.sock"], &[]).unwrap(),
        "redis+unix:///run/r.sock",
        "a shared store needs no directory"
    );
    let err = store(&[], &[home, ("RETRY_BUDGET_STORE", "mysql://u:s3cret@db")]).unwrap_err();
    assert!(
        err.to_string()
            .starts_with("RETRY_BUDGET_STORE: 'mysql' is not a budget store's scheme"),
        "{err}"
    );
    assert!(!err.to_string().contains("s3cret"), "{err}");
    let err = store(&["--budget-store", "redis//u:s3cret@h"], &[home]).unwrap_err();
    assert!(err.to_string().starts_with("--budget-store: "), "{err}");
    assert!(!err.to_string().contains("s3cret"), "{err}");
}

#[test]
fn the_budget_and_its_store_reach_the_plan_and_the_report() {
    let env = [("RETRY_BUDGET_STORE", "redis://app:s3cret@cache?fail=closed")];
    let args = ["--budget", "api", "--report", "r.json", "true"];
    let config = resolve(&args, &env).unwrap();
    assert!(
        config.plan().budget.starts_with(
            "api, on the terms its store keeps (retry budget show api), in \
             redis://app:***@cache (fail=closed)"
        ),
        "{}",
        config.plan().budget
    );
    let recorded = serde_json::to_value(&config.recorded).unwrap();
    assert_eq!(recorded["budget"], "api");
    assert_eq!(recorded["in_force"]["budget"]["kind"], "named");
    assert_eq!(
        recorded["in_force"]["budget_store"],
        "redis://app:***@cache"
    );
    assert!(!recorded.to_string().contains("s3cret"));
}

#[test]
fn shell_wraps_the_words() {
    let config = config(&["--shell", "echo", "a"]).unwrap();
    assert_eq!(config.command.as_ref().unwrap().program(), "sh");
}

#[test]
fn the_report_records_every_option_as_given_or_by_default() {
    let recorded = config(&[
        "--report",
        "r.json",
        "--seed",
        "9",
        "-n",
        "unlimited",
        "--retry-on",
        "1",
        "--retry-on",
        "2",
        "--",
        "a",
        "b",
    ])
    .unwrap()
    .recorded;
    let json = serde_json::to_value(&recorded).unwrap();
    assert_eq!(json["seed"], "9");
    assert_eq!(json["in_force"]["seed"], 9);
    assert_eq!(json["max_attempts"], "unlimited");
    assert_eq!(json["base"], "1s", "a default");
    assert_eq!(json["retry_on"], serde_json::json!(["1", "2"]));
    assert_eq!(json["foreground"], false);
    assert_eq!(json["timeout"], serde_json::Value::Null);
    assert_eq!(json["command"], serde_json::json!(["a", "b"]));
    // Only a report reads them, so only a run that asks for one records them.
    let unreported = config(&["--seed", "9", "a"]).unwrap().recorded;
    assert_eq!(serde_json::to_value(&unreported).unwrap().get("seed"), None);
    let options: Vec<String> = crate::options::full_command()
        .get_arguments()
        .filter_map(|arg| arg.get_long())
        .filter(|long| !matches!(*long, "help" | "version"))
        .map(|long| long.replace('-', "_"))
        .collect();
    for option in options {
        assert!(json.get(&option).is_some(), "{option} is not recorded");
    }
}

#[test]
fn the_report_records_every_option_and_the_reference_the_rest() {
    let mut keys = Vec::new();
    // Each kind of budget in force has keys of its own.
    for args in [
        &["--report", "r.json", "true"][..],
        &["--report", "r.json", "--budget", "off", "true"],
        &["--report", "r.json", "--budget", "api", "true"],
    ] {
        let recorded = resolve(args, &[("XDG_STATE_HOME", "/h")]).unwrap().recorded;
        let recorded = serde_json::to_value(&recorded).unwrap();
        keys.extend(crate::reference::object_keys(&recorded, &["in_force"]));
        keys.extend(crate::reference::object_keys(
            &recorded["in_force"]["budget"],
            &[],
        ));
    }
    keys.sort();
    keys.dedup();
    let command = <Cli as clap::CommandFactory>::command();
    let options = command
        .get_arguments()
        .filter(|arg| !arg.is_positional())
        .filter_map(|arg| arg.get_long())
        .filter(|long| !matches!(*long, "help" | "version"))
        .map(|long| long.replace('-', "_"));
    let mut expected = crate::reference::row_keys("options");
    expected.extend(options);
    expected.sort();
    expected.dedup();
    assert_eq!(keys, expected);
}

#[test]
fn multiplier_has_no_place_beside_decorrelated_jitter() {
    let err = config(&["--jitter", "decorrelated", "--multiplier", "3", "true"]).unwrap_err();
    assert!(
        err.to_string()
            .starts_with("--multiplier (3) has no effect"),
        "{err}"
    );
    assert!(config(&["--jitter", "decorrelated", "true"]).is_ok());
    let default = config(&["true"]).unwrap();
    assert_eq!(default.backoff.multiplier(), 2.0);
}

#[test]
fn runs_that_can_spin_for_ever_are_warned_about() {
    let warnings = |args: &[&str]| config(args).unwrap().warnings();
    assert!(warnings(&["-n", "unlimited", "--base", "0s", "true"])[0].contains("without end"));
    assert!(warnings(&["-n", "3", "--reset-after", "1s", "true"])[0].contains("never run out"));
    for bounded in [
        &[
            "-n",
            "unlimited",
            "--base",
            "0s",
            "--max-time",
            "1m",
            "true",
        ][..],
        &["-n", "3", "--base", "0s", "true"],
        &["-n", "3", "--reset-after", "10m", "true"],
        &["-n", "3", "--reset-after", "1m", "--cap", "1m", "true"],
        &["-n", "unlimited", "true"],
    ] {
        assert!(warnings(bounded).is_empty(), "{bounded:?}");
    }
}

#[test]
fn the_parts_of_a_run_follow_the_flags() {
    let plain = config(&["true"]).unwrap();
    assert!(plain.hands_over_terminal());
    assert!(!plain.replay_stdin);
    assert!(plain.reports().0.is_empty());
    assert!(matches!(&plain.budget, RunBudget::Default(_)));
    assert_eq!((plain.job.as_str(), plain.job_given()), ("true", None));

    let every = config(&[
        "--foreground",
        "--replay-stdin",
        "--report",
        "r.json",
        "--report",
        "dotenv:r.txt",
        "--job",
        "nightly",
        "--budget",
        "api",
        "--budget-store",
        "file:/tmp/budgets",
        "true",
    ])
    .unwrap();
    assert!(!every.hands_over_terminal());
    assert!(every.replay_stdin);
    let formats: Vec<_> = every.reports().0.iter().map(|spec| spec.format).collect();
    assert_eq!(
        formats,
        [
            crate::report::formats::ReportFormat::Json,
            crate::report::formats::ReportFormat::Dotenv
        ]
    );
    assert_eq!(
        (every.job.as_str(), every.job_given()),
        ("nightly", Some("nightly"))
    );
    let api = config(&["--budget", "api", "true"]).unwrap();
    assert_eq!(api.job, "api", "the budget names the job");

    let shared = config(&["--budget", "api", "--budget-store", "redis://cache", "true"]);
    let location = &named(shared.unwrap().budget).store.location;
    assert!(matches!(location, Location::Shared { .. }), "{location:?}");
}

#[test]
fn a_nested_run_knows_it_from_the_environment() {
    let outer = [("RETRY_DEPTH", "1"), ("RETRY_TOTAL_ATTEMPTS", "3")];
    let nested = resolve(&["-n", "4", "true"], &outer).unwrap();
    assert_eq!((nested.rules().depth, nested.limit.count()), (2, Some(4)));
    assert!(nested.warnings()[0].contains("up to 3 × 4 = 12 attempts"));
    let once = resolve(
        &["-n", "4", "true"],
        &[outer[0], outer[1], ("RETRY_NESTED", "once")],
    );
    let once = once.unwrap();
    assert_eq!(
        (once.rules().limit.count(), once.warnings().len()),
        (Some(1), 0)
    );
    let alone = resolve(&["-n", "4", "true"], &[("RETRY_NESTED", "once")]).unwrap();
    assert_eq!((alone.rules().depth, alone.limit.count()), (1, Some(4)));
    let recorded = serde_json::to_value(&once.recorded).unwrap();
    assert_eq!(recorded["in_force"]["nested"], "once");
    let err = resolve(&["true"], &[("RETRY_NESTED", "twice")]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "RETRY_NESTED 'twice' is not once, retry or quiet"
    );
}

#[test]
fn requested_waits_need_a_limit_and_a_group() {
    let limited = |value: &str| resolve(&["true"], &[("RETRY_MAX_REQUESTED_WAIT", value)]);
    let err = limited("0s").unwrap_err();
    assert!(
        err.to_string()
            .contains("RETRY_MAX_REQUESTED_WAIT (0s) must be more than 0s")
    );
    assert!(
        limited("5")
            .unwrap_err()
            .to_string()
            .contains("unit is needed")
    );
    assert_eq!(
        limited("1h").unwrap().max_requested_wait,
        Duration::from_secs(3600)
    );
    let err = config(&["--retry-after-output", "after: \\d+", "true"]).unwrap_err();
    assert!(
        err.to_string()
            .contains("has no group to read the wait from"),
        "{err}"
    );
    let config = config(&["--retry-after-output", "after: (.+)", "true"]).unwrap();
    assert_eq!(config.rules().max_requested_wait, Duration::from_secs(900));
    assert!(config.output.pipes_stdout() && config.output.pipes_stderr());
}
