//! How many attempts a run may make (a positive number, or `unlimited`), and which attempt is
//! which.

use std::fmt;
use std::num::NonZeroU64;
use std::str::FromStr;

use crate::error::Error;

/// The `--max-attempts` value: total attempts, the first included.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AttemptLimit {
    /// At most this many attempts.
    AtMost(NonZeroU64),
    /// Attempts continue until success, a stop, or an outside limit.
    Unlimited,
}

impl AttemptLimit {
    /// Whether another attempt may start after `made` attempts.
    pub fn allows_another(self, made: u64) -> bool {
        match self {
            AttemptLimit::AtMost(limit) => made < limit.get(),
            AttemptLimit::Unlimited => true,
        }
    }

    /// The limit as a number, when there is one.
    pub fn count(self) -> Option<u64> {
        match self {
            AttemptLimit::AtMost(limit) => Some(limit.get()),
            AttemptLimit::Unlimited => None,
        }
    }

    /// The most attempts of a command that this limit makes of each of `outer`'s: their
    /// product, unlimited if either is (or if it is too large to count).
    pub fn times(self, outer: AttemptLimit) -> AttemptLimit {
        match (self, outer) {
            (AttemptLimit::AtMost(inner), AttemptLimit::AtMost(outer)) => inner
                .checked_mul(outer)
                .map_or(AttemptLimit::Unlimited, AttemptLimit::AtMost),
            _ => AttemptLimit::Unlimited,
        }
    }
}

impl FromStr for AttemptLimit {
    type Err = Error;

    fn from_str(text: &str) -> Result<Self, Error> {
        if text.eq_ignore_ascii_case("unlimited") {
            return Ok(AttemptLimit::Unlimited);
        }
        if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
            return Err(Error::NotAnAttemptLimit);
        }
        match text.parse::<u64>() {
            Ok(0) => Err(Error::ZeroAttempts),
            Ok(count) => Ok(AttemptLimit::AtMost(
                NonZeroU64::MIN.saturating_add(count - 1),
            )),
            Err(_) => Err(Error::AttemptLimitTooLarge),
        }
    }
}

/// Which attempt: its number, its number since the backoff last started over, and the limit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Numbering {
    /// The attempt's number, from 1, over the whole run.
    pub attempt: u64,
    /// Its number since the last `--reset-after` reset (the same as `attempt` before any).
    pub since_reset: u64,
    /// The attempt limit, which counts from the last reset.
    pub limit: AttemptLimit,
    /// The run's depth among nested retries: 1 for the outermost (see `nesting`).
    pub depth: u32,
}

impl fmt::Display for Numbering {
    /// "3/5", or "7 (2/5 since the backoff started over)" after a reset.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Numbering {
            attempt,
            since_reset,
            limit,
            ..
        } = self;
        match attempt == since_reset {
            true => write!(f, "{attempt}/{limit}"),
            false => write!(
                f,
                "{attempt} ({since_reset}/{limit} since the backoff started over)"
            ),
        }
    }
}

/// In JSON, a limit is a number, or the string "unlimited".
impl serde::Serialize for AttemptLimit {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self.count() {
            Some(count) => serializer.serialize_u64(count),
            None => serializer.serialize_str("unlimited"),
        }
    }
}

impl fmt::Display for AttemptLimit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AttemptLimit::AtMost(limit) => write!(f, "{limit}"),
            AttemptLimit::Unlimited => f.write_str("unlimited"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_counts_and_unlimited() {
        assert_eq!("3".parse::<AttemptLimit>().unwrap().count(), Some(3));
        assert_eq!("unlimited".parse(), Ok(AttemptLimit::Unlimited));
        assert_eq!("1".parse::<AttemptLimit>().unwrap().to_string(), "1");
    }

    #[test]
    fn rejects_zero_negative_and_words() {
        for text in [
            "0",
            "-1",
            "x",
            "",
            "1.5",
            "+5",
            " 5",
            "99999999999999999999999",
        ] {
            assert!(text.parse::<AttemptLimit>().is_err(), "{text}");
        }
        for not_a_number in ["x", ""] {
            let err = not_a_number
                .parse::<AttemptLimit>()
                .unwrap_err()
                .to_string();
            assert!(
                err.starts_with("expected a whole number"),
                "{not_a_number:?}: {err}"
            );
        }
    }

    #[test]
    fn counts_attempts_made() {
        let three: AttemptLimit = "3".parse().unwrap();
        assert!(three.allows_another(2));
        assert!(!three.allows_another(3));
        assert!(AttemptLimit::Unlimited.allows_another(u64::MAX));
    }
}
