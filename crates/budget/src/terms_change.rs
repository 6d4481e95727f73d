//! What `retry budget set` changes of a budget's terms: each term it is given, in place of the
//! one the store keeps; each it is not given, kept; and each it is told to clear (`--clear
//! ratio`, `--clear breaker`), gone. A term both given and cleared is refused, whichever came
//! first; a budget's first terms need a rate; a term of the breaker (its share, hosts or
//! cool-down) needs a breaker, given now or kept.

use std::time::Duration;

use crate::breaker::{BreakerTerms, GiveUps};
use crate::error::Error;
use crate::model::{Rate, Terms};
use retry_policy::choice::Choice;

/// A term `retry budget set --clear` removes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Clearable {
    /// The earned tokens (`--ratio`, and its `--window`).
    Ratio,
    /// The breaker, and its terms.
    Breaker,
}

impl Choice for Clearable {
    const ALL: &'static [Clearable] = &[Clearable::Ratio, Clearable::Breaker];

    fn name(self) -> &'static str {
        match self {
            Clearable::Ratio => "ratio",
            Clearable::Breaker => "breaker",
        }
    }

    fn about(self) -> &'static str {
        match self {
            Clearable::Ratio => "No tokens earned by first attempts",
            Clearable::Breaker => "No breaker",
        }
    }
}

/// A new budget's window of earned tokens, and its breaker's share, hosts and cool-down.
const FIRST_WINDOW: Duration = Duration::from_secs(60);
const FIRST_SHARE: f64 = 0.5;
const FIRST_HOSTS: u32 = 2;
const FIRST_COOL_DOWN: Duration = Duration::from_secs(30);

/// What `retry budget set` was given.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TermsChange {
    /// `--rate`.
    pub rate: Option<Rate>,
    /// `--ratio`.
    pub ratio: Option<f64>,
    /// `--window`.
    pub window: Option<Duration>,
    /// `--breaker`.
    pub breaker: Option<GiveUps>,
    /// `--breaker-share`.
    pub breaker_share: Option<f64>,
    /// `--breaker-hosts`.
    pub breaker_hosts: Option<u32>,
    /// `--cool-down`.
    pub cool_down: Option<Duration>,
    /// The terms to remove.
    pub cleared: Vec<Clearable>,
}

impl TermsChange {
    /// The terms `kept` (none for a budget never set) with this change made.
    pub fn applied(&self, kept: Option<Terms>) -> Result<Terms, Error> {
        let given = [
            (Clearable::Ratio, self.ratio.is_some(), "--ratio"),
            (Clearable::Breaker, self.breaker.is_some(), "--breaker"),
        ];
        for (term, given, option) in given {
            if given && self.cleared.contains(&term) {
                let term = term.name();
                return Err(Error::SetAndCleared { option, term });
            }
        }
        let rate = self
            .rate
            .or(kept.map(|terms| terms.rate))
            .ok_or(Error::FirstTermsNeedRate)?;
        let ratio = match self.cleared.contains(&Clearable::Ratio) {
            true => None,
            false => self.ratio.or(kept.and_then(|terms| terms.ratio)),
        };
        let window = self
            .window
            .or(kept.map(|terms| terms.window))
            .unwrap_or(FIRST_WINDOW);
        let kept_breaker = kept.and_then(|terms| terms.breaker);
        let breaker = match (self.cleared.contains(&Clearable::Breaker), self.breaker) {
            (true, _) => None,
            (false, Some(give_ups)) => Some(BreakerTerms {
                give_ups: give_ups.count,
                window: give_ups.window,
                share: kept_breaker.map_or(FIRST_SHARE, |terms| terms.share),
                hosts: kept_breaker.map_or(FIRST_HOSTS, |terms| terms.hosts),
                cool_down: kept_breaker.map_or(FIRST_COOL_DOWN, |terms| terms.cool_down),
            }),
            (false, None) => kept_breaker,
        };
        let breaker_term = [
            self.breaker_share.map(|_| "--breaker-share"),
            self.breaker_hosts.map(|_| "--breaker-hosts"),
            self.cool_down.map(|_| "--cool-down"),
        ]
        .into_iter()
        .flatten()
        .next();
        let breaker = match (breaker, breaker_term) {
            (None, Some(flag)) => return Err(Error::NoBreakerFor(flag)),
            (breaker, _) => breaker.map(|terms| BreakerTerms {
                share: self.breaker_share.unwrap_or(terms.share),
                hosts: self.breaker_hosts.unwrap_or(terms.hosts),
                cool_down: self.cool_down.unwrap_or(terms.cool_down),
                ..terms
            }),
        };
        Ok(Terms {
            rate,
            ratio,
            window,
            breaker,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rate(text: &str) -> Rate {
        text.parse().unwrap()
    }

    #[test]
    fn what_is_not_given_is_kept_and_what_is_cleared_goes() {
        let first = TermsChange {
            rate: Some(rate("5/1m")),
            ratio: Some(0.1),
            window: Some(Duration::from_secs(600)),
            ..TermsChange::default()
        }
        .applied(None)
        .unwrap();
        assert_eq!(
            (first.ratio, first.window),
            (Some(0.1), Duration::from_secs(600))
        );
        // The docs' breaker example, after the ratio's: the ratio and its window stay.
        let breaker = TermsChange {
            breaker: Some("3/1m".parse().unwrap()),
            cool_down: Some(Duration::from_secs(120)),
            ..TermsChange::default()
        }
        .applied(Some(first))
        .unwrap();
        assert_eq!((breaker.rate, breaker.ratio), (rate("5/1m"), Some(0.1)));
        assert_eq!(breaker.window, Duration::from_secs(600));
        let kept = breaker.breaker.unwrap();
        assert_eq!(
            (kept.give_ups, kept.cool_down, kept.hosts),
            (3, Duration::from_secs(120), 2)
        );
        // A breaker's term alone changes the breaker kept.
        let hosts = TermsChange {
            breaker_hosts: Some(4),
            ..TermsChange::default()
        }
        .applied(Some(breaker))
        .unwrap();
        assert_eq!(hosts.breaker.unwrap().hosts, 4);
        assert_eq!(hosts.breaker.unwrap().cool_down, Duration::from_secs(120));
        let cleared = TermsChange {
            cleared: vec![Clearable::Ratio, Clearable::Breaker],
            ..TermsChange::default()
        }
        .applied(Some(hosts))
        .unwrap();
        assert_eq!((cleared.ratio, cleared.breaker), (None, None));
    }

    #[test]
    fn a_term_given_and_cleared_at_once_is_refused() {
        for (change, option) in [
            (
                TermsChange {
                    ratio: Some(0.1),
                    cleared: vec![Clearable::Ratio],
                    ..TermsChange::default()
                },
                "--ratio",
            ),
            (
                TermsChange {
                    breaker: Some("3/1m".parse().unwrap()),
                    cleared: vec![Clearable::Breaker],
                    ..TermsChange::default()
                },
                "--breaker",
            ),
        ] {
            let refused = change.applied(None).unwrap_err().to_string();
            assert!(refused.starts_with(option), "{refused}");
            assert!(refused.contains("not both"), "{refused}");
        }
    }

    #[test]
    fn first_terms_need_a_rate_and_a_breakers_term_a_breaker() {
        let no_rate = TermsChange::default().applied(None).unwrap_err();
        assert!(no_rate.to_string().contains("--rate"), "{no_rate}");
        let no_breaker = TermsChange {
            rate: Some(rate("5/1m")),
            cool_down: Some(Duration::from_secs(1)),
            ..TermsChange::default()
        }
        .applied(None)
        .unwrap_err();
        assert!(
            no_breaker.to_string().contains("--cool-down"),
            "{no_breaker}"
        );
    }
}
