//! The schedule of waits between attempts: capped exponential backoff with jitter.
//!
//! A [`Schedule`] is an endless `Iterator` of `Duration`s: its first item is the wait after the
//! first attempt (the wait before attempt 2), and the run loop takes as many as it needs. The
//! random number generator is passed in, so a seeded schedule is reproducible, and nothing here
//! reads a clock or sleeps. All arithmetic is done in saturating nanoseconds: any base, cap and
//! multiplier that pass [`Backoff::new`] give waits in `[0, cap]` for any number of retries.
//!
//! With `ceiling = min(cap, base * multiplier^retry)`, `retry` counting from 0:
//!
//! | jitter         | wait                                                             |
//! |----------------|------------------------------------------------------------------|
//! | `none`         | `ceiling`                                                        |
//! | `full`         | `uniform(0, ceiling)`                                            |
//! | `equal`        | `ceiling/2 + uniform(0, ceiling/2)`                              |
//! | `decorrelated` | `min(cap, uniform(base, previous * 3))`, `previous` starts at base |

use std::time::Duration;

use crate::choice::Choice;
use crate::duration::format_duration;
use crate::error::Error;

use rand::{Rng, RngExt, SeedableRng};

/// The growth of the ceiling per retry unless --multiplier says otherwise: doubling, as in the
/// blog post's experiments (which the simulator reruns with it).
pub const DEFAULT_MULTIPLIER: f64 = 2.0;

/// How randomness spreads the waits (Marc Brooker, "Exponential Backoff And Jitter").
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Jitter {
    /// No randomness: wait exactly the exponential ceiling.
    None,
    /// Wait a uniform random time between 0 and the ceiling.
    Full,
    /// Wait half the ceiling plus a uniform random time up to the other half.
    Equal,
    /// Wait a uniform random time between base and three times the previous wait, capped.
    Decorrelated,
}

impl Choice for Jitter {
    const ALL: &'static [Jitter] = &[
        Jitter::None,
        Jitter::Full,
        Jitter::Equal,
        Jitter::Decorrelated,
    ];

    fn name(self) -> &'static str {
        match self {
            Jitter::None => "none",
            Jitter::Full => "full",
            Jitter::Equal => "equal",
            Jitter::Decorrelated => "decorrelated",
        }
    }

    fn about(self) -> &'static str {
        match self {
            Jitter::None => "No randomness: wait exactly the exponential ceiling",
            Jitter::Full => "Wait a uniform random time between 0 and the ceiling",
            Jitter::Equal => {
                "Wait half the ceiling plus a uniform random time up to the other half"
            }
            Jitter::Decorrelated => {
                "Wait a uniform random time between base and three times the previous wait, capped"
            }
        }
    }
}

/// Validated backoff parameters; [`Backoff::schedule`] turns them into waits.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Backoff {
    base: u64,
    cap: u64,
    multiplier: f64,
    jitter: Jitter,
}

/// Parse `--multiplier`: a finite number of at least 1.
pub fn parse_multiplier(text: &str) -> Result<f64, Error> {
    match text.trim().parse::<f64>() {
        Ok(factor) if factor.is_finite() && factor >= 1.0 => Ok(factor),
        Ok(_) => Err(Error::MultiplierOutOfRange),
        Err(_) => Err(Error::MultiplierNotANumber),
    }
}

impl Backoff {
    /// Parameters for a schedule; the cap must not be below the base, and the multiplier must be a
    /// finite number of at least 1.
    pub fn new(
        base: Duration,
        cap: Duration,
        multiplier: f64,
        jitter: Jitter,
    ) -> Result<Self, Error> {
        if cap < base {
            return Err(Error::CapBelowBase {
                base: format_duration(base),
                cap: format_duration(cap),
            });
        }
        if !(multiplier.is_finite() && multiplier >= 1.0) {
            return Err(Error::MultiplierBelowOne(multiplier.to_string()));
        }
        Ok(Backoff {
            base: saturating_nanos(base),
            cap: saturating_nanos(cap),
            multiplier,
            jitter,
        })
    }

    /// The same parameters with another jitter strategy.
    pub fn with_jitter(self, jitter: Jitter) -> Self {
        Backoff { jitter, ..self }
    }

    /// The jitter the waits are drawn with.
    pub fn jitter(&self) -> Jitter {
        self.jitter
    }

    /// The first wait, and the scale of the others.
    pub fn base(&self) -> Duration {
        Duration::from_nanos(self.base)
    }

    /// The growth of the ceiling per retry.
    pub fn multiplier(&self) -> f64 {
        self.multiplier
    }

    /// The longest single wait.
    pub fn cap(&self) -> Duration {
        Duration::from_nanos(self.cap)
    }

    /// The longest each wait can be, in order, each at most the cap: the ceiling, or with
    /// decorrelated jitter three times the longest the wait before it could be.
    pub fn longest_waits(&self) -> impl Iterator<Item = Duration> + use<> {
        let backoff = *self;
        let (mut ceiling, mut previous) = (backoff.base as f64, backoff.base);
        std::iter::from_fn(move || {
            let high = match backoff.jitter {
                Jitter::Decorrelated => previous.saturating_mul(3).max(backoff.base),
                _ => ceiling as u64,
            }
            .min(backoff.cap);
            previous = high;
            ceiling = (ceiling * backoff.multiplier).min(backoff.cap as f64);
            Some(Duration::from_nanos(high))
        })
    }

    /// The waits these parameters give, drawing randomness from `rng`.
    pub fn schedule<R: Rng>(&self, rng: R) -> Schedule<R> {
        Schedule {
            backoff: *self,
            rng,
            ceiling: self.base as f64,
            previous: self.base,
        }
    }
}

/// One wait and the interval it was drawn from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Draw {
    /// The wait drawn.
    pub wait: Duration,
    /// The shortest wait this step could have given.
    pub low: Duration,
    /// The longest wait this step could have given.
    pub high: Duration,
}

/// The endless sequence of waits of one run; see the module header for the formulas.
#[derive(Clone, Debug)]
pub struct Schedule<R> {
    backoff: Backoff,
    rng: R,
    /// `min(cap, base * multiplier^retry)` in nanoseconds, kept as a float so it saturates at cap.
    ceiling: f64,
    /// The previous wait in nanoseconds, for decorrelated jitter.
    previous: u64,
}

impl<R: Rng> Schedule<R> {
    /// Start over: the next wait is the first wait again; the random numbers go on.
    pub fn restart(&mut self) {
        self.ceiling = self.backoff.base as f64;
        self.previous = self.backoff.base;
    }

    /// The next wait together with the interval it was drawn from.
    pub fn draw(&mut self) -> Draw {
        let Backoff { base, cap, .. } = self.backoff;
        // `as` saturates; the `min` guards against the float rounding cap upwards.
        let ceiling = (self.ceiling as u64).min(cap);
        let (low, high) = match self.backoff.jitter {
            Jitter::None => (ceiling, ceiling),
            Jitter::Full => (0, ceiling),
            Jitter::Equal => (ceiling / 2, ceiling),
            Jitter::Decorrelated => (base, self.previous.saturating_mul(3).max(base)),
        };
        let wait = self.rng.random_range(low..=high).min(cap);
        self.previous = wait;
        self.ceiling = (self.ceiling * self.backoff.multiplier).min(cap as f64);
        Draw {
            wait: Duration::from_nanos(wait),
            low: Duration::from_nanos(low.min(cap)),
            high: Duration::from_nanos(high.min(cap)),
        }
    }
}

impl<R: Rng> Iterator for Schedule<R> {
    type Item = Duration;

    fn next(&mut self) -> Option<Duration> {
        Some(self.draw().wait)
    }
}

/// The `--splay` wait before the first attempt: uniform in `[0, bound)`, from a stream of its own
/// derived from `seed`, so that adding a splay leaves the backoff's waits as they were.
pub fn splay(seed: u64, bound: Duration) -> Duration {
    let bound = saturating_nanos(bound);
    if bound == 0 {
        return Duration::ZERO;
    }
    let mut rng =
        rand::rngs::Xoshiro256PlusPlus::seed_from_u64(crate::seed::split_mix(seed ^ SPLAY_STREAM));
    Duration::from_nanos(rng.random_range(0..bound))
}

/// Set apart the splay's random stream from the backoff's.
const SPLAY_STREAM: u64 = 0x5b1a_7e00_0000_0001;

/// `duration` in nanoseconds, saturating at `u64::MAX` (about 584 years).
fn saturating_nanos(duration: Duration) -> u64 {
    u64::try_from(duration.as_nanos()).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use rand::rngs::Xoshiro256PlusPlus;

    const ALL: [Jitter; 4] = [
        Jitter::None,
        Jitter::Full,
        Jitter::Equal,
        Jitter::Decorrelated,
    ];

    fn backoff(base_ms: u64, cap_ms: u64, multiplier: f64, jitter: Jitter) -> Backoff {
        let ms = Duration::from_millis;
        Backoff::new(ms(base_ms), ms(cap_ms), multiplier, jitter).unwrap()
    }

    fn rng(seed: u64) -> Xoshiro256PlusPlus {
        Xoshiro256PlusPlus::seed_from_u64(seed)
    }

    #[test]
    fn no_jitter_doubles_up_to_the_cap() {
        let waits: Vec<u64> = backoff(1_000, 60_000, 2.0, Jitter::None)
            .schedule(rng(0))
            .take(8)
            .map(|wait| wait.as_millis() as u64)
            .collect();
        assert_eq!(
            waits,
            [1_000, 2_000, 4_000, 8_000, 16_000, 32_000, 60_000, 60_000]
        );
    }

    #[test]
    fn fractional_multiplier_grows_smoothly() {
        let waits: Vec<u64> = backoff(100, 1_000, 1.5, Jitter::None)
            .schedule(rng(0))
            .take(4)
            .map(|wait| wait.as_millis() as u64)
            .collect();
        assert_eq!(waits, [100, 150, 225, 337]);
    }

    #[test]
    fn splay_stays_below_its_bound_and_follows_the_seed() {
        let bound = Duration::from_secs(60);
        assert_eq!(splay(5, bound), splay(5, bound));
        assert_ne!(splay(5, bound), splay(6, bound));
        assert!((0..1000).all(|seed| splay(seed, bound) < bound));
        assert_eq!(splay(5, Duration::ZERO), Duration::ZERO);
    }

    /// `--seed` promises the same splay in every release: the stream is part of the interface.
    #[test]
    fn the_splay_of_a_seed_never_changes() {
        assert_eq!(
            splay(5, Duration::from_secs(600)),
            Duration::from_nanos(389_190_786_101)
        );
    }

    #[test]
    fn restarting_begins_at_the_first_wait() {
        let mut waits = backoff(100, 10_000, 2.0, Jitter::None).schedule(rng(0));
        waits.by_ref().take(5).for_each(drop);
        waits.restart();
        assert_eq!(waits.next(), Some(Duration::from_millis(100)));
        assert_eq!(waits.next(), Some(Duration::from_millis(200)));
    }

    #[test]
    fn zero_base_never_waits() {
        for jitter in ALL {
            let mut waits = backoff(0, 0, 2.0, jitter).schedule(rng(1));
            assert!(
                waits.by_ref().take(50).all(|wait| wait.is_zero()),
                "{jitter:?}"
            );
        }
    }

    #[test]
    fn seeded_schedules_repeat() {
        for jitter in ALL {
            let params = backoff(100, 10_000, 2.0, jitter);
            let first: Vec<_> = params.schedule(rng(42)).take(20).collect();
            let second: Vec<_> = params.schedule(rng(42)).take(20).collect();
            assert_eq!(first, second, "{jitter:?}");
        }
    }

    #[test]
    fn random_strategies_actually_vary() {
        for jitter in [Jitter::Full, Jitter::Equal, Jitter::Decorrelated] {
            let waits: Vec<_> = backoff(100, 10_000, 2.0, jitter)
                .schedule(rng(7))
                .skip(3)
                .take(20)
                .collect();
            assert!(
                waits.windows(2).any(|pair| pair[0] != pair[1]),
                "{jitter:?}"
            );
        }
    }

    #[test]
    fn rejects_cap_below_base_and_bad_multipliers() {
        let ms = Duration::from_millis;
        let make =
            |base, cap, multiplier| Backoff::new(ms(base), ms(cap), multiplier, Jitter::Full);
        assert_eq!(
            make(2_000, 1_000, 2.0).unwrap_err().to_string(),
            "--cap (1s) must not be below --base (2s); raise --cap or lower --base"
        );
        for multiplier in [0.5, f64::NAN, f64::INFINITY, -2.0] {
            let err = make(1, 2, multiplier).unwrap_err();
            assert!(matches!(err, Error::MultiplierBelowOne(_)), "{multiplier}");
        }
    }

    #[test]
    fn huge_durations_and_retry_counts_saturate() {
        let huge = Duration::MAX;
        for jitter in ALL {
            let params = Backoff::new(huge, huge, f64::MAX, jitter).unwrap();
            let mut waits = params.schedule(rng(3));
            assert!(waits.by_ref().take(100).all(|wait| wait <= huge));
            let far = backoff(1, 30_000, 10.0, jitter)
                .schedule(rng(3))
                .nth(100_000);
            assert!(far.unwrap() <= Duration::from_secs(30));
        }
    }

    fn strategy() -> impl Strategy<Value = Jitter> {
        prop::sample::select(ALL.to_vec())
    }

    proptest! {
        #[test]
        fn waits_stay_within_their_bounds(
            jitter in strategy(),
            base in 0u64..=u64::MAX / 2,
            extra in 0u64..=u64::MAX / 2,
            multiplier in 1.0f64..1e6,
            seed in any::<u64>(),
        ) {
            let cap = base + extra;
            let params = Backoff::new(
                Duration::from_nanos(base), Duration::from_nanos(cap), multiplier, jitter,
            ).unwrap();
            let mut schedule = params.schedule(rng(seed));
            let mut ceiling = base as f64;
            let mut previous = base;
            for _ in 0..200 {
                let Draw { wait, low, high } = schedule.draw();
                let wait = saturating_nanos(wait);
                let exponential = (ceiling as u64).min(cap);
                prop_assert!(wait <= cap);
                prop_assert!(saturating_nanos(low) <= wait && wait <= saturating_nanos(high));
                match jitter {
                    Jitter::None => prop_assert_eq!(wait, exponential),
                    Jitter::Full => prop_assert!(wait <= exponential),
                    Jitter::Equal => prop_assert!(exponential / 2 <= wait && wait <= exponential),
                    Jitter::Decorrelated => {
                        prop_assert!(base <= wait);
                        prop_assert!(wait <= previous.saturating_mul(3).max(base));
                    }
                }
                ceiling = (ceiling * multiplier).min(cap as f64);
                previous = wait;
            }
        }

        #[test]
        fn no_wait_is_longer_than_its_longest(
            jitter in strategy(),
            base in 0u64..=10_000_000_000,
            extra in 0u64..=100_000_000_000,
            multiplier in 1.0f64..10.0,
            seed in any::<u64>(),
        ) {
            let params = Backoff::new(
                Duration::from_nanos(base), Duration::from_nanos(base + extra), multiplier, jitter,
            ).unwrap();
            let mut schedule = params.schedule(rng(seed));
            for (retry, longest) in params.longest_waits().take(60).enumerate() {
                let Draw { wait, high, .. } = schedule.draw();
                prop_assert!(wait <= longest, "retry {}: {:?} > {:?}", retry, wait, longest);
                if jitter != Jitter::Decorrelated {
                    prop_assert_eq!(high, longest);
                }
            }
        }
    }
}
