//! Every way retry-policy refuses a value (a flag's, the environment's) or a combination of
//! them: one type, whose variants a caller can match, with each message written beside its
//! variant. A message is one line that says what was wrong, with which value, and what would be
//! accepted; the caller puts the flag's or the variable's name before it where the variant does
//! not. A variant's fields are the values its message names.

/// What a DURATION may be, for messages.
const DURATION: &str = "expected e.g. 250ms, 2s or 1m30s";
/// What a multiplier may be.
const MULTIPLIER: &str = "expected a finite number of at least 1, e.g. 2 or 1.5";
/// What a seed may be.
const SEED: &str = "expected a whole number 0 to 2^64-1, or 'host'";
/// What an attempt limit may be.
const ATTEMPTS: &str = "expected a whole number of at least 1, or 'unlimited'";
/// What an outer deadline may be.
const OUTER: &str = "expected the Unix time in whole milliseconds, as an outer retry sets it";

/// What retry-policy refuses.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
#[allow(
    missing_docs,
    reason = "a field is the value its variant's message names"
)]
pub enum Error {
    /// A DURATION that is empty.
    #[error("an empty duration; {duration}", duration = DURATION)]
    EmptyDuration,
    /// A DURATION with a minus sign.
    #[error("a duration must not be negative; {duration}", duration = DURATION)]
    NegativeDuration,
    /// A DURATION that is a number alone.
    #[error("a unit is needed; expected e.g. {0}ms or {0}s")]
    DurationUnitMissing(String),
    /// A number of a DURATION of several parts without its own unit (`5 10m`).
    #[error(
        "'{0}' has no unit, and each number needs its own; expected e.g. 250ms, 2s, 1m30s or \
         1m 30s"
    )]
    DurationPartUnitMissing(String),
    /// A DURATION with a unit there is not, and the hint of the unit it would be in lowercase.
    #[error(
        "'{unit}' is not a unit of time{hint}; the units are ns, us, ms, s, m, h, d, w, M, y \
         (months and years as M and y), e.g. 250ms, 2s or 1m30s"
    )]
    UnknownDurationUnit { unit: String, hint: String },
    /// Text that is no DURATION at all.
    #[error("'{0}' is not a duration; {duration}", duration = DURATION)]
    NotADuration(String),
    /// A `--multiplier` that is a number, but not a finite one of at least 1.
    #[error("out of range; {multiplier}", multiplier = MULTIPLIER)]
    MultiplierOutOfRange,
    /// A `--multiplier` that is not a number.
    #[error("not a number; {multiplier}", multiplier = MULTIPLIER)]
    MultiplierNotANumber,
    /// A multiplier given to a backoff that is NaN, infinite or below 1, as written.
    #[error("--multiplier ({0}) must be a finite number of at least 1")]
    MultiplierBelowOne(String),
    /// A `--cap` below `--base`, each as a person reads it (`1s`).
    #[error("--cap ({cap}) must not be below --base ({base}); raise --cap or lower --base")]
    CapBelowBase { base: String, cap: String },
    /// A `--seed` of digits beyond 2^64-1.
    #[error("too large; {seed}", seed = SEED)]
    SeedTooLarge,
    /// A `--seed` that is neither a number nor `host`.
    #[error("{seed}", seed = SEED)]
    NotASeed,
    /// An empty entry in a list of exit statuses (`1,,2`).
    #[error("empty entry in the list; expected exit statuses 0-255 and ranges, e.g. 1,75-78,255")]
    EmptyStatusEntry,
    /// A range of exit statuses that runs backwards (`78-75`), as given, with its start and end.
    #[error("range {range} runs backwards; write it as {end}-{start}")]
    BackwardsRange { range: String, start: u8, end: u8 },
    /// Text that is not an exit status.
    #[error("'{0}' is not an exit status; expected whole numbers 0-255, e.g. 1,75-78,255")]
    NotAStatus(String),
    /// A number above 255.
    #[error("{0} is above 255, the largest exit status")]
    StatusTooLarge(String),
    /// A rule whose statuses are not a list of statuses (nor a pattern), and what is wrong with
    /// them.
    #[error(
        "neither exit statuses nor a pattern a line of output must match (stdout:REGEX, \
         stderr:REGEX or output:REGEX, after the statuses or alone)"
    )]
    RuleStatuses(#[source] Box<Error>),
    /// A rule's `:max=N` whose N is not a whole number from 1 to the most, as given.
    #[error("its limit max={0} is not a whole number from 1 to 10000; e.g. 124:max=1")]
    BadRuleLimit(String),
    /// A limit on a rule of a flag that gives no retries to count (`--stop-on 3:max=1`).
    #[error("{flag} {rule}: a limit counts retries, so only a --retry-on rule may have one")]
    LimitNotRetried { flag: &'static str, rule: String },
    /// A pattern that ends with what looks like a limit (`stderr:reset:max=1`).
    #[error(
        "'{rule}': a limit follows the statuses, before the pattern (e.g. \
         1-255:max=1,stderr:REGEX); a pattern that must itself end so can write max[=]N"
    )]
    LimitAfterPattern { rule: String },
    /// A rule with a stream and nothing after its colon.
    #[error("an empty pattern matches every line; give a REGEX after the colon")]
    EmptyPattern,
    /// An attempt limit that is not a whole number of at least 1 nor `unlimited`.
    #[error("{attempts}", attempts = ATTEMPTS)]
    NotAnAttemptLimit,
    /// An attempt limit of 0.
    #[error("0 attempts would never run the command; {attempts}", attempts = ATTEMPTS)]
    ZeroAttempts,
    /// An attempt limit beyond 2^64-1.
    #[error("too large; {attempts} (a limit this high is 'unlimited')", attempts = ATTEMPTS)]
    AttemptLimitTooLarge,
    /// More output patterns than a run reads: the rule that would be one too many, and the most.
    #[error("{rule}: a run reads at most {most} output patterns, the preset's included")]
    TooManyPatterns { rule: String, most: usize },
    /// A pattern with a line break: the option and value that gave it.
    #[error(
        "{0} holds a line break, which no line of output can match (output is matched a line at \
         a time); give the pattern on one line"
    )]
    PatternLineBreak(String),
    /// A pattern that is not a regex: the option and value that gave it, and what is wrong where.
    #[error("{whose} is not a valid regex: {detail}")]
    InvalidPattern { whose: String, detail: String },
    /// A `--retry-after-output` pattern without a group to read the wait from.
    #[error(
        "--retry-after-output '{0}' has no group to read the wait from; put it in parentheses, \
         e.g. '(?i)^retry-after:\\s*(.+)$'"
    )]
    PatternWithoutGroup(String),
    /// Patterns that compile one by one but not together (a set too large): their option, and
    /// the regex engine's error.
    #[error("{flag}")]
    PatternSet {
        flag: &'static str,
        #[source]
        why: regex::Error,
    },
    /// A status-only `--stop-on` or `--retry-on` rule (`flag`, `rule`) that names a `status`
    /// among the `success` statuses.
    #[error(
        "{flag} {rule} names status {status}, a success status (--success-on: {success}); a \
         status cannot be success and failure, unless its output decides: add a pattern, e.g. \
         {flag} {status},stdout:REGEX"
    )]
    SuccessStatusAsFailure {
        flag: &'static str,
        rule: String,
        status: u8,
        success: String,
    },
    /// An outer run's `RETRY_DEADLINE` that is not a time.
    #[error("'{0}' is not a time; {outer}", outer = OUTER)]
    OuterDeadlineNotATime(String),
    /// An outer run's `RETRY_DEADLINE` more than a year ahead.
    #[error("'{0}' is more than a year ahead; {outer}", outer = OUTER)]
    OuterDeadlineTooFar(String),
    /// A `CI_JOB_TIMEOUT` that is not a whole number of seconds from 1 to the most, a year's.
    #[error("CI_JOB_TIMEOUT '{value}' is not a whole number of seconds from 1 to {most} (a year)")]
    GitlabTimeout { value: String, most: u64 },
    /// A `CI_JOB_STARTED_AT` that is not an RFC 3339 time.
    #[error(
        "CI_JOB_STARTED_AT '{0}' is not an RFC 3339 time, such as 2026-11-26T09:00:00Z or \
         2026-11-26T10:00:00+01:00"
    )]
    GitlabStart(String),
    /// A `BUILDKITE_TIMEOUT` that is not a whole number of minutes from 1 to the most, a
    /// year's, nor `false`.
    #[error(
        "BUILDKITE_TIMEOUT '{value}' is not a whole number of minutes from 1 to {most} (a year), \
         or false"
    )]
    BuildkiteTimeout { value: String, most: u64 },
}
