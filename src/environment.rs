//! The environment variables of the interface: those every attempt finds in its environment, and
//! those the tool reads; their names, and what they hold, for the code that sets or reads them
//! and for `--help` and the man page that describe them; and the values an attempt gets.

use std::ffi::{OsStr, OsString};
use std::sync::atomic::{AtomicU8, Ordering};
use std::time::{Duration, SystemTime};

use retry_policy::attempts::{AttemptLimit, Numbering};
use retry_policy::deadline::exported;

use retry_sys::environ::Value;

/// The tool's own value of the variable `name`: how the run reads its environment (each part is
/// given this, so that its tests can give another). A name with a prefix the environment has
/// no variable of, as the walk of it at the start found ([`note_prefixes`]), is answered at once.
pub(crate) fn own(name: &str) -> Option<OsString> {
    let absent = ABSENT.load(Ordering::Relaxed);
    let prefix_absent = PREFIXES
        .iter()
        .enumerate()
        .any(|(bit, prefix)| absent & (1 << bit) != 0 && name.starts_with(prefix));
    match prefix_absent {
        true => None,
        false => retry_sys::environ::own_value(name),
    }
}

/// The prefixes of most of the names a run looks up: the tool's own, and OpenTelemetry's.
/// Most environments have no variable of either, and a lookup costs a walk of the whole
/// environment.
const PREFIXES: [&str; 2] = [PREFIX, "OTEL_"];

/// Which of [`PREFIXES`] the environment has no variable of, by bit; none known until the walk
/// at the start has said (the tool never changes its environment).
static ABSENT: AtomicU8 = AtomicU8::new(0);

/// The prefix of [`PREFIXES`] that `name` has, by bit; 0 for none.
pub(crate) fn prefix_bit(name: &[u8]) -> u8 {
    PREFIXES
        .iter()
        .position(|prefix| name.starts_with(prefix.as_bytes()))
        .map_or(0, |bit| 1 << bit)
}

/// The walk of the whole environment at the start found variables with the prefixes whose bits
/// `seen` holds (each from [`prefix_bit`]), and no others.
pub(crate) fn note_prefixes(seen: u8) {
    let all = (1u8 << PREFIXES.len()) - 1;
    ABSENT.store(all & !seen, Ordering::Relaxed);
}

/// What the name of every variable the tool sets or withholds starts with.
pub(crate) const PREFIX: &str = "RETRY_";

/// One variable of the attempt's environment.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Variable {
    pub(crate) name: &'static str,
    /// What it holds, for the help.
    pub(crate) meaning: &'static str,
}

impl Variable {
    /// Its value as `env` reads it, when it is set to something: an empty value, as a shell's
    /// `VAR= retry ...` leaves, is one not given, for every variable the tool reads.
    pub(crate) fn given(&self, env: &impl Fn(&str) -> Option<OsString>) -> Option<OsString> {
        env(self.name).filter(|value| !value.is_empty())
    }
}

/// This attempt's number.
pub(crate) const ATTEMPT: Variable = Variable {
    name: "RETRY_ATTEMPT",
    meaning: "this attempt's number, counting from 1",
};

/// This attempt's number since `--reset-after` last started the count over.
pub(crate) const ATTEMPT_SINCE_RESET: Variable = Variable {
    name: "RETRY_ATTEMPT_SINCE_RESET",
    meaning: "its number since --reset-after last started the count over (as RETRY_ATTEMPT before)",
};

/// The `--max-attempts` value.
pub(crate) const MAX_ATTEMPTS: Variable = Variable {
    name: "RETRY_MAX_ATTEMPTS",
    meaning: "the --max-attempts value: a number, or 'unlimited'",
};

/// Where this attempt may write a requested wait, or `stop`.
pub(crate) const AFTER_FILE: Variable = Variable {
    name: "RETRY_AFTER_FILE",
    meaning: "a fresh empty file to write a wait in (37s, 37, an HTTP date) or 'stop'",
};

/// The most attempts of the command all the retry layers around it can make together.
pub(crate) const TOTAL_ATTEMPTS: Variable = Variable {
    name: "RETRY_TOTAL_ATTEMPTS",
    meaning: "the most attempts all nested retries together may make: their --max-attempts \
              multiplied, or 'unlimited'",
};

/// The run's deadline, for the command to size its own limits by.
pub(crate) const DEADLINE: Variable = Variable {
    name: "RETRY_DEADLINE",
    meaning: "with a deadline (--max-time, an outer retry's, a CI job's): when the run ends, in \
              Unix milliseconds",
};

/// The time this attempt has.
pub(crate) const ATTEMPT_TIMEOUT_MS: Variable = Variable {
    name: "RETRY_ATTEMPT_TIMEOUT_MS",
    meaning: "with --timeout or a deadline: the time this attempt has, the smaller of the two, in \
              whole milliseconds (e.g. for curl --max-time)",
};

/// How deep among nested retries this attempt runs.
pub(crate) const DEPTH: Variable = Variable {
    name: "RETRY_DEPTH",
    meaning: "1 under the outermost retry, one more at each retry inside",
};

/// The run's identity.
pub(crate) const RUN_ID: Variable = Variable {
    name: "RETRY_RUN_ID",
    meaning: "the run's identity, the same for all its attempts and hooks (a random UUID, \
              e.g. for an idempotency key); an outer retry's is kept",
};

/// What proves to a run inside an attempt that it is part of the run that holds its job.
pub(crate) const JOB_HOLD: Variable = Variable {
    name: "RETRY_JOB_HOLD",
    meaning: "with a --job whose terms keep its runs apart: what proves to a retry --job inside \
              this attempt that it is part of this run of the job (a lock's descriptor, or a \
              lease's secret token), so that it goes ahead; for the attempt alone, never shown",
};

/// Every variable, in the order the help lists them.
pub(crate) const ALL: [Variable; 10] = [
    ATTEMPT,
    ATTEMPT_SINCE_RESET,
    MAX_ATTEMPTS,
    TOTAL_ATTEMPTS,
    AFTER_FILE,
    DEPTH,
    DEADLINE,
    ATTEMPT_TIMEOUT_MS,
    RUN_ID,
    JOB_HOLD,
];

/// The failed attempt's status, for a hook.
pub(crate) const STATUS: Variable = Variable {
    name: "RETRY_STATUS",
    meaning: "the status of the attempt that failed (as RETRY_ATTEMPT says which)",
};

/// The wait before the next attempt, for `--on-retry`.
pub(crate) const NEXT_WAIT_MS: Variable = Variable {
    name: "RETRY_NEXT_WAIT_MS",
    meaning: "--on-retry: the wait before the next attempt, in whole milliseconds",
};

/// Why the run gave up, for `--on-give-up`.
pub(crate) const REASON: Variable = Variable {
    name: "RETRY_REASON",
    meaning: "--on-give-up: why the run gave up, as the done event's reason",
};

/// The variables a hook gets besides the attempt's, in the order the help lists them.
pub(crate) const HOOK: [Variable; 3] = [STATUS, NEXT_WAIT_MS, REASON];

/// The budget store, read when `--budget-store` is not given, so that a password can stay out
/// of argv (which every user of the machine can read); removed from the command's environment.
pub(crate) const BUDGET_STORE: Variable = Variable {
    name: "RETRY_BUDGET_STORE",
    meaning: "the --budget-store when none is given; COMMAND gets the store the run was given \
              without its password (a password_file= goes along), for a retry inside it",
};

/// The heartbeat monitor a run tells of its start and its outcome.
pub(crate) const MONITOR: Variable = Variable {
    name: "RETRY_MONITOR",
    meaning: "the monitor told of each run's start and outcome, as DIALECT:URL (healthchecks, \
              cronitor, sentry or betterstack), e.g. healthchecks:https://hc-ping.com/UUID; \
              COMMAND never sees it",
};

/// A file whose first line names the monitor, as `RETRY_MONITOR` would.
pub(crate) const MONITOR_FILE: Variable = Variable {
    name: "RETRY_MONITOR_FILE",
    meaning: "a file whose first line is what RETRY_MONITOR would hold, kept from other users; \
              COMMAND never sees it",
};

/// A trace's context, which a run joins, and which each attempt gets its own of.
pub(crate) const TRACEPARENT: Variable = Variable {
    name: "TRACEPARENT",
    meaning: "a W3C traceparent the run joins; with it or an OTLP endpoint, each attempt gets \
              its own, whose parent is the attempt's span (TRACESTATE passes on as it is)",
};

/// Where a run's spans go (OpenTelemetry's exporter variables).
pub(crate) const OTLP_ENDPOINT: Variable = Variable {
    name: "OTEL_EXPORTER_OTLP_ENDPOINT",
    meaning: "send the run's span and its attempts' there at its end (or to \
              OTEL_EXPORTER_OTLP_TRACES_ENDPOINT), with the standard PROTOCOL (http/protobuf, \
              http/json), TIMEOUT, OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES; \
              OTEL_SDK_DISABLED=true turns tracing off",
};

/// The headers the spans are sent with: secrets.
pub(crate) const OTLP_HEADERS: Variable = Variable {
    name: "OTEL_EXPORTER_OTLP_HEADERS",
    meaning: "the headers the spans are sent with (or OTEL_EXPORTER_OTLP_TRACES_HEADERS), \
              key=value,...; secrets: never said, and COMMAND never sees either",
};

/// The exporter variables that hold secrets, which no child inherits.
pub(crate) const EXPORTER_SECRETS: [&str; 2] = [
    "OTEL_EXPORTER_OTLP_HEADERS",
    "OTEL_EXPORTER_OTLP_TRACES_HEADERS",
];

/// The budget every run spends from, when `--budget` names none.
pub(crate) const BUDGET: Variable = Variable {
    name: "RETRY_BUDGET",
    meaning: "the --budget when none is given: a budget's NAME, or 'off' for none at all (not \
              even this machine's default one)",
};

/// The name this machine goes by.
pub(crate) const HOST: Variable = Variable {
    name: "RETRY_HOST",
    meaning: "the name this machine goes by, for --seed host and for the hosts a shared \
              budget's breaker counts [default: its host name]",
};

/// An outer run's `RETRY_DEPTH`, which tells a run that it is nested.
pub(crate) const OUTER_DEPTH: Variable = Variable {
    name: DEPTH.name,
    meaning: "set: this run is inside another retry's attempt (see RETRY_NESTED)",
};

/// An outer run's `RETRY_JOB_HOLD`, which lets this run into a job the outer run holds.
pub(crate) const OUTER_JOB_HOLD: Variable = Variable {
    name: JOB_HOLD.name,
    meaning: "set by an outer retry --job: a run of the same job inside its attempt goes ahead \
              as part of it; passed on to this run's attempts",
};

/// An outer run's `RETRY_DEADLINE`, which bounds this run too.
pub(crate) const OUTER_DEADLINE: Variable = Variable {
    name: DEADLINE.name,
    meaning: "set by an outer retry: its deadline, this run's too when sooner",
};

/// GitLab's job time limit.
pub(crate) const CI_JOB_TIMEOUT: Variable = Variable {
    name: "CI_JOB_TIMEOUT",
    meaning: "with CI_JOB_STARTED_AT: GitLab's job time limit, in seconds; the run gives up a \
              margin before it (a twentieth of it, 5s to 1m)",
};

/// When GitLab's job started.
pub(crate) const CI_JOB_STARTED_AT: Variable = Variable {
    name: "CI_JOB_STARTED_AT",
    meaning: "when the GitLab job started (RFC 3339), for CI_JOB_TIMEOUT",
};

/// Buildkite's job time limit.
pub(crate) const BUILDKITE_TIMEOUT: Variable = Variable {
    name: "BUILDKITE_TIMEOUT",
    meaning: "Buildkite's job time limit, in minutes, counted from the run's start; the run \
              gives up a margin before it",
};

/// What a run inside another retry's attempt does.
pub(crate) const NESTED: Variable = Variable {
    name: "RETRY_NESTED",
    meaning: "inside another retry's attempt: once (one attempt, the outer run retries), retry \
              (the default: retry, warning of the attempts the layers multiply to) or quiet \
              (retry, without the warning)",
};

/// The longest wait a command may ask for.
pub(crate) const MAX_REQUESTED_WAIT: Variable = Variable {
    name: "RETRY_MAX_REQUESTED_WAIT",
    meaning: "the longest wait a command may ask for (RETRY_AFTER_FILE, --retry-after-output); \
              a longer one is cut to it, with a warning (a DURATION; default 15m)",
};

/// The outer runs' `RETRY_TOTAL_ATTEMPTS`, for the warning of a nested run.
pub(crate) const OUTER_TOTAL_ATTEMPTS: Variable = Variable {
    name: TOTAL_ATTEMPTS.name,
    meaning: "with RETRY_DEPTH: all the outer runs' attempts together, which this run's \
              multiply",
};

/// Set to `true` in a GitHub Actions job.
pub(crate) const GITHUB_ACTIONS: Variable = Variable {
    name: "GITHUB_ACTIONS",
    meaning: "true: the run is in GitHub Actions (for --ci auto)",
};

/// Set to `true` in a GitLab CI/CD job.
pub(crate) const GITLAB_CI: Variable = Variable {
    name: "GITLAB_CI",
    meaning: "true: the run is in GitLab CI/CD (for --ci auto)",
};

/// Set to `true` in a Buildkite job.
pub(crate) const BUILDKITE: Variable = Variable {
    name: "BUILDKITE",
    meaning: "true: the run is in Buildkite (for --ci auto)",
};

/// Set to `True` in an Azure Pipelines job.
pub(crate) const TF_BUILD: Variable = Variable {
    name: "TF_BUILD",
    meaning: "True: the run is in Azure Pipelines (for --ci auto)",
};

/// The file GitHub's runner reads a step's outputs from.
pub(crate) const GITHUB_OUTPUT: Variable = Variable {
    name: "GITHUB_OUTPUT",
    meaning: "with --ci github: the file the run's outcome is appended to",
};

/// The file GitHub's runner reads a step's summary from.
pub(crate) const GITHUB_STEP_SUMMARY: Variable = Variable {
    name: "GITHUB_STEP_SUMMARY",
    meaning: "with --ci github: the file a table of the attempts is appended to",
};

/// Every variable the tool reads, in the order the help lists them.
pub(crate) const READ: [Variable; 23] = [
    BUDGET,
    BUDGET_STORE,
    MONITOR,
    MONITOR_FILE,
    TRACEPARENT,
    OTLP_ENDPOINT,
    OTLP_HEADERS,
    HOST,
    NESTED,
    MAX_REQUESTED_WAIT,
    OUTER_DEPTH,
    OUTER_TOTAL_ATTEMPTS,
    OUTER_DEADLINE,
    OUTER_JOB_HOLD,
    CI_JOB_TIMEOUT,
    CI_JOB_STARTED_AT,
    BUILDKITE_TIMEOUT,
    GITHUB_ACTIONS,
    GITLAB_CI,
    BUILDKITE,
    TF_BUILD,
    GITHUB_OUTPUT,
    GITHUB_STEP_SUMMARY,
];

/// The values of the variables an attempt (and a hook after it) gets, but `RETRY_AFTER_FILE`:
/// the attempt `numbering` names, of a run whose layers together may make `total` attempts.
pub(crate) fn of_attempt(
    numbering: Numbering,
    total: AttemptLimit,
) -> [(&'static str, Value<'static>); 5] {
    [
        (ATTEMPT.name, Value::Number(numbering.attempt)),
        (
            ATTEMPT_SINCE_RESET.name,
            Value::Number(numbering.since_reset),
        ),
        (MAX_ATTEMPTS.name, limit(numbering.limit)),
        (TOTAL_ATTEMPTS.name, limit(total)),
        (DEPTH.name, Value::Number(numbering.depth.into())),
    ]
}

/// An attempt limit as its variable holds it: the number, or `unlimited`.
fn limit(limit: AttemptLimit) -> Value<'static> {
    match limit {
        AttemptLimit::AtMost(most) => Value::Number(most.get()),
        AttemptLimit::Unlimited => Value::Text(OsStr::new("unlimited")),
    }
}

/// The variables of an attempt's time limits, when it has them: the run's deadline `left` from
/// now, as the Unix time on the wall clock at `now` (`RETRY_DEADLINE`), and the time the attempt
/// has (`RETRY_ATTEMPT_TIMEOUT_MS`).
pub(crate) fn of_limits(
    left: Option<Duration>,
    attempt: Option<Duration>,
    now: SystemTime,
) -> [Option<(&'static str, Value<'static>)>; 2] {
    [
        left.map(|left| (DEADLINE.name, Value::Number(exported(left, now)))),
        attempt.map(|limit| {
            (
                ATTEMPT_TIMEOUT_MS.name,
                Value::Number(u64::try_from(limit.as_millis()).unwrap_or(u64::MAX)),
            )
        }),
    ]
}

/// The variables no child of the tool inherits from it as they are: the store's address (its
/// password is the tool's secret; the run sets it anew without one), the monitor's URL (a
/// credential) and its file, and an outer run's request file.
pub(crate) const WITHHELD: [Variable; 4] = [BUDGET_STORE, MONITOR, MONITOR_FILE, AFTER_FILE];
