//! Every way retry-policy refuses a value (a flag's, the environment's) or a combination of
//! them: one type, whose variants a caller can match, with each message written here once. A
//! message is one line that says what was wrong, with which value, and what would be accepted;
//! the caller puts the flag's or the variable's name before it where the variant does not.

use std::fmt;

/// What retry-policy refuses.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Error {
    /// A DURATION that is empty.
    EmptyDuration,
    /// A DURATION with a minus sign.
    NegativeDuration,
    /// A DURATION that is a number alone.
    DurationUnitMissing {
        /// The number.
        number: String,
    },
    /// A number of a DURATION of several parts without its own unit (`5 10m`).
    DurationPartUnitMissing {
        /// The number.
        number: String,
    },
    /// A DURATION with a unit there is not.
    UnknownDurationUnit {
        /// The unit.
        unit: String,
        /// The unit it would be in lowercase, when that is one (`MS`: `ms`).
        lowercase: Option<String>,
    },
    /// Text that is no DURATION at all.
    NotADuration {
        /// The text.
        text: String,
    },
    /// A `--multiplier` that is a number, but not a finite one of at least 1.
    MultiplierOutOfRange,
    /// A `--multiplier` that is not a number.
    MultiplierNotANumber,
    /// A multiplier given to a backoff that is NaN, infinite or below 1, as written.
    MultiplierBelowOne(String),
    /// A `--cap` below `--base`, each as a person reads it (`1s`).
    CapBelowBase {
        /// `--base`.
        base: String,
        /// `--cap`.
        cap: String,
    },
    /// A `--seed` of digits beyond 2^64-1.
    SeedTooLarge,
    /// A `--seed` that is neither a number nor `host`.
    NotASeed,
    /// An empty entry in a list of exit statuses (`1,,2`).
    EmptyStatusEntry,
    /// A range of exit statuses that runs backwards (`78-75`).
    BackwardsRange {
        /// The range as given.
        range: String,
        /// Its start.
        start: u8,
        /// Its end.
        end: u8,
    },
    /// Text that is not an exit status.
    NotAStatus {
        /// The text.
        text: String,
    },
    /// A number above 255.
    StatusTooLarge {
        /// The number.
        text: String,
    },
    /// A rule whose statuses are not a list of statuses (nor a pattern).
    RuleStatuses(Box<Error>),
    /// A rule with a stream and nothing after its colon.
    EmptyPattern,
    /// An attempt limit that is not a whole number of at least 1 nor `unlimited`.
    NotAnAttemptLimit,
    /// An attempt limit of 0.
    ZeroAttempts,
    /// An attempt limit beyond 2^64-1.
    AttemptLimitTooLarge,
    /// More output patterns than a run reads.
    TooManyPatterns {
        /// The rule that would be one too many.
        rule: String,
        /// The most there may be.
        most: usize,
    },
    /// A pattern with a line break.
    PatternLineBreak {
        /// The option and value that gave it.
        whose: String,
    },
    /// A pattern that is not a regex.
    InvalidPattern {
        /// The option and value that gave it.
        whose: String,
        /// What is wrong, and where.
        detail: String,
    },
    /// A `--retry-after-output` pattern without a group to read the wait from.
    PatternWithoutGroup {
        /// The pattern.
        pattern: String,
    },
    /// Patterns that compile one by one but not together (a set too large).
    PatternSet {
        /// The option whose patterns they are.
        flag: &'static str,
        /// The regex engine's words.
        detail: String,
    },
    /// A status-only `--stop-on` or `--retry-on` rule that names a success status.
    SuccessStatusAsFailure {
        /// The rule's option.
        flag: &'static str,
        /// The rule as given.
        rule: String,
        /// The status it shares with the success statuses.
        status: u8,
        /// The success statuses.
        success: String,
    },
    /// An outer run's `RETRY_DEADLINE` that is not a time.
    OuterDeadlineNotATime {
        /// The value.
        text: String,
    },
    /// An outer run's `RETRY_DEADLINE` more than a year ahead.
    OuterDeadlineTooFar {
        /// The value.
        text: String,
    },
    /// A `CI_JOB_TIMEOUT` that is not a whole number of seconds of at least 1.
    GitlabTimeout {
        /// The value.
        text: String,
    },
    /// A `CI_JOB_STARTED_AT` that is not an RFC 3339 time.
    GitlabStart {
        /// The value.
        text: String,
    },
    /// A `BUILDKITE_TIMEOUT` that is not a whole number of minutes nor `false`.
    BuildkiteTimeout {
        /// The value.
        text: String,
    },
}

/// What a DURATION may be, for messages.
const DURATION: &str = "expected e.g. 250ms, 2s or 1m30s";
/// What a multiplier may be.
const MULTIPLIER: &str = "expected a finite number of at least 1, e.g. 2 or 1.5";
/// What a seed may be.
const SEED: &str = "expected a whole number 0 to 2^64-1, or 'host'";
/// What a list of statuses may be.
const STATUSES: &str = "expected exit statuses 0-255 and ranges, e.g. 1,75-78,255";
/// What an attempt limit may be.
const ATTEMPTS: &str = "expected a whole number of at least 1, or 'unlimited'";
/// What an outer deadline may be.
const OUTER: &str = "expected the Unix time in whole milliseconds, as an outer retry sets it";
/// The units of time.
const UNITS: &str = "ns, us, ms, s, m, h, d, w, M, y";

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::EmptyDuration => write!(f, "an empty duration; {DURATION}"),
            Error::NegativeDuration => write!(f, "a duration must not be negative; {DURATION}"),
            Error::DurationUnitMissing { number } => {
                write!(f, "a unit is needed; expected e.g. {number}ms or {number}s")
            }
            Error::DurationPartUnitMissing { number } => write!(
                f,
                "'{number}' has no unit, and each number needs its own; expected e.g. 250ms, 2s, \
                 1m30s or 1m 30s"
            ),
            Error::UnknownDurationUnit { unit, lowercase } => {
                let hint = lowercase
                    .as_ref()
                    .map_or(String::new(), |lower| format!(" (did you mean '{lower}'?)"));
                write!(
                    f,
                    "'{unit}' is not a unit of time{hint}; the units are {UNITS} (months and                      years as M and y), e.g. 250ms, 2s or 1m30s"
                )
            }
            Error::NotADuration { text } => write!(f, "'{text}' is not a duration; {DURATION}"),
            Error::MultiplierOutOfRange => write!(f, "out of range; {MULTIPLIER}"),
            Error::MultiplierNotANumber => write!(f, "not a number; {MULTIPLIER}"),
            Error::MultiplierBelowOne(multiplier) => write!(
                f,
                "--multiplier ({multiplier}) must be a finite number of at least 1"
            ),
            Error::CapBelowBase { base, cap } => write!(
                f,
                "--cap ({cap}) must not be below --base ({base}); raise --cap or lower --base"
            ),
            Error::SeedTooLarge => write!(f, "too large; {SEED}"),
            Error::NotASeed => f.write_str(SEED),
            Error::EmptyStatusEntry => write!(f, "empty entry in the list; {STATUSES}"),
            Error::BackwardsRange { range, start, end } => {
                write!(f, "range {range} runs backwards; write it as {end}-{start}")
            }
            Error::NotAStatus { text } => write!(
                f,
                "'{text}' is not an exit status; expected whole numbers 0-255, e.g. 1,75-78,255"
            ),
            Error::StatusTooLarge { text } => {
                write!(f, "{text} is above 255, the largest exit status")
            }
            Error::RuleStatuses(why) => write!(
                f,
                "{why}; or a pattern a line of output must match: stdout:REGEX, stderr:REGEX or \
                 output:REGEX, after the statuses or alone"
            ),
            Error::EmptyPattern => {
                f.write_str("an empty pattern matches every line; give a REGEX after the colon")
            }
            Error::NotAnAttemptLimit => f.write_str(ATTEMPTS),
            Error::ZeroAttempts => {
                write!(f, "0 attempts would never run the command; {ATTEMPTS}")
            }
            Error::AttemptLimitTooLarge => {
                write!(
                    f,
                    "too large; {ATTEMPTS} (a limit this high is 'unlimited')"
                )
            }
            Error::TooManyPatterns { rule, most } => write!(
                f,
                "{rule}: a run reads at most {most} output patterns, the preset's included"
            ),
            Error::PatternLineBreak { whose } => write!(
                f,
                "{whose} holds a line break, which no line of output can match (output is \
                 matched a line at a time); give the pattern on one line"
            ),
            Error::InvalidPattern { whose, detail } => {
                write!(f, "{whose} is not a valid regex: {detail}")
            }
            Error::PatternWithoutGroup { pattern } => write!(
                f,
                "--retry-after-output '{pattern}' has no group to read the wait from; put it in \
                 parentheses, e.g. '(?i)^retry-after:\\s*(.+)$'"
            ),
            Error::PatternSet { flag, detail } => write!(f, "{flag}: {detail}"),
            Error::SuccessStatusAsFailure {
                flag,
                rule,
                status,
                success,
            } => write!(
                f,
                "{flag} {rule} names status {status}, a success status (--success-on: \
                 {success}); a status cannot be success and failure, unless its output decides: \
                 add a pattern, e.g. {flag} {status},stdout:REGEX"
            ),
            Error::OuterDeadlineNotATime { text } => write!(f, "'{text}' is not a time; {OUTER}"),
            Error::OuterDeadlineTooFar { text } => {
                write!(f, "'{text}' is more than a year ahead; {OUTER}")
            }
            Error::GitlabTimeout { text } => write!(
                f,
                "CI_JOB_TIMEOUT '{text}' is not a whole number of seconds of at least 1"
            ),
            Error::GitlabStart { text } => write!(
                f,
                "CI_JOB_STARTED_AT '{text}' is not an RFC 3339 time, such as \
                 2026-11-26T09:00:00Z or 2026-11-26T10:00:00+01:00"
            ),
            Error::BuildkiteTimeout { text } => write!(
                f,
                "BUILDKITE_TIMEOUT '{text}' is not a whole number of minutes, or false"
            ),
        }
    }
}

impl std::error::Error for Error {}
