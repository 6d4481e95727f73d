//! Attempts and waits: how many attempts, the backoff between them (`--base`, `--cap`,
//! `--multiplier`, `--jitter`), when the count starts over, and the seed of the jitter: their
//! definitions, and the backoff they resolve to.

use std::num::NonZeroU64;
use std::time::Duration;

use retry_policy::attempts::AttemptLimit;
use retry_policy::backoff::{Backoff, Jitter, parse_multiplier};
use retry_policy::duration::parse_duration;
use retry_policy::seed::Seed;

use super::{ConfigError, WAITS, choice, refuse};

/// The attempts, and the waits between them.
#[derive(clap::Args, Debug)]
#[group(skip)]
pub(crate) struct WaitsArgs {
    /// Most attempts, the first included
    ///
    /// Make at most N attempts in total, the first included: a whole number, or 'unlimited'.
    #[arg(short = 'n', long, value_name = "N", allow_hyphen_values = true, help_heading = WAITS)]
    pub(crate) max_attempts: Option<AttemptLimit>,

    /// The first wait; later waits grow
    ///
    /// Wait this long after the first failure; every later wait grows from it (e.g. 250ms, 2s;
    /// 0s: never wait).
    #[arg(long, value_name = "DURATION", value_parser = parse_duration, allow_hyphen_values = true, help_heading = WAITS)]
    pub(crate) base: Option<Duration>,

    /// The longest backoff wait
    ///
    /// Never let the backoff wait longer than this between two attempts (e.g. 30s, 5m); it may
    /// not be below --base. A wait the command asks for (RETRY_AFTER_FILE,
    /// --retry-after-output), or the default budget's for its token, may be longer; a named
    /// budget refuses a retry whose token is not there within it.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration, allow_hyphen_values = true, help_heading = WAITS)]
    pub(crate) cap: Option<Duration>,

    /// none, full, equal or decorrelated
    ///
    /// Spread the waits with this strategy, so that clients failing together retry apart: none
    /// (exactly the exponential ceiling), full (uniform between 0 and the ceiling), equal (half
    /// the ceiling plus a uniform half), decorrelated (uniform between --base and three times the
    /// previous wait).
    #[arg(long, value_name = "STRATEGY", value_parser = choice::<Jitter>(), hide_possible_values = true, help_heading = WAITS)]
    pub(crate) jitter: Option<Jitter>,

    /// Growth of the longest wait per retry
    ///
    /// Multiply the longest possible wait by FACTOR after each retry: a number of at least 1
    /// (e.g. 1.5). Decorrelated jitter grows its waits from the previous wait instead, so it
    /// refuses --multiplier.
    #[arg(long, value_name = "FACTOR", value_parser = parse_multiplier, allow_hyphen_values = true, hide_short_help = true, help_heading = WAITS)]
    pub(crate) multiplier: Option<f64>,

    /// Start over after a failure this long
    ///
    /// Start the backoff and the attempt count over after a failed attempt that ran at least
    /// this long (e.g. 10m), as a supervisor does for a server that ran well for a while.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration, allow_hyphen_values = true, hide_short_help = true, help_heading = WAITS)]
    pub(crate) reset_after: Option<Duration>,

    /// Seed the jitter: a number, or 'host'
    ///
    /// Seed the jitter's random numbers with N (0 to 2^64-1) to make the waits reproducible, or
    /// with 'host' to derive it from the host name and the command. Default: random.
    #[arg(long, value_name = "N|host", allow_hyphen_values = true, hide_short_help = true, help_heading = WAITS)]
    pub(crate) seed: Option<Seed>,
}

impl WaitsArgs {
    /// `-n`, or its default.
    pub(crate) fn max_attempts(&self) -> AttemptLimit {
        self.max_attempts
            .unwrap_or(AttemptLimit::AtMost(NonZeroU64::new(5).unwrap()))
    }

    /// `--base`, or its default.
    pub(crate) fn base(&self) -> Duration {
        self.base.unwrap_or(Duration::from_secs(1))
    }

    /// `--cap`, or its default.
    pub(crate) fn cap(&self) -> Duration {
        self.cap.unwrap_or(Duration::from_secs(60))
    }

    /// `--jitter`, or its default.
    pub(crate) fn jitter(&self) -> Jitter {
        self.jitter.unwrap_or(Jitter::Full)
    }

    /// `--multiplier`, or its default.
    pub(crate) fn multiplier(&self) -> f64 {
        self.multiplier.unwrap_or(2.0)
    }

    /// The waits between attempts, as `--base`, `--cap`, `--multiplier` and `--jitter` give
    /// them; `--reset-after` checked beside them.
    pub(super) fn backoff(&self) -> Result<Backoff, ConfigError> {
        refuse(
            self.reset_after == Some(Duration::ZERO),
            "--reset-after (0s) must be more than 0s, or every failure would start the count \
             over; leave it out to never start over",
        )?;
        // The message is made only when it is said: a run formats no number it does not show.
        if self.multiplier.is_some() && self.jitter() == Jitter::Decorrelated {
            return Err(ConfigError(format!(
                "--multiplier ({}) has no effect with --jitter decorrelated, whose waits grow \
                 from the previous wait; leave out --multiplier, or choose another --jitter",
                self.multiplier()
            )));
        }
        Backoff::new(self.base(), self.cap(), self.multiplier(), self.jitter())
            .map_err(ConfigError::from)
    }
}
