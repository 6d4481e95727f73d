//! How a store waits: for a job on a thread of its own (a file lock, a round trip to a server),
//! until a moment, awake to the signals that end a run, through the policy's [`Waiter`]. The
//! `retry` binary's signal watch is the waiter of a run; this crate has [`Threads`], a waiter
//! that takes no signals, for what a run reads before its watch is up (a job's schedule),
//! `retry budget show` and the tests. A job's thread blocks every signal as it starts: a job
//! that outlives its wait (a server that never answers) must not take a signal meant for the
//! run, such as the SIGCHLD of an attempt, which a thread with no handler would lose.

use std::io;
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::Instant;

use nix::sys::signal::SigSet;

pub use retry_policy::waiting::{Waited, Waiter};

/// A waiter that takes no signals: each job's thread hands its result over a channel.
#[derive(Clone, Copy, Debug, Default)]
pub struct Threads;

impl Waiter for Threads {
    type Job<T: Send + 'static> = Receiver<T>;

    fn start_job<T: Send + 'static>(
        &self,
        job: impl FnOnce() -> T + Send + 'static,
    ) -> io::Result<Receiver<T>> {
        let (done, result) = mpsc::channel();
        std::thread::Builder::new().spawn(move || {
            let _ = SigSet::all().thread_block();
            let _ = done.send(job());
        })?;
        Ok(result)
    }

    fn await_job<T: Send + 'static>(&self, job: Receiver<T>, until: Option<Instant>) -> Waited<T> {
        let received = match until {
            None => job.recv().map_err(|_| RecvTimeoutError::Disconnected),
            Some(until) => job.recv_timeout(until.saturating_duration_since(Instant::now())),
        };
        match received {
            Ok(result) => Waited::Done(result),
            // A job that panicked ends its thread without a result: as if it never ended.
            Err(_) => Waited::TimedOut,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use nix::sys::signal::Signal;
    use std::time::Duration;

    #[test]
    fn a_jobs_thread_takes_no_signal() {
        let blocked = Threads.run_job(None, || SigSet::thread_get_mask().unwrap());
        let Waited::Done(blocked) = blocked.unwrap() else {
            panic!("the job did not end");
        };
        for signal in [
            Signal::SIGCHLD,
            Signal::SIGINT,
            Signal::SIGTERM,
            Signal::SIGHUP,
        ] {
            assert!(blocked.contains(signal), "{signal} is not blocked");
        }
    }

    #[test]
    fn a_job_is_waited_for_until_its_moment() {
        let done = Threads.run_job(None, || 7).unwrap();
        assert_eq!(done, Waited::Done(7));
        let late = Instant::now() + Duration::from_millis(20);
        let slow = Threads.run_job(Some(late), || std::thread::sleep(Duration::from_secs(5)));
        assert_eq!(slow.unwrap(), Waited::TimedOut);
    }
}
