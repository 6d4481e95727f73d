//! `retry-sim metastable`: a service that load cannot only slow but hold down, as in Huang
//! et al., "Metastable Failures in the Wild" (OSDI 2022), and its retry experiment (artifact
//! `lexiangh/Metastability`, `Retry_Metastability/`), with this tool's own backoff schedule and
//! budget arithmetic among the clients.
//!
//! The model, as the artifact's: open-loop clients start a request at a fixed interval
//! (`mongoC3.go`), each attempt with a time limit (3 s), and send it again when the limit passes;
//! the server works through one FIFO queue at a finite rate and finishes every attempt it was
//! sent, even one its client stopped waiting for (work wasted, which is what keeps it down); for
//! a while after 60 s its capacity drops to a fraction of itself (`trigger.sh`). An attempt
//! succeeds if the server finishes it within the time limit. Each attempt costs the same work;
//! the model runs at [`SIMULATED_CAPACITY`] attempts a second, the loads scaled with it, which
//! leaves every delay as it was (a queue's delay is its length over its rate).
//!
//! A run has recovered when goodput (successes a second) is back to 90% of the requests a second
//! from some second after the trigger until the end, at least the last 10 s of the observation;
//! the recovery time is from the trigger's end to that second.
//!
//! The policies: `none`; `resend`, the artifact's client (up to 4 resends, at once); `defaults`,
//! this tool's (`--max-attempts`, `--base`, `--cap`, `--jitter`, and the budget on each client
//! host that a run spends from when it names none); `budget-off`, the same with `--budget off`;
//! and `ratio-per-host` and `ratio-shared`, the defaults with a budget whose terms earn a ratio,
//! one per client host or one for the fleet. Each retry asks its budget as a run without
//! `--max-time` does: it waits for a reserved token however far ahead, and gives up only when
//! refused (past the debt bound).
//!
//! A budget's tokens count real attempts, and the model's attempts stand for real ones at the
//! ratio of [`SIMULATED_CAPACITY`] to the real capacity: [`scaled`] terms keep a budget's share
//! of the load as it was.

use rand::rngs::Xoshiro256PlusPlus;
use rand::{RngExt, SeedableRng};

use crate::queue::EventQueue;
use crate::slots::Slots;
use crate::trials::{run_parallel, trial_seed};
use retry_budget::model::{BucketState, Rate, Terms};
use retry_policy::backoff::{Backoff, Schedule};
use retry_policy::run::{Reservation, TokenRequest};
use std::time::Duration;

/// Attempts a second the modelled server finishes at full capacity.
pub(crate) const SIMULATED_CAPACITY: f64 = 2000.0;

/// When the trigger starts, in seconds: the artifact's `initialWait` (`experiments.sh`).
pub(crate) const BEFORE: f64 = 60.0;

/// The goodput, as a fraction of the requests a second, that counts as serving again.
const GOOD: f64 = 0.9;

/// The seconds at the end of the observation that must all be good for a run to have recovered.
const SETTLED: usize = 10;

/// How clients retry an attempt that timed out.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Policy {
    /// Never.
    #[default]
    None,
    /// At once, up to `--resends` times: the artifact's client.
    Resend,
    /// This tool's defaults: its waits and attempt limit, and the default budget on each host.
    Defaults,
    /// This tool's waits and attempt limit, with `--budget off`.
    BudgetOff,
    /// This tool's, with a ratio budget per client host.
    RatioPerHost,
    /// This tool's, with one ratio budget for the fleet.
    RatioShared,
}

impl Policy {
    fn shares_a_budget(self) -> bool {
        self == Policy::RatioShared
    }

    fn earns(self) -> bool {
        matches!(self, Policy::RatioPerHost | Policy::RatioShared)
    }
}

/// A drop in the server's capacity, starting at [`BEFORE`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Trigger {
    /// The fraction of its capacity the server keeps, from 0 to 1.
    pub(crate) capacity: f64,
    pub(crate) seconds: f64,
}

impl Trigger {
    fn end(&self) -> f64 {
        BEFORE + self.seconds
    }
}

/// The clients: their time limit, and how each policy retries.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Clients {
    /// Each attempt's time limit, in seconds.
    pub(crate) timeout: f64,
    /// The `resend` policy's most resends per request.
    pub(crate) resends: u32,
    /// This tool's most attempts per request.
    pub(crate) max_attempts: u32,
    pub(crate) backoff: Backoff,
    /// The ratio policies' budget terms.
    pub(crate) terms: Terms,
    /// The terms of the budget a run spends from when it names none.
    pub(crate) default_terms: Terms,
    /// The real server's capacity, in attempts a second, which the budgets' tokens count in.
    pub(crate) capacity: f64,
    /// The client hosts the requests are spread over, in turn.
    pub(crate) hosts: u32,
}

/// What to simulate: every policy against every trigger at every load.
#[derive(Clone, Debug)]
pub(crate) struct Experiment {
    pub(crate) policies: Vec<Policy>,
    pub(crate) triggers: Vec<Trigger>,
    /// Requests a second, as fractions of the server's full capacity.
    pub(crate) loads: Vec<f64>,
    pub(crate) clients: Clients,
    /// How long after the trigger the run goes on, in seconds.
    pub(crate) observe: f64,
    /// The trigger whose runs, at the first load, the picture draws over time.
    pub(crate) chart: Trigger,
    pub(crate) seed: u64,
}

/// One run: a policy, a trigger and a load, and what became of the service.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Outcome {
    pub(crate) policy: Policy,
    pub(crate) trigger_capacity: f64,
    pub(crate) trigger_seconds: f64,
    pub(crate) load: f64,
    /// Seconds from the trigger's end until the service was serving again for good; none if
    /// it never was.
    pub(crate) recovery: Option<f64>,
    /// Attempts sent per request started.
    pub(crate) attempts_per_request: f64,
    /// Requests that ended without a success, per request started.
    pub(crate) failed: f64,
    /// Each second's successes per request a second.
    pub(crate) goodput: Vec<f64>,
    /// Each second's attempts sent, per attempt the server could finish a second.
    pub(crate) offered: Vec<f64>,
}

impl Outcome {
    pub(crate) fn recovered(&self) -> bool {
        self.recovery.is_some()
    }
}

/// The runs of an experiment: the sweep's, and the picture's.
pub(crate) struct Results {
    pub(crate) sweep: Vec<Outcome>,
    pub(crate) chart: Vec<Outcome>,
}

impl Experiment {
    /// Every run, spread over `threads` threads.
    pub(crate) fn run(&self, threads: usize) -> Results {
        let mut runs: Vec<(Policy, Trigger, f64)> = Vec::new();
        for &policy in &self.policies {
            for &load in &self.loads {
                for &trigger in &self.triggers {
                    runs.push((policy, trigger, load));
                }
            }
        }
        let swept = runs.len();
        let chart_load = self.loads[0];
        runs.extend(self.policies.iter().map(|&p| (p, self.chart, chart_load)));
        let mut outcomes = run_parallel(runs.len(), threads, |job| {
            let (policy, trigger, load) = runs[job];
            let coordinates = [
                policy as u64,
                trigger.capacity.to_bits(),
                trigger.seconds.to_bits(),
                load.to_bits(),
            ];
            self.simulate(policy, trigger, load, trial_seed(self.seed, &coordinates))
        });
        let chart = outcomes.split_off(swept);
        Results {
            sweep: outcomes,
            chart,
        }
    }

    /// One run of `policy` through `trigger` at `load`, from `seed`.
    pub(crate) fn simulate(
        &self,
        policy: Policy,
        trigger: Trigger,
        load: f64,
        seed: u64,
    ) -> Outcome {
        let mut run = Run::new(self, policy, trigger, load, seed);
        run.until_the_end();
        run.outcome()
    }
}

/// What happens next in a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Event {
    /// The next request starts.
    Arrival,
    /// The request's attempt reaches its time limit unanswered.
    Deadline(u32),
    /// The request's next attempt goes out.
    Send(u32),
}

/// A request in flight.
#[derive(Clone, Debug)]
struct Request {
    host: u32,
    attempts: u32,
    /// The waits before its retries, drawn once it has failed.
    waits: Option<Schedule<Xoshiro256PlusPlus>>,
}

/// The server: one FIFO queue, and the time it will have finished all it was sent.
struct Server {
    trigger: Trigger,
    free_at: f64,
}

impl Server {
    /// When an attempt sent at `now` is finished: after all sent before it, at the capacity of
    /// each moment.
    fn finish(&mut self, now: f64) -> f64 {
        let (start, end) = (BEFORE, self.trigger.end());
        let mut at = self.free_at.max(now);
        let mut work = 1.0 / SIMULATED_CAPACITY;
        if at < start {
            if work <= start - at {
                return self.done(at + work);
            }
            work -= start - at;
            at = start;
        }
        if at < end {
            let slowed = (end - at) * self.trigger.capacity;
            if work <= slowed {
                return self.done(at + work / self.trigger.capacity);
            }
            work -= slowed;
            at = end;
        }
        self.done(at + work)
    }

    fn done(&mut self, at: f64) -> f64 {
        self.free_at = at;
        at
    }
}

/// Counts of a run.
#[derive(Default)]
struct Counts {
    requests: u64,
    attempts: u64,
    failed: u64,
}

/// One run in progress.
struct Run<'a> {
    clients: &'a Clients,
    policy: Policy,
    trigger: Trigger,
    interval: f64,
    end: f64,
    rng: Xoshiro256PlusPlus,
    queue: EventQueue<Event>,
    server: Server,
    requests: Slots<Request>,
    /// This tool's budgets: one per host, or one shared.
    budgets: Vec<Option<BucketState>>,
    /// The ratio policies' terms and the default budget's, [`scaled`] to the model.
    terms: Terms,
    default_terms: Terms,
    counts: Counts,
    /// Successes and attempts sent, each second.
    successes: Vec<u32>,
    sent: Vec<u32>,
}

impl<'a> Run<'a> {
    fn new(
        experiment: &'a Experiment,
        policy: Policy,
        trigger: Trigger,
        load: f64,
        seed: u64,
    ) -> Self {
        let end = trigger.end() + experiment.observe;
        let seconds = end.ceil() as usize;
        let budgets = if policy.shares_a_budget() {
            1
        } else {
            experiment.clients.hosts as usize
        };
        let mut queue = EventQueue::with_capacity(1024);
        queue.push(0.0, Event::Arrival);
        Run {
            clients: &experiment.clients,
            policy,
            trigger,
            interval: 1.0 / (load * SIMULATED_CAPACITY),
            end,
            rng: Xoshiro256PlusPlus::seed_from_u64(seed),
            queue,
            server: Server {
                trigger,
                free_at: 0.0,
            },
            requests: Slots::default(),
            budgets: vec![None; budgets],
            terms: scaled(experiment.clients.terms, experiment.clients.capacity),
            default_terms: scaled(
                experiment.clients.default_terms,
                experiment.clients.capacity,
            ),
            counts: Counts::default(),
            successes: vec![0; seconds],
            sent: vec![0; seconds],
        }
    }

    fn until_the_end(&mut self) {
        while let Some((now, event)) = self.queue.first() {
            if now >= self.end {
                return;
            }
            match event {
                Event::Arrival => {
                    self.queue
                        .replace_first(now + self.interval, Event::Arrival);
                    self.arrive(now);
                }
                Event::Deadline(request) => {
                    self.queue.remove_first();
                    self.timed_out(now, request);
                }
                Event::Send(request) => {
                    self.queue.remove_first();
                    self.send(now, request);
                }
            }
        }
    }

    /// A request starts at `now` on the next host, its first attempt counted by its budget.
    fn arrive(&mut self, now: f64) {
        let host = (self.counts.requests % u64::from(self.clients.hosts)) as u32;
        self.counts.requests += 1;
        if self.policy.earns() {
            let terms = self.terms;
            let state = self.budget_of(host);
            *state = Some(terms.first_attempt(*state, micros(now)));
        }
        let request = self.requests.insert(Request {
            host,
            attempts: 0,
            waits: None,
        });
        self.send(now, request);
    }

    /// The request's next attempt reaches the server at `now`: it succeeds if the server
    /// finishes it within the time limit, else its deadline comes.
    fn send(&mut self, now: f64, request: u32) {
        self.counts.attempts += 1;
        self.requests[request].attempts += 1;
        count(&mut self.sent, now);
        let finished = self.server.finish(now);
        if finished - now <= self.clients.timeout {
            count(&mut self.successes, finished);
            self.requests.release(request);
        } else {
            let deadline = now + self.clients.timeout;
            self.queue.push(deadline, Event::Deadline(request));
        }
    }

    /// The request's attempt timed out at `now`: the policy says whether, and when, it goes again.
    fn timed_out(&mut self, now: f64, request: u32) {
        match self.retry_wait(now, request) {
            Some(wait) if wait <= 0.0 => self.send(now, request),
            Some(wait) => self.queue.push(now + wait, Event::Send(request)),
            None => {
                self.counts.failed += 1;
                self.requests.release(request);
            }
        }
    }

    /// The wait before the request's next attempt, or none if it gives up.
    fn retry_wait(&mut self, now: f64, request: u32) -> Option<f64> {
        let attempts = self.requests[request].attempts;
        let clients = self.clients;
        match self.policy {
            Policy::None => None,
            Policy::Resend => (attempts <= clients.resends).then_some(0.0),
            Policy::BudgetOff => (attempts < clients.max_attempts).then(|| self.backoff(request)),
            Policy::Defaults | Policy::RatioPerHost | Policy::RatioShared => {
                if attempts >= clients.max_attempts {
                    return None;
                }
                let wait = self.backoff(request);
                // A run without --max-time waits for its token, however far ahead.
                let terms = match self.policy {
                    Policy::Defaults => self.default_terms,
                    _ => self.terms,
                };
                let host = self.requests[request].host;
                let state = self.budget_of(host);
                let request = TokenRequest {
                    latest: None,
                    asked: None,
                    longest_hold: Duration::ZERO,
                };
                let (reservation, next) = terms.reserve(*state, micros(now), &request);
                *state = Some(next);
                match reservation {
                    Reservation::Granted(delay) => Some(wait.max(delay.as_secs_f64())),
                    _ => None,
                }
            }
        }
    }

    /// The next wait of the request's own schedule.
    fn backoff(&mut self, request: u32) -> f64 {
        let seed: u64 = self.rng.random();
        let backoff = self.clients.backoff;
        let waits = self.requests[request]
            .waits
            .get_or_insert_with(|| backoff.schedule(Xoshiro256PlusPlus::seed_from_u64(seed)));
        waits.draw().wait.as_secs_f64()
    }

    fn budget_of(&mut self, host: u32) -> &mut Option<BucketState> {
        let index = if self.policy.shares_a_budget() {
            0
        } else {
            host as usize
        };
        &mut self.budgets[index]
    }

    fn outcome(self) -> Outcome {
        let per_second = 1.0 / self.interval;
        let goodput: Vec<f64> = self
            .successes
            .iter()
            .map(|&count| f64::from(count) / per_second)
            .collect();
        let offered = self
            .sent
            .iter()
            .map(|&count| f64::from(count) / SIMULATED_CAPACITY)
            .collect();
        let requests = self.counts.requests.max(1) as f64;
        Outcome {
            policy: self.policy,
            trigger_capacity: self.trigger.capacity,
            trigger_seconds: self.trigger.seconds,
            load: per_second / SIMULATED_CAPACITY,
            recovery: recovery(&goodput, self.trigger.end(), self.end),
            attempts_per_request: self.counts.attempts as f64 / requests,
            failed: self.counts.failed as f64 / requests,
            goodput,
            offered,
        }
    }
}

/// Count an event at `time` in its second, if the run holds that second.
fn count(seconds: &mut [u32], time: f64) {
    if let Some(slot) = seconds.get_mut(time as usize) {
        *slot += 1;
    }
}

/// Seconds from `trigger_end` until `goodput` (per second) was good in every whole second up to
/// `end`, if it was for at least the last [`SETTLED`] of them.
fn recovery(goodput: &[f64], trigger_end: f64, end: f64) -> Option<f64> {
    let first = trigger_end.ceil() as usize;
    let last = (end.floor() as usize).min(goodput.len());
    let mut good_from = last;
    while good_from > first && goodput[good_from - 1] >= GOOD {
        good_from -= 1;
    }
    (last - good_from >= SETTLED).then(|| (good_from as f64 - trigger_end).max(0.0))
}

/// `terms` for the model, whose attempts stand for real ones at the ratio of
/// [`SIMULATED_CAPACITY`] to `real_capacity` (attempts a second): the rate's tokens scaled so,
/// their period stretched where fewer than one would be left, so that the rate stays exact.
pub(crate) fn scaled(terms: Terms, real_capacity: f64) -> Terms {
    let tokens = f64::from(terms.rate.tokens) * SIMULATED_CAPACITY / real_capacity;
    let whole = tokens.round().clamp(1.0, f64::from(u32::MAX));
    Terms {
        rate: Rate {
            tokens: whole as u32,
            period: terms.rate.period.mul_f64(whole / tokens),
        },
        ..terms
    }
}

/// `seconds` in whole microseconds, the budget's unit.
fn micros(seconds: f64) -> u64 {
    (seconds * 1e6) as u64
}

#[cfg(test)]
mod tests {
    use super::*;
    use retry_budget::model::DEFAULT_BUDGET_TERMS;
    use retry_policy::backoff::Jitter;
    use std::time::Duration;

    /// The artifact's client and this tool's defaults, as `retry-sim metastable` has them.
    fn clients() -> Clients {
        Clients {
            timeout: 3.0,
            resends: 4,
            max_attempts: 5,
            backoff: Backoff::new(
                Duration::from_secs(1),
                Duration::from_secs(60),
                2.0,
                Jitter::Full,
            )
            .unwrap(),
            terms: Terms {
                rate: "10/1m".parse().unwrap(),
                ratio: Some(0.1),
                window: Duration::from_secs(60),
                breaker: None,
            },
            default_terms: DEFAULT_BUDGET_TERMS,
            capacity: CAPACITY,
            hosts: 20,
        }
    }

    /// The default capacity, in requests a second.
    const CAPACITY: f64 = 35_000.0;

    /// A request every 75µs, and every 100µs, against the default capacity.
    const LOADS: [f64; 2] = [13_333.3 / CAPACITY, 10_000.0 / CAPACITY];

    fn experiment(policies: &[Policy]) -> Experiment {
        Experiment {
            policies: policies.to_vec(),
            triggers: Vec::new(),
            loads: LOADS.to_vec(),
            clients: clients(),
            observe: 60.0,
            chart: Trigger {
                capacity: 0.2,
                seconds: 10.0,
            },
            seed: 3,
        }
    }

    fn trigger(capacity: f64, seconds: f64) -> Trigger {
        Trigger { capacity, seconds }
    }

    #[test]
    fn immediate_resends_recover_or_not_as_the_papers_four_runs_did() {
        let resend = experiment(&[Policy::Resend]);
        let run = |capacity, seconds, load| {
            resend.simulate(Policy::Resend, trigger(capacity, seconds), load, 1)
        };
        // (a) 0.45 of the 2 CPUs for 10 s recovers; (b) 0.40 does not; (c) 0.40 for 9 s does;
        // (d) 0.40 for 10 s with a request every 100µs does.
        assert!(run(0.225, 10.0, LOADS[0]).recovered());
        let down = run(0.2, 10.0, LOADS[0]);
        assert!(!down.recovered(), "{:?}", down.recovery);
        let overloaded = down.offered.last().unwrap();
        assert!(
            *overloaded > 1.8,
            "every request sent 5 times: {overloaded}"
        );
        assert!(run(0.2, 9.0, LOADS[0]).recovered());
        assert!(run(0.2, 10.0, LOADS[1]).recovered());
    }

    #[test]
    fn without_retries_every_trigger_passes() {
        let none = experiment(&[Policy::None]);
        let outcome = none.simulate(Policy::None, trigger(0.0, 30.0), LOADS[0], 1);
        assert!(outcome.recovered(), "{outcome:?}");
        assert_eq!(outcome.attempts_per_request, 1.0);
    }

    #[test]
    fn backoff_alone_does_not_save_the_service_and_a_budget_does() {
        let policies = [Policy::BudgetOff, Policy::Defaults, Policy::RatioShared];
        let tool = experiment(&policies);
        let late = tool.simulate(Policy::BudgetOff, trigger(0.2, 10.0), LOADS[0], 1);
        assert!(late.recovery.unwrap() > 3.0, "{:?}", late.recovery);
        let off = tool.simulate(Policy::BudgetOff, trigger(0.1, 10.0), LOADS[0], 1);
        assert!(!off.recovered(), "{:?}", off.recovery);
        // The defaults, with the default budget on each host, recover from every trigger of the
        // sweep (`retry-sim metastable`'s own lists).
        for load in LOADS {
            for capacity in [0.3, 0.225, 0.2, 0.1] {
                for seconds in [5.0, 9.0, 10.0, 20.0] {
                    let run = tool.simulate(Policy::Defaults, trigger(capacity, seconds), load, 1);
                    assert!(
                        run.recovered(),
                        "{load} {capacity} {seconds}: {:?}",
                        run.goodput
                    );
                }
            }
        }
        for (capacity, seconds) in [(0.2, 10.0), (0.1, 20.0), (0.0, 30.0)] {
            let shared =
                tool.simulate(Policy::RatioShared, trigger(capacity, seconds), LOADS[0], 1);
            assert!(
                shared.recovered(),
                "{capacity} {seconds}: {:?}",
                shared.goodput
            );
            let most = 1.1 + 100.0 / (shared.goodput.len() as f64 * LOADS[0] * SIMULATED_CAPACITY);
            assert!(
                shared.attempts_per_request <= most,
                "{}",
                shared.attempts_per_request
            );
        }
    }

    #[test]
    fn default_budgets_on_a_few_machines_save_a_small_service_and_on_many_do_not() {
        // The live bench's scale: 10 requests a second against a service of 26.3 a second.
        let capacity = 26.3;
        let mut live = experiment(&[Policy::Defaults]);
        live.loads = vec![10.0 / capacity];
        live.clients.capacity = capacity;
        let run = |live: &Experiment| {
            live.simulate(Policy::Defaults, trigger(0.2, 20.0), live.loads[0], 1)
        };
        live.clients.hosts = 1;
        let one = run(&live).recovery;
        assert!(
            one.is_some_and(|seconds| seconds < 10.0),
            "one machine's clients: {one:?}"
        );
        live.clients.hosts = 50;
        let many = run(&live).recovery;
        assert!(
            many.is_none(),
            "fifty machines' bursts of 20 retries each: {many:?}"
        );
    }

    #[test]
    fn scaled_terms_keep_the_rate() {
        let terms = |rate: &str| Terms {
            rate: rate.parse().unwrap(),
            ratio: None,
            window: Duration::from_secs(60),
            breaker: None,
        };
        let per_second =
            |terms: Terms| f64::from(terms.rate.tokens) / terms.rate.period.as_secs_f64();
        let live = scaled(terms("20/5m"), 26.3);
        assert_eq!(live.rate.tokens, 1521);
        assert!((per_second(live) - 20.0 / 300.0 * 2000.0 / 26.3).abs() < 1e-6);
        let artifact = scaled(terms("20/5m"), 35_000.0);
        assert_eq!(artifact.rate.tokens, 1, "never less than a token");
        assert!((per_second(artifact) - 20.0 / 300.0 * 2000.0 / 35_000.0).abs() < 1e-9);
    }

    #[test]
    fn the_same_seed_gives_the_same_run() {
        let tool = experiment(&[Policy::RatioPerHost]);
        let run = |seed| tool.simulate(Policy::RatioPerHost, trigger(0.2, 10.0), LOADS[0], seed);
        assert_eq!(run(5), run(5));
        assert_ne!(run(5).offered, run(6).offered);
    }

    #[test]
    fn the_server_slows_only_during_the_trigger() {
        let mut server = Server {
            trigger: trigger(0.5, 10.0),
            free_at: 0.0,
        };
        let work = 1.0 / SIMULATED_CAPACITY;
        assert_eq!(server.finish(1.0), 1.0 + work);
        assert_eq!(server.finish(BEFORE), BEFORE + 2.0 * work);
        server.free_at = BEFORE + 10.0 - work / 2.0;
        let finished = server.finish(0.0);
        assert!((finished - (BEFORE + 10.0 + 0.75 * work)).abs() < 1e-9);
        let mut outage = Server {
            trigger: trigger(0.0, 10.0),
            free_at: 0.0,
        };
        assert_eq!(outage.finish(BEFORE + 1.0), BEFORE + 10.0 + work);
    }

    #[test]
    fn recovery_is_from_the_trigger_to_the_second_it_is_good_for_good() {
        let mut goodput = vec![1.0; 100];
        assert_eq!(recovery(&goodput, 70.0, 100.0), Some(0.0));
        goodput[70..75].fill(0.2);
        assert_eq!(recovery(&goodput, 70.0, 100.0), Some(5.0));
        goodput[95] = 0.5;
        assert_eq!(recovery(&goodput, 70.0, 100.0), None, "not good at the end");
        goodput[95] = 1.0;
        goodput[70..91].fill(0.0);
        assert_eq!(recovery(&goodput, 70.0, 100.0), None, "good for only 9 s");
    }
}
