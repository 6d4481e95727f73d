//! The retry budget's arithmetic: a token bucket, pure, with time passed in.
//!
//! Each retry (never a first attempt) takes one token. A full bucket holds N tokens and regains
//! N every period. When it is empty the token is *reserved*: the count goes below zero and the
//! retry waits until its token will have been regained, so however many processes share the
//! bucket, their retries go out at the bucket's rate. Debt is bounded ([`MAX_DEBT_PERIODS`]), and
//! a stored state the arithmetic could not have produced is damage, never trusted. Every store
//! applies exactly this.

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use super::Reservation;
use crate::duration::parse_duration;

/// `--budget-rate N/DURATION`: at most N tokens, regaining N every DURATION.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Rate {
    /// The bucket's capacity, and how many tokens come back per period.
    pub(crate) tokens: u32,
    /// How long it takes to regain a full bucket.
    pub(crate) period: Duration,
}

/// A bucket's state as stored: its tokens (below zero when reserved ahead) at a moment.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct BucketState {
    /// Tokens at `at`; negative when retries have reserved tokens not yet regained.
    pub(crate) tokens: f64,
    /// When, as time since the Unix epoch (a wall clock, as several processes share it).
    pub(crate) at: Duration,
}

/// The deepest a bucket may go into debt, in periods: a retry whose token lies further ahead is
/// refused. It bounds every stored value, so that a state below it can only be damage.
pub(crate) const MAX_DEBT_PERIODS: u32 = 100;

impl Rate {
    fn capacity(&self) -> f64 {
        f64::from(self.tokens)
    }

    /// Whether `state` could have come from this arithmetic by `now`: finite tokens within the
    /// capacity and the debt bound, and a time no more than a period ahead (a clock that went
    /// back a little). Anything else is damage, to be started over from a full bucket rather
    /// than trusted: -1e308 tokens, or a time in the next century, would jam the bucket.
    pub(crate) fn is_plausible(&self, state: &BucketState, now: Duration) -> bool {
        let tokens = state.tokens;
        tokens.is_finite()
            && tokens <= self.capacity()
            && tokens >= -self.capacity() * f64::from(MAX_DEBT_PERIODS)
            && state.at <= now.saturating_add(self.period)
    }

    /// The bucket `state` describes (full when there is none), as of `now`.
    pub(crate) fn refill(&self, state: Option<BucketState>, now: Duration) -> f64 {
        let capacity = self.capacity();
        let Some(state) = state else { return capacity };
        // A clock that went backwards gives nothing back, and takes nothing either.
        let elapsed = now.saturating_sub(state.at).as_secs_f64();
        let regained = elapsed / self.period.as_secs_f64() * capacity;
        (state.tokens + regained).min(capacity)
    }

    /// Take a token at `now` for a retry that must start within `latest`: the reservation and,
    /// when granted, the state to store.
    pub(crate) fn reserve(
        &self,
        state: Option<BucketState>,
        now: Duration,
        latest: Option<Duration>,
    ) -> (Reservation, Option<BucketState>) {
        let left = self.refill(state, now) - 1.0;
        let debt_periods = (-left / self.capacity()).max(0.0);
        if debt_periods > f64::from(MAX_DEBT_PERIODS) {
            return (Reservation::Refused, None);
        }
        // A period of centuries times the debt may pass what a Duration holds: never, then.
        let delay = Duration::try_from_secs_f64(self.period.as_secs_f64() * debt_periods)
            .unwrap_or(Duration::MAX);
        if latest.is_some_and(|latest| delay >= latest) {
            return (Reservation::Refused, None);
        }
        (
            Reservation::Granted(delay),
            Some(BucketState {
                tokens: left,
                at: now,
            }),
        )
    }
}

impl FromStr for Rate {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        const EXPECTED: &str = "expected N/DURATION with N of at least 1, e.g. 10/1m";
        let Some((tokens, period)) = text.split_once('/') else {
            return Err(EXPECTED.into());
        };
        let tokens = match tokens.trim().parse::<u32>() {
            Ok(tokens) if tokens > 0 => tokens,
            _ => {
                return Err(format!(
                    "'{tokens}' is not a whole number of at least 1; {EXPECTED}"
                ))
            }
        };
        let period = parse_duration(period).map_err(|err| format!("{err} (after the /)"))?;
        if period.is_zero() {
            return Err(format!("the period must be more than 0s; {EXPECTED}"));
        }
        Ok(Rate { tokens, period })
    }
}

impl fmt::Display for Rate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}/{}",
            self.tokens,
            crate::duration::format_duration(self.period)
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn rate(text: &str) -> Rate {
        text.parse().unwrap()
    }

    #[test]
    fn a_missing_bucket_is_full() {
        let five = rate("5/1h");
        assert_eq!(five.refill(None, Duration::ZERO), 5.0);
        let (grant, state) = five.reserve(None, Duration::from_secs(100), None);
        assert_eq!(grant, Reservation::Granted(Duration::ZERO));
        assert_eq!(state.unwrap().tokens, 4.0);
    }

    #[test]
    fn an_empty_bucket_spaces_retries_at_its_rate() {
        let five = rate("5/1h");
        let now = Duration::from_secs(1_000);
        let mut state = None;
        let mut delays = Vec::new();
        for _ in 0..7 {
            let (grant, next) = five.reserve(state, now, None);
            state = next;
            delays.push(grant);
        }
        let minutes = |m: u64| Reservation::Granted(Duration::from_secs(m * 60));
        assert_eq!(delays[..5], [Reservation::Granted(Duration::ZERO); 5]);
        assert_eq!(delays[5..], [minutes(12), minutes(24)]);
    }

    #[test]
    fn refuses_without_reserving_past_the_latest_moment() {
        let one = rate("1/1m");
        let (_, state) = one.reserve(None, Duration::ZERO, None);
        let (refused, untouched) =
            one.reserve(state, Duration::ZERO, Some(Duration::from_secs(59)));
        assert_eq!((refused, untouched), (Reservation::Refused, None));
        let (granted, _) = one.reserve(state, Duration::ZERO, Some(Duration::from_secs(61)));
        assert_eq!(granted, Reservation::Granted(Duration::from_secs(60)));
    }

    #[test]
    fn tokens_come_back_at_the_rate() {
        let ten = rate("10/1m");
        let empty = BucketState {
            tokens: 0.0,
            at: Duration::from_secs(600),
        };
        let at = |seconds: u64| ten.refill(Some(empty), Duration::from_secs(600 + seconds));
        assert_eq!(at(0), 0.0);
        assert_eq!(at(6), 1.0);
        assert_eq!(at(30), 5.0);
        assert_eq!(at(60), 10.0);
        assert_eq!(at(6000), 10.0, "never past the capacity");
    }

    #[test]
    fn debt_is_bounded_and_anything_beyond_it_is_damage() {
        let one = rate("1/1m");
        let now = Duration::from_secs(1_000_000);
        let deep = BucketState {
            tokens: -f64::from(MAX_DEBT_PERIODS),
            at: now,
        };
        assert_eq!(one.reserve(Some(deep), now, None).0, Reservation::Refused);
        assert!(one.is_plausible(&deep, now));
        for absurd in [
            BucketState {
                tokens: -1e308,
                at: now,
            },
            BucketState {
                tokens: f64::NAN,
                at: now,
            },
            BucketState {
                tokens: 2.0,
                at: now,
            },
            BucketState {
                tokens: 0.0,
                at: now * 1000,
            },
        ] {
            assert!(!one.is_plausible(&absurd, now), "{absurd:?}");
        }
        let slightly_ahead = BucketState {
            tokens: 0.0,
            at: now + Duration::from_secs(30),
        };
        assert!(one.is_plausible(&slightly_ahead, now));
    }

    #[test]
    fn centuries_long_periods_saturate_instead_of_overflowing() {
        let slow: Rate = "1/500000000000y".parse().unwrap();
        let (_, state) = slow.reserve(None, Duration::ZERO, None);
        let (_, state) = slow.reserve(state, Duration::ZERO, None);
        // Two periods of 500000000000 years pass what a Duration holds.
        let (grant, _) = slow.reserve(state, Duration::ZERO, None);
        assert_eq!(grant, Reservation::Granted(Duration::MAX));
        let (refused, _) = slow.reserve(state, Duration::ZERO, Some(Duration::from_secs(1)));
        assert_eq!(refused, Reservation::Refused);
    }

    #[test]
    fn a_clock_that_went_back_regains_nothing() {
        let state = BucketState {
            tokens: 0.0,
            at: Duration::from_secs(100),
        };
        assert_eq!(
            rate("5/1m").refill(Some(state), Duration::from_secs(50)),
            0.0
        );
    }

    #[test]
    fn parses_rates() {
        assert_eq!(
            rate("10/1m"),
            Rate {
                tokens: 10,
                period: Duration::from_secs(60)
            }
        );
        for bad in ["10", "0/1m", "x/1m", "10/0s", "10/5", "-1/1m", "10/"] {
            assert!(bad.parse::<Rate>().is_err(), "{bad}");
        }
    }

    proptest! {
        #[test]
        fn tokens_never_exceed_the_capacity(
            tokens in 1u32..1000,
            period_ms in 1u64..10_000_000,
            steps in proptest::collection::vec(0u64..10_000_000, 1..50),
        ) {
            let rate = Rate { tokens, period: Duration::from_millis(period_ms) };
            let mut state = None;
            let mut now = Duration::ZERO;
            for step in steps {
                now += Duration::from_millis(step);
                prop_assert!(rate.refill(state, now) <= f64::from(tokens));
                let (grant, next) = rate.reserve(state, now, None);
                prop_assert!(matches!(grant, Reservation::Granted(_)));
                state = next;
            }
        }

        #[test]
        fn reserved_retries_go_out_at_the_rate(tokens in 1u32..100, extra in 1usize..100) {
            let rate = Rate { tokens, period: Duration::from_secs(3600) };
            let mut state = None;
            let mut last = Duration::ZERO;
            for taken in 0..(tokens as usize + extra) {
                let (Reservation::Granted(delay), next) = rate.reserve(state, Duration::ZERO, None) else {
                    return Err(TestCaseError::fail("refused without a limit"));
                };
                state = next;
                if taken >= tokens as usize {
                    // One token's worth of the period after the previous reservation.
                    let step = delay.as_secs_f64() - last.as_secs_f64();
                    prop_assert!((step - 3600.0 / f64::from(tokens)).abs() < 1e-6);
                }
                last = delay;
            }
        }
    }
}
