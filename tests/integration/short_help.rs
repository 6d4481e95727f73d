//! What `retry -h` says of each option, held to what the option does: each line of its summary
//! has a case here that runs the real binary and checks the claim the line makes (the most
//! attempts are the most, the longest wait the longest, ...), and an option `-h` shows without a
//! case fails the test, so that the one screen a newcomer reads never promises what the tool
//! does not do.

use crate::support::harness::{Run, Scratch, exiting_in_turn, retry};

/// The long names of the options `retry -h` shows, in its order.
fn summarised_options() -> Vec<String> {
    let help = retry(["-h"]).run();
    help.expect_code(0);
    help.stdout()
        .lines()
        .filter_map(|line| {
            // `  -n, --max-attempts <N>  ...` or `      --base <DURATION>  ...`
            let words = line.split_whitespace().take(2);
            let long = words.filter_map(|word| word.strip_prefix("--")).next()?;
            Some(long.to_string())
        })
        .collect()
}

/// A command that exits with the statuses `statuses`, one an attempt.
fn exits_in_turn(scratch: &Scratch, statuses: &[i32]) -> Vec<String> {
    let script = exiting_in_turn(scratch, statuses);
    vec!["sh".into(), "-c".into(), script]
}

/// A run of the tool with JSON events and no budget (whose waits are not the subject), its
/// options `options`, running `command`.
fn run(options: &[&str], command: &[String]) -> Run {
    retry(["--log-format", "json", "--budget", "off"])
        .args(options)
        .args(["--"])
        .args(command)
        .run()
}

/// The events `--plan --log-format json` prints (on stdout: the plan is what was asked for)
/// for `options`, named `name`.
fn plan_events(options: &[&str], name: &str) -> Vec<serde_json::Value> {
    let plan = retry(["--plan", "--log-format", "json"])
        .args(options)
        .args(["--", "true"])
        .run();
    plan.expect_code(0);
    let stdout = plan.stdout();
    let events = stdout.lines().map(|line| {
        serde_json::from_str::<serde_json::Value>(line)
            .unwrap_or_else(|err| panic!("{err}: {line}\n{plan}"))
    });
    events.filter(|event| event["event"] == name).collect()
}

/// The waits `--plan` gives for `options`, in milliseconds.
fn planned_waits(options: &[&str]) -> Vec<f64> {
    plan_events(options, "plan_attempt")
        .iter()
        .skip(1)
        .map(|attempt| attempt["wait_ms"].as_f64().expect("a wait"))
        .collect()
}

/// The rules `--plan` lists for `options`, each as its verdict and what it names.
fn planned_rules(options: &[&str]) -> Vec<(String, String)> {
    let plans = plan_events(options, "plan_rules");
    let rules = plans[0]["rules"].as_array().cloned().unwrap_or_default();
    rules
        .iter()
        .map(|rule| {
            let named = format!("{} {}", rule["statuses"], rule["output"]);
            (
                rule["verdict"].as_str().unwrap_or_default().to_string(),
                named,
            )
        })
        .collect()
}

/// `-n`: "Most attempts, the first included".
fn max_attempts() {
    let scratch = Scratch::new();
    let failing = exits_in_turn(&scratch, &[1, 1, 1, 1, 1]);
    let run = run(&["-n", "3", "--base", "0s"], &failing);
    run.expect_code(1);
    assert_eq!(run.events_named("attempt_start").len(), 3, "{run}");
    assert_eq!(scratch.lines("count"), 3);
}

/// `--base`: "The first wait; later waits grow".
fn base() {
    let waits = planned_waits(&["--base", "2s", "--jitter", "none", "-n", "4"]);
    assert_eq!(waits[0], 2000.0, "{waits:?}");
    assert!(waits.windows(2).all(|pair| pair[1] > pair[0]), "{waits:?}");
}

/// `--cap`: "The longest backoff wait", in the plan and in a run.
fn cap() {
    let waits = planned_waits(&["--base", "1s", "--cap", "3s", "-n", "8"]);
    assert!(waits.iter().all(|&wait| wait <= 3000.0), "{waits:?}");
    let scratch = Scratch::new();
    let failing = exits_in_turn(&scratch, &[1; 4]);
    let options = [
        "-n", "4", "--base", "5ms", "--cap", "12ms", "--jitter", "none",
    ];
    let run = run(&options, &failing);
    let waits = run.events_named("wait");
    assert_eq!(waits.len(), 3, "{run}");
    assert!(
        waits
            .iter()
            .all(|wait| wait["wait_ms"].as_f64() <= Some(12.0)),
        "{run}"
    );
}

/// `--jitter`: "none, full, equal or decorrelated": none waits the exponential ceiling, the
/// others spread their waits below it.
fn jitter() {
    let ceiling = planned_waits(&["--jitter", "none", "--base", "1s", "-n", "6"]);
    assert_eq!(ceiling, [1000.0, 2000.0, 4000.0, 8000.0, 16000.0]);
    for strategy in ["full", "equal"] {
        let options = [
            "--jitter", strategy, "--base", "1s", "-n", "6", "--seed", "7",
        ];
        let spread = planned_waits(&options);
        let below = spread.iter().zip(&ceiling).all(|(wait, most)| wait <= most);
        assert!(below && spread != ceiling, "{strategy}: {spread:?}");
    }
    let decorrelated = planned_waits(&["--jitter", "decorrelated", "--seed", "7", "-n", "6"]);
    assert!(
        decorrelated.iter().all(|&wait| wait >= 1000.0),
        "{decorrelated:?}"
    );
}

/// `--retry-on`: "Retry what RULE names; may be repeated": what the rules name is retried, and
/// nothing else.
fn retry_on() {
    let scratch = Scratch::new();
    let statuses = exits_in_turn(&scratch, &[3, 4, 5, 0]);
    let options = ["--retry-on", "3", "--retry-on", "4", "--base", "0s"];
    let run = run(&options, &statuses);
    run.expect_code(5);
    assert_eq!(scratch.lines("count"), 3, "{run}");
}

/// `--stop-on`: "Never retry what RULE names; may be repeated".
fn stop_on() {
    let scratch = Scratch::new();
    let statuses = exits_in_turn(&scratch, &[1, 9, 0]);
    let options = ["--stop-on", "8", "--stop-on", "9", "--base", "0s"];
    run(&options, &statuses).expect_code(9);
    assert_eq!(scratch.lines("count"), 2);
}

/// `--success-on`: "Count what RULE names as success [default: 0]".
fn success_on() {
    let scratch = Scratch::new();
    let run = run(&["--success-on", "3"], &exits_in_turn(&scratch, &[3]));
    run.expect_code(0);
    assert_eq!(run.event("done")["reason"], "success", "{run}");
    let rules = planned_rules(&[]);
    assert!(
        rules.contains(&("success".into(), "\"0\" null".into())),
        "{rules:?}"
    );
}

/// `--preset`: "As a program's manual says": the preset's rules are in force.
fn preset() {
    let rules = planned_rules(&["--preset", "curl"]);
    assert!(
        rules.iter().any(|(_, named)| named.contains('6')),
        "{rules:?}"
    );
    assert!(
        rules.iter().any(|(verdict, _)| verdict == "stop"),
        "{rules:?}"
    );
}

/// `-t`: "Time limit of one attempt (status 124)".
fn timeout() {
    let sleeping = ["sleep".to_string(), "30".into()];
    let run = run(&["-t", "50ms", "-n", "2", "--base", "0s"], &sleeping);
    run.expect_code(124);
    let ends = run.events_named("attempt_end");
    assert_eq!(ends.len(), 2, "{run}");
    assert!(ends.iter().all(|end| end["timed_out"] == true), "{run}");
}

/// `--max-time`: "Time limit of the whole run".
fn max_time() {
    let sleeping = ["sleep".to_string(), "30".into()];
    let run = run(&["--max-time", "100ms", "-n", "unlimited"], &sleeping);
    run.expect_code(124);
    assert_eq!(run.event("done")["reason"], "deadline", "{run}");
    assert_eq!(run.events_named("attempt_start").len(), 1, "{run}");
}

/// `--plan`: "Print the waits and the rules; run nothing".
fn plan() {
    let scratch = Scratch::new();
    let plan = retry(["--plan", "--", "touch"])
        .args([scratch.path("ran")])
        .run();
    plan.expect_code(0);
    assert!(plan.stdout().contains("plan for 5 attempts"), "{plan}");
    assert!(!scratch.path("ran").exists(), "{plan}");
}

/// `-q`: "Say nothing of the tool's own".
fn quiet() {
    let scratch = Scratch::new();
    let failing = exits_in_turn(&scratch, &[1, 1]);
    let run = retry(["-q", "-n", "2", "--base", "0s", "--budget", "off", "--"])
        .args(&failing)
        .run();
    run.expect_code(1);
    assert_eq!(run.stderr(), "", "{run}");
}

/// `-v`: "Also say each attempt's start and a success".
fn verbose() {
    let run = retry(["-v", "--", "true"]).run();
    run.expect_code(0)
        .expect_stderr("attempt 1/5 starting")
        .expect_stderr("succeeded");
    retry(["--", "true"])
        .run()
        .expect_code(0)
        .expect_no_stderr("starting");
}

/// `-h`: "Print help".
fn help() {
    retry(["-h"])
        .run()
        .expect_code(0)
        .expect_stdout_contains("Usage: retry");
}

/// `-V`: "Print version".
fn version() {
    let version = retry(["-V"]).run();
    version
        .expect_code(0)
        .expect_stdout_contains(env!("CARGO_PKG_VERSION"));
}

/// Each option `-h` summarises, and the check of its summary.
const CASES: [(&str, fn()); 15] = [
    ("max-attempts", max_attempts),
    ("base", base),
    ("cap", cap),
    ("jitter", jitter),
    ("retry-on", retry_on),
    ("stop-on", stop_on),
    ("success-on", success_on),
    ("preset", preset),
    ("timeout", timeout),
    ("max-time", max_time),
    ("plan", plan),
    ("quiet", quiet),
    ("verbose", verbose),
    ("help", help),
    ("version", version),
];

#[test]
fn every_option_that_retry_h_summarises_does_what_its_line_says() {
    let summarised = summarised_options();
    let checked: Vec<&str> = CASES.iter().map(|(name, _)| *name).collect();
    assert_eq!(
        summarised, checked,
        "each option of retry -h needs a case here, in its order"
    );
    for (_, check) in CASES {
        check();
    }
}
