//! How a store waits: for a job on a thread of its own (a file lock, a round trip to a server),
//! until a moment, awake to the signals that end a run. The `retry` binary's signal watch is the
//! waiter of a run; this crate says only what it needs of one, and has [`Threads`], a waiter that
//! takes no signals, for `retry budget show` and the tests.

use std::io;
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::Instant;

use retry_policy::signal::Signal;

/// How a job run on a thread of its own ended.
#[derive(Debug, PartialEq, Eq)]
pub enum Waited<T> {
    /// It finished with this result.
    Done(T),
    /// A signal that ends the run arrived first; the job is left to itself.
    Stopped(Signal),
    /// The moment given came first; the job is left to itself.
    TimedOut,
}

/// Runs jobs on threads of their own, and waits for them.
pub trait Waiter {
    /// A job under way.
    type Job<T: Send + 'static>;

    /// Start `job` on a thread of its own.
    fn start_job<T: Send + 'static>(
        &self,
        job: impl FnOnce() -> T + Send + 'static,
    ) -> io::Result<Self::Job<T>>;

    /// Wait for `job` to end, until `until` at the latest (never, when `None`), awake to the
    /// signals that end a run.
    fn await_job<T: Send + 'static>(&self, job: Self::Job<T>, until: Option<Instant>) -> Waited<T>;

    /// Run `job` on a thread of its own and wait for it, as [`Waiter::await_job`] does.
    fn run_job<T: Send + 'static>(
        &self,
        until: Option<Instant>,
        job: impl FnOnce() -> T + Send + 'static,
    ) -> io::Result<Waited<T>> {
        let job = self.start_job(job)?;
        Ok(self.await_job(job, until))
    }
}

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
    use std::time::Duration;

    #[test]
    fn a_job_is_waited_for_until_its_moment() {
        let done = Threads.run_job(None, || 7).unwrap();
        assert_eq!(done, Waited::Done(7));
        let late = Instant::now() + Duration::from_millis(20);
        let slow = Threads.run_job(Some(late), || std::thread::sleep(Duration::from_secs(5)));
        assert_eq!(slow.unwrap(), Waited::TimedOut);
    }
}
