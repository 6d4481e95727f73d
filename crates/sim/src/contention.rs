//! `retry-sim`: the contention experiment of the AWS Architecture Blog post "Exponential
//! Backoff And Jitter" (2015), run with this tool's own backoff code.
//!
//! The model, as the original simulator: time in milliseconds; every one-way message takes
//! |Normal(10, 2)| ms. One server holds a row whose version starts at 0 and answers each message
//! the moment it arrives: a read returns the version; a write carrying version v succeeds if v is
//! the current version, which it then increments, and fails otherwise. N clients each make one
//! update, all starting at time 0: read, then write what they read at once; on a failed write,
//! wait as their own backoff says and read again. Work is the number of writes; completion time
//! is when the last successful write's answer reaches its client. A "no backoff" baseline retries
//! at once.
//!
//! Pure apart from spreading trials over threads (`trials`): every trial draws from a seed derived
//! from the run's seed and the trial's strategy, client count and number.

use std::time::Duration;

use rand::rngs::Xoshiro256PlusPlus;
use rand::{RngExt, SeedableRng};
use rand_distr::StandardNormal;

use crate::queue::EventQueue;
use crate::refusal::Refusal;
use crate::trials::{run_parallel, trial_seed};
use retry_policy::backoff::{Backoff, Jitter, Schedule};
use retry_policy::choice::Choice;

/// Mean and standard deviation of a one-way message, in milliseconds.
const NETWORK_MS: (f64, f64) = (10.0, 2.0);

/// A way of waiting between a client's attempts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Strategy {
    /// Retry at once.
    NoBackoff,
    /// The tool's backoff with this jitter.
    Backoff(Jitter),
}

/// The strategy's name in tables and charts: the jitter's, or "no backoff".
impl std::fmt::Display for Strategy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Strategy::NoBackoff => f.pad("no backoff"),
            Strategy::Backoff(jitter) => f.pad(jitter.name()),
        }
    }
}

/// What to simulate.
#[derive(Clone, Debug)]
pub(crate) struct Experiment {
    /// The client counts, one point each.
    pub(crate) clients: Vec<u32>,
    /// The strategies to compare; the "no backoff" baseline is always added first.
    pub(crate) jitters: Vec<Jitter>,
    /// Base, cap and multiplier (the jitter is set per strategy).
    pub(crate) backoff: Backoff,
    /// Trials per point.
    pub(crate) trials: u32,
    /// The seed every trial's own seed is derived from.
    pub(crate) seed: u64,
}

/// One trial's outcome.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct Trial {
    /// Writes made, failed and successful.
    pub(crate) writes: u64,
    /// When the last successful write's answer arrived, in milliseconds.
    pub(crate) completion_ms: f64,
}

/// Mean and spread of one measure over the trials of a point.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Spread {
    pub(crate) mean: f64,
    pub(crate) p5: f64,
    pub(crate) p50: f64,
    pub(crate) p95: f64,
}

/// The result for one strategy and client count.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Point {
    pub(crate) strategy: Strategy,
    pub(crate) clients: u32,
    /// Writes per trial.
    pub(crate) work: Spread,
    /// Completion time per trial, in milliseconds.
    pub(crate) completion_ms: Spread,
}

impl Experiment {
    /// The strategies compared, the baseline first.
    pub(crate) fn strategies(&self) -> Vec<Strategy> {
        let backoffs = self.jitters.iter().map(|&jitter| Strategy::Backoff(jitter));
        std::iter::once(Strategy::NoBackoff)
            .chain(backoffs)
            .collect()
    }

    /// Run every trial, spread over `threads` threads, and summarise each point.
    pub(crate) fn run(&self, threads: usize) -> Vec<Point> {
        let strategies = self.strategies();
        let points: Vec<(Strategy, u32)> = strategies
            .iter()
            .flat_map(|&strategy| self.clients.iter().map(move |&clients| (strategy, clients)))
            .collect();
        let trials = self.trials as usize;
        let jobs = points.len() * trials;
        let results = run_parallel(jobs, threads, |job| {
            let (strategy, clients) = points[job / trials];
            let seed = seed_of(self.seed, strategy, clients, (job % trials) as u64);
            simulate(strategy, self.backoff, clients, seed)
        });
        points
            .iter()
            .zip(results.chunks(trials))
            .map(|(&(strategy, clients), trials)| Point {
                strategy,
                clients,
                work: Spread::of(trials.iter().map(|trial| trial.writes as f64)),
                completion_ms: Spread::of(trials.iter().map(|trial| trial.completion_ms)),
            })
            .collect()
    }
}

/// The seed of one trial, from the run's seed and the trial's coordinates.
fn seed_of(seed: u64, strategy: Strategy, clients: u32, trial: u64) -> u64 {
    let strategy = match strategy {
        Strategy::NoBackoff => 0,
        Strategy::Backoff(jitter) => 1 + jitter as u64,
    };
    trial_seed(seed, &[strategy, u64::from(clients), trial])
}

/// What reaches the server. A client acts on an answer the moment it arrives (it sends the write
/// at once, or waits and reads again), so its answer and its next request are drawn together,
/// and only messages to the server are queued: half the events of queueing the answers too.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Message {
    /// A read.
    Read,
    /// A write of the version read.
    Write(u32),
}

/// The network: message delays.
struct Network {
    rng: Xoshiro256PlusPlus,
}

impl Network {
    /// One message's delay: |Normal(10, 2)| ms.
    fn delay(&mut self) -> f64 {
        let z: f64 = self.rng.sample(StandardNormal);
        (NETWORK_MS.0 + NETWORK_MS.1 * z).abs()
    }
}

/// One trial: `clients` clients updating one row with `strategy`, from `seed`.
pub(crate) fn simulate(strategy: Strategy, backoff: Backoff, clients: u32, seed: u64) -> Trial {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let mut schedules: Vec<Option<Schedule<Xoshiro256PlusPlus>>> = (0..clients)
        .map(|_| match strategy {
            Strategy::NoBackoff => None,
            Strategy::Backoff(jitter) => {
                let client_rng = Xoshiro256PlusPlus::seed_from_u64(rng.random());
                Some(backoff.with_jitter(jitter).schedule(client_rng))
            }
        })
        .collect();
    let mut network = Network { rng };
    let mut in_flight = EventQueue::with_capacity(clients as usize);
    for client in 0..clients {
        in_flight.push(network.delay(), (client, Message::Read));
    }
    let (mut version, mut trial) = (0, Trial::default());
    // Each client has one message in flight at most: the one that arrives is replaced by the
    // client's next one in the queue.
    while let Some((time, (client, message))) = in_flight.first() {
        let next = match message {
            Message::Read => {
                let answered = time + network.delay();
                Some((answered + network.delay(), Message::Write(version)))
            }
            Message::Write(read) => {
                trial.writes += 1;
                let answered = time + network.delay();
                if read == version {
                    version += 1;
                    trial.completion_ms = trial.completion_ms.max(answered);
                    None
                } else {
                    let wait = schedules[client as usize]
                        .as_mut()
                        .map_or(Duration::ZERO, |schedule| schedule.draw().wait);
                    let read_again = answered + wait.as_secs_f64() * 1000.0;
                    Some((read_again + network.delay(), Message::Read))
                }
            }
        };
        match next {
            Some((arrives, message)) => in_flight.replace_first(arrives, (client, message)),
            None => in_flight.remove_first(),
        }
    }
    trial
}

impl Spread {
    /// The spread of `values` (at least one).
    pub(crate) fn of(values: impl Iterator<Item = f64>) -> Spread {
        let mut sorted: Vec<f64> = values.collect();
        sorted.sort_by(f64::total_cmp);
        let rank =
            |q: f64| sorted[((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len()) - 1];
        Spread {
            mean: sorted.iter().sum::<f64>() / sorted.len() as f64,
            p5: rank(0.05),
            p50: rank(0.5),
            p95: rank(0.95),
        }
    }
}

/// The most clients one point may simulate.
pub(crate) const MAX_CLIENTS: u32 = 100_000;

/// The most client counts one run may simulate.
pub(crate) const MAX_POINTS: usize = 1_000;

/// `--clients`: a comma-separated list of counts and ranges with a step (`10-190/10`).
pub(crate) fn parse_clients(text: &str) -> Result<Vec<u32>, Refusal> {
    let count = |word: &str| match word.trim().parse::<u32>() {
        Ok(count @ 1..=MAX_CLIENTS) => Ok(count),
        Ok(0) | Err(_) => Err(Refusal::NotAClientCount(word.to_string())),
        Ok(_) => Err(Refusal::TooManyClients {
            count: word.to_string(),
            most: MAX_CLIENTS,
        }),
    };
    let mut counts = Vec::new();
    for item in text.split(',') {
        let (range, step) = item
            .split_once('/')
            .map_or((item, None), |(range, step)| (range, Some(step)));
        let step = step.map(count).transpose()?.unwrap_or(1);
        match range.split_once('-') {
            Some((from, to)) => {
                let (from, to) = (count(from)?, count(to)?);
                if from > to {
                    return Err(Refusal::BackwardsRange(range.to_string()));
                }
                let points = ((to - from) / step) as usize + 1;
                if counts.len() + points > MAX_POINTS {
                    return Err(Refusal::RangeTooLong {
                        range: range.to_string(),
                        points,
                        most: MAX_POINTS,
                    });
                }
                counts.extend((from..=to).step_by(step as usize));
            }
            None if item.contains('/') => {
                return Err(Refusal::StepWithoutRange(item.to_string()));
            }
            None => counts.push(count(range)?),
        }
        if counts.len() > MAX_POINTS {
            return Err(Refusal::TooManyClientCounts(MAX_POINTS));
        }
    }
    Ok(counts)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn backoff(base_ms: u64) -> Backoff {
        let ms = Duration::from_millis;
        Backoff::new(ms(base_ms), ms(2_000), 2.0, Jitter::None).unwrap()
    }

    fn experiment(
        clients: Vec<u32>,
        jitters: Vec<Jitter>,
        base_ms: u64,
        trials: u32,
    ) -> Experiment {
        Experiment {
            clients,
            jitters,
            backoff: backoff(base_ms),
            trials,
            seed: 7,
        }
    }

    #[test]
    fn one_client_writes_once_in_about_forty_ms() {
        let points = experiment(vec![1], vec![Jitter::Full], 10, 400).run(2);
        for point in points {
            assert_eq!((point.work.p5, point.work.p95), (1.0, 1.0));
            assert!((point.completion_ms.mean - 40.0).abs() < 1.0, "{point:?}");
        }
    }

    #[test]
    fn two_clients_always_write_three_times() {
        let all = vec![
            Jitter::None,
            Jitter::Full,
            Jitter::Equal,
            Jitter::Decorrelated,
        ];
        for point in experiment(vec![2], all, 10, 200).run(2) {
            assert_eq!(
                (point.work.p5, point.work.p95, point.work.mean),
                (3.0, 3.0, 3.0),
                "{point:?}"
            );
        }
    }

    #[test]
    fn results_do_not_depend_on_the_number_of_threads() {
        let run = |threads| experiment(vec![5, 20], vec![Jitter::Full], 10, 20).run(threads);
        assert_eq!(run(1), run(3));
    }

    #[test]
    fn a_trial_runs_until_every_client_has_written() {
        for strategy in [Strategy::NoBackoff, Strategy::Backoff(Jitter::Decorrelated)] {
            let trial = simulate(strategy, backoff(5), 30, 1);
            assert!(trial.writes >= 30, "{strategy:?}: {trial:?}");
        }
    }

    #[test]
    fn message_delays_have_the_models_moments() {
        let mut network = Network {
            rng: Xoshiro256PlusPlus::seed_from_u64(3),
        };
        let draws: Vec<f64> = (0..100_000).map(|_| network.delay()).collect();
        let mean = draws.iter().sum::<f64>() / draws.len() as f64;
        let variance = draws.iter().map(|d| (d - mean).powi(2)).sum::<f64>() / draws.len() as f64;
        assert!(
            (mean - NETWORK_MS.0).abs() < 0.02 && (variance.sqrt() - NETWORK_MS.1).abs() < 0.02,
            "{mean} {variance}"
        );
    }

    #[test]
    fn parses_client_lists_and_ranges() {
        assert_eq!(parse_clients("10-50/20").unwrap(), [10, 30, 50]);
        assert_eq!(parse_clients("1,5,10-12").unwrap(), [1, 5, 10, 11, 12]);
        assert_eq!(parse_clients("10-190/10").unwrap().len(), 19);
        for bad in [
            "",
            "0",
            "5-3",
            "x",
            "10/2",
            "10-20/0",
            "1-4294967295",
            "100001",
            "1-2000",
        ] {
            assert!(parse_clients(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn spreads_use_nearest_ranks() {
        let spread = Spread::of((1..=100).map(f64::from));
        assert_eq!(
            (spread.mean, spread.p5, spread.p50, spread.p95),
            (50.5, 5.0, 50.0, 95.0)
        );
    }

    #[test]
    fn the_blogs_findings_hold_at_a_hundred_clients() {
        // As in the original: 10ms base for the exponential strategies, 5ms for decorrelated.
        let exponential = experiment(
            vec![100],
            vec![Jitter::None, Jitter::Full, Jitter::Equal],
            10,
            100,
        )
        .run(2);
        let decorrelated = experiment(vec![100], vec![Jitter::Decorrelated], 5, 100).run(2);
        let find = |points: &[Point], name: &str| {
            *points
                .iter()
                .find(|p| p.strategy.to_string() == name)
                .unwrap()
        };
        let (none, full, equal) = (
            find(&exponential, "none"),
            find(&exponential, "full"),
            find(&exponential, "equal"),
        );
        let decorrelated = find(&decorrelated, "decorrelated");
        eprintln!("{none:?}\n{full:?}\n{equal:?}\n{decorrelated:?}");
        assert!(
            none.work.mean > 2.0 * full.work.mean,
            "no jitter does more than twice the work of full jitter"
        );
        assert!(
            (equal.work.mean / full.work.mean - 1.0).abs() < 0.25,
            "full and equal do about the same work"
        );
        assert!(
            decorrelated.work.mean > full.work.mean,
            "decorrelated does more work than full"
        );
        assert!(
            decorrelated.completion_ms.mean < full.completion_ms.mean,
            "but finishes sooner"
        );
    }
}
