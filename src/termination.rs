//! How one attempt ended, and the status a shell would report for it.
//!
//! Every decision and report works on the status number (death by signal N is 128+N, as in
//! shells); the [`Termination`] keeps the detail behind it for messages and events.

use std::fmt;

use crate::exit;

/// The end of one attempt.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Termination {
    /// The command exited with this code.
    Exited(u8),
    /// The command died of this signal.
    Signaled(i32),
}

impl Termination {
    /// The status as shells report it: the exit code, or 128+N for signal N.
    pub fn status(self) -> u8 {
        match self {
            Termination::Exited(code) => code,
            Termination::Signaled(signal) => exit::signal_status(signal),
        }
    }

    /// The signal that ended the attempt, if one did.
    pub fn signal(self) -> Option<i32> {
        match self {
            Termination::Exited(_) => None,
            Termination::Signaled(signal) => Some(signal),
        }
    }
}

impl fmt::Display for Termination {
    /// "exit status 3" or "signal 9 (status 137)".
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Termination::Exited(code) => write!(f, "exit status {code}"),
            Termination::Signaled(signal) => {
                write!(f, "signal {signal} (status {})", self.status())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signals_count_as_128_plus_n() {
        assert_eq!(Termination::Signaled(15).status(), 143);
        assert_eq!(Termination::Exited(3).status(), 3);
        assert_eq!(
            Termination::Signaled(9).to_string(),
            "signal 9 (status 137)"
        );
    }
}
