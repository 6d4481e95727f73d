//! One attempt's process group supervised to its end, on real processes: a command past its
//! time limit is ended by the timeout signal and reported as timed out; a command that exits is
//! reported with its own status, and what it left running in its group is ended and reaped; a
//! signal the tool passes on reaches the command, and one that ends the run ends the command
//! too and is the run's.
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

/// The longest any case waits for its command: a command that is never ended fails its case
/// (as timed out) rather than hanging the test.
const BOUND: Duration = Duration::from_secs(60);

fn main() {
    let watch = SignalWatch::install(false, startup::prepare()).expect("the signal watch");
    reaper::adopt_orphans();
    a_command_past_its_time_limit_is_ended_by_the_timeout_signal(&watch);
    a_command_that_exits_has_its_status_and_what_it_left_in_its_group_is_ended(&watch);
    a_signal_the_tool_passes_on_reaches_the_command(&watch);
    a_signal_that_ends_the_run_ends_the_command_and_is_the_runs(&watch);
    println!("test result: ok. 4 passed");
}

fn a_command_past_its_time_limit_is_ended_by_the_timeout_signal(watch: &SignalWatch) {
    let leader = start(watch, "exec sleep 60");
    let mut supervision = supervise(watch, leader);
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
    let mut supervision = supervise(watch, leader);
    let status = supervision.await_leader(Some((Instant::now() + BOUND, TimeLimit::Attempt)));
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

fn a_signal_the_tool_passes_on_reaches_the_command(watch: &SignalWatch) {
    let script = "trap 'exit 7' USR1; touch {ready}; while :; do sleep 1 & wait $!; done";
    let (ended, interrupted_by) = signalled(watch, script, nix::sys::signal::Signal::SIGUSR1);
    assert_eq!(ended, Termination::Exited(7), "the command's trap ran");
    assert_eq!(interrupted_by, None, "the run goes on");
}

fn a_signal_that_ends_the_run_ends_the_command_and_is_the_runs(watch: &SignalWatch) {
    let script = "touch {ready}; exec sleep 60";
    let (ended, interrupted_by) = signalled(watch, script, nix::sys::signal::Signal::SIGTERM);
    assert_eq!(ended, Termination::Signaled(Signal::TERM));
    assert_eq!(interrupted_by, Some(Signal::TERM));
}

/// Run `script` (whose `{ready}` is the file it touches once it can take a signal), send this
/// process `signal` once it is ready, and supervise the command to its end within [`BOUND`]:
/// how it ended, and the signal that ended the run, if one did.
fn signalled(
    watch: &SignalWatch,
    script: &str,
    signal: nix::sys::signal::Signal,
) -> (Termination, Option<Signal>) {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let ready = dir.path().join("ready");
    let leader = start(
        watch,
        &script.replace("{ready}", &format!("'{}'", ready.display())),
    );
    signal_once_ready(ready, signal);
    let mut supervision = supervise(watch, leader);
    let status = supervision.await_leader(Some((Instant::now() + BOUND, TimeLimit::Attempt)));
    supervision.clear_group();
    (
        supervision.termination(status),
        supervision.interrupted_by(),
    )
}

/// Send this process `signal` from a thread of its own once the file `ready` appears (within
/// [`BOUND`]): the command is then where it can take what the tool passes on. Every thread
/// blocks the signal, so the watch takes it.
fn signal_once_ready(ready: std::path::PathBuf, signal: nix::sys::signal::Signal) {
    std::thread::spawn(move || {
        let given_up = Instant::now() + BOUND;
        while !ready.exists() {
            if Instant::now() > given_up {
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        kill(Pid::this(), signal).expect("a signal to this process");
    });
}

/// The supervision of the attempt `leader` leads, in its own group, with no terminal: SIGTERM
/// at its time limit, SIGKILL [`KILL_AFTER`] later.
fn supervise(watch: &SignalWatch, leader: Pid) -> Supervision<'_> {
    Supervision::new(watch, leader, true, None, (Signal::TERM, KILL_AFTER))
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
