//! The retry budget: a token bucket shared by every run that names it, as the Amazon Builders'
//! Library article "Timeouts, retries and backoff with jitter" describes.
//!
//! The arithmetic is in `model`, pure; where the bucket lives is a [`RetryBudget`]
//! implementation's business (`file`: a file on this machine).

pub(crate) mod file;
pub(crate) mod model;

use std::str::FromStr;
use std::time::Duration;

pub(crate) use model::Rate;

/// The answer to a request for a token.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Reservation {
    /// The retry may go after this delay (zero when a token is there).
    Granted(Duration),
    /// No token would be there within the time allowed.
    Refused,
    /// A signal that ends the run arrived while the budget was being consulted.
    Interrupted(i32),
}

/// Where retry tokens come from.
pub(crate) trait RetryBudget {
    /// Take a token for a retry that must start within `latest` (no limit when `None`); what
    /// the user should know about the budget goes to `warn`.
    fn reserve(&mut self, latest: Option<Duration>, warn: &mut dyn FnMut(String)) -> Reservation;
}

/// No budget: every retry may go at once.
impl<B: RetryBudget> RetryBudget for Option<B> {
    fn reserve(&mut self, latest: Option<Duration>, warn: &mut dyn FnMut(String)) -> Reservation {
        match self {
            Some(budget) => budget.reserve(latest, warn),
            None => Reservation::Granted(Duration::ZERO),
        }
    }
}

/// A budget's name: 1 to 64 of letters, digits, `.`, `_` and `-`, not starting with a dot, so
/// that it names a file inside the budget directory and nothing else.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct BudgetName(String);

impl BudgetName {
    pub(crate) fn as_str(&self) -> &str {
        &self.0
    }
}

impl FromStr for BudgetName {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        const EXPECTED: &str =
            "expected 1 to 64 letters, digits, '.', '_' or '-', not starting with '.', e.g. api.example.com";
        let allowed = |c: char| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-');
        if text.is_empty() || text.len() > 64 || !text.chars().all(allowed) || text.starts_with('.')
        {
            return Err(EXPECTED.into());
        }
        Ok(BudgetName(text.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_stay_inside_the_directory() {
        for good in ["api", "api.example.com", "A_b-9", &"x".repeat(64)] {
            assert!(good.parse::<BudgetName>().is_ok(), "{good}");
        }
        for bad in [
            "",
            "..",
            ".",
            ".hidden",
            "a/b",
            "../x",
            "a b",
            "ü",
            &"x".repeat(65),
        ] {
            assert!(bad.parse::<BudgetName>().is_err(), "{bad}");
        }
    }
}
