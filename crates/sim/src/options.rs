//! The options of `retry-sim`: the contention experiment's (the default, also `retry
//! simulate contention`), the load experiment's (`retry-sim load`) and the metastable one's
//! (`retry-sim metastable`), with their help, and their resolution into the [`Settings`]
//! of a simulation, checked to stay within bounds.

use std::path::PathBuf;
use std::str::FromStr;
use std::time::Duration;

use super::contention::parse_clients;
use super::load::{BudgetPolicy, Policy};
use super::metastable::{self, Clients, SIMULATED_CAPACITY, Trigger};
use super::{Experiment as Simulation, Settings, contention, load};
use crate::examples;
use crate::refusal::Refusal;
use retry_budget::Ratio;
use retry_budget::model::Rate;
use retry_budget::model::{DEFAULT_BUDGET_TERMS, Terms};
use retry_policy::backoff::{Backoff, DEFAULT_MULTIPLIER, Jitter, parse_multiplier};
use retry_policy::causes::parsed;
use retry_policy::choice::Choice;
use retry_policy::duration::parse_duration;
use retry_policy::examples::examples_text;
use retry_policy::numbers::whole_number;

pub(crate) const CONTENTION_ABOUT: &str = "\
Rerun the contention experiment of the AWS Architecture Blog post \"Exponential Backoff And \
Jitter\" (2015) with this tool's own backoff code, and compare the strategies as a table, a CSV \
file and a chart.

The model: N clients each update one database row under optimistic concurrency, all starting \
at once. A client reads the row's version, then writes it back; the write succeeds only if the \
version is still current. On failure the client waits as its backoff says and reads again. \
Every one-way message takes |Normal(10ms, 2ms)|. Work is the number of writes; completion time \
is when the last client succeeds. A \"no backoff\" baseline (retry at once) is always shown.

The original counted the first retry as attempt 1 with base 5ms, so its first exponential wait \
was 10ms: with this tool's convention (first wait = base) that is --base 10ms for none, full \
and equal jitter. Its decorrelated jitter started from 5ms: --base 5ms.

Also `retry-sim contention`; `retry-sim load` runs the experiment on retries and load, and \
`retry-sim metastable` the one on a service that load can hold down.";

const LOAD_ABOUT: &str = "\
Rerun the experiment behind Marc Brooker's \"Fixing retries with token buckets and circuit \
breakers\" (2022), with this tool's own backoff schedule and budget arithmetic, to see what \
retries do to the load on a failing service and what keeps a retry storm down.

The model, as his simulator's: every network hop takes Exp(10ms); the server fails each call \
independently with the failure rate, whatever its load. Open-loop clients start requests at \
Poisson moments, --rate each; serial clients (--serial) keep one request in flight. After a failed \
call the policy decides: none never retries; retries retries up to --retries times; bucket is \
Brooker's adaptive token bucket (per client: 0.1 token per first try, 1 per retry, capacity 5, a \
retry needs more than 1); budget is this tool's --budget, applied by the code a run uses, up to \
--retries times, each retry taking a token that is there at once. After --duration no request \
starts, and those in flight run to their end. Success is successes per first try; load is server \
calls per first try.";

const METASTABLE_ABOUT: &str = "\
Rerun the retry experiment of Huang et al., \"Metastable Failures in the Wild\" (OSDI 2022; \
artifact lexiangh/Metastability, Retry_Metastability/), in which a short drop in a server's \
capacity makes requests time out, clients send them again, and the resends keep the server \
overloaded after the drop is over; then the same with this tool's backoff and budget code \
deciding the retries.

The model, as the artifact's: open-loop clients start a request at a fixed interval (75us and \
100us, as its runs), each attempt with a 3s time limit; the server works through one FIFO queue \
at a finite rate (--capacity) and finishes every attempt it was sent, even one its client \
stopped waiting for. After 60s its capacity drops to each --trigger-capacities fraction for each \
--trigger-seconds (the artifact's runs: 0.45 and 0.40 of the primary's 2 CPUs, for 10s and 9s). \
A run has recovered when goodput is back to 90% of the requests from some second after the \
trigger to the end of --observe, at least its last 10s.

The policies: none; resend, the artifact's client (4 resends at once); defaults, this tool's \
(--max-attempts 5, --base 1s, --cap 60s, full jitter, and the default budget of 20 retries in 5m \
on each client host, --hosts); budget-off, the same without the budget; ratio-per-host and \
ratio-shared, the defaults with a budget that earns --budget-ratio 0.1, one per client host or \
one for the fleet. A budget's tokens count real attempts: they are scaled to the model's \
(which runs at 2000 attempts a second) by the --capacity. The table marks each run with the \
seconds it took to recover, or down.";

/// `retry-sim`: the contention experiment, unless a subcommand names one.
#[derive(clap::Parser, Debug)]
#[command(
    name = "retry-sim",
    version,
    about = "Rerun the experiments behind retry's defaults, with its own code.",
    long_about = CONTENTION_ABOUT,
    after_help = examples_text(&examples::CONTENTION),
    args_conflicts_with_subcommands = true,
    disable_help_subcommand = true,
    max_term_width = 100
)]
pub struct SimulateCommand {
    #[command(subcommand)]
    pub(crate) experiment: Option<Experiment>,

    #[command(flatten)]
    pub(crate) contention: ContentionArgs,
}

/// The experiments `retry-sim` runs.
#[derive(clap::Subcommand, Debug)]
pub(crate) enum Experiment {
    /// Rerun the AWS "Exponential Backoff And Jitter" contention experiment (the default).
    #[command(long_about = CONTENTION_ABOUT, after_help = examples_text(&examples::CONTENTION))]
    Contention(ContentionArgs),
    /// Rerun Brooker's retries-and-load experiment, with this tool's budget among the policies.
    #[command(long_about = LOAD_ABOUT, after_help = examples_text(&examples::LOAD))]
    Load(LoadArgs),
    /// Rerun the OSDI 2022 metastable-failure experiment, with this tool's retries among the clients.
    #[command(long_about = METASTABLE_ABOUT, after_help = examples_text(&examples::METASTABLE))]
    Metastable(MetastableArgs),
}

/// The options of the metastable experiment.
#[derive(clap::Args, Debug)]
pub(crate) struct MetastableArgs {
    /// Compare these policies (a comma-separated list of none, resend, defaults, budget-off, ratio-per-host and ratio-shared).
    #[arg(
        long,
        value_name = "LIST",
        value_delimiter = ',',
        default_value = "resend,defaults,budget-off,ratio-per-host,ratio-shared",
        hide_possible_values = true
    )]
    pub(crate) policies: Vec<metastable::Policy>,

    /// Drop the server's capacity to each of these fractions of itself (0 to 1; 0.225 and 0.2 are the artifact's 0.45 and 0.40 of 2 CPUs).
    #[arg(long, value_name = "LIST", default_value = "0.3,0.225,0.2,0.1")]
    pub(crate) trigger_capacities: Fractions,

    /// Drop it for each of these durations, 60s into the run (e.g. 9s,10s).
    #[arg(long, value_name = "LIST", default_value = "5s,9s,10s,20s")]
    pub(crate) trigger_seconds: Durations,

    /// Start a request every DURATION, for each in the list (the artifact's: 75us, and 100us for less load).
    #[arg(long, value_name = "LIST", default_value = "75us,100us")]
    pub(crate) intervals: Durations,

    /// The requests a second the server finishes at full capacity; the default puts the artifact's four outcomes where it found them.
    #[arg(long, value_name = "N/DURATION", default_value = "35000/s")]
    pub(crate) capacity: RequestRate,

    /// Each attempt's time limit (the artifact's 3s).
    #[arg(long, value_name = "DURATION", default_value = "3s", value_parser = parse_duration, allow_hyphen_values = true)]
    pub(crate) timeout: Duration,

    /// The resend policy's most resends per request (the artifact's 4).
    #[arg(long, value_name = "N", default_value = "4", value_parser = whole_number(0..=100u32))]
    pub(crate) resends: u32,

    /// This tool's policies' most attempts per request, as retry's --max-attempts.
    #[arg(long, value_name = "N", default_value = "5", value_parser = whole_number(1..=100u32))]
    pub(crate) max_attempts: u32,

    /// This tool's policies' first wait, as retry's --base.
    #[arg(long, value_name = "DURATION", default_value = "1s", value_parser = parse_duration, allow_hyphen_values = true)]
    pub(crate) base: Duration,

    /// This tool's policies' longest wait, as retry's --cap.
    #[arg(long, value_name = "DURATION", default_value = "60s", value_parser = parse_duration, allow_hyphen_values = true)]
    pub(crate) cap: Duration,

    /// This tool's policies' jitter, as retry's --jitter: none, full, equal or decorrelated.
    #[arg(
        long,
        value_name = "STRATEGY",
        default_value = "full",
        value_parser = parse_jitter
    )]
    pub(crate) jitter: Jitter,

    #[command(flatten)]
    pub(crate) budget: BudgetArgs,

    /// Spread the requests over N client hosts, in turn; ratio-per-host gives each a budget.
    #[arg(long, value_name = "N", default_value = "20", value_parser = whole_number(1..=10_000u32))]
    pub(crate) hosts: u32,

    /// Go on for DURATION after the trigger, to see whether the service recovers (at least 10s).
    #[arg(long, value_name = "DURATION", default_value = "1m", value_parser = parse_duration, allow_hyphen_values = true)]
    pub(crate) observe: Duration,

    /// Draw goodput and load over time, in the SVG, for this trigger at the first interval: CAPACITY:DURATION.
    #[arg(long, value_name = "CAPACITY:DURATION", value_parser = parsed::<ChartTrigger>, default_value = "0.2:10s")]
    pub(crate) chart_trigger: ChartTrigger,

    #[command(flatten)]
    pub(crate) output: Outputs,
}

/// The options of the load experiment.
#[derive(clap::Args, Debug)]
pub(crate) struct LoadArgs {
    /// Simulate these failure rates: the server's probability of failing a call, each from 0 to 1.
    #[arg(
        long,
        value_name = "LIST",
        default_value = "0,0.001,0.005,0.01,0.02,0.05,0.075,0.1,0.2,0.3,0.5,0.75,1"
    )]
    pub(crate) failure_rates: FailureRates,

    /// Compare these policies (a comma-separated list of none, retries, bucket and budget).
    #[arg(
        long,
        value_name = "LIST",
        value_delimiter = ',',
        default_value = "none,retries,bucket,budget",
        hide_possible_values = true
    )]
    pub(crate) policies: Vec<Policy>,

    /// The most retries per request, for retries and budget.
    #[arg(long, value_name = "N", default_value = "3", value_parser = whole_number(0..=1000u32))]
    pub(crate) retries: u32,

    /// Simulate N clients.
    #[arg(long, value_name = "N", default_value = "100", value_parser = whole_number(1..=100_000u32))]
    pub(crate) clients: u32,

    /// Requests each client starts, on average, per unit of time (e.g. 10/s, 600/1m).
    #[arg(long, value_name = "N/DURATION", default_value = "10/s")]
    pub(crate) rate: RequestRate,

    /// Serial (closed-loop) clients: each keeps one request in flight, instead of starting them at Poisson moments.
    #[arg(long)]
    pub(crate) serial: bool,

    /// Wait between a request's retries as this tool's backoff says (--base, --jitter, a cap of 1m).
    #[arg(long)]
    pub(crate) backoff: bool,

    /// With --backoff, the first wait, and the scale of the others.
    #[arg(long, value_name = "DURATION", default_value = "100ms", value_parser = parse_duration, allow_hyphen_values = true)]
    pub(crate) base: Duration,

    /// With --backoff, the jitter: none, full, equal or decorrelated.
    #[arg(
        long,
        value_name = "STRATEGY",
        default_value = "full",
        value_parser = parse_jitter
    )]
    pub(crate) jitter: Jitter,

    #[command(flatten)]
    pub(crate) budget: BudgetArgs,

    /// One budget shared by every client, as a fleet shares one on Redis, instead of one each.
    #[arg(long)]
    pub(crate) shared: bool,

    /// How long clients start requests; those in flight then run to their end.
    #[arg(long, value_name = "DURATION", default_value = "40s", value_parser = parse_duration, allow_hyphen_values = true)]
    pub(crate) duration: Duration,

    /// Run N trials per policy and failure rate; the table reports their mean and spread.
    #[arg(long, value_name = "N", default_value = "2", value_parser = whole_number(1..=1000u32))]
    pub(crate) trials: u32,

    #[command(flatten)]
    pub(crate) output: Outputs,
}

/// The terms of the simulated budget, as a run's.
#[derive(clap::Args, Debug)]
pub(crate) struct BudgetArgs {
    /// The budget's rate, as retry budget set --rate gives it: at most N tokens, N more every DURATION.
    #[arg(long, value_name = "N/DURATION", value_parser = parsed::<Rate>, default_value = "10/1m")]
    pub(crate) budget_rate: Rate,

    /// The budget's ratio, as retry budget set --ratio gives it: tokens earned per first try.
    #[arg(long, value_name = "R", default_value = "0.1")]
    pub(crate) budget_ratio: Ratio,

    /// The budget's window, as retry budget set --window gives it: how long earned tokens last.
    #[arg(long, value_name = "DURATION", default_value = "1m", value_parser = parse_duration, allow_hyphen_values = true)]
    pub(crate) budget_window: Duration,
}

impl BudgetArgs {
    /// The terms, with a window of more than 0s.
    fn terms(&self) -> Result<Terms, Refusal> {
        if self.budget_window.is_zero() {
            return Err(Refusal::ZeroDuration("--budget-window"));
        }
        Ok(Terms {
            rate: self.budget_rate,
            ratio: Some(self.budget_ratio.0),
            window: self.budget_window,
            breaker: None,
        })
    }
}

/// The seed and the files of either experiment.
#[derive(clap::Args, Debug)]
pub(crate) struct Outputs {
    /// Seed the simulation (0 to 2^64-1) for reproducible results, whatever the number of threads; default: random.
    #[arg(long, value_name = "N")]
    pub(crate) seed: Option<u64>,

    /// Also write every statistic to FILE as CSV, one row per point of the table.
    #[arg(long, value_name = "FILE")]
    pub(crate) csv: Option<PathBuf>,

    /// Also draw the table's means to FILE as SVG, one line per strategy or policy.
    #[arg(long, value_name = "FILE")]
    pub(crate) svg: Option<PathBuf>,
}

/// `--failure-rates`: probabilities, from 0 to 1.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct FailureRates(pub Vec<f64>);

/// The most failure rates one run may simulate.
const MAX_FAILURE_RATES: usize = 100;

impl FromStr for FailureRates {
    type Err = Refusal;

    fn from_str(text: &str) -> Result<Self, Refusal> {
        let rates = text
            .split(',')
            .map(|word| match word.trim().parse::<f64>() {
                Ok(rate) if (0.0..=1.0).contains(&rate) => Ok(rate),
                _ => Err(Refusal::NotAFailureRate(word.to_string())),
            })
            .collect::<Result<Vec<f64>, Refusal>>()?;
        match rates.len() {
            0..=MAX_FAILURE_RATES => Ok(FailureRates(rates)),
            count => Err(Refusal::TooManyFailureRates {
                count,
                most: MAX_FAILURE_RATES,
            }),
        }
    }
}

/// `--rate N/DURATION`: requests per second, per client.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct RequestRate(pub f64);

impl FromStr for RequestRate {
    type Err = Refusal;

    fn from_str(text: &str) -> Result<Self, Refusal> {
        let (count, unit) = text.split_once('/').ok_or(Refusal::NotARate)?;
        let count = match count.trim().parse::<f64>() {
            Ok(count) if count.is_finite() && count > 0.0 => count,
            _ => return Err(Refusal::NotARateCount(count.to_string())),
        };
        let unit = unit.trim();
        // A bare unit (`s`) is one of it.
        let period = parse_duration(unit).or_else(|_| parse_duration(&format!("1{unit}")));
        match period {
            Ok(period) if !period.is_zero() => Ok(RequestRate(count / period.as_secs_f64())),
            _ => Err(Refusal::NotAPeriod(unit.to_string())),
        }
    }
}

/// A comma-separated list of fractions, each from 0 to 1.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Fractions(pub Vec<f64>);

impl FromStr for Fractions {
    type Err = Refusal;

    fn from_str(text: &str) -> Result<Self, Refusal> {
        text.split(',')
            .map(|word| match word.trim().parse::<f64>() {
                Ok(fraction) if (0.0..=1.0).contains(&fraction) => Ok(fraction),
                _ => Err(Refusal::NotAFraction(word.to_string())),
            })
            .collect::<Result<_, _>>()
            .map(Fractions)
    }
}

/// A comma-separated list of durations, each more than 0s and at most an hour.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Durations(pub Vec<Duration>);

impl FromStr for Durations {
    type Err = Refusal;

    fn from_str(text: &str) -> Result<Self, Refusal> {
        text.split(',')
            .map(|word| match parse_duration(word.trim()) {
                Ok(duration) if !duration.is_zero() && duration <= HOUR => Ok(duration),
                _ => Err(Refusal::NotAShortDuration(word.to_string())),
            })
            .collect::<Result<_, _>>()
            .map(Durations)
    }
}

const HOUR: Duration = Duration::from_secs(3600);

/// `--chart-trigger CAPACITY:DURATION`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct ChartTrigger(pub Trigger);

impl FromStr for ChartTrigger {
    type Err = Refusal;

    fn from_str(text: &str) -> Result<Self, Refusal> {
        let part = |err: Refusal| Refusal::NotATrigger(Some(Box::new(err)));
        let (capacity, seconds) = text.split_once(':').ok_or(Refusal::NotATrigger(None))?;
        let Fractions(capacity) = capacity.parse().map_err(part)?;
        let Durations(seconds) = seconds.parse().map_err(part)?;
        match (&capacity[..], &seconds[..]) {
            ([capacity], [seconds]) => Ok(ChartTrigger(Trigger {
                capacity: *capacity,
                seconds: seconds.as_secs_f64(),
            })),
            _ => Err(Refusal::NotATrigger(None)),
        }
    }
}

/// A `--jitter` strategy, by the name `retry --jitter` takes.
fn parse_jitter(text: &str) -> Result<Jitter, Refusal> {
    Jitter::named(text).ok_or_else(|| {
        let names: Vec<&str> = Jitter::ALL.iter().map(|jitter| jitter.name()).collect();
        Refusal::UnknownJitter(names.join(", "))
    })
}

impl Outputs {
    /// `--seed`, or one drawn from the operating system.
    fn seed(&self) -> u64 {
        self.seed.unwrap_or_else(|| {
            use rand::TryRng;
            rand::rngs::SysRng.try_next_u64().unwrap_or_default()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failure_rates_are_probabilities() {
        let rates: FailureRates = "0, 0.5,1".parse().unwrap();
        assert_eq!(rates.0, [0.0, 0.5, 1.0]);
        for bad in ["", "-0.1", "1.5", "x", "0,,1", "NaN"] {
            assert!(bad.parse::<FailureRates>().is_err(), "{bad}");
        }
        assert!(vec!["0.5"; 101].join(",").parse::<FailureRates>().is_err());
    }

    #[test]
    fn request_rates_have_a_period() {
        assert_eq!("10/s".parse::<RequestRate>().ok(), Some(RequestRate(10.0)));
        assert_eq!(
            "600/1m".parse::<RequestRate>().ok(),
            Some(RequestRate(10.0))
        );
        assert_eq!(
            "1/100ms".parse::<RequestRate>().ok(),
            Some(RequestRate(10.0))
        );
        for bad in ["10", "0/s", "-1/s", "x/s", "10/0s", "10/x", "inf/s"] {
            assert!(bad.parse::<RequestRate>().is_err(), "{bad}");
        }
    }

    /// The settings `retry-sim ARGS` resolves to.
    fn settings(args: &[&str]) -> Result<Settings, Refusal> {
        use clap::{Args, FromArgMatches};
        let command = SimulateCommand::augment_args(clap::Command::new("simulate"));
        let matches =
            command.try_get_matches_from(std::iter::once("simulate").chain(args.iter().copied()));
        SimulateCommand::from_arg_matches(&matches?)?.settings()
    }

    #[test]
    fn simulate_gets_its_own_settings() {
        let simulation = settings(&["--clients", "3", "--trials", "2", "--seed", "4"]).unwrap();
        let contention = |settings: &Settings| match &settings.experiment {
            Simulation::Contention(experiment) => experiment.clone(),
            _ => panic!("not the contention experiment"),
        };
        let experiment = contention(&simulation);
        assert_eq!((experiment.clients, experiment.seed), (vec![3], 4));
        let named = settings(&["contention", "--clients", "3", "--seed", "4"]).unwrap();
        assert_eq!(contention(&named).clients, [3]);
        let err = settings(&["--base", "5s", "--cap", "1s"]).unwrap_err();
        assert!(err.to_string().contains("--cap (1s)"));
    }

    #[test]
    fn the_load_experiment_gets_its_own_settings_within_limits() {
        let load = settings(&[
            "load",
            "--shared",
            "--backoff",
            "--policies",
            "budget,budget",
        ]);
        let Simulation::Load(experiment) = load.unwrap().experiment else {
            panic!("not the load experiment")
        };
        assert_eq!(experiment.policies, [Policy::Budget]);
        assert!(experiment.budget.shared && experiment.backoff.is_some());
        assert_eq!(
            (experiment.failure_rates.len(), experiment.rate),
            (13, 10.0)
        );
        let too_large = settings(&["load", "--clients", "100000", "--duration", "1h"]);
        assert!(too_large.unwrap_err().to_string().contains("too large"));
        let resolve_load = |args: &[&str]| settings(&[&["load"], args].concat());
        let first_tries = |duration| {
            resolve_load(&[
                "--clients",
                "1000",
                "--rate",
                "100/s",
                "--duration",
                duration,
            ])
        };
        assert!(first_tries("100s").is_ok(), "10^7 first tries a trial");
        assert!(first_tries("101s").is_err());
        let trials = |count: usize| {
            let rates: Vec<String> = (0..count).map(|i| format!("0.0{i}")).collect();
            resolve_load(&["--failure-rates", &rates.join(","), "--trials", "1000"])
        };
        assert!(
            trials(25).is_ok(),
            "25 rates, 4 policies, 1000 trials: 10^5"
        );
        assert!(trials(26).is_err());
        let zero = settings(&["load", "--duration", "0s"]).unwrap_err();
        assert!(
            zero.to_string()
                .contains("--duration (0s) must be more than 0s")
        );
    }
}

/// The options of the contention experiment.
#[derive(clap::Args, Debug)]
pub(crate) struct ContentionArgs {
    /// Simulate these client counts: a list, or ranges with a step (e.g. 10,50,100 or 10-190/10).
    #[arg(
        long,
        value_name = "LIST",
        default_value = "10-190/10",
        allow_hyphen_values = true
    )]
    pub(crate) clients: ClientCounts,

    /// Compare these jitter strategies (a comma-separated list); the no-backoff baseline is always shown.
    #[arg(
        long,
        value_name = "LIST",
        value_delimiter = ',',
        default_value = "none,full,equal,decorrelated",
        value_parser = parse_jitter
    )]
    pub(crate) jitter: Vec<Jitter>,

    /// The first wait, and the scale of the others (e.g. 5ms).
    #[arg(long, value_name = "DURATION", default_value = "10ms", value_parser = parse_duration, allow_hyphen_values = true)]
    pub(crate) base: Duration,

    /// The longest single wait.
    #[arg(long, value_name = "DURATION", default_value = "2s", value_parser = parse_duration, allow_hyphen_values = true)]
    pub(crate) cap: Duration,

    /// Growth of the longest possible wait per retry; a number of at least 1.
    #[arg(long, value_name = "FACTOR", default_value = "2", value_parser = parse_multiplier, allow_hyphen_values = true)]
    pub(crate) multiplier: f64,

    /// Run N trials per strategy and client count; the table reports their mean and spread.
    #[arg(long, value_name = "N", default_value = "100", value_parser = whole_number(1..=100_000u32))]
    pub(crate) trials: u32,

    #[command(flatten)]
    pub(crate) output: Outputs,
}

/// `--clients`: the client counts to simulate.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ClientCounts(pub Vec<u32>);

impl std::str::FromStr for ClientCounts {
    type Err = Refusal;

    fn from_str(text: &str) -> Result<Self, Refusal> {
        parse_clients(text).map(ClientCounts)
    }
}

impl SimulateCommand {
    /// The simulation these options ask for, within the bounds that keep a run from taking
    /// hours or all memory; the error says which option is out of bounds and why.
    pub fn settings(self) -> Result<Settings, Refusal> {
        match self.experiment {
            Some(Experiment::Load(args)) => args.settings(),
            Some(Experiment::Contention(args)) => args.settings(),
            Some(Experiment::Metastable(args)) => args.settings(),
            None => self.contention.settings(),
        }
    }
}

/// The most trials one run of the contention experiment may hold results for, all strategies
/// and client counts together.
const CONTENTION_TRIALS: usize = 1_000_000;

impl ContentionArgs {
    fn settings(self) -> Result<Settings, Refusal> {
        let backoff = Backoff::new(self.base, self.cap, self.multiplier, Jitter::None)?;
        let mut jitters: Vec<Jitter> = Vec::new();
        for jitter in self.jitter {
            if !jitters.contains(&jitter) {
                jitters.push(jitter);
            }
        }
        // The no-backoff baseline is always simulated too.
        let trials = (jitters.len() + 1) * self.clients.0.len() * self.trials as usize;
        if trials > CONTENTION_TRIALS {
            return Err(Refusal::ContentionTooLarge {
                trials,
                most: CONTENTION_TRIALS,
            });
        }
        Ok(Settings {
            experiment: Simulation::Contention(contention::Experiment {
                clients: self.clients.0,
                jitters,
                backoff,
                trials: self.trials,
                seed: self.output.seed(),
            }),
            csv: self.output.csv,
            svg: self.output.svg,
        })
    }
}

/// The most first tries one trial of the load experiment may simulate, and the most trials one
/// run may: beyond them a run would take hours.
const LOAD_LIMITS: (f64, usize) = (10_000_000.0, 100_000);

impl LoadArgs {
    fn settings(self) -> Result<Settings, Refusal> {
        let terms = self.budget.terms()?;
        if self.duration.is_zero() {
            return Err(Refusal::ZeroDuration("--duration"));
        }
        let duration = self.duration.as_secs_f64();
        let first_tries = f64::from(self.clients) * self.rate.0 * duration;
        let trials = self.failure_rates.0.len() * self.policies.len() * self.trials as usize;
        if first_tries > LOAD_LIMITS.0 || trials > LOAD_LIMITS.1 {
            return Err(Refusal::LoadTooLarge {
                first_tries,
                most_first_tries: LOAD_LIMITS.0,
                trials,
                most_trials: LOAD_LIMITS.1,
            });
        }
        let cap = self.base.max(std::time::Duration::from_secs(60));
        let backoff = Backoff::new(self.base, cap, DEFAULT_MULTIPLIER, self.jitter)?;
        let mut policies = self.policies;
        policies.dedup();
        Ok(Settings {
            experiment: Simulation::Load(load::Experiment {
                failure_rates: self.failure_rates.0,
                policies,
                retries: self.retries,
                clients: self.clients,
                rate: self.rate.0,
                serial: self.serial,
                backoff: self.backoff.then_some(backoff),
                budget: BudgetPolicy {
                    terms,
                    shared: self.shared,
                },
                duration,
                trials: self.trials,
                seed: self.output.seed(),
            }),
            csv: self.output.csv,
            svg: self.output.svg,
        })
    }
}

/// The most requests all the runs of one metastable experiment may start: beyond it a run would
/// take minutes.
const METASTABLE_REQUESTS: f64 = 20_000_000.0;

impl MetastableArgs {
    fn settings(self) -> Result<Settings, Refusal> {
        let terms = self.budget.terms()?;
        if self.timeout.is_zero() {
            return Err(Refusal::ZeroDuration("--timeout"));
        }
        if self.observe < Duration::from_secs(10) || self.observe > HOUR {
            let observe = retry_policy::duration::format_duration(self.observe);
            return Err(Refusal::ObserveOutOfRange(observe));
        }
        let loads: Vec<f64> = (self.intervals.0.iter())
            .map(|interval| 1.0 / interval.as_secs_f64() / self.capacity.0)
            .collect();
        if let Some(&load) = loads.iter().find(|&&load| load > 10.0) {
            return Err(Refusal::LoadTooHigh(load));
        }
        let mut policies = self.policies;
        policies.dedup();
        let triggers: Vec<Trigger> = (self.trigger_capacities.0.iter())
            .flat_map(|&capacity| {
                (self.trigger_seconds.0.iter()).map(move |seconds| Trigger {
                    capacity,
                    seconds: seconds.as_secs_f64(),
                })
            })
            .collect();
        let longest = self
            .trigger_seconds
            .0
            .iter()
            .max()
            .copied()
            .unwrap_or_default();
        let seconds = metastable::BEFORE + (longest + self.observe).as_secs_f64();
        let load_sum: f64 = loads.iter().sum();
        let runs = (policies.len() * (triggers.len() + 1)) as f64;
        let requests = runs * load_sum * SIMULATED_CAPACITY * seconds;
        if requests > METASTABLE_REQUESTS {
            return Err(Refusal::MetastableTooLarge {
                requests,
                most: METASTABLE_REQUESTS,
            });
        }
        let backoff = Backoff::new(self.base, self.cap, DEFAULT_MULTIPLIER, self.jitter)?;
        Ok(Settings {
            experiment: Simulation::Metastable(metastable::Experiment {
                policies,
                triggers,
                loads,
                clients: Clients {
                    timeout: self.timeout.as_secs_f64(),
                    resends: self.resends,
                    max_attempts: self.max_attempts,
                    backoff,
                    terms,
                    default_terms: DEFAULT_BUDGET_TERMS,
                    capacity: self.capacity.0,
                    hosts: self.hosts,
                },
                observe: self.observe.as_secs_f64(),
                chart: self.chart_trigger.0,
                seed: self.output.seed(),
            }),
            csv: self.output.csv,
            svg: self.output.svg,
        })
    }
}
