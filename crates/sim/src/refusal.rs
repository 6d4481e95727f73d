//! Every value and combination of options the simulators refuse: one type, whose variants a
//! caller can match, with each message written beside its variant, as retry-policy's `Error`
//! does. A message is one line that says what was wrong, with which value, and what would be
//! accepted; a refusal that comes from retry-policy's checks keeps it as its source.

/// What a failure rate, a request rate, a list or a trigger may be, for messages.
const FAILURE_RATES: &str = "expected probabilities from 0 to 1, e.g. 0,0.1,0.5,1";
const RATE: &str = "expected N/DURATION with N more than 0, e.g. 10/s or 600/1m";
const TRIGGER: &str = "expected CAPACITY:DURATION, e.g. 0.2:10s";
const CLIENTS: &str = "expected client counts and ranges, e.g. 10,50,100 or 10-190/10";

/// What the simulators refuse.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
#[allow(
    missing_docs,
    reason = "a field is the value its variant's message names"
)]
pub enum Refusal {
    /// A failure rate that is not a probability, as written.
    #[error("'{0}' is not a failure rate; {FAILURE_RATES}")]
    NotAFailureRate(String),
    /// More failure rates than one run simulates: how many, and the most.
    #[error("{count} failure rates; at most {most} are simulated in one run")]
    TooManyFailureRates { count: usize, most: usize },
    /// A request rate without its `/DURATION`.
    #[error("{RATE}")]
    NotARate,
    /// A request rate's count that is not a number more than 0, as written.
    #[error("'{0}' is not a number more than 0; {RATE}")]
    NotARateCount(String),
    /// A request rate's period that is not one, as written.
    #[error("'{0}' is not a period; {RATE}")]
    NotAPeriod(String),
    /// A fraction that is not from 0 to 1, as written.
    #[error("'{0}' is not a fraction from 0 to 1; expected a list, e.g. 0.225,0.2")]
    NotAFraction(String),
    /// A duration that is not from 1ns to 1h, as written.
    #[error("'{0}' is not a duration from 1ns to 1h; expected a list, e.g. 9s,10s")]
    NotAShortDuration(String),
    /// A chart trigger that is not `CAPACITY:DURATION`, and what was wrong with a part of it.
    #[error("not a trigger; {TRIGGER}")]
    NotATrigger(#[source] Option<Box<Refusal>>),
    /// A jitter that is not one of the names, which the message lists.
    #[error("expected one of: {0}")]
    UnknownJitter(String),
    /// A client count that is not one, as written.
    #[error("'{0}' is not a client count of at least 1; {CLIENTS}")]
    NotAClientCount(String),
    /// A client count above the most one point simulates, as written, and the most.
    #[error("'{count}' is more than {most} clients, the most one point may simulate")]
    TooManyClients { count: String, most: u32 },
    /// A range of client counts that runs backwards, as written.
    #[error("range {0} runs backwards; {CLIENTS}")]
    BackwardsRange(String),
    /// A range of client counts that gives more than one run simulates.
    #[error("range {range} gives {points} client counts; at most {most} are simulated in one run")]
    RangeTooLong {
        range: String,
        points: usize,
        most: usize,
    },
    /// A step without a range, as written.
    #[error("a step needs a range, as in 10-190/10; got '{0}'")]
    StepWithoutRange(String),
    /// More client counts than one run simulates, the most.
    #[error("more than {0} client counts; at most {0} are simulated in one run")]
    TooManyClientCounts(usize),
    /// A duration option of 0s that must be more.
    #[error("{0} (0s) must be more than 0s")]
    ZeroDuration(&'static str),
    /// An `--observe` outside 10s to 1h, as a person reads it.
    #[error("--observe ({0}) must be from 10s to 1h: recovery is judged on the last 10s")]
    ObserveOutOfRange(String),
    /// An interval whose load is more than ten times the capacity.
    #[error("--intervals: a load of {0:.1} times the --capacity; at most 10 is simulated")]
    LoadTooHigh(f64),
    /// A contention simulation of more trials than the most.
    #[error(
        "this contention simulation is too large: {trials} trials (at most {most}: strategies, \
         the baseline among them, times client counts times --trials)"
    )]
    ContentionTooLarge { trials: usize, most: usize },
    /// A load simulation of more first tries a trial, or more trials, than the most.
    #[error(
        "this load simulation is too large: {first_tries:.0} first tries a trial (at most \
         {most_first_tries:.0}: --clients times --rate times --duration) and {trials} trials (at \
         most {most_trials}: failure rates times policies times --trials)"
    )]
    LoadTooLarge {
        first_tries: f64,
        most_first_tries: f64,
        trials: usize,
        most_trials: usize,
    },
    /// A metastable simulation of more requests than the most.
    #[error(
        "this metastable simulation is too large: {requests:.0} requests (at most {most:.0}: \
         policies times triggers times intervals times the seconds of a run)"
    )]
    MetastableTooLarge { requests: f64, most: f64 },
    /// Backoff parameters retry-policy refuses.
    #[error(transparent)]
    Backoff(#[from] retry_policy::Error),
    /// The command line, as clap refuses it.
    #[error(transparent)]
    Arguments(#[from] clap::Error),
}
