//! The port through which whatever must wait for a blocking job (a file lock, a round trip to
//! a server, a write to a slow reader) stays awake to the signals that end a run: the job runs
//! on a thread of its own while the waiter waits for it, a signal, or a moment. The binary's
//! signal watch is the waiter of a run; the budget's `Threads`, which takes no signals, serves
//! what a run reads before its watch is up, the commands outside a run and the tests.

use std::io;
use std::time::Instant;

use crate::signal::Signal;

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

    /// Start `job` on a thread of its own, which takes none of the signals meant for the run: a
    /// job may outlive its wait (a server that never answers), and a thread with no handler
    /// that took an attempt's SIGCHLD would lose it.
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
