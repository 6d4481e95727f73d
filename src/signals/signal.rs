//! A signal: one type for every signal the tool takes, sends, passes on or reports, with the one
//! parser of a signal's name or number and the names shells give them.

use std::fmt;
use std::str::FromStr;

/// A signal, by its number; any number a death by a signal can report, real-time signals
/// among them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Signal(i32);

impl Signal {
    pub(crate) const INT: Signal = Signal(libc::SIGINT);
    pub(crate) const TERM: Signal = Signal(libc::SIGTERM);
    pub(crate) const HUP: Signal = Signal(libc::SIGHUP);
    pub(crate) const QUIT: Signal = Signal(libc::SIGQUIT);
    pub(crate) const KILL: Signal = Signal(libc::SIGKILL);
    pub(crate) const CONT: Signal = Signal(libc::SIGCONT);
    pub(crate) const USR1: Signal = Signal(libc::SIGUSR1);
    pub(crate) const USR2: Signal = Signal(libc::SIGUSR2);
    pub(crate) const ALRM: Signal = Signal(libc::SIGALRM);
    pub(crate) const WINCH: Signal = Signal(libc::SIGWINCH);
    pub(crate) const CHLD: Signal = Signal(libc::SIGCHLD);

    /// The signal numbered `number`.
    pub(crate) fn from_number(number: i32) -> Signal {
        Signal(number)
    }

    /// Its number.
    pub(crate) fn number(self) -> i32 {
        self.0
    }

    /// The status of a death by it, 128+N as shells report it, saturating at 255.
    pub(crate) fn status(self) -> u8 {
        u8::try_from(128 + self.0.clamp(0, 127)).unwrap_or(u8::MAX)
    }

    /// The signal whose death `status` reports (129 to 255), if it is one.
    pub(crate) fn of_status(status: u8) -> Option<Signal> {
        (status > 128).then(|| Signal(i32::from(status) - 128))
    }

    /// The same signal as nix knows it, to send or act on; none for one it has no name for.
    pub(crate) fn known(self) -> Option<nix::sys::signal::Signal> {
        nix::sys::signal::Signal::try_from(self.0).ok()
    }
}

/// The conventional name, such as `SIGTERM`, or `signal N` when it has none.
impl fmt::Display for Signal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.known() {
            Some(signal) => f.pad(signal.as_str()),
            None => f.pad(&format!("signal {}", self.0)),
        }
    }
}

/// In JSON, by its name, as messages show it.
impl serde::Serialize for Signal {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

/// A signal's name, with or without `SIG` and in any case (`TERM`, `sigint`), or its number.
impl FromStr for Signal {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        const EXPECTED: &str = "expected a signal's name or number, e.g. TERM, SIGINT or 2";
        let trimmed = text.trim();
        let known = match trimmed.parse::<i32>() {
            Ok(number) => nix::sys::signal::Signal::try_from(number).ok(),
            Err(_) => {
                let upper = trimmed.to_ascii_uppercase();
                let name = match upper.starts_with("SIG") {
                    true => upper,
                    false => format!("SIG{upper}"),
                };
                name.parse().ok()
            }
        };
        known
            .map(|signal| Signal(signal as i32))
            .ok_or_else(|| format!("not a signal; {EXPECTED}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signals_are_named_or_numbered() {
        for (text, signal) in [
            ("TERM", Signal::TERM),
            ("sigint", Signal::INT),
            ("SIGKILL", Signal::KILL),
            ("2", Signal::INT),
            (" usr1 ", Signal::USR1),
        ] {
            assert_eq!(text.parse::<Signal>(), Ok(signal), "{text}");
        }
        for bad in ["", "SIG", "TERMINATE", "0", "99", "-9"] {
            assert!(bad.parse::<Signal>().is_err(), "{bad}");
        }
    }

    #[test]
    fn names_and_statuses_follow_shells() {
        assert_eq!(Signal::TERM.to_string(), "SIGTERM");
        assert_eq!(Signal::from_number(1000).to_string(), "signal 1000");
        assert_eq!((Signal::KILL.status(), Signal::INT.status()), (137, 130));
        assert_eq!(Signal::from_number(200).status(), 255);
        assert_eq!(Signal::of_status(143), Some(Signal::TERM));
        assert_eq!(Signal::of_status(1), None);
    }
}
