//! The budget store's password is seen nowhere: not in the tool's messages, plan, report,
//! events or `budget show`, whatever the address's spelling; not by the command or a hook,
//! through their environment or the tool's own `/proc/PID/environ` and `/proc/PID/cmdline`.

use crate::support::harness::{Run, Scratch, retry};
use crate::support::redis_server::RedisServer;

/// A shell line that prints the environment and argv of its parent (the tool), one entry a line,
/// and its own environment.
const SNOOP: &str =
    "tr '\\0' '\\n' < /proc/$PPID/environ; tr '\\0' '\\n' < /proc/$PPID/cmdline; env";

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
fn neither_the_command_nor_a_hook_can_read_it_from_the_tool() {
    let server = RedisServer::on_socket_requiring("s3cret-pw");
    let scratch = Scratch::new();
    let store = format!("{}&pass=s3cret-pw", server.patient_url());
    let through_argv = retry(["--log-format", "json", "--budget", "api", "-n", "2"])
        .args(["--base", "1ms", "--budget-store", &store, "--budget-dir"])
        .args([scratch.path("budgets")])
        .args(["--on-retry", SNOOP, "--", "sh", "-c"])
        .args([format!("{SNOOP}; exit 1")])
        .run();
    through_argv.expect_code(1);
    assert!(
        through_argv.events_named("warning").is_empty(),
        "{through_argv}"
    );
    through_argv.expect_stdout_contains("--budget-store");
    assert_unseen(&through_argv, "s3cret");

    let through_variable = retry(["--log-format", "json", "--budget", "api", "-n", "2"])
        .args(["--base", "1ms", "--budget-dir"])
        .args([scratch.path("budgets")])
        .args(["--on-retry", SNOOP, "--", "sh", "-c"])
        .args([format!("{SNOOP}; exit 1")])
        .env("RETRY_BUDGET_STORE", &store)
        .run();
    through_variable.expect_code(1);
    assert!(
        through_variable.events_named("warning").is_empty(),
        "{through_variable}"
    );
    through_variable.expect_stdout_contains("RETRY_BUDGET_STORE=redis+unix://");
    assert_unseen(&through_variable, "s3cret");
}

#[test]
fn no_spelling_of_the_address_shows_it() {
    let server = RedisServer::on_socket_requiring("s3cret-pw");
    let scratch = Scratch::new();
    for spelling in ["pa%73s", "%70assword", "password"] {
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
        .args(["1ms", "--budget-store", &store, "--report"])
        .args([&report])
        .args(["--budget-dir"])
        .args([scratch.path("budgets")])
        .args(["false"])
        .run();
        run.expect_code(1);
        assert!(run.events_named("warning").is_empty(), "{run}");
        assert_unseen(&run, "s3cret");
        let report = std::fs::read_to_string(&report).unwrap();
        assert!(
            report.contains("pass=***") && !report.contains("s3cret"),
            "{report}"
        );
        let plan = retry(["--plan", "--budget", "api", "--budget-store", &store]).run();
        plan.expect_stdout_contains("pass=***");
        assert_unseen(&plan, "s3cret");
        let shown = retry(["budget", "show", "api", "--budget-store", &store]).run();
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
        .args(["1ms", "--budget-store", &wrong, "--budget-dir"])
        .args([scratch.path("budgets")])
        .args(["false"])
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
    let store = server
        .patient_url()
        .replace("redis://", "redis://retry-app@");
    let run = retry([
        "--log-format",
        "json",
        "--budget",
        "api",
        "-n",
        "2",
        "--base",
    ])
    .args(["1ms", "--budget-store", &store, "--budget-password-file"])
    .args([&password])
    .args(["--budget-dir"])
    .args([scratch.path("budgets")])
    .args(["--", "sh", "-c"])
    .args([format!("{SNOOP}; exit 1")])
    .run();
    run.expect_code(1);
    assert!(run.events_named("warning").is_empty(), "{run}");
    assert_unseen(&run, "s3cret");
    let shown = retry(["budget", "show", "api", "--budget-store", &store])
        .args(["--budget-password-file"])
        .args([&password])
        .run();
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
