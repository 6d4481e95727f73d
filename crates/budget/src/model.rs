//! The retry budget's arithmetic, pure, with time passed in: every store applies exactly this
//! (the Redis store as a Lua copy of it, which a test holds to it).
//!
//! Two kinds of token pay for a retry (never for a first attempt), on the budget's terms, which
//! `retry budget set` keeps in the store for every run that shares the budget:
//! - The *rate bucket* (`--rate N/DURATION`): at most N tokens, regaining N every DURATION.
//!   When it is empty the token is *reserved*: the count goes below zero and the retry waits
//!   until its token will have been regained, so however many processes share the bucket, their
//!   retries go out at its rate. Debt is bounded ([`MAX_DEBT_PERIODS`]).
//! - *Earned* tokens (`--ratio R`): every first attempt of any run sharing the budget earns R,
//!   and they fade exponentially with the time constant `--window`. A retry spends an earned
//!   token first, at once, and never waits for one.
//!
//! Time is whole microseconds since the Unix epoch (a wall clock, as several processes share it,
//! or the Redis server's), and every computation is on `f64`s in that unit, in an order the Lua
//! copy repeats. A stored state the arithmetic could not have produced is damage, never trusted.

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use super::Reservation;
use crate::breaker::BreakerTerms;
use crate::error::Error;
pub use crate::microseconds::{LONGEST_TERM, delay_of, micros};
use crate::per_duration;
use retry_policy::outcome::WaitCause;
use retry_policy::run::TokenRequest;

/// `--rate N/DURATION`: at most N tokens, regaining N every DURATION.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rate {
    /// The bucket's capacity, and how many tokens come back per period.
    pub tokens: u32,
    /// How long it takes to regain a full bucket.
    pub period: Duration,
}

/// Everything that shapes a budget's arithmetic: the rate, and the ratio with its window.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Terms {
    /// `--rate`: the tokens a budget gains with time.
    pub rate: Rate,
    /// `--ratio`: tokens earned per first attempt, if any.
    pub ratio: Option<f64>,
    /// `--window`: the time constant of the earned tokens' decay.
    pub window: Duration,
    /// `--breaker`: when runs that share the budget stop making attempts, if ever.
    pub breaker: Option<BreakerTerms>,
}

/// The terms of a budget nobody has set terms for: 10 tokens a minute, none earned.
pub const DEFAULT_TERMS: Terms = Terms {
    rate: Rate {
        tokens: 10,
        period: Duration::from_secs(60),
    },
    ratio: None,
    window: Duration::from_secs(60),
    breaker: None,
};

/// The terms of the budget on this machine that a run spends from when it names none, one for
/// each target: 20 retries, regained over 5 minutes, none earned (so that a run whose first
/// attempt succeeds touches no state). Five runs that fail together make all their attempts,
/// and a job that fails every minute keeps retrying; a fleet's retries are bounded
/// (docs/defaults.md says how these were chosen).
pub const DEFAULT_BUDGET_TERMS: Terms = Terms {
    rate: Rate {
        tokens: 20,
        period: Duration::from_secs(300),
    },
    ratio: None,
    window: Duration::from_secs(60),
    breaker: None,
};

/// A budget's state as stored.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BucketState {
    /// Rate tokens at `at`; negative when retries have reserved tokens not yet regained.
    pub tokens: f64,
    /// Earned tokens at `at`.
    pub earned: f64,
    /// Microseconds since the Unix epoch.
    pub at: u64,
    /// First attempts counted, by every run sharing the budget.
    pub first_attempts: u64,
    /// Retries paid for.
    pub retries: u64,
    /// Retries refused.
    pub refusals: u64,
    /// No retry before then (microseconds since the Unix epoch; 0 for none): a command of a run
    /// sharing the budget asked for a wait (a `Retry-After`), which holds for every run.
    pub not_before: u64,
}

/// The longest a command's requested wait holds a budget's other runs: a day.
pub const LONGEST_HOLD: Duration = Duration::from_secs(86_400);

/// The deepest a bucket may go into debt, in periods: a retry whose token lies further ahead is
/// refused. It bounds every stored value, so that a state below it can only be damage.
pub const MAX_DEBT_PERIODS: u32 = 100;

/// The most earned tokens a state may hold: more is damage.
const MAX_EARNED: f64 = 1e12;

/// A command's requested wait in whole microseconds, as a budget holds it: a day at most.
pub fn asked_micros(asked: Duration) -> u64 {
    micros(asked.min(LONGEST_HOLD)) as u64
}

impl Rate {
    fn capacity(&self) -> f64 {
        f64::from(self.tokens)
    }
}

impl BucketState {
    /// A full bucket with nothing earned and nothing counted, at `now`.
    pub fn full(terms: &Terms, now: u64) -> Self {
        BucketState {
            tokens: terms.rate.capacity(),
            earned: 0.0,
            at: now,
            first_attempts: 0,
            retries: 0,
            refusals: 0,
            not_before: 0,
        }
    }

    /// A state as both stores keep it, in seven words: the tokens, the earned tokens, its time,
    /// the first attempts, retries and refusals counted, and the time before which no retry
    /// goes (none, in a state kept before requested waits were shared); none when a value is
    /// not one a run could have stored.
    pub fn from_stored(words: &[impl AsRef<str>]) -> Option<BucketState> {
        let [tokens, earned, at, first, retries, refusals, not_before] = words else {
            return None;
        };
        let finite = |word: &str| word.parse::<f64>().ok().filter(|value| value.is_finite());
        let count = |word: &str| word.parse::<u64>().ok();
        Some(BucketState {
            tokens: finite(tokens.as_ref())?,
            earned: finite(earned.as_ref())?,
            at: count(at.as_ref())?,
            first_attempts: count(first.as_ref())?,
            retries: count(retries.as_ref())?,
            refusals: count(refusals.as_ref())?,
            not_before: match not_before.as_ref() {
                "" => 0,
                not_before => count(not_before)?,
            },
        })
    }
}

impl Terms {
    /// Why these terms cannot be a budget's, naming the option; none when they can be.
    pub fn check(&self) -> Result<(), Error> {
        if self.rate.period > LONGEST_TERM {
            return Err(Error::RateTooSlow(self.rate.to_string()));
        }
        if let Some(ratio) = self.ratio
            && !(ratio > 0.0 && ratio <= 1.0)
        {
            return Err(Error::BadRatio(ratio.to_string()));
        }
        if self.window.is_zero() || self.window > LONGEST_TERM {
            return Err(Error::BadWindow(self.window));
        }
        self.breaker.map_or(Ok(()), |breaker| breaker.check())
    }

    /// Terms as both stores keep them, in five words: the capacity, the period and the window
    /// in microseconds, the ratio, and the breaker's terms (`-` or empty for none, or for no
    /// ratio); none unless `retry budget set` could have stored them.
    pub fn from_stored(words: &[impl AsRef<str>]) -> Option<Terms> {
        let [tokens, period, ratio, window, breaker] = words else {
            return None;
        };
        let [tokens, period, ratio, window] = [tokens, period, ratio, window].map(AsRef::as_ref);
        let breaker = match breaker.as_ref() {
            "" | "-" => None,
            breaker => Some(BreakerTerms::from_stored(breaker)?),
        };
        Terms::from_words(tokens, period, ratio, window).map(|terms| Terms { breaker, ..terms })
    }

    /// The terms of a budget without a breaker, from their stored words.
    fn from_words(tokens: &str, period: &str, ratio: &str, window: &str) -> Option<Terms> {
        let span = |text: &str| {
            text.parse::<f64>()
                .ok()
                .filter(|micros| micros.is_finite() && *micros > 0.0)
                .map(delay_of)
        };
        let terms = Terms {
            rate: Rate {
                tokens: tokens.parse().ok().filter(|&tokens| tokens > 0)?,
                period: span(period)?,
            },
            ratio: match ratio {
                "" | "-" => None,
                ratio => Some(ratio.parse().ok()?),
            },
            window: span(window)?,
            breaker: None,
        };
        terms.check().ok().map(|()| terms)
    }

    /// The terms in words: `10/1m`, and `plus 0.1 per first attempt over 1m` when they earn.
    pub fn describe(&self) -> String {
        let mut text = self.rate.to_string();
        if let Some(ratio) = self.ratio {
            text += &format!(
                " plus {ratio} per first attempt over {}",
                retry_policy::duration::format_duration(self.window)
            );
        }
        if let Some(breaker) = self.breaker {
            text += &format!("; its breaker: {breaker}");
        }
        text
    }

    /// `state`, kept on these terms: its rate tokens within the capacity and the debt bound, so
    /// that new terms carry the counters over and never look like damage.
    pub fn adopt(&self, state: BucketState) -> BucketState {
        let capacity = self.rate.capacity();
        BucketState {
            tokens: state
                .tokens
                .clamp(-capacity * f64::from(MAX_DEBT_PERIODS), capacity),
            ..state
        }
    }

    /// Whether `state` could have come from this arithmetic by `now`: finite tokens within the
    /// capacity and the debt bound, finite earned tokens within reason, and a time no more than
    /// a period ahead (a clock that went back a little). Anything else is damage, to start over
    /// from rather than trust: -1e308 tokens, or a time in the next century, would jam it.
    pub fn is_plausible(&self, state: &BucketState, now: u64) -> bool {
        let capacity = self.rate.capacity();
        let (tokens, earned) = (state.tokens, state.earned);
        tokens.is_finite()
            && tokens <= capacity
            && tokens >= -capacity * f64::from(MAX_DEBT_PERIODS)
            && earned.is_finite()
            && (0.0..=MAX_EARNED).contains(&earned)
            && (state.at as f64) <= now as f64 + micros(self.rate.period)
            && (state.not_before as f64)
                <= now as f64 + micros(LONGEST_HOLD) + micros(self.rate.period)
    }

    /// `state` (a full bucket when there is none) as of `now`: the rate tokens regained, the
    /// earned ones faded. A clock that went backwards gives nothing back and takes nothing.
    pub fn advance(&self, state: Option<BucketState>, now: u64) -> BucketState {
        let Some(state) = state else {
            return BucketState::full(self, now);
        };
        let capacity = self.rate.capacity();
        let elapsed = now.saturating_sub(state.at) as f64;
        let regained = elapsed / micros(self.rate.period) * capacity;
        let faded = match state.earned > 0.0 {
            true => state.earned * (-elapsed / micros(self.window)).exp(),
            false => 0.0,
        };
        BucketState {
            tokens: (state.tokens + regained).min(capacity),
            earned: faded,
            at: state.at.max(now),
            ..state
        }
    }

    /// Count a first attempt at `now`, and earn what the ratio gives for it.
    pub fn first_attempt(&self, state: Option<BucketState>, now: u64) -> BucketState {
        let state = self.advance(state, now);
        BucketState {
            earned: state.earned + self.ratio.unwrap_or(0.0),
            first_attempts: state.first_attempts.saturating_add(1),
            ..state
        }
    }

    /// Take a token at `now` for a retry that must start within the request's `latest`: an
    /// earned token at once if there is one, else one of the rate bucket's, maybe reserved
    /// ahead, however far within the debt bound. When the run's command `asked` for a wait, no
    /// run sharing the budget retries before it is over (a day at most); a retry is held until
    /// then, for at most the request's `longest_hold`. Refused only when the debt bound leaves no
    /// token to promise; a wait that would reach `latest` takes no token and says which wait it
    /// is. Returns the answer and the state to store (the refused count too).
    pub fn reserve(
        &self,
        state: Option<BucketState>,
        now: u64,
        request: &TokenRequest,
    ) -> (Reservation, BucketState) {
        let mut state = self.advance(state, now);
        if let Some(asked) = request.asked {
            let until = now.saturating_add(asked_micros(asked));
            state.not_before = state.not_before.max(until);
        }
        let held_us =
            (state.not_before.saturating_sub(now) as f64).min(micros(request.longest_hold));
        let earned = state.earned >= 1.0;
        let left = state.tokens - 1.0;
        let debt_periods = match earned {
            true => 0.0,
            false => (-left / self.rate.capacity()).max(0.0),
        };
        let delay_us = micros(self.rate.period) * debt_periods;
        if debt_periods > f64::from(MAX_DEBT_PERIODS) {
            state.refusals = state.refusals.saturating_add(1);
            return (Reservation::Refused, state);
        }
        if let Some(latest) = request.latest
            && delay_us.max(held_us) >= micros(latest)
        {
            let past = match held_us > delay_us {
                true => Reservation::PastDeadline(delay_of(held_us), WaitCause::Shared),
                false => Reservation::PastDeadline(delay_of(delay_us), WaitCause::Budget),
            };
            return (past, state);
        }
        match earned {
            true => state.earned -= 1.0,
            false => state.tokens = left,
        }
        state.retries = state.retries.saturating_add(1);
        let answer = match held_us > delay_us {
            true => Reservation::Held(delay_of(held_us)),
            false => Reservation::Granted(delay_of(delay_us)),
        };
        (answer, state)
    }

    /// How long until `state`'s rate bucket is full again (zero when it is).
    pub fn full_in(&self, state: &BucketState) -> Duration {
        let missing = (self.rate.capacity() - state.tokens).max(0.0);
        delay_of(missing / self.rate.capacity() * micros(self.rate.period))
    }
}

impl FromStr for Rate {
    type Err = Error;

    fn from_str(text: &str) -> Result<Self, Error> {
        let (tokens, period) = per_duration::count_per_duration(text, "the period", "10/1m")?;
        Ok(Rate { tokens, period })
    }
}

impl fmt::Display for Rate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}/{}",
            self.tokens,
            retry_policy::duration::format_duration(self.period)
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// A retry's request: within `latest`, its command having `asked` for a wait, and held for
    /// at most a day.
    fn ask(latest: Option<Duration>, asked: Option<Duration>) -> TokenRequest {
        TokenRequest {
            latest,
            asked,
            longest_hold: LONGEST_HOLD,
        }
    }

    fn terms(rate: &str) -> Terms {
        Terms {
            rate: rate.parse().unwrap(),
            ratio: None,
            window: Duration::from_secs(60),
            breaker: None,
        }
    }

    const SECOND: u64 = 1_000_000;

    fn state(tokens: f64, at: u64) -> BucketState {
        BucketState {
            tokens,
            earned: 0.0,
            at,
            first_attempts: 0,
            retries: 0,
            refusals: 0,
            not_before: 0,
        }
    }

    /// Whether every one of `retries` (each at its moment, in seconds) gets a token at once
    /// from the default budget.
    fn all_granted_at_once(retries: impl Iterator<Item = f64>) -> bool {
        let mut state = None;
        retries.into_iter().all(|at| {
            let now = (at * SECOND as f64) as u64;
            let (answer, next) = DEFAULT_BUDGET_TERMS.reserve(state, now, &ask(None, None));
            state = Some(next);
            answer == Reservation::Granted(Duration::ZERO)
        })
    }

    #[test]
    fn a_person_never_notices_the_default_budget() {
        // Five runs that fail together, each retrying four times within 15 seconds.
        let together = (0..5).flat_map(|_| [1.0, 3.0, 7.0, 15.0]);
        assert!(all_granted_at_once(together));
        // A cron job that fails every minute, for a week, its four retries each time.
        let every_minute = (0..7 * 24 * 60).flat_map(|minute| {
            let start = f64::from(minute) * 60.0;
            [start + 1.0, start + 3.0, start + 7.0, start + 15.0]
        });
        assert!(all_granted_at_once(every_minute));
        // A sixth run that fails with the five is not granted all of its retries at once.
        assert!(!all_granted_at_once(
            (0..6).flat_map(|_| [1.0, 3.0, 7.0, 15.0])
        ));
    }

    /// When a readiness poll (`retry -n 60 --base 1s --cap 1s`, a command that fails at once)
    /// makes each attempt, in seconds from its start, on the default budget's terms alone.
    fn poll_on_the_default_budget(attempts: usize) -> Vec<f64> {
        let (mut state, mut now, mut starts) = (None, 0.0_f64, vec![0.0]);
        while starts.len() < attempts {
            let at = (now * SECOND as f64) as u64;
            let (answer, next) = DEFAULT_BUDGET_TERMS.reserve(state, at, &ask(None, None));
            state = Some(next);
            let Reservation::Granted(delay) = answer else {
                panic!("{answer:?}")
            };
            now += delay.as_secs_f64().max(1.0);
            starts.push(now);
        }
        starts
    }

    #[test]
    fn a_long_poll_is_spaced_out_never_ended_as_docs_defaults_says() {
        let starts = poll_on_the_default_budget(60);
        // Twenty-one retries at its own pace, a second apart; then one every 15 s.
        assert_eq!(starts[21], 21.0);
        let spaced = starts[23] - starts[22];
        assert!((spaced - 15.0).abs() < 0.01, "{spaced}");
        // Its 60th attempt comes 9m45s after the first, where it came after 59 s without it.
        assert!((584.0..586.0).contains(&starts[59]), "{}", starts[59]);
    }

    #[test]
    fn a_missing_bucket_is_full() {
        let five = terms("5/1h");
        assert_eq!(five.advance(None, 0).tokens, 5.0);
        let (grant, state) = five.reserve(None, 100 * SECOND, &ask(None, None));
        assert_eq!(grant, Reservation::Granted(Duration::ZERO));
        assert_eq!((state.tokens, state.retries), (4.0, 1));
    }

    #[test]
    fn an_empty_bucket_spaces_retries_at_its_rate() {
        let five = terms("5/1h");
        let now = 1_000 * SECOND;
        let mut state = None;
        let mut delays = Vec::new();
        for _ in 0..7 {
            let (grant, next) = five.reserve(state, now, &ask(None, None));
            state = Some(next);
            delays.push(grant);
        }
        let minutes = |m: u64| Reservation::Granted(Duration::from_secs(m * 60));
        assert_eq!(delays[..5], [Reservation::Granted(Duration::ZERO); 5]);
        assert_eq!(delays[5..], [minutes(12), minutes(24)]);
    }

    #[test]
    fn a_token_past_the_latest_moment_is_not_taken_and_the_wait_is_named() {
        let one = terms("1/1m");
        let (_, state) = one.reserve(None, 0, &ask(None, None));
        let latest = Some(Duration::from_secs(59));
        let (past, after) = one.reserve(Some(state), 0, &ask(latest, None));
        assert_eq!(
            past,
            Reservation::PastDeadline(Duration::from_secs(60), WaitCause::Budget)
        );
        assert_eq!(
            (after.tokens, after.retries, after.refusals),
            (state.tokens, 1, 0),
            "no token taken, and no refusal: the budget has one"
        );
        let latest = Some(Duration::from_secs(61));
        let (granted, _) = one.reserve(Some(state), 0, &ask(latest, None));
        assert_eq!(granted, Reservation::Granted(Duration::from_secs(60)));
    }

    #[test]
    fn it_refuses_only_past_the_debt_bound() {
        let one = terms("1/1m");
        let mut state = None;
        for promised in 0..=MAX_DEBT_PERIODS {
            let (granted, next) = one.reserve(state, 0, &ask(None, None));
            let minutes = Duration::from_secs(60 * u64::from(promised));
            assert_eq!(granted, Reservation::Granted(minutes), "{promised}");
            state = Some(next);
        }
        let (refused, after) = one.reserve(state, 0, &ask(None, None));
        assert_eq!(refused, Reservation::Refused);
        assert_eq!(after.refusals, 1);
    }

    #[test]
    fn a_requested_wait_holds_every_retry_sharing_the_budget_until_it_is_over() {
        let ten = terms("10/1m");
        let asked = Some(Duration::from_secs(5));
        let (held, state) = ten.reserve(None, 0, &ask(None, asked));
        assert_eq!(held, Reservation::Held(Duration::from_secs(5)));
        // Another run, a second later, that was asked for nothing.
        let (held, state) = ten.reserve(Some(state), SECOND, &ask(None, None));
        assert_eq!(held, Reservation::Held(Duration::from_secs(4)));
        let latest = Some(Duration::from_secs(3));
        let (past, state) = ten.reserve(Some(state), SECOND, &ask(latest, None));
        assert_eq!(
            past,
            Reservation::PastDeadline(Duration::from_secs(4), WaitCause::Shared)
        );
        // A run that trusts a requested wait no further than 2 s waits 2 s, within its 3 s.
        let cut = TokenRequest {
            longest_hold: Duration::from_secs(2),
            ..ask(latest, None)
        };
        let (held, state) = ten.reserve(Some(state), SECOND, &cut);
        assert_eq!(held, Reservation::Held(Duration::from_secs(2)));
        let (granted, state) = ten.reserve(Some(state), 5 * SECOND, &ask(None, None));
        assert_eq!(granted, Reservation::Granted(Duration::ZERO));
        // A day at most, however long the wait asked for.
        let year = Some(Duration::from_secs(365 * 86_400));
        let (held, _) = ten.reserve(Some(state), 5 * SECOND, &ask(None, year));
        assert_eq!(held, Reservation::Held(LONGEST_HOLD));
    }

    #[test]
    fn tokens_come_back_at_the_rate() {
        let ten = terms("10/1m");
        let empty = state(0.0, 600 * SECOND);
        let at = |seconds: u64| ten.advance(Some(empty), (600 + seconds) * SECOND).tokens;
        assert_eq!(at(0), 0.0);
        assert_eq!(at(6), 1.0);
        assert_eq!(at(30), 5.0);
        assert_eq!(at(60), 10.0);
        assert_eq!(at(6000), 10.0, "never past the capacity");
    }

    #[test]
    fn earned_tokens_pay_first_and_fade_with_the_window() {
        let earning = Terms {
            ratio: Some(0.5),
            ..terms("1/1h")
        };
        let mut state = None;
        for _ in 0..4 {
            state = Some(earning.first_attempt(state, 0));
        }
        let state = state.unwrap();
        assert_eq!((state.earned, state.first_attempts), (2.0, 4));
        let (grant, after) = earning.reserve(Some(state), 0, &ask(None, None));
        assert_eq!(grant, Reservation::Granted(Duration::ZERO));
        assert_eq!(
            (after.earned, after.tokens),
            (1.0, 1.0),
            "the rate bucket untouched"
        );
        let later = earning.advance(Some(after), 60 * SECOND);
        assert!((later.earned - (-1.0f64).exp()).abs() < 1e-12, "{later:?}");
        let much_later = earning.advance(Some(after), 600 * SECOND);
        assert!(much_later.earned < 1e-4, "{much_later:?}");
    }

    #[test]
    fn without_a_ratio_first_attempts_earn_nothing() {
        let plain = terms("5/1h");
        let state = plain.first_attempt(None, 0);
        assert_eq!(
            (state.earned, state.first_attempts, state.tokens),
            (0.0, 1, 5.0)
        );
    }

    #[test]
    fn debt_is_bounded_and_anything_beyond_it_is_damage() {
        let one = terms("1/1m");
        let now = 1_000_000 * SECOND;
        let deep = state(-f64::from(MAX_DEBT_PERIODS), now);
        assert_eq!(
            one.reserve(Some(deep), now, &ask(None, None)).0,
            Reservation::Refused
        );
        assert!(one.is_plausible(&deep, now));
        let mut absurd = vec![
            state(-1e308, now),
            state(f64::NAN, now),
            state(2.0, now),
            state(0.0, now * 1000),
        ];
        absurd.push(BucketState {
            earned: f64::INFINITY,
            ..state(0.0, now)
        });
        for absurd in absurd {
            assert!(!one.is_plausible(&absurd, now), "{absurd:?}");
        }
        assert!(one.is_plausible(&state(0.0, now + 30 * SECOND), now));
    }

    #[test]
    fn centuries_long_periods_saturate_instead_of_overflowing() {
        let slow = terms("1/500000000000y");
        let (_, state) = slow.reserve(None, 0, &ask(None, None));
        let (_, state) = slow.reserve(Some(state), 0, &ask(None, None));
        // Two periods of 500000000000 years pass what a Duration holds.
        let (grant, _) = slow.reserve(Some(state), 0, &ask(None, None));
        assert_eq!(grant, Reservation::Granted(Duration::MAX));
        let (past, _) = slow.reserve(Some(state), 0, &ask(Some(Duration::from_secs(1)), None));
        assert_eq!(
            past,
            Reservation::PastDeadline(Duration::MAX, WaitCause::Budget)
        );
    }

    #[test]
    fn a_clock_that_went_back_regains_nothing_and_keeps_its_time() {
        let later = state(0.0, 100 * SECOND);
        let back = terms("5/1m").advance(Some(later), 50 * SECOND);
        assert_eq!((back.tokens, back.at), (0.0, 100 * SECOND));
    }

    #[test]
    fn the_bucket_says_when_it_is_full() {
        let ten = terms("10/1m");
        assert_eq!(ten.full_in(&state(5.0, 0)), Duration::from_secs(30));
        assert_eq!(ten.full_in(&state(10.0, 0)), Duration::ZERO);
    }

    #[test]
    fn parses_rates() {
        assert_eq!(
            "10/1m".parse::<Rate>().unwrap(),
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
        /// However the retries of a machine's runs against one target come (bursts, a long
        /// poll, many runs at once), the default budget never refuses one and never ends a run:
        /// it spaces them out, so that in any window of time no more start than its terms
        /// allow, as refusing would have bounded them.
        #[test]
        fn the_default_budget_spaces_retries_out_and_refuses_none(
            gaps in proptest::collection::vec(
                prop_oneof![Just(0u64), 0u64..2_000_000, 0u64..120_000_000],
                1..500,
            ),
        ) {
            let terms = DEFAULT_BUDGET_TERMS;
            let mut state = None;
            let mut now = 1_800_000_000 * SECOND;
            let mut starts = Vec::new();
            for gap in gaps {
                now += gap;
                let (answer, next) = terms.reserve(state, now, &ask(None, None));
                state = Some(next);
                let Reservation::Granted(delay) = answer else {
                    return Err(TestCaseError::fail(format!("{answer:?} at {now}")));
                };
                starts.push(now + micros(delay) as u64);
            }
            starts.sort_unstable();
            let capacity = f64::from(terms.rate.tokens);
            for window in [Duration::from_secs(60), terms.rate.period, 4 * terms.rate.period] {
                let most = capacity + capacity * micros(window) / micros(terms.rate.period);
                let within = micros(window) as u64;
                for (at, start) in starts.iter().enumerate() {
                    let started = starts[at..].partition_point(|later| *later < start + within);
                    prop_assert!(
                        started as f64 <= most,
                        "{started} retries started within {window:?} of {start}, more than {most}"
                    );
                }
            }
        }

        #[test]
        fn tokens_never_exceed_the_capacity(
            tokens in 1u32..1000,
            period_ms in 1u64..10_000_000,
            steps in proptest::collection::vec(0u64..10_000_000, 1..50),
        ) {
            let terms = Terms {
                rate: Rate { tokens, period: Duration::from_millis(period_ms) },
                ratio: Some(0.1),
                window: Duration::from_secs(60),
                breaker: None,
            };
            let mut state = None;
            let mut now = 0;
            for step in steps {
                now += step * 1000;
                prop_assert!(terms.advance(state, now).tokens <= f64::from(tokens));
                let (grant, next) = terms.reserve(state, now, &ask(None, None));
                prop_assert!(matches!(grant, Reservation::Granted(_)));
                prop_assert!(terms.is_plausible(&next, now));
                state = Some(terms.first_attempt(Some(next), now));
            }
        }

        #[test]
        fn reserved_retries_go_out_at_the_rate(tokens in 1u32..100, extra in 1usize..100) {
            let terms = Terms {
                rate: Rate { tokens, period: Duration::from_secs(3600) },
                ratio: None,
                window: Duration::from_secs(60),
                breaker: None,
            };
            let mut state = None;
            let mut last = Duration::ZERO;
            for taken in 0..(tokens as usize + extra) {
                let (Reservation::Granted(delay), next) = terms.reserve(state, 0, &ask(None, None)) else {
                    return Err(TestCaseError::fail("refused without a limit"));
                };
                state = Some(next);
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
