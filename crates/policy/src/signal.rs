//! A signal, as the run's decisions see it: a number, and the status a death by it reports.
//! Names, parsing and sending belong to the binary, which knows the platform's signals; the
//! numbers here are the few POSIX fixes for every Unix, which the tests and the exit table use.

/// A signal, by its number; any number a death by a signal can report, real-time signals among
/// them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Signal(i32);

impl Signal {
    /// SIGHUP, 1 on every Unix.
    pub const HUP: Signal = Signal(1);
    /// SIGINT, 2 on every Unix.
    pub const INT: Signal = Signal(2);
    /// SIGQUIT, 3 on every Unix.
    pub const QUIT: Signal = Signal(3);
    /// SIGPIPE, 13 on every Unix.
    pub const PIPE: Signal = Signal(13);
    /// SIGKILL, 9 on every Unix.
    pub const KILL: Signal = Signal(9);
    /// SIGTERM, 15 on every Unix.
    pub const TERM: Signal = Signal(15);

    /// The signal numbered `number`.
    pub const fn from_number(number: i32) -> Signal {
        Signal(number)
    }

    /// Its number.
    pub const fn number(self) -> i32 {
        self.0
    }

    /// The status of a death by it, 128+N as shells report it, saturating at 255.
    pub fn status(self) -> u8 {
        u8::try_from(128 + self.0.clamp(0, 127)).unwrap_or(u8::MAX)
    }

    /// The signal whose death `status` reports (129 to 255), if it is one.
    pub fn of_status(status: u8) -> Option<Signal> {
        (status > 128).then(|| Signal(i32::from(status) - 128))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_death_by_signal_n_is_status_128_plus_n() {
        assert_eq!(Signal::TERM.status(), 143);
        assert_eq!(Signal::of_status(137), Some(Signal::KILL));
        assert_eq!(Signal::of_status(128), None);
        assert_eq!(Signal::from_number(200).status(), 255);
    }
}
