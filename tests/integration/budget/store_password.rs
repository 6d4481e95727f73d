//! The budget store's password is seen nowhere: never taken on the command line (other users
//! read every process's argv); not in the tool's messages, plan, report, events or `budget
//! show`, whatever the address's spelling; not in the environment of the command or a hook.

use crate::support::harness::{Run, Scratch, retry};
use crate::support::redis_server::RedisServer;

/// A shell line that prints the tool's argv (its parent's), one entry a line, and its own
/// environment.
const SNOOP: &str = "tr '\\0' '\\n' < /proc/$PPID/cmdline; env";

#[track_caller]
fn assert_unseen(run: &Run, password: &str) {
    assert!(
        !run.stdout().contains(password),
        "the password shows\n{run}"
    );
    assert!(
        !run.stderr().contains(password),
        "the password shows\n{run}"
    );
}

#[test]
fn a_password_on_the_command_line_is_refused_unquoted_before_anything_runs() {
    let scratch = Scratch::new();
    let ran = scratch.path("ran");
    for store in [
        "redis://app:s3cret-pw@127.0.0.1:1",
        "redis://:s3cret-pw@127.0.0.1:1/0",
        "redis://127.0.0.1:1?db=0&PassWord=s3cret-pw",
        "redis+unix:///run/r.sock?pa%73s=s3cret-pw",
        "redis+unix:///run/r.sock?%70assword=s3cret-pw",
    ] {
        let touch = ran.to_str().unwrap();
        for args in [
            vec![
                "--budget",
                "api",
                "--budget-store",
                store,
                "--",
                "touch",
                touch,
            ],
            vec!["--plan", "--budget", "api", "--budget-store", store],
            vec!["budget", "show", "api", "--budget-store", store],
        ] {
            let run = retry(&args).run();
            run.expect_code(125)
                .expect_stderr("--budget-store: the address holds a password")
                .expect_stderr("RETRY_BUDGET_STORE")
                .expect_stderr("?password_file=");
            assert_eq!(run.stderr().lines().count(), 1, "{run}");
            assert_unseen(&run, "s3cret");
            assert!(!ran.exists(), "the command ran\n{run}");
        }
    }
}

#[test]
fn from_the_environment_it_reaches_neither_the_command_nor_a_hook() {
    let server = RedisServer::on_socket_requiring("s3cret-pw");
    let scratch = Scratch::new();
    let store = format!("{}&pass=s3cret-pw", server.patient_url());
    let run = retry(["--log-format", "json", "--budget", "api", "-n", "2"])
        .args(["--base", "1ms"])
        .env("XDG_STATE_HOME", scratch.path("budgets"))
        .args(["--on-retry", SNOOP, "--", "sh", "-c"])
        .args([format!("{SNOOP}; exit 1")])
        .env("RETRY_BUDGET_STORE", &store)
        .run();
    run.expect_code(1);
    assert!(run.events_named("warning").is_empty(), "{run}");
    // The address reaches them, for a run inside them; its password does not.
    let passed_on = format!("RETRY_BUDGET_STORE={}\n", server.patient_url());
    assert_eq!(run.stdout().matches(&passed_on).count(), 2, "{run}");
    assert_unseen(&run, "s3cret");
}

#[test]
fn a_run_inside_an_attempt_keeps_the_store_and_a_password_file_but_no_inline_password() {
    let server = RedisServer::on_socket_requiring("s3cret-pw");
    let scratch = Scratch::new();
    let password = scratch.path("password");
    std::fs::write(&password, "s3cret-pw\n").unwrap();
    let inner = "\"$RETRY\" --budget api -n 2 --base 1ms -- false";
    let outer = |store: &str| {
        retry(["-n", "1", "--", "sh", "-c", inner])
            .env("RETRY", crate::support::harness::binary())
            .env("RETRY_BUDGET_STORE", store)
            .env("XDG_STATE_HOME", scratch.path("state"))
            .run()
    };
    // A password in a file is a path, and goes along: the run inside spends on the store.
    let with_file = format!(
        "{}&password_file={}",
        server.patient_url(),
        password.display()
    );
    let run = outer(&with_file);
    run.expect_code(1).expect_no_stderr("retry budget");
    retry(["budget", "show", "api"])
        .env("RETRY_BUDGET_STORE", &with_file)
        .run()
        .expect_code(0)
        .expect_stdout_contains("  retries         1\n");
    // A password given inline stays with the run it was given to: the run inside cannot log
    // in, and says what to give.
    let run = outer(&format!("{}&pass=s3cret-pw", server.patient_url()));
    run.expect_code(1)
        .expect_stderr("the store asks for a password, and its address gives none")
        .expect_stderr("give it with ?password_file=FILE");
    assert_unseen(&run, "s3cret");
    // So is a store whose database is selected as the connection opens, before any call.
    let run = outer(&format!("{}&db=3&pass=s3cret-pw", server.patient_url()));
    run.expect_code(1)
        .expect_stderr("selecting its database: NOAUTH")
        .expect_stderr("the store asks for a password, and its address gives none");
    assert_unseen(&run, "s3cret");
}

#[test]
fn no_spelling_of_the_address_shows_it() {
    let server = RedisServer::on_socket_requiring("s3cret-pw");
    let scratch = Scratch::new();
    for spelling in ["pa%73s", "%70assword", "PASSWORD"] {
        let store = format!("{}&db=0&{spelling}=s3cret-pw", server.patient_url());
        let report = scratch.path("report.json");
        let run = retry([
            "--log-format",
            "json",
            "--budget",
            "api",
            "-n",
            "2",
            "--base",
        ])
        .args(["1ms", "--report"])
        .args([&report])
        .env("XDG_STATE_HOME", scratch.path("budgets"))
        .args(["false"])
        .env("RETRY_BUDGET_STORE", &store)
        .run();
        run.expect_code(1);
        assert!(run.events_named("warning").is_empty(), "{run}");
        assert_unseen(&run, "s3cret");
        let report = std::fs::read_to_string(&report).unwrap();
        assert!(
            report.contains("pass=***") && !report.contains("s3cret"),
            "{report}"
        );
        let plan = retry(["--plan", "--budget", "api"])
            .env("RETRY_BUDGET_STORE", &store)
            .run();
        plan.expect_stdout_contains("pass=***");
        assert_unseen(&plan, "s3cret");
        let shown = retry(["budget", "show", "api"])
            .env("RETRY_BUDGET_STORE", &store)
            .run();
        shown.expect_code(0).expect_stdout_contains("pass=***");
        assert_unseen(&shown, "s3cret");
        let wrong = store.replace("s3cret-pw", "wr0ng-s3cret");
        let refused = retry([
            "--log-format",
            "json",
            "--budget",
            "api",
            "-n",
            "2",
            "--base",
        ])
        .args(["1ms", "false"])
        .env("XDG_STATE_HOME", scratch.path("budgets"))
        .env("RETRY_BUDGET_STORE", &wrong)
        .run();
        assert!(refused.warning().contains("pass=***"), "{refused}");
        assert_unseen(&refused, "s3cret");
    }
}

#[test]
fn a_password_file_keeps_it_out_of_argv_and_the_environment() {
    let server = RedisServer::with_user("retry-app", "s3cret-pw");
    let scratch = Scratch::new();
    let password = scratch.path("password");
    std::fs::write(&password, "s3cret-pw\n").unwrap();
    let store = format!(
        "{}&password_file={}",
        server
            .patient_url()
            .replace("redis://", "redis://retry-app@"),
        password.display()
    );
    let run = retry([
        "--log-format",
        "json",
        "--budget",
        "api",
        "-n",
        "2",
        "--base",
    ])
    .args(["1ms", "--budget-store", &store])
    .env("XDG_STATE_HOME", scratch.path("budgets"))
    .args(["--", "sh", "-c"])
    .args([format!("{SNOOP}; exit 1")])
    .run();
    run.expect_code(1);
    assert!(run.events_named("warning").is_empty(), "{run}");
    assert_unseen(&run, "s3cret");
    let shown = retry(["budget", "show", "api", "--budget-store", &store]).run();
    shown
        .expect_code(0)
        .expect_stdout_contains("redis://retry-app:***@");
}

#[test]
fn a_value_that_is_not_utf8_is_not_quoted() {
    use std::os::unix::ffi::OsStringExt;
    let store = std::ffi::OsString::from_vec(b"redis://:s3cret\xff@cache".to_vec());
    let run = retry(["--budget", "api", "--budget-store"])
        .args([store])
        .args(["true"])
        .run();
    run.expect_code(125).expect_stderr("not shown");
    assert_unseen(&run, "s3cret");
}

#[test]
fn a_password_file_that_is_a_fifo_is_refused_at_once() {
    let scratch = Scratch::new();
    let fifo = scratch.path("password");
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
    let ran = scratch.path("ran");
    let run = retry(["--budget", "api", "--budget-store"])
        .args([format!(
            "redis://127.0.0.1:1?password_file={}",
            fifo.display()
        )])
        .args(["--max-time", "5s", "touch"])
        .args([&ran])
        .run();
    run.expect_code(125)
        .expect_stderr("cannot read the password_file ")
        .expect_stderr("it is a FIFO, not a regular file");
    assert!(!ran.exists(), "{run}");
}
