//! CI systems and cron: each system's lines byte for byte as its documentation gives them, the
//! step outputs, text from the command that cannot forge a command, `--hold all`'s
//! silence and story, and `--report prom:` read by a real node_exporter and `promtool`.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::support::harness::{
    Invocation, Scratch, cannot_run, retry, server_port, shell, wait_for,
};

/// A command that fails its first attempt and succeeds on its second, writing to stderr each
/// time.
const FLAKY: &str = "echo err $RETRY_ATTEMPT >&2; test $RETRY_ATTEMPT = 2";
/// How the CI lines show it.
const FLAKY_SHOWN: &str = "sh -c 'echo err $RETRY_ATTEMPT >&2; test $RETRY_ATTEMPT = 2'";
/// A command that always fails, writing to stdout and stderr.
const FAILING: &str = "echo out $RETRY_ATTEMPT; echo err $RETRY_ATTEMPT >&2; exit 3";

/// A run of `script` with `sh -c`, at most `attempts`, with no wait between them, in the CI
/// system `variable` names.
fn in_ci(variable: &str, value: &str, attempts: &str, script: &str) -> Invocation {
    retry(["-n", attempts, "--base", "0s", "--", "sh", "-c", script]).env(variable, value)
}

#[test]
fn github_groups_each_attempt_and_warns_of_a_late_success() {
    let scratch = Scratch::new();
    std::fs::write(scratch.path("output"), "earlier=1\n").unwrap();
    std::fs::write(scratch.path("summary"), "").unwrap();
    let run = in_ci("GITHUB_ACTIONS", "true", "3", FLAKY)
        .env("GITHUB_OUTPUT", scratch.path("output"))
        .env("GITHUB_STEP_SUMMARY", scratch.path("summary"))
        .run();
    run.expect_code(0);
    assert_eq!(
        run.stderr(),
        format!(
            "::group::attempt 1/3: {FLAKY_SHOWN}\nerr 1\n\n::endgroup::\n\
             retry: attempt 1/3 failed with exit status 1; retrying in 0s\n\
             ::group::attempt 2/3: {FLAKY_SHOWN}\nerr 2\n\n::endgroup::\n\
             ::warning title=retry::{FLAKY_SHOWN} succeeded only after 2 attempts; attempt 1/3 \
             failed with exit status 1\n"
        ),
        "{run}"
    );
    let output = scratch.read("output");
    let values = output.strip_prefix("earlier=1\n").expect("appended");
    let values: Vec<&str> = values.lines().collect();
    assert_eq!(
        values[..4],
        [
            "attempts=2",
            "exit_code=0",
            "outcome=success",
            "reason=success"
        ]
    );
    let elapsed = values[4].strip_prefix("elapsed_seconds=").unwrap();
    assert!(elapsed.parse::<f64>().unwrap() >= 0.0, "{output}");
    let summary = scratch.read("summary");
    assert!(
        summary.starts_with(&format!(
            "### retry: succeeded after 2 attempts\n\n` {FLAKY_SHOWN} `\n\n\
             | Attempt | Ended | Took | Then |\n| ---: | --- | ---: | --- |\n| 1/3 | exit status 1 | "
        )),
        "{summary}"
    );
    assert!(summary.contains(" | retried after 0s |\n| 2/3 | exit status 0 | "));
}

#[test]
fn github_says_why_a_run_gave_up() {
    let run = in_ci("GITHUB_ACTIONS", "true", "2", "exit 7").run();
    run.expect_code(7);
    assert!(
        run.stderr().ends_with(
            "::endgroup::\nretry: giving up after 2 attempts, all failed; the last failed with \
             exit status 7\n::error title=retry::sh -c 'exit 7': giving up after 2 attempts, all \
             failed; the last failed with exit status 7\n"
        ),
        "{run}"
    );
}

/// `text` with each GitLab section marker's time made `T`, once checked to be now's.
fn gitlab_times_checked(text: &str) -> String {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find("section_") {
        let (before, marker) = rest.split_at(at);
        out.push_str(before);
        let colon = marker.find(':').unwrap() + 1;
        let digits = marker[colon..].find(':').unwrap();
        let time: u64 = marker[colon..colon + digits].parse().unwrap();
        assert!(time.abs_diff(now) < 60, "{time} is not now ({now})");
        out.push_str(&marker[..colon]);
        out.push('T');
        rest = &marker[colon + digits..];
    }
    out.push_str(rest);
    out
}

#[test]
fn gitlab_folds_each_attempt_into_a_section_and_marks_the_failure() {
    let run = in_ci("GITLAB_CI", "true", "2", "echo err >&2; exit 4").run();
    run.expect_code(4);
    let pid = run
        .stderr()
        .split("retry_")
        .nth(1)
        .and_then(|rest| rest.split('_').next())
        .map(str::to_string)
        .expect("a section name");
    let section = |attempt| format!("retry_{pid}_attempt_{attempt}");
    let shown = "sh -c 'echo err >&2; exit 4'";
    assert_eq!(
        gitlab_times_checked(&run.stderr()),
        format!(
            "\x1b[0Ksection_start:T:{}[collapsed=true]\r\x1b[0Kattempt 1/2: {shown}\nerr\n\n\
             \x1b[0Ksection_end:T:{}\r\x1b[0K\n\
             retry: attempt 1/2 failed with exit status 4; retrying in 0s\n\
             \x1b[0Ksection_start:T:{}[collapsed=true]\r\x1b[0Kattempt 2/2: {shown}\nerr\n\n\
             \x1b[0Ksection_end:T:{}\r\x1b[0K\n\
             retry: giving up after 2 attempts, all failed; the last failed with exit status 4\n\
             \x1b[31;1mretry: error: {shown}: giving up after 2 attempts, all failed; the last \
             failed with exit status 4\x1b[0m\n",
            section(1),
            section(1),
            section(2),
            section(2)
        ),
        "{run}"
    );
}

#[test]
fn buildkite_opens_the_section_of_the_attempt_that_failed_the_run() {
    let run = in_ci("BUILDKITE", "true", "2", "echo err >&2; exit 4").run();
    run.expect_code(4);
    let shown = "sh -c 'echo err >&2; exit 4'";
    assert_eq!(
        run.stderr(),
        format!(
            "--- attempt 1/2: {shown}\nerr\n\
             retry: attempt 1/2 failed with exit status 4; retrying in 0s\n\
             --- attempt 2/2: {shown}\nerr\n\n^^^ +++\n\
             retry: giving up after 2 attempts, all failed; the last failed with exit status 4\n\
             \x1b[31;1mretry: error: {shown}: giving up after 2 attempts, all failed; the last \
             failed with exit status 4\x1b[0m\n"
        ),
        "{run}"
    );
    let late = in_ci("BUILDKITE", "true", "3", FLAKY).run();
    late.expect_code(0).expect_stderr(&format!(
        "\x1b[33;1mretry: warning: {FLAKY_SHOWN} succeeded only after 2 attempts; attempt 1/3 \
         failed with exit status 1\x1b[0m\n"
    ));
    late.expect_no_stderr("^^^ +++");
}

#[test]
fn azure_groups_issues_and_sets_variables() {
    let run = in_ci("TF_BUILD", "True", "3", FLAKY).run();
    run.expect_code(0);
    let stderr = run.stderr();
    let (log, variables) = stderr.split_once("##vso[task.setvariable").unwrap();
    assert_eq!(
        log,
        format!(
            "##[group]attempt 1/3: {FLAKY_SHOWN}\nerr 1\n\n##[endgroup]\n\
             retry: attempt 1/3 failed with exit status 1; retrying in 0s\n\
             ##[group]attempt 2/3: {FLAKY_SHOWN}\nerr 2\n\n##[endgroup]\n\
             ##vso[task.logissue type=warning]{FLAKY_SHOWN} succeeded only after 2 attempts; \
             attempt 1/3 failed with exit status 1\n"
        ),
        "{run}"
    );
    let variables: Vec<&str> = variables.lines().collect();
    assert_eq!(
        variables[..4],
        [
            " variable=attempts;isoutput=true]2",
            "##vso[task.setvariable variable=exit_code;isoutput=true]0",
            "##vso[task.setvariable variable=outcome;isoutput=true]success",
            "##vso[task.setvariable variable=reason;isoutput=true]success",
        ]
    );
    assert!(
        variables[4].starts_with("##vso[task.setvariable variable=elapsed_seconds;isoutput=true]")
    );
}

#[test]
fn the_command_line_cannot_forge_a_workflow_command() {
    let hostile = "exit 5 # %0A\n::error::forged\r##vso[task.setvariable variable=x]y";
    let github = in_ci("GITHUB_ACTIONS", "true", "1", hostile).run();
    github.expect_code(5);
    for line in github.stderr().lines() {
        assert!(
            !line.starts_with("::error::forged") && !line.contains('\r'),
            "{github}"
        );
    }
    github.expect_stderr("# %250A\\n::error::forged\\r##vso[task.setvariable");
    let azure = in_ci("TF_BUILD", "True", "1", hostile).run();
    azure.expect_code(5);
    for line in azure.stderr().lines() {
        if let Some(at) = line.find("##vso[") {
            assert!(
                at == 0
                    && (line.starts_with("##vso[task.logissue type=error]")
                        || line.starts_with("##vso[task.setvariable variable=")),
                "{line:?} in\n{azure}"
            );
        }
    }
    azure.expect_stderr("**vso[task.setvariable variable=x]y");
    azure.expect_stderr("%AZP25");
}

#[test]
fn every_marker_starts_a_line_and_no_control_character_reaches_the_log() {
    // The command's last line has no line feed, and its output shares the log with the tool's
    // lines (2>&1); its words hold ESC, an OSC sequence and BEL.
    let script = "printf '{\"a\":1}'; printf 'partial' >&2; exit 1";
    let markers = [
        (
            "GITHUB_ACTIONS",
            "true",
            &["::group::", "::endgroup::", "::error "][..],
        ),
        (
            "GITLAB_CI",
            "true",
            &["\x1b[0Ksection_start:", "\x1b[0Ksection_end:", "\x1b[31;1m"],
        ),
        (
            "BUILDKITE",
            "true",
            &["--- attempt", "^^^ +++", "\x1b[31;1m"],
        ),
        (
            "TF_BUILD",
            "True",
            &["##[group]", "##[endgroup]", "##vso[task.logissue"],
        ),
    ];
    for (variable, value, markers) in markers {
        let run = shell(
            "\"$RETRY\" -n 2 --base 0s -- sh -c \"$0\" \"$(printf '\\033]0;title\\007')\" 2>&1",
        )
        .args([script])
        .env(variable, value)
        .run();
        run.expect_code(1);
        let log = run.stdout();
        for marker in markers {
            let found = log.matches(marker).count();
            let at_line_start = log
                .split('\n')
                .filter(|line| line.starts_with(marker))
                .count();
            assert!(found > 0, "no {marker:?} in\n{run}");
            assert_eq!(
                found, at_line_start,
                "{marker:?} not at a line's start in\n{run}"
            );
        }
        assert!(!log.contains('\x07'), "BEL reached the log\n{run}");
        assert!(
            !log.contains("\x1b]0;"),
            "an OSC sequence reached the log\n{run}"
        );
    }
}

#[test]
fn no_ci_lines_when_told_none_or_when_stderr_is_json() {
    let none = retry(["--ci", "none", "-n", "2", "--base", "0s", "false"])
        .env("GITHUB_ACTIONS", "true")
        .run();
    none.expect_code(1).expect_no_stderr("::");
    let json = retry(["--log-format", "json", "-n", "2", "--base", "0s", "false"])
        .env("GITHUB_ACTIONS", "true")
        .run();
    json.expect_code(1);
    assert!(
        json.events().iter().all(|event| event.is_object()),
        "{json}"
    );
    let chosen = retry(["--ci", "buildkite", "-n", "1", "true"]).run();
    chosen
        .expect_code(0)
        .expect_stderr("--- attempt 1/1: true\n");
}

#[test]
fn a_nested_run_leaves_the_ci_system_to_the_outermost_one() {
    let scratch = Scratch::new();
    std::fs::write(scratch.path("output"), "").unwrap();
    let inner = format!("{} -n 2 --base 0s false", crate::support::harness::binary());
    let run = retry(["-n", "2", "--base", "0s", "sh", "-c", &inner])
        .env("GITHUB_ACTIONS", "true")
        .env("GITHUB_OUTPUT", scratch.path("output"))
        .run();
    run.expect_code(1);
    assert_eq!(run.stderr().matches("::group::").count(), 2, "{run}");
    assert_eq!(run.stderr().matches("::error ").count(), 1, "{run}");
    assert_eq!(scratch.read("output").matches("attempts=").count(), 1);
}

#[test]
fn github_files_that_cannot_be_written_fail_the_run_before_the_command_runs() {
    let scratch = Scratch::new();
    let ran = scratch.path("ran");
    let touch = ["--ci", "github", "touch", ran.to_str().unwrap()];
    let missing = retry(touch)
        .env("GITHUB_OUTPUT", scratch.path("missing"))
        .run();
    missing
        .expect_code(125)
        .expect_stderr("cannot write $GITHUB_OUTPUT (");
    assert!(!ran.exists(), "the command ran first\n{missing}");
    std::os::unix::fs::symlink("/etc/hostname", scratch.path("link")).unwrap();
    let linked = retry(touch)
        .env("GITHUB_STEP_SUMMARY", scratch.path("link"))
        .run();
    linked
        .expect_code(125)
        .expect_stderr("cannot write $GITHUB_STEP_SUMMARY (")
        .expect_stderr("it is a symbolic link");
    assert!(!ran.exists(), "the command ran first\n{linked}");
    let fifo = scratch.path("fifo");
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
    let piped = retry(touch).env("GITHUB_OUTPUT", &fifo).run();
    piped
        .expect_code(125)
        .expect_stderr("cannot write $GITHUB_OUTPUT (");
    assert!(!ran.exists(), "the command ran first\n{piped}");
}

#[test]
fn a_dotenv_report_gives_the_outcome_to_later_jobs() {
    let scratch = Scratch::new();
    let path = scratch.path("retry.env");
    let run = retry(["-n", "2", "--base", "0s", "--report"])
        .args([format!("dotenv:{}", path.display())])
        .args(["sh", "-c", "exit 3"])
        .run();
    run.expect_code(3);
    let text = scratch.read("retry.env");
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines[..4],
        [
            "RETRY_RUN_ATTEMPTS=2",
            "RETRY_RUN_EXIT_CODE=3",
            "RETRY_RUN_OUTCOME=failure",
            "RETRY_RUN_REASON=exhausted"
        ],
        "{run}"
    );
    assert!(lines[4].starts_with("RETRY_RUN_ELAPSED_SECONDS="));
    assert_eq!(lines.len(), 5);
    let refused = retry(["--report"])
        .args([scratch.path("no/such/dir/retry.env")])
        .args(["true"])
        .run();
    refused
        .expect_code(125)
        .expect_stderr("cannot write --report ");
}

#[test]
fn quiet_unless_failed_says_nothing_of_a_success() {
    let run = retry(["--hold", "all", "-n", "3", "--base", "0s", "--"])
        .args([
            "sh",
            "-c",
            "echo out; echo err >&2; test $RETRY_ATTEMPT = 2",
        ])
        .run();
    run.expect_code(0).expect_stdout("");
    assert_eq!(run.stderr(), "", "{run}");
}

#[test]
fn quiet_unless_failed_tells_the_whole_story_of_a_failure_each_attempt_said_once() {
    let run = shell(
        "\"$RETRY\" --hold all -n 2 --base 0s sh -c \
         'echo out $RETRY_ATTEMPT; echo err $RETRY_ATTEMPT >&2; exit 3' 2>&1",
    )
    .run();
    run.expect_code(3);
    assert_eq!(
        run.stdout(),
        "retry: attempt 1/2 failed with exit status 3; its output:\nout 1\nerr 1\n\
         retry: retrying in 0s\n\
         retry: attempt 2/2 failed with exit status 3; its output:\nout 2\nerr 2\n\
         retry: giving up after 2 attempts, all failed; the last failed with exit status 3\n",
        "{run}"
    );
    let split = retry(["--hold", "all", "-n", "1", "sh", "-c", FAILING]).run();
    split.expect_code(3).expect_stdout("out 1\n");
    assert_eq!(
        split.stderr(),
        "retry: attempt 1/1 failed with exit status 3; its output:\nerr 1\n\
         retry: giving up: the only attempt allowed failed with exit status 3\n",
        "{split}"
    );
}

#[test]
fn quiet_unless_failed_keeps_a_large_story_whole_or_fails_loudly() {
    let script = "head -c 3000000 /dev/zero | tr '\\0' x; echo; echo tail >&2; exit 1";
    let whole = retry(["--hold", "all", "-n", "1", "sh", "-c", script]).run();
    whole.expect_code(1);
    assert_eq!(
        whole.stdout().len(),
        3_000_001,
        "held beyond memory, and whole"
    );
    whole.expect_stderr("its output:\ntail\n");
    let scratch = Scratch::new();
    let lost = retry(["--hold", "all", "-n", "3", "sh", "-c", script])
        .env("TMPDIR", scratch.path("missing"))
        .run();
    lost.expect_code(125)
        .expect_stderr("cannot hold the command's stdout: a temporary file in ")
        .expect_stderr("TMPDIR");
}

#[test]
fn quiet_unless_failed_keeps_stderr_when_stdout_breaks() {
    let (read, write) = nix::unistd::pipe().unwrap();
    drop(read);
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .unwrap();
    for (stdout, how) in [
        (Stdio::from(write), "Broken pipe"),
        (Stdio::from(full), "No space left on device"),
    ] {
        let run = retry(["--hold", "all", "-n", "2", "--base", "0s", "sh", "-c"])
            .args(["echo out $RETRY_ATTEMPT; echo err $RETRY_ATTEMPT >&2; exit 3"])
            .stdout(stdout)
            .run();
        run.expect_code(3)
            .expect_stderr("its output:\nerr 1\n")
            .expect_stderr("its output:\nerr 2\n")
            .expect_stderr("giving up after 2 attempts");
        let said = format!("cannot write the held output of the run: to stdout: {how}");
        assert_eq!(run.stderr().matches(&said).count(), 1, "{run}");
    }
}

#[test]
fn quiet_unless_failed_keeps_stderr_for_people() {
    let run = retry(["--hold", "all", "--log-format", "json", "true"]).run();
    run.expect_code(125)
        .expect_stderr("--hold all writes the held output under headers");
}

/// The sample lines of a textfile, without the comments.
fn samples(text: &str) -> Vec<String> {
    text.lines()
        .filter(|line| !line.starts_with('#'))
        .map(str::to_string)
        .collect()
}

/// The value of the gauge `name` in `text`.
fn gauge(text: &str, name: &str) -> f64 {
    let line = text
        .lines()
        .find(|line| line.starts_with(&format!("{name}{{")))
        .unwrap_or_else(|| panic!("no {name} in\n{text}"));
    line.rsplit(' ').next().unwrap().parse().unwrap()
}

#[test]
fn metrics_keep_the_last_success_across_failed_runs() {
    let scratch = Scratch::new();
    let path = scratch.path("backup.prom");
    let run = |script: &str| {
        retry(["-n", "2", "--base", "50ms", "--jitter", "equal", "--report"])
            .args([&path])
            .args(["--job", "nightly \"backup\"", "sh", "-c", script])
            .run()
    };
    let before = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs_f64();
    run("test $RETRY_ATTEMPT = 2").expect_code(0);
    let first = scratch.read("backup.prom");
    let job = r#"{job="nightly \"backup\""}"#;
    let success = gauge(&first, "retry_last_success_timestamp_seconds");
    assert!(success >= before - 1.0, "{first}");
    assert_eq!(gauge(&first, "retry_last_run_success"), 1.0);
    assert_eq!(gauge(&first, "retry_last_run_attempts"), 2.0);
    assert!(
        gauge(&first, "retry_last_run_wait_seconds") > 0.0,
        "{first}"
    );
    run("exit 9").expect_code(9);
    let second = scratch.read("backup.prom");
    assert_eq!(
        samples(&second)[1..5],
        [
            format!("retry_last_success_timestamp_seconds{job} {success:.3}"),
            format!("retry_last_run_success{job} 0"),
            format!("retry_last_run_attempts{job} 2"),
            format!("retry_last_run_exit_status{job} 9"),
        ],
        "{second}"
    );
    let mode = std::fs::metadata(&path).unwrap().permissions();
    assert_eq!(
        std::os::unix::fs::PermissionsExt::mode(&mode) & 0o777,
        0o644,
        "readable by the collector's user"
    );
    let leftovers: Vec<_> = std::fs::read_dir(scratch.path(".")).unwrap().collect();
    assert_eq!(leftovers.len(), 1, "no temporary file is left behind");
}

#[test]
fn metrics_name_the_job_and_need_a_name_node_exporter_reads() {
    let scratch = Scratch::new();
    let path = scratch.path("m.prom");
    retry(["--report"])
        .args([&path])
        .args(["/bin/true"])
        .run()
        .expect_code(0);
    assert!(
        scratch
            .read("m.prom")
            .contains("retry_last_run_attempts{job=\"true\"} 1\n")
    );
    retry(["--report"])
        .args([&path])
        .args(["--budget", "api", "--budget-store"])
        .args([format!("file:{}", scratch.path(".").display())])
        .args(["true"])
        .run()
        .expect_code(0);
    assert!(scratch.read("m.prom").contains("{job=\"api\"}"));
    retry(["--report"])
        .args([format!("prom:{}", scratch.path("m.txt").display())])
        .args(["true"])
        .run()
        .expect_code(125)
        .expect_stderr("reads only files whose names end in .prom");
    retry(["--job", " ", "true"])
        .run()
        .expect_code(125)
        .expect_stderr("--job <NAME>': a job's name may not be empty or blank");
    retry(["--report"])
        .args([&path])
        .args(["--job", "nightly", "true"])
        .run()
        .expect_code(0);
    assert!(scratch.read("m.prom").contains("{job=\"nightly\"}"));
}

/// A program the test needs, or the reason it cannot run, as a failure (never a skip).
fn needed(program: &str) -> Command {
    let probe = Command::new(program).arg("--version").output();
    if let Err(err) = probe {
        panic!("{}", cannot_run(program, &err));
    }
    Command::new(program)
}

#[test]
fn promtool_accepts_the_metrics() {
    let scratch = Scratch::new();
    let path = scratch.path("job.prom");
    // A named job keeps a history, whose counts are counters beside the gauges.
    retry(["-n", "2", "--base", "0s", "--job", "nightly", "--report"])
        .args([&path])
        .args(["false"])
        .run()
        .expect_code(1);
    let text = scratch.read("job.prom");
    for outcome in ["clean\"} 0", "flaky\"} 0", "failed\"} 1"] {
        let line = format!("retry_job_runs_total{{job=\"nightly\",outcome=\"{outcome}");
        assert!(text.contains(&line), "{line}\n{text}");
    }
    let file = std::fs::File::open(&path).unwrap();
    let checked = needed("promtool")
        .args(["check", "metrics"])
        .stdin(file)
        .output()
        .unwrap();
    assert!(
        checked.status.success() && checked.stdout.is_empty() && checked.stderr.is_empty(),
        "promtool check metrics: {checked:?}\n{}",
        scratch.read("job.prom")
    );
}

/// A node_exporter serving only its textfile collector, stopped when dropped.
struct NodeExporter {
    child: Child,
    port: u16,
}

impl Drop for NodeExporter {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl NodeExporter {
    fn start(directory: &std::path::Path) -> NodeExporter {
        let port = server_port();
        let child = needed("prometheus-node-exporter")
            .arg(format!("--web.listen-address=127.0.0.1:{port}"))
            .arg(format!(
                "--collector.textfile.directory={}",
                directory.display()
            ))
            .args(["--collector.disable-defaults", "--collector.textfile"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        NodeExporter { child, port }
    }

    /// The metrics it serves, once it serves them.
    fn scrape(&self) -> Option<String> {
        let mut stream = TcpStream::connect(("127.0.0.1", self.port)).ok()?;
        stream.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
        stream
            .write_all(b"GET /metrics HTTP/1.0\r\nHost: localhost\r\n\r\n")
            .ok()?;
        let mut response = String::new();
        stream.read_to_string(&mut response).ok()?;
        response.starts_with("HTTP/1.0 200").then(|| {
            response
                .split_once("\r\n\r\n")
                .map(|(_, body)| body.to_string())
        })?
    }
}

#[test]
fn node_exporter_serves_the_metrics_a_run_wrote() {
    let scratch = Scratch::new();
    retry(["-n", "3", "--base", "0s", "--report"])
        .args([scratch.path("flaky.prom")])
        .args(["--job", "flaky", "sh", "-c", FLAKY])
        .run()
        .expect_code(0);
    let exporter = NodeExporter::start(scratch.path(".").as_path());
    wait_for("node_exporter to serve its metrics", || {
        exporter.scrape().is_some()
    });
    let body = exporter.scrape().unwrap();
    assert!(
        body.contains("\nretry_last_run_attempts{job=\"flaky\"} 2\n"),
        "{body}"
    );
    assert!(body.contains("\nretry_last_run_success{job=\"flaky\"} 1\n"));
    assert!(
        body.contains("\nnode_textfile_scrape_error 0\n"),
        "the collector read the file without an error:\n{body}"
    );
}

#[test]
fn a_warning_is_said_even_when_a_held_run_succeeds_and_kept_in_its_report_and_ping() {
    let scratch = crate::support::harness::Scratch::new();
    let monitor = crate::support::monitor_service::MonitorService::answering();
    let report = scratch.path("report.json");
    // As under cron with no HOME: the job's terms and history have no place.
    let run = retry(["--hold", "all", "--job", "nightly", "-n", "1", "--report"])
        .args([&report])
        .args(["--", "true"])
        .env_remove("HOME")
        .env_remove("XDG_STATE_HOME")
        .env_remove("RETRY_BUDGET_STORE")
        .env(
            "RETRY_MONITOR",
            format!("healthchecks:{}", monitor.url("/u")),
        )
        .run();
    run.expect_code(0);
    let said = "job nightly: its terms (--overlap, --alert-after, --schedule: retry job set) \
                cannot be read";
    assert_eq!(run.stderr().matches(said).count(), 1, "{run}");
    let recorded: serde_json::Value = serde_json::from_str(&scratch.read("report.json")).unwrap();
    let warnings = recorded["warnings"].as_array().unwrap();
    assert!(
        warnings.iter().any(|w| w.as_str().unwrap().contains(said)),
        "{recorded}"
    );
    let received = monitor.received();
    let body = &received.last().unwrap().body;
    assert!(body.contains(&format!("retry: warning: {said}")), "{body}");
}
