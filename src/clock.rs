//! The run loop's view of time: reading a monotonic clock and sleeping.
//!
//! Behind a trait so that the loop is tested with a fake clock that advances instantly.

use std::time::{Duration, Instant};

/// A monotonic clock that can also wait.
pub trait Clock {
    /// The current instant.
    fn now(&self) -> Instant;
    /// Wait for `duration`.
    fn sleep(&mut self, duration: Duration);
}

/// The real monotonic clock and `std::thread::sleep`.
#[derive(Clone, Copy, Debug, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> Instant {
        Instant::now()
    }

    fn sleep(&mut self, duration: Duration) {
        std::thread::sleep(duration);
    }
}
