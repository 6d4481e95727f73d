//! Runs on a terminal of their own: the attempt gets the terminal and the keys typed there
//! (Ctrl-C, Ctrl-Z), and a run sent to the background leaves it to the shell.

use crate::support::harness::wait_for;
use crate::support::pty::Session;

#[test]
fn an_attempt_gets_the_terminal_and_ctrl_c_typed_there() {
    // One process with SIGINT at its default that answers a line and waits for more: a shell
    // would catch a Ctrl-C typed between two of its commands and carry on.
    let mut terminal = Session::start(&["-n", "3", "--base", "0s", "--", "sed", "-u", "s/^/got /"]);
    terminal.write(b"hello\n");
    terminal.expect("got hello");
    terminal.write(b"\x03");
    let status = terminal.wait();
    assert_eq!(
        std::os::unix::process::ExitStatusExt::signal(&status),
        Some(libc::SIGINT),
        "Ctrl-C should end the run as it ends a shell's job, not be retried"
    );
    assert!(
        !terminal.output().contains("attempt 2/3"),
        "{}",
        terminal.output()
    );
}

#[test]
fn ctrl_z_stops_the_tool_with_the_attempt_and_fg_resumes_both() {
    let mut terminal = Session::start(&["-n", "3", "--", "sed", "-u", "s/^/got /"]);
    terminal.write(b"one\n");
    terminal.expect("got one");
    terminal.write(b"\x1a");
    let tool = terminal.pid();
    wait_for("the tool to stop along", || {
        crate::support::harness::process_state(tool) == Some('T')
    });
    // What a shell's `fg` does for a session it leads: continue the job.
    let _ = nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(tool),
        nix::sys::signal::Signal::SIGCONT,
    );
    terminal.write(b"two\n");
    terminal.expect("got two");
    terminal.write(b"\x03");
    let status = terminal.wait();
    assert_eq!(
        std::os::unix::process::ExitStatusExt::signal(&status),
        Some(libc::SIGINT),
        "{}",
        terminal.output()
    );
}

#[test]
fn a_run_sent_to_the_background_leaves_the_terminal_to_the_shell() {
    let mut shell = Session::shell();
    shell.write(b"\"$RETRY\" -n 3 -- sed -u 's/^/got /'\n");
    shell.write(b"one\n");
    shell.expect("got one");
    shell.write(b"\x1a");
    shell.expect("Stopped");
    shell.write(b"bg\n");
    // The shell reads this line, not the attempt: it prints the sum, not "got echo ...".
    shell.write(b"echo shell-$((6 * 7))\n");
    shell.expect("shell-42");
    assert!(!shell.output().contains("got echo"), "{}", shell.output());
    shell.write(b"fg\n");
    shell.write(b"two\n");
    shell.expect("got two");
    shell.write(b"\x03");
    shell.expect("whole job stops too");
    shell.write(b"exit\n");
    shell.wait();
}

#[test]
fn ctrl_c_stops_a_whole_interactive_pipeline_at_once() {
    let mut shell = Session::shell();
    shell.write(b"\"$RETRY\" -- sleep 31.25 | sleep 20\n");
    // Once the attempt runs, it holds the terminal: it took it before it became `sleep`.
    wait_for("the attempt to start", || {
        std::process::Command::new("pgrep")
            .args(["-x", "-f", "sleep 31.25"])
            .output()
            .unwrap_or_else(|err| panic!("{}", crate::support::harness::cannot_run("pgrep", &err)))
            .status
            .success()
    });
    shell.write(b"\x03");
    // The second sleep would hold the shell for 20 seconds if only the attempt stopped.
    shell.write(b"echo after-$((6 * 7))\n");
    shell.expect_within("after-42", std::time::Duration::from_secs(10));
    shell.expect("$ ");
    shell.write(b"exit\n");
    shell.wait();
}
