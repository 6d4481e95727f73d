//! The platform's side of a [`Signal`]: the numbers of the signals whose numbers differ between
//! systems, the one parser of a signal's name or number, and the names shells give them. The
//! policy crate knows a signal by its number only.

use std::fmt;

pub use retry_policy::signal::Signal;

/// SIGCONT.
pub const CONT: Signal = Signal::from_number(libc::SIGCONT);
/// SIGUSR1.
pub const USR1: Signal = Signal::from_number(libc::SIGUSR1);
/// SIGUSR2.
pub const USR2: Signal = Signal::from_number(libc::SIGUSR2);
/// SIGALRM.
pub const ALRM: Signal = Signal::from_number(libc::SIGALRM);
/// SIGWINCH.
pub const WINCH: Signal = Signal::from_number(libc::SIGWINCH);
/// SIGCHLD.
pub const CHLD: Signal = Signal::from_number(libc::SIGCHLD);

/// What the platform knows of a signal.
pub trait Platform {
    /// The same signal as nix knows it, to send or act on; none for one it has no name for.
    fn known(self) -> Option<nix::sys::signal::Signal>;

    /// Its conventional name, such as `SIGTERM`, or `signal N` when it has none.
    fn name(self) -> Name;
}

impl Platform for Signal {
    fn known(self) -> Option<nix::sys::signal::Signal> {
        nix::sys::signal::Signal::try_from(self.number()).ok()
    }

    fn name(self) -> Name {
        Name(self)
    }
}

/// A signal shown by its name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Name(Signal);

impl fmt::Display for Name {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0.known() {
            Some(signal) => f.pad(signal.as_str()),
            None => f.pad(&format!("signal {}", self.0.number())),
        }
    }
}

/// In JSON, by its name, as messages show it.
impl serde::Serialize for Name {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

/// Text that names no signal.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
#[error("not a signal; expected a signal's name or number, e.g. TERM, SIGINT or 2")]
pub struct NotASignal;

/// A signal's name, with or without `SIG` and in any case (`TERM`, `sigint`), or its number.
pub fn parse_signal(text: &str) -> Result<Signal, NotASignal> {
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
        .map(|signal| Signal::from_number(signal as i32))
        .ok_or(NotASignal)
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
            (" usr1 ", USR1),
        ] {
            assert_eq!(parse_signal(text), Ok(signal), "{text}");
        }
        for bad in ["", "SIG", "TERMINATE", "0", "99", "-9"] {
            assert!(parse_signal(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn names_follow_shells() {
        assert_eq!(Signal::TERM.name().to_string(), "SIGTERM");
        assert_eq!(Signal::from_number(1000).name().to_string(), "signal 1000");
    }

    #[test]
    fn the_fixed_numbers_are_this_platforms() {
        for (fixed, ours) in [
            (Signal::HUP, libc::SIGHUP),
            (Signal::INT, libc::SIGINT),
            (Signal::QUIT, libc::SIGQUIT),
            (Signal::PIPE, libc::SIGPIPE),
            (Signal::KILL, libc::SIGKILL),
            (Signal::TERM, libc::SIGTERM),
        ] {
            assert_eq!(fixed.number(), ours);
        }
    }
}
