//! `retry-sim load`: what retries do to the load on a failing service, and what keeps a
//! retry storm down, as in Marc Brooker's "Fixing retries with token buckets and circuit
//! breakers" (2022) and his simulator behind it (`mbrooker/simulator_example`, `retry_sim/`),
//! with this tool's own backoff schedule and budget arithmetic.
//!
//! The model, as the original's: time in seconds; every network hop takes an exponentially
//! distributed time with a 10 ms mean. The server fails each call independently with the failure
//! rate, whatever its load. Open-loop clients start requests at Poisson moments, `rate` a second
//! each; serial clients keep one request in flight and start the next at the later of its end and
//! a Poisson-paced moment. A request's first try and its retries are calls; after a failed call,
//! the policy says whether to retry, at once or after the backoff's wait. After `duration`, no new
//! request starts, and the ones in flight run to their end. Success is successes per first try,
//! load is calls per first try.
//!
//! The policies: `none`; `retries`, up to N per request; `bucket`, Brooker's adaptive token
//! bucket (per client: 0.1 token per first try, 1 per retry, capacity 5, a retry needs more than
//! 1); and `budget`, this tool's own budget (`budget::model`, the code `--budget` runs), per client
//! or shared, each retry taking a token that is there at once, up to N per request.

use rand::rngs::Xoshiro256PlusPlus;
use rand::{RngExt, SeedableRng};
use rand_distr::Exp1;

use crate::queue::EventQueue;
use crate::slots::Slots;
use crate::trials::{mean_and_sd, run_parallel, trial_seed};
use retry_budget::model::{BucketState, Terms};
use retry_policy::backoff::{Backoff, Schedule};
use retry_policy::run::{Reservation, TokenRequest};

/// The mean time of one network hop, in seconds.
const HOP: f64 = 0.01;

/// Brooker's adaptive bucket: tokens earned per first try, its capacity, and the least a retry
/// needs (more than this).
const BUCKET: (f64, f64, f64) = (0.1, 5.0, 1.0);

/// How a client decides whether to retry a failed call.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Policy {
    /// Never.
    None,
    /// Up to N retries per request.
    Retries,
    /// Brooker's adaptive token bucket.
    Bucket,
    /// This tool's budget, up to N retries per request.
    Budget,
}

/// This tool's budget, as the `budget` policy applies it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct BudgetPolicy {
    pub(crate) terms: Terms,
    /// One budget for every client, rather than one each.
    pub(crate) shared: bool,
}

/// What to simulate.
#[derive(Clone, Debug)]
pub(crate) struct Experiment {
    pub(crate) failure_rates: Vec<f64>,
    pub(crate) policies: Vec<Policy>,
    /// The most retries per request, for `retries` and `budget`.
    pub(crate) retries: u32,
    pub(crate) clients: u32,
    /// First tries per second, per client.
    pub(crate) rate: f64,
    /// Serial (closed-loop) clients rather than open-loop ones.
    pub(crate) serial: bool,
    /// The wait before each retry of a request, if any.
    pub(crate) backoff: Option<Backoff>,
    pub(crate) budget: BudgetPolicy,
    /// How long requests start, in seconds.
    pub(crate) duration: f64,
    pub(crate) trials: u32,
    pub(crate) seed: u64,
}

/// One trial's counts.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct Trial {
    pub(crate) first_tries: u64,
    pub(crate) calls: u64,
    pub(crate) successes: u64,
    /// When the last call ended, in seconds.
    pub(crate) end: f64,
}

/// The result for one policy and failure rate, over the trials.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Point {
    pub(crate) policy: Policy,
    pub(crate) failure_rate: f64,
    pub(crate) first_tries: f64,
    /// Successes per first try: mean and standard deviation.
    pub(crate) success: (f64, f64),
    /// Calls per first try: mean and standard deviation.
    pub(crate) load: (f64, f64),
    /// For `budget`: the most load its terms allow over the trials' time.
    pub(crate) bound: Option<f64>,
}

impl Experiment {
    /// Run every trial, spread over `threads` threads, and summarise each point.
    pub(crate) fn run(&self, threads: usize) -> Vec<Point> {
        let points: Vec<(usize, Policy, f64)> = self
            .policies
            .iter()
            .enumerate()
            .flat_map(|(index, &policy)| {
                self.failure_rates
                    .iter()
                    .map(move |&rate| (index, policy, rate))
            })
            .collect();
        let trials = self.trials as usize;
        let results = run_parallel(points.len() * trials, threads, |job| {
            let (index, policy, failure_rate) = points[job / trials];
            let coordinates = [index as u64, failure_rate.to_bits(), (job % trials) as u64];
            self.simulate(policy, failure_rate, trial_seed(self.seed, &coordinates))
        });
        points
            .iter()
            .zip(results.chunks(trials))
            .map(|(&(_, policy, failure_rate), trials)| {
                self.summarise(policy, failure_rate, trials)
            })
            .collect()
    }

    fn summarise(&self, policy: Policy, failure_rate: f64, trials: &[Trial]) -> Point {
        let ratio = |count: fn(&Trial) -> u64| -> Vec<f64> {
            trials
                .iter()
                .map(|trial| count(trial) as f64 / trial.first_tries.max(1) as f64)
                .collect()
        };
        let per_trial =
            |value: fn(&Trial) -> f64| trials.iter().map(value).sum::<f64>() / trials.len() as f64;
        let first_tries = per_trial(|trial| trial.first_tries as f64);
        Point {
            policy,
            failure_rate,
            first_tries,
            success: mean_and_sd(&ratio(|trial| trial.successes)),
            load: mean_and_sd(&ratio(|trial| trial.calls)),
            bound: (policy == Policy::Budget).then(|| {
                let end = per_trial(|trial| trial.end);
                self.budget_bound(first_tries, end)
            }),
        }
    }

    /// The most calls per first try the budget allows: each first try earns the ratio, and the
    /// rate buckets hold their capacity and regain it every period until `end`.
    fn budget_bound(&self, first_tries: f64, end: f64) -> f64 {
        let terms = &self.budget.terms;
        let capacity = f64::from(terms.rate.tokens);
        let periods = end / terms.rate.period.as_secs_f64();
        let buckets = if self.budget.shared {
            1.0
        } else {
            f64::from(self.clients)
        };
        let floor = buckets * capacity * (1.0 + periods);
        1.0 + terms.ratio.unwrap_or(0.0) + floor / first_tries.max(1.0)
    }

    /// One trial of `policy` at `failure_rate`, from `seed`.
    pub(crate) fn simulate(&self, policy: Policy, failure_rate: f64, seed: u64) -> Trial {
        let mut run = Run::new(self, policy, failure_rate, seed);
        run.start();
        run.until_done();
        run.trial
    }
}

/// What happens next in a trial.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Event {
    /// The client's next request starts.
    Request(u32),
    /// The call reaches the server.
    AtServer(u32),
    /// The call's failure reaches its client.
    Failed(u32),
}

/// A request in flight.
#[derive(Clone, Debug)]
struct Call {
    client: u32,
    retries: u32,
    /// The waits before its retries, once it has failed, with `--backoff`.
    waits: Option<Schedule<Xoshiro256PlusPlus>>,
}

/// One trial in progress.
struct Run<'a> {
    experiment: &'a Experiment,
    policy: Policy,
    failure_rate: f64,
    rng: Xoshiro256PlusPlus,
    queue: EventQueue<Event>,
    calls: Slots<Call>,
    /// Brooker's buckets, one per client.
    buckets: Vec<f64>,
    /// This tool's budgets: one per client, or one shared.
    budgets: Vec<Option<BucketState>>,
    /// For serial clients: when each started its last request.
    last_start: Vec<f64>,
    trial: Trial,
}

impl<'a> Run<'a> {
    fn new(experiment: &'a Experiment, policy: Policy, failure_rate: f64, seed: u64) -> Self {
        let clients = experiment.clients as usize;
        let budgets = if experiment.budget.shared { 1 } else { clients };
        Run {
            experiment,
            policy,
            failure_rate,
            rng: Xoshiro256PlusPlus::seed_from_u64(seed),
            queue: EventQueue::with_capacity(4 * clients),
            calls: Slots::default(),
            buckets: vec![BUCKET.1; clients],
            budgets: vec![None; budgets],
            last_start: vec![0.0; clients],
            trial: Trial::default(),
        }
    }

    /// One hop's time.
    fn hop(&mut self) -> f64 {
        let unit: f64 = self.rng.sample(Exp1);
        unit * HOP
    }

    /// A Poisson gap between a client's requests.
    fn gap(&mut self) -> f64 {
        let unit: f64 = self.rng.sample(Exp1);
        unit / self.experiment.rate
    }

    /// Every client's first request, a hop's time in (as the original starts them).
    fn start(&mut self) {
        for client in 0..self.experiment.clients {
            let first = self.hop();
            let at = match self.experiment.serial {
                true => self.next_serial_start(client, first),
                false => first,
            };
            self.queue.push(at, Event::Request(client));
        }
    }

    fn until_done(&mut self) {
        while let Some((now, event)) = self.queue.first() {
            match event {
                Event::Request(client) => self.request(now, client),
                Event::AtServer(call) => self.at_server(now, call),
                Event::Failed(call) => self.failed(now, call),
            }
        }
    }

    /// A client's request starts at `now`, unless requests have stopped; an open-loop client's
    /// next request is due a Poisson gap later.
    fn request(&mut self, now: f64, client: u32) {
        if now > self.experiment.duration {
            self.queue.remove_first();
            return;
        }
        self.trial.first_tries += 1;
        self.trial.calls += 1;
        self.first_try(client, now);
        let call = self.calls.insert(Call {
            client,
            retries: 0,
            waits: None,
        });
        let arrives = now + self.hop();
        match self.experiment.serial {
            true => self.queue.replace_first(arrives, Event::AtServer(call)),
            false => {
                let next = now + self.gap();
                self.queue.replace_first(next, Event::Request(client));
                self.queue.push(arrives, Event::AtServer(call));
            }
        }
    }

    /// The server answers a call at `now`: a success reaches the client a hop later and ends the
    /// request, a failure makes the client decide.
    fn at_server(&mut self, now: f64, call: u32) {
        let answered = now + self.hop();
        if self.rng.random::<f64>() < self.failure_rate {
            self.queue.replace_first(answered, Event::Failed(call));
            return;
        }
        self.trial.successes += 1;
        self.end_call(answered, call);
    }

    /// A failed call's answer reaches its client at `now`: retry, maybe after a wait, or end.
    fn failed(&mut self, now: f64, call: u32) {
        if !self.may_retry(now, call) {
            self.end_call(now, call);
            return;
        }
        self.trial.calls += 1;
        let wait = self.wait_before_retry(call);
        let arrives = now + wait + self.hop();
        self.queue.replace_first(arrives, Event::AtServer(call));
    }

    /// Whether the policy lets `call`'s client retry it at `now`; a retry allowed is paid for.
    fn may_retry(&mut self, now: f64, call: u32) -> bool {
        let Call {
            client, retries, ..
        } = self.calls[call];
        let under_limit = retries < self.experiment.retries;
        let allowed = match self.policy {
            Policy::None => false,
            Policy::Retries => under_limit,
            Policy::Bucket => {
                let bucket = &mut self.buckets[client as usize];
                let allowed = *bucket > BUCKET.2;
                if allowed {
                    *bucket -= 1.0;
                }
                allowed
            }
            Policy::Budget => under_limit && self.take_budget_token(client, now),
        };
        if allowed {
            self.calls[call].retries += 1;
        }
        allowed
    }

    /// The wait before `call`'s next retry, from its own schedule, with `--backoff`.
    fn wait_before_retry(&mut self, call: u32) -> f64 {
        let Some(backoff) = self.experiment.backoff else {
            return 0.0;
        };
        let seed: u64 = self.rng.random();
        let waits = self.calls[call]
            .waits
            .get_or_insert_with(|| backoff.schedule(Xoshiro256PlusPlus::seed_from_u64(seed)));
        waits.draw().wait.as_secs_f64()
    }

    /// A first try of `client`'s at `now` earns what its policy gives.
    fn first_try(&mut self, client: u32, now: f64) {
        match self.policy {
            Policy::Bucket => {
                let bucket = &mut self.buckets[client as usize];
                *bucket = (*bucket + BUCKET.0).min(BUCKET.1);
            }
            Policy::Budget => {
                let terms = self.experiment.budget.terms;
                let state = self.budget_of(client);
                *state = Some(terms.first_attempt(*state, micros(now)));
            }
            Policy::None | Policy::Retries => {}
        }
    }

    /// A token of the budget for a retry of `client`'s at `now`, if one is there at once.
    fn take_budget_token(&mut self, client: u32, now: f64) -> bool {
        let terms = self.experiment.budget.terms;
        let state = self.budget_of(client);
        // A retry that may not wait: only a token that is there now will do.
        let at_once = TokenRequest {
            latest: Some(std::time::Duration::from_micros(1)),
            asked: None,
            longest_hold: std::time::Duration::ZERO,
        };
        let (reservation, next) = terms.reserve(*state, micros(now), &at_once);
        *state = Some(next);
        reservation == Reservation::Granted(std::time::Duration::ZERO)
    }

    fn budget_of(&mut self, client: u32) -> &mut Option<BucketState> {
        let index = if self.experiment.budget.shared {
            0
        } else {
            client as usize
        };
        &mut self.budgets[index]
    }

    /// `call`'s request ends, its client learning it at `at`: a serial client's next request
    /// is due, an open-loop client's is already queued.
    fn end_call(&mut self, at: f64, call: u32) {
        self.trial.end = self.trial.end.max(at);
        self.calls.release(call);
        let client = self.calls[call].client;
        match self.experiment.serial && at <= self.experiment.duration {
            true => {
                let next = self.next_serial_start(client, at);
                self.queue.replace_first(next, Event::Request(client));
            }
            false => self.queue.remove_first(),
        }
    }

    /// When a serial client whose request ended at `now` starts its next: a Poisson gap after its
    /// last start, or at once if that moment has passed.
    fn next_serial_start(&mut self, client: u32, now: f64) -> f64 {
        let gap = self.gap();
        let last = &mut self.last_start[client as usize];
        let next = now + (gap - (now - *last)).max(0.0);
        *last = next;
        next
    }
}

/// `seconds` in whole microseconds, the budget's unit.
fn micros(seconds: f64) -> u64 {
    (seconds * 1e6) as u64
}

#[cfg(test)]
mod tests {
    use super::*;
    use retry_policy::backoff::Jitter;
    use std::time::Duration;

    /// A small experiment: 20 clients at 10/s for 20 s, 3 retries at most, 4 trials.
    fn experiment(policies: &[Policy], failure_rates: &[f64]) -> Experiment {
        Experiment {
            failure_rates: failure_rates.to_vec(),
            policies: policies.to_vec(),
            retries: 3,
            clients: 20,
            rate: 10.0,
            serial: false,
            backoff: None,
            budget: BudgetPolicy {
                terms: Terms {
                    rate: "10/1m".parse().unwrap(),
                    ratio: Some(0.1),
                    window: Duration::from_secs(60),
                    breaker: None,
                },
                shared: false,
            },
            duration: 20.0,
            trials: 4,
            seed: 11,
        }
    }

    /// Whether `observed`, a mean over `samples`, is within four standard errors of `expected`
    /// for a quantity of this `variance` per sample.
    fn within_sampling_error(observed: f64, expected: f64, variance: f64, samples: f64) -> bool {
        (observed - expected).abs() <= 4.0 * (variance / samples).sqrt() + 1e-9
    }

    /// Calls per request with N retries at failure rate p, as a distribution: mean and variance.
    fn calls_with_retries(p: f64, retries: i32) -> (f64, f64) {
        let mut moments = (0.0, 0.0);
        for calls in 1..=retries + 1 {
            let chance = match calls == retries + 1 {
                true => p.powi(retries),
                false => p.powi(calls - 1) * (1.0 - p),
            };
            moments.0 += chance * f64::from(calls);
            moments.1 += chance * f64::from(calls * calls);
        }
        (moments.0, moments.1 - moments.0 * moments.0)
    }

    #[test]
    fn n_retries_give_the_analytic_load_and_success() {
        let rates = [0.1, 0.5, 0.9];
        for point in experiment(&[Policy::Retries, Policy::None], &rates).run(2) {
            let p = point.failure_rate;
            let retries = if point.policy == Policy::Retries {
                3
            } else {
                0
            };
            let samples = point.first_tries * 4.0;
            let (load, load_variance) = calls_with_retries(p, retries);
            let success = 1.0 - p.powi(retries + 1);
            assert!(
                within_sampling_error(point.load.0, load, load_variance, samples),
                "{point:?}: load {load}"
            );
            let success_variance = success * (1.0 - success);
            assert!(
                within_sampling_error(point.success.0, success, success_variance, samples),
                "{point:?}: success {success}"
            );
        }
    }

    #[test]
    fn per_request_backoff_leaves_open_loop_load_as_it_was() {
        let mut backed_off = experiment(&[Policy::Retries], &[0.5]);
        let backoff = Backoff::new(
            Duration::from_millis(100),
            Duration::from_secs(60),
            2.0,
            Jitter::Full,
        );
        backed_off.backoff = Some(backoff.unwrap());
        let point = backed_off.run(2)[0];
        let (load, variance) = calls_with_retries(0.5, 3);
        assert!(
            within_sampling_error(point.load.0, load, variance, point.first_tries * 4.0),
            "{point:?}"
        );
    }

    #[test]
    fn the_bucket_plateaus_at_a_tenth_of_the_first_tries() {
        for point in experiment(&[Policy::Bucket], &[0.5, 1.0]).run(2) {
            // A tenth of a token a first try, and each client's first four tokens.
            let plateau = 1.1 + 4.0 * 20.0 / point.first_tries;
            assert!(
                (point.load.0 - plateau).abs() < 0.01,
                "{point:?}: {plateau}"
            );
        }
    }

    #[test]
    fn the_budget_holds_the_load_under_its_bound() {
        for shared in [false, true] {
            let mut budget = experiment(&[Policy::Budget], &[0.0, 0.1, 0.5, 1.0]);
            budget.budget.shared = shared;
            for point in budget.run(2) {
                let bound = point.bound.unwrap();
                assert!(point.load.0 <= bound, "shared {shared}: {point:?}");
                if shared {
                    assert!(point.load.0 <= 1.11, "{point:?}");
                }
            }
        }
        let at_full_failure = experiment(&[Policy::Budget], &[1.0]).run(2)[0];
        assert!(
            at_full_failure.load.0 > 1.1,
            "the ratio and the floor both pay: {at_full_failure:?}"
        );
    }

    #[test]
    fn serial_clients_with_backoff_cut_the_load_as_brookers_did() {
        let mut serial = experiment(&[Policy::Retries], &[0.0, 1.0]);
        serial.serial = true;
        serial.clients = 50;
        let unjittered = Backoff::new(
            Duration::from_millis(100),
            Duration::from_secs(60),
            2.0,
            Jitter::None,
        );
        serial.backoff = Some(unjittered.unwrap());
        let points = serial.run(2);
        let calls = |point: &Point| point.load.0 * point.first_tries;
        // His simulator gives 0.529 of the failure-free calls (README: "Retries and load").
        let ratio = calls(&points[1]) / calls(&points[0]);
        assert!((ratio - 0.53).abs() < 0.02, "{ratio}: {points:?}");
    }

    #[test]
    fn the_same_seed_gives_the_same_trial_and_no_request_starts_late() {
        let small = experiment(&[Policy::Budget], &[0.3]);
        let trial = small.simulate(Policy::Budget, 0.3, 5);
        assert_eq!(trial, small.simulate(Policy::Budget, 0.3, 5));
        assert_ne!(trial, small.simulate(Policy::Budget, 0.3, 6));
        let expected = 20.0 * 10.0 * 20.0;
        let tolerance = 4.0 * f64::sqrt(expected);
        assert!(
            (trial.first_tries as f64 - expected).abs() < tolerance,
            "{trial:?}"
        );
        assert!(trial.end < 21.0, "{trial:?}");
    }
}
