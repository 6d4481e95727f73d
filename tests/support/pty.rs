//! The tool run in a pseudo-terminal as the foreground of its own session, as in an interactive
//! shell: for tests of what a person at a terminal sees and types.

use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::OwnedFd;
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex};

use crate::support::harness::{PATIENCE, TIME_LIMIT, wait_at_most};
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
        let mut command = Command::new(crate::support::harness::binary());
        command.args(args);
        Session::start_command(command)
    }

    /// Start an interactive bash, with job control, as the session leader of a new terminal;
    /// `$RETRY` names the tool, and the prompt is `$ `.
    pub(crate) fn shell() -> Session {
        let mut command = Command::new("bash");
        command
            .args(["--norc", "--noprofile", "-i"])
            .env("PS1", "$ ")
            .env("RETRY", crate::support::harness::binary());
        let session = Session::start_command(command);
        session.expect("$ ");
        session
    }

    fn start_command(mut command: Command) -> Session {
        let pty = nix::pty::openpty(None, None).expect("open a pseudo-terminal");
        let stdio = |fd: &OwnedFd| Stdio::from(fd.try_clone().expect("duplicate the slave"));
        command
            .stdin(stdio(&pty.slave))
            .stdout(stdio(&pty.slave))
            .stderr(stdio(&pty.slave));
        // SAFETY: setsid, ioctl and signal are async-signal-safe, and nothing is allocated.
        unsafe {
            command.pre_exec(|| {
                if libc::setsid() < 0 || libc::ioctl(0, libc::TIOCSCTTY as _, 0) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                // A terminal's session starts with the signals a person's would have.
                for signal in [libc::SIGINT, libc::SIGQUIT, libc::SIGTSTP, libc::SIGCHLD] {
                    libc::signal(signal, libc::SIG_DFL);
                }
                Ok(())
            });
        }
        let program = command.get_program().to_string_lossy().into_owned();
        let child = command.spawn().unwrap_or_else(|err| {
            panic!("{}", crate::support::harness::cannot_run(&program, &err))
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
