//! One attempt's process group supervised to its end, on real processes: a command past its
//! time limit is ended by the timeout signal and reported as timed out; a command that exits is
//! reported with its own status, and what it left running in its group is ended and reaped.
//!
//! A test binary without the test harness (`harness = false`): the signal watch must be
//! installed before any other thread starts, so that every thread of the process blocks the
//! signals it takes, as the tool's own `main` does.

use std::ffi::OsString;
use std::path::Path;
use std::time::{Duration, Instant};

use nix::errno::Errno;
use nix::sys::signal::kill;
use nix::unistd::Pid;
use retry_policy::signal::Signal;
use retry_policy::termination::{Termination, TimeLimit};
use retry_process::signals::{SignalWatch, reaper, startup};
use retry_process::supervision::Supervision;
use retry_sys::environ::ChildEnvironment;
use retry_sys::spawn::{ChildStdio, Launcher, Setup};

/// How long after the timeout signal SIGKILL follows: longer than any test waits.
const KILL_AFTER: Duration = Duration::from_secs(30);

fn main() {
    let watch = SignalWatch::install(false, startup::prepare()).expect("the signal watch");
    reaper::adopt_orphans();
    a_command_past_its_time_limit_is_ended_by_the_timeout_signal(&watch);
    a_command_that_exits_has_its_status_and_what_it_left_in_its_group_is_ended(&watch);
    println!("test result: ok. 2 passed");
}

fn a_command_past_its_time_limit_is_ended_by_the_timeout_signal(watch: &SignalWatch) {
    let leader = start(watch, "exec sleep 60");
    let mut supervision = Supervision::new(watch, leader, true, None, (Signal::TERM, KILL_AFTER));
    let limit = Instant::now() + Duration::from_millis(100);
    let status = supervision.await_leader(Some((limit, TimeLimit::Attempt)));
    supervision.clear_group();
    let ended = supervision.termination(status);
    let timed_out = Termination::TimedOut {
        limit: TimeLimit::Attempt,
        signal: Some(Signal::TERM),
    };
    assert_eq!(ended, timed_out, "a command past its time limit");
    assert_eq!(kill(leader, None), Err(Errno::ESRCH), "the command is gone");
}

fn a_command_that_exits_has_its_status_and_what_it_left_in_its_group_is_ended(watch: &SignalWatch) {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let left = dir.path().join("left");
    let script = format!("sleep 60 & echo $! > '{}'; exit 3", left.display());
    let leader = start(watch, &script);
    let mut supervision = Supervision::new(watch, leader, true, None, (Signal::TERM, KILL_AFTER));
    let status = supervision.await_leader(None);
    assert_eq!(supervision.termination(status), Termination::Exited(3));
    let left = Pid::from_raw(pid_in(&left));
    assert_eq!(
        kill(left, None),
        Ok(()),
        "the command left a process running"
    );
    supervision.clear_group();
    assert_eq!(
        kill(left, None),
        Err(Errno::ESRCH),
        "what it left is ended and reaped"
    );
}

/// Start `sh -c script` in a process group of its own, as the tool starts an attempt.
fn start(watch: &SignalWatch, script: &str) -> Pid {
    let environment = ChildEnvironment::inheriting(|_| true);
    let args = [OsString::from("-c"), OsString::from(script)];
    let mut launcher = Launcher::new("sh".as_ref(), &args).expect("a launcher for sh");
    let setup = Setup {
        environ: environment.environ(),
        stdio: [ChildStdio::Inherit; 3],
        own_group: true,
        outlives_the_tool: false,
        handover: None,
        mask: watch.child_mask(),
    };
    launcher.start(&setup).expect("sh starts").pid
}

/// The process number the command wrote to `path` before it exited.
fn pid_in(path: &Path) -> i32 {
    let text = std::fs::read_to_string(path).expect("the command wrote the number");
    text.trim().parse().expect("a process number")
}
