//! The real clock of the run loop: the monotonic clock, and waits that a signal can cut.

use std::time::{Duration, Instant};

use crate::signals::reaper;
use crate::signals::{Signal, SignalWatch, Wake};
use retry_policy::run::Clock;

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

    fn sleep(&mut self, duration: Duration) -> Option<Signal> {
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
