//! The run loop's view of time: reading a monotonic clock, and waiting in a way a signal can cut.
//!
//! Behind a trait so that the loop is tested with a fake clock that advances instantly.

use std::time::{Duration, Instant};

use crate::process::reaper;
use crate::process::signals::{SignalWatch, Wake};

/// A monotonic clock that can also wait.
pub trait Clock {
    /// The current instant.
    fn now(&self) -> Instant;
    /// Wait for `duration`, unless a signal that ends the run arrives first: then return it at
    /// once.
    fn sleep(&mut self, duration: Duration) -> Option<i32>;
}

/// The real monotonic clock, waiting with [`SignalWatch::wait_until`].
pub struct SignalClock<'a> {
    watch: &'a SignalWatch,
}

impl<'a> SignalClock<'a> {
    /// A clock whose waits end early when `watch` sees a forwarded signal.
    pub fn new(watch: &'a SignalWatch) -> Self {
        SignalClock { watch }
    }
}

impl Clock for SignalClock<'_> {
    fn now(&self) -> Instant {
        Instant::now()
    }

    fn sleep(&mut self, duration: Duration) -> Option<i32> {
        let until = Instant::now().checked_add(duration);
        loop {
            match self.watch.wait_until(until) {
                Wake::Timeout => return None,
                Wake::Stop(signal) => return Some(signal),
                // No attempt runs to pass it on to.
                Wake::PassOn(_) => {}
                // An orphan of an earlier attempt ended: reap it and wait on.
                Wake::Changed => {
                    reaper::reap_ended(None, false);
                }
            }
        }
    }
}
