//! `retry-sim`: the contention, load and metastable experiments from the command line, each run
//! of the real binary under a time limit, its argv, status and output printed when it fails.

use std::ffi::OsStr;
use std::io::Read;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// How long any run may take before the test fails.
const TIME_LIMIT: Duration = Duration::from_secs(60);

/// A finished run.
struct Run {
    argv: Vec<String>,
    output: Output,
}

impl Run {
    fn stdout(&self) -> String {
        String::from_utf8_lossy(&self.output.stdout).into_owned()
    }

    fn stderr(&self) -> String {
        String::from_utf8_lossy(&self.output.stderr).into_owned()
    }

    #[track_caller]
    fn expect_code(&self, code: i32) -> &Self {
        assert_eq!(self.output.status.code(), Some(code), "{self}");
        self
    }

    #[track_caller]
    fn expect_stdout_contains(&self, text: &str) -> &Self {
        assert!(
            self.stdout().contains(text),
            "stdout lacks {text:?}\n{self}"
        );
        self
    }

    #[track_caller]
    fn expect_stderr(&self, text: &str) -> &Self {
        assert!(
            self.stderr().contains(text),
            "stderr lacks {text:?}\n{self}"
        );
        self
    }
}

impl std::fmt::Display for Run {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(f, "argv: {:?}", self.argv)?;
        writeln!(f, "status: {}", self.output.status)?;
        writeln!(f, "--- stdout ---\n{}", self.stdout())?;
        write!(f, "--- stderr ---\n{}", self.stderr())
    }
}

/// Run `retry-sim` with `args` to its end, within [`TIME_LIMIT`].
#[track_caller]
fn sim<S: AsRef<OsStr>>(args: impl IntoIterator<Item = S>) -> Run {
    let program = env!("CARGO_BIN_EXE_retry-sim");
    let mut argv = vec!["retry-sim".to_string()];
    let mut command = Command::new(program);
    for arg in args {
        argv.push(arg.as_ref().to_string_lossy().into_owned());
        command.arg(arg);
    }
    run(command, argv)
}

/// Run `command`, shown as `argv`, to its end within [`TIME_LIMIT`], killing it after that.
#[track_caller]
fn run(mut command: Command, argv: Vec<String>) -> Run {
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start retry-sim");
    let drain = |pipe: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            if let Some(mut pipe) = pipe {
                let _ = pipe.read_to_end(&mut bytes);
            }
            bytes
        })
    };
    let stdout = drain(
        child
            .stdout
            .take()
            .map(|pipe| Box::new(pipe) as Box<dyn Read + Send>),
    );
    let stderr = drain(
        child
            .stderr
            .take()
            .map(|pipe| Box::new(pipe) as Box<dyn Read + Send>),
    );
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait for retry-sim") {
            break status;
        }
        if started.elapsed() > TIME_LIMIT {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{argv:?} did not end within {TIME_LIMIT:?}");
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let output = Output {
        status,
        stdout: stdout.join().unwrap(),
        stderr: stderr.join().unwrap(),
    };
    Run { argv, output }
}

/// A scratch directory for one test.
struct Scratch(tempfile::TempDir);

impl Scratch {
    fn new() -> Self {
        Scratch(tempfile::tempdir().unwrap())
    }

    fn path(&self, name: &str) -> PathBuf {
        self.0.path().join(name)
    }

    fn read(&self, name: &str) -> String {
        std::fs::read_to_string(self.path(name)).unwrap_or_default()
    }
}

#[test]
fn prints_a_table_and_writes_csv_and_svg() {
    let scratch = Scratch::new();
    let (csv, svg) = (scratch.path("sim.csv"), scratch.path("sim.svg"));
    let (csv, svg) = (csv.to_str().unwrap(), svg.to_str().unwrap());
    let run = sim([
        "--clients",
        "1,2",
        "--trials",
        "30",
        "--seed",
        "4",
        "--csv",
        csv,
        "--svg",
        svg,
    ]);
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
        let args = ["--clients", "20", "--trials", "10", "--seed", "9"];
        sim(words.iter().chain(&args)).stdout()
    };
    let unnamed = without_timing(table(&[]));
    assert_eq!(unnamed, without_timing(table(&[])));
    assert_eq!(unnamed, without_timing(table(&["contention"])));
}

#[test]
fn the_load_experiment_prints_a_table_and_writes_csv_and_svg() {
    let scratch = Scratch::new();
    let (csv, svg) = (scratch.path("load.csv"), scratch.path("load.svg"));
    let run = || {
        let args = [
            "load",
            "--failure-rates",
            "0,1",
            "--policies",
            "none,bucket",
        ];
        let more = ["--duration", "5s", "--seed", "3"];
        let files = [
            OsStr::new("--csv"),
            csv.as_os_str(),
            OsStr::new("--svg"),
            svg.as_os_str(),
        ];
        sim(args.iter().chain(&more).map(OsStr::new).chain(files))
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
        let run = sim(["load"].iter().chain(args));
        run.expect_code(2).expect_stderr(says);
    }
}

#[test]
fn the_metastable_experiment_reproduces_the_papers_four_runs() {
    let scratch = Scratch::new();
    let (csv, svg) = (scratch.path("meta.csv"), scratch.path("meta.svg"));
    let args = ["metastable", "--policies", "resend,ratio-shared"];
    let triggers = [
        "--trigger-capacities",
        "0.225,0.2",
        "--trigger-seconds",
        "9s,10s",
    ];
    let files = [
        OsStr::new("--csv"),
        csv.as_os_str(),
        OsStr::new("--svg"),
        svg.as_os_str(),
    ];
    let words = args.iter().chain(&triggers).chain(&["--seed", "2"]);
    let run = sim(words.map(OsStr::new).chain(files));
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
        (
            &["--chart-trigger", "0.2:x"],
            "not a trigger; expected CAPACITY:DURATION, e.g. 0.2:10s: 'x' is not a duration",
        ),
        (&["--trigger-seconds", "1h", "--observe", "1h"], "too large"),
    ] {
        let run = sim(["metastable"].iter().chain(args));
        run.expect_code(2).expect_stderr(says);
    }
}

#[test]
fn bad_input_exits_2_naming_the_option() {
    for args in [
        &["--clients", "0"][..],
        &["--trials", "0"],
        &["--jitter", "some"],
        &["--clients", "1-4294967295"],
    ] {
        sim(args).expect_code(2).expect_stderr(args[0]);
    }
    sim(["--base", "5s", "--cap", "1s"])
        .expect_code(2)
        .expect_stderr("--cap (1s)");
    sim(["lod"])
        .expect_code(2)
        .expect_stderr("a similar subcommand exists: 'load'");
}

#[test]
fn sizes_that_size_memory_are_bounded_in_every_experiment() {
    for (args, says) in [
        (&["--trials", "4294967295"][..], "from 1 to 100000"),
        (&["--clients", "1-1000", "--trials", "1001"], "--trials"),
        (
            &["load", "--trials", "100000", "--failure-rates", "0.1,0.2"],
            "--trials",
        ),
    ] {
        sim(args).expect_code(2).expect_stderr(says);
    }
}

#[test]
fn a_reader_that_goes_away_ends_the_simulator_quietly() {
    // 5000 rows, more than a pipe holds: the writes after head has gone meet a broken pipe.
    let clients = vec!["1"; 1000].join(",");
    let mut shell = Command::new("sh");
    shell
        .args(["-c", "\"$SIM\" --clients $CLIENTS --trials 1 | head -n 1"])
        .env("SIM", env!("CARGO_BIN_EXE_retry-sim"))
        .env("CLIENTS", clients);
    let run = run(
        shell,
        vec!["sh".into(), "-c".into(), "retry-sim ... | head".into()],
    );
    run.expect_code(0);
    assert_eq!(run.stderr(), "", "{run}");
}
