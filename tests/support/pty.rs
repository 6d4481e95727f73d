//! The tool run in a pseudo-terminal as the foreground of its own session, as in an interactive
//! shell: for tests of what a person at a terminal sees and types.

use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::OwnedFd;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex};

use crate::support::harness::{
    PATIENCE, TIME_LIMIT, binary, dispositions, require_installed, wait_at_most,
};
use std::time::{Duration, Instant};

/// The tool running on the slave side of a pseudo-terminal; the test holds the master side.
pub(crate) struct Session {
    child: Child,
    master: File,
    output: Arc<Mutex<Vec<u8>>>,
}

impl Session {
    /// Start the tool with `args` as the session leader of a new terminal.
    pub(crate) fn start(args: &[&str]) -> Session {
        Session::start_command(&binary(), args, &[])
    }

    /// Start an interactive bash, with job control, as the session leader of a new terminal;
    /// `$RETRY` names the tool, and the prompt is `$ `.
    pub(crate) fn shell() -> Session {
        let arguments = ["--norc", "--noprofile", "-i"];
        let session =
            Session::start_command("bash", &arguments, &[("PS1", "$ "), ("RETRY", &binary())]);
        session.expect("$ ");
        session
    }

    /// Start `program` with `args` and the variables `vars` as the leader of a new session whose
    /// controlling terminal is a new pseudo-terminal: util-linux's `setsid --ctty` makes its
    /// stdin, the slave, that terminal, and `env` gives the session the signal dispositions a
    /// person's would start with.
    fn start_command(program: &str, args: &[&str], vars: &[(&str, &str)]) -> Session {
        require_installed("setsid");
        let mut command = Command::new("setsid");
        command
            .args(["--ctty", "env"])
            .args(dispositions(&[]))
            .arg(program)
            .args(args);
        command.envs(vars.iter().copied());
        let pty = nix::pty::openpty(None, None).expect("open a pseudo-terminal");
        let stdio = |fd: &OwnedFd| Stdio::from(fd.try_clone().expect("duplicate the slave"));
        command
            .stdin(stdio(&pty.slave))
            .stdout(stdio(&pty.slave))
            .stderr(stdio(&pty.slave));
        let child = command.spawn().unwrap_or_else(|err| {
            panic!("{}", crate::support::harness::cannot_run("setsid", &err))
        });
        drop(pty.slave);
        let master = File::from(pty.master);
        let output = Arc::new(Mutex::new(Vec::new()));
        let mut reader = master.try_clone().expect("duplicate the master");
        let sink = Arc::clone(&output);
        std::thread::spawn(move || {
            let mut buffer = [0; 4096];
            // Reading fails with EIO once every slave descriptor is closed.
            while let Ok(count @ 1..) = reader.read(&mut buffer) {
                sink.lock().unwrap().extend_from_slice(&buffer[..count]);
            }
        });
        Session {
            child,
            master,
            output,
        }
    }

    /// The tool's process id.
    pub(crate) fn pid(&self) -> i32 {
        self.child.id() as i32
    }

    /// Type `bytes` at the terminal.
    pub(crate) fn write(&mut self, bytes: &[u8]) {
        self.master.write_all(bytes).expect("write to the terminal");
    }

    /// Everything the terminal showed so far.
    pub(crate) fn output(&self) -> String {
        String::from_utf8_lossy(&self.output.lock().unwrap()).into_owned()
    }

    /// Wait until the terminal shows `text`; fails after [`PATIENCE`].
    #[track_caller]
    pub(crate) fn expect(&self, text: &str) {
        self.expect_within(text, PATIENCE);
    }

    /// Wait until the terminal has shown `text` `times` times; fails after [`PATIENCE`].
    #[track_caller]
    pub(crate) fn expect_times(&self, text: &str, times: usize) {
        let start = Instant::now();
        while self.output().matches(text).count() < times {
            let shown = self.output();
            assert!(
                start.elapsed() < PATIENCE,
                "the terminal never showed {text:?} {times} times:\n{shown}"
            );
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// Wait until the terminal shows `text`; fails after `limit`.
    #[track_caller]
    pub(crate) fn expect_within(&self, text: &str, limit: Duration) {
        let start = Instant::now();
        while !self.output().contains(text) {
            let shown = self.output();
            assert!(
                start.elapsed() < limit,
                "the terminal never showed {text:?}:\n{shown}"
            );
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// Wait for the session leader to end; kills it and fails after [`TIME_LIMIT`].
    #[track_caller]
    pub(crate) fn wait(&mut self) -> ExitStatus {
        wait_at_most(&mut self.child, TIME_LIMIT).unwrap_or_else(|| {
            let _ = self.child.kill();
            panic!(
                "the session did not end; the terminal showed:\n{}",
                self.output()
            )
        })
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
