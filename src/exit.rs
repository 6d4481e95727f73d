//! The one place where the tool's exit numbers are written down.
//!
//! They follow coreutils `timeout` and `env`: the tool's own errors are 125, a command that cannot
//! be found 127, one that cannot be executed 126, and death by signal N is 128+N, as shells report
//! it. Otherwise the tool exits with the last attempt's status. The table below is what `--help`
//! and the man page print.

/// The run ended in success.
pub const SUCCESS: u8 = 0;
/// The run gave up after an attempt whose status 0 counted as a failure: never exit 0 then.
pub const GAVE_UP_AFTER_ZERO: u8 = 1;
/// An attempt was ended by `--timeout` or `--max-time` (coreutils `timeout`'s status).
pub const TIMED_OUT: u8 = 124;
/// The tool's own error: bad flags, a missing COMMAND, or a failure of the tool itself.
pub const USAGE: u8 = 125;
/// The command was found but could not be executed.
pub const CANNOT_EXECUTE: u8 = 126;
/// The command could not be found.
pub const NOT_FOUND: u8 = 127;

/// How the tool ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Exit {
    /// Exit with this status.
    Status(u8),
    /// Die of this signal (re-raised after forwarding it), so the parent sees death by signal.
    KilledBy(i32),
}

/// The status of death by `signal`, 128+N as shells report it, saturating at 255.
pub fn signal_status(signal: i32) -> u8 {
    u8::try_from(128 + signal.clamp(0, 127)).unwrap_or(u8::MAX)
}

/// The exit-status table, one `(status, meaning)` row each, for `--help` and the man page.
pub const TABLE: [(&str, &str); 8] = [
    ("0", "an attempt succeeded (its status is in --success-on)"),
    (
        "N",
        "otherwise: the last attempt's own status N, after giving up",
    ),
    (
        "1",
        "giving up after an attempt whose status 0 counted as a failure (--success-on without 0): \
         a run that gives up never exits 0",
    ),
    (
        "124",
        "the last attempt was ended by --timeout or --max-time",
    ),
    (
        "125",
        "retry itself failed: bad usage; a --report, --budget or --budget-dir it cannot use; or \
         output it could neither keep nor pass on (--hold-output with no room in TMPDIR)",
    ),
    ("126", "COMMAND was found but could not be executed"),
    ("127", "COMMAND was not found"),
    (
        "128+N",
        "the last attempt died of signal N, or retry was stopped by signal N",
    ),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signal_statuses_follow_shells() {
        assert_eq!(signal_status(9), 137);
        assert_eq!(signal_status(2), 130);
        assert_eq!(signal_status(200), 255);
    }
}
