//! `retry budget show NAME`: a budget's state now, read from its store without changing it, as
//! text or as one JSON object, on the clock of the store (the Redis server's, or this machine's
//! for the file store) and the terms of the run that changed it last.

use std::ffi::OsString;
use std::io::{self, Write};
use std::path::PathBuf;

use anyhow::Context;
use serde::Serialize;

use super::BudgetName;
use super::file;
use super::model::{BucketState, Terms};
use super::redis::{Failure, RedisStore};
use super::store::Location;
use crate::duration::{format_duration, to_millis};
use crate::report::message::printable;
use crate::report::verbosity::LogFormat;

/// What `retry budget show --help` says it does.
pub(crate) const ABOUT: &str = "\
Print the state of the retry budget NAME now, changing nothing: the rate bucket's tokens and \
when it will be full, the earned tokens, and the first attempts, retries and refusals counted \
by every run that shared it, with the terms of the run that last changed it.

(`budget` is the tool's own word only as the first word: `retry -- budget` runs a program \
called budget.)";

/// The `retry budget show` options.
#[derive(clap::Args, Debug)]
pub(crate) struct BudgetShowArgs {
    /// The budget's name, as runs give it to --budget.
    #[arg(value_name = "NAME")]
    pub(crate) name: BudgetName,

    /// Where the budget lives: file, or a redis:// URL, as runs give it [default:
    /// $RETRY_BUDGET_STORE, or file].
    #[arg(long, value_name = "STORE")]
    pub(crate) budget_store: Option<String>,

    /// Read the store's password from the first line of FILE, as runs do.
    #[arg(long, value_name = "FILE")]
    pub(crate) budget_password_file: Option<PathBuf>,

    /// Where the file store keeps budgets [default: $XDG_STATE_HOME/retry/budgets, or
    /// ~/.local/state/retry/budgets].
    #[arg(long, value_name = "DIR")]
    pub(crate) budget_dir: Option<PathBuf>,

    /// Print the state as text, or as one JSON object (json).
    #[arg(
        long,
        value_name = "FORMAT",
        default_value = "text",
        hide_possible_values = true
    )]
    pub(crate) log_format: LogFormat,
}

/// Which budget to show, and where it lives.
#[derive(Debug)]
pub(crate) struct ShowRequest {
    pub(crate) name: BudgetName,
    pub(crate) location: Location,
}

impl BudgetShowArgs {
    /// The budget these options name, and where it lives; `env` reads the environment.
    pub(crate) fn request(
        &self,
        env: &impl Fn(&str) -> Option<OsString>,
    ) -> Result<ShowRequest, String> {
        let location = Location::resolve(
            self.budget_store.as_deref(),
            self.budget_password_file.as_deref(),
            self.budget_dir.clone(),
            env,
            "retry budget show",
        )?;
        Ok(ShowRequest {
            name: self.name.clone(),
            location,
        })
    }
}

/// What `retry budget show` prints: the `budget show` object of the README.
#[derive(Debug, Serialize)]
struct Shown {
    budget: String,
    /// `file`, or the shared store's address, its password hidden.
    store: String,
    /// The state file's path, or the Redis key.
    location: String,
    /// None when the store has no state: a full bucket.
    state: Option<ShownState>,
}

/// The state as of now. The terms are those of the run that changed it last: unknown for a file
/// in the first releases' format.
#[derive(Debug, Serialize)]
struct ShownState {
    tokens: f64,
    capacity: Option<u32>,
    period_ms: Option<f64>,
    full_in_ms: Option<f64>,
    earned: f64,
    window_ms: Option<f64>,
    first_attempts: u64,
    retries: u64,
    refusals: u64,
    changed_ms_ago: f64,
}

/// Print the state of the budget `request` names to `out`, in `format`.
pub(crate) fn print(
    request: &ShowRequest,
    format: LogFormat,
    out: &mut impl Write,
) -> anyhow::Result<()> {
    let shown = read(request)?;
    match format {
        LogFormat::Text => write_text(out, &shown),
        LogFormat::Json => {
            serde_json::to_writer(&mut *out, &shown)?;
            writeln!(out)
        }
    }
    .context("cannot write the budget's state to stdout")
}

/// The budget's state now, from its store.
fn read(request: &ShowRequest) -> anyhow::Result<Shown> {
    let name = &request.name;
    let (location, written, now) = match &request.location {
        Location::File(dir) => {
            let written = file::peek(dir, name)?;
            let path = dir.join(name.as_str()).display().to_string();
            (path, written, file::now_micros())
        }
        Location::Shared { address, .. } => {
            let mut store = RedisStore::new(address.clone(), name, None);
            let stored = store.show().map_err(|failure| {
                let why = match failure {
                    Failure::Failed(why) => why,
                    Failure::Interrupted(signal) => format!("interrupted by signal {signal}"),
                };
                anyhow::anyhow!(
                    "cannot read retry budget {} from {address}: {why}",
                    name.as_str()
                )
            })?;
            let written = stored.written.map(|(state, terms)| (state, Some(terms)));
            (store.key().to_string(), written, stored.now)
        }
    };
    Ok(Shown {
        budget: name.as_str().to_string(),
        store: request.location.to_string(),
        location,
        state: written.map(|(state, terms)| shown_state(state, terms, now)),
    })
}

/// `state` as of `now`, advanced on `terms` when they are known.
fn shown_state(state: BucketState, terms: Option<Terms>, now: u64) -> ShownState {
    let current = terms.map_or(state, |terms| terms.advance(Some(state), now));
    ShownState {
        tokens: current.tokens,
        capacity: terms.map(|terms| terms.rate.tokens),
        period_ms: terms.map(|terms| to_millis(terms.rate.period)),
        full_in_ms: terms.map(|terms| to_millis(terms.full_in(&current))),
        earned: current.earned,
        window_ms: terms.map(|terms| to_millis(terms.window)),
        first_attempts: current.first_attempts,
        retries: current.retries,
        refusals: current.refusals,
        changed_ms_ago: now.saturating_sub(state.at) as f64 / 1000.0,
    }
}

fn write_text(out: &mut impl Write, shown: &Shown) -> io::Result<()> {
    // The state file's path may hold anything; the store's address is escaped already.
    let place = match shown.store.as_str() {
        "file" => format!("in {}", printable(&shown.location)),
        store => format!("in {store}, key {}", shown.location),
    };
    let Some(state) = &shown.state else {
        return writeln!(
            out,
            "retry budget {} {place}: no state, so a full bucket (no run has used it lately)",
            shown.budget
        );
    };
    let millis = |ms: f64| format_duration(std::time::Duration::from_secs_f64(ms / 1000.0));
    writeln!(out, "retry budget {} {place}:", shown.budget)?;
    let rate = match (state.capacity, state.period_ms, state.full_in_ms) {
        (Some(capacity), Some(period), Some(full_in)) => {
            let full = match full_in > 0.0 {
                true => format!("full in {}", millis(full_in)),
                false => "full".into(),
            };
            format!(
                "of {capacity}, {capacity} more every {}; {full}",
                millis(period)
            )
        }
        _ => "(its rate is unknown: written by an older retry)".into(),
    };
    writeln!(out, "  rate tokens     {:.2} {rate}", state.tokens)?;
    if state.tokens < 0.0 {
        writeln!(
            out,
            "                  ({:.2} reserved by retries waiting for them)",
            -state.tokens
        )?;
    }
    match state.window_ms {
        Some(window) => writeln!(
            out,
            "  earned tokens   {:.2}, fading over {}",
            state.earned,
            millis(window)
        )?,
        None => writeln!(out, "  earned tokens   {:.2}", state.earned)?,
    }
    writeln!(out, "  first attempts  {}", state.first_attempts)?;
    writeln!(out, "  retries         {}", state.retries)?;
    writeln!(out, "  refused         {}", state.refusals)?;
    writeln!(
        out,
        "  last changed    {} ago",
        millis(state.changed_ms_ago)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reference::{object_keys, row_keys};

    /// A state at time 0 with `tokens` and `earned`, after 40 first attempts and 9 retries.
    fn state(tokens: f64, earned: f64) -> BucketState {
        BucketState {
            tokens,
            earned,
            at: 0,
            first_attempts: 40,
            retries: 9,
            refusals: 1,
        }
    }

    /// Terms at `rate`, with a window of a minute.
    fn terms(rate: &str) -> Terms {
        Terms {
            rate: rate.parse().unwrap(),
            ratio: None,
            window: std::time::Duration::from_secs(60),
        }
    }

    #[test]
    fn the_reference_lists_every_key() {
        let shown = Shown {
            budget: "api".into(),
            store: "file".into(),
            location: "/budgets/api".into(),
            state: Some(shown_state(state(1.5, 0.5), Some(terms("5/1m")), 2_000_000)),
        };
        let value = serde_json::to_value(&shown).unwrap();
        assert_eq!(object_keys(&value, &["state"]), row_keys("budget show"));
    }

    #[test]
    fn the_state_is_told_as_of_now_on_the_writers_terms() {
        let state = state(-2.0, 2.0);
        let shown = shown_state(state, Some(terms("4/1m")), 30_000_000);
        assert_eq!((shown.tokens, shown.full_in_ms), (0.0, Some(60_000.0)));
        assert!((shown.earned - 2.0 * (-0.5f64).exp()).abs() < 1e-12);
        assert_eq!(shown.changed_ms_ago, 30_000.0);
        let unknown = shown_state(state, None, 30_000_000);
        assert_eq!(
            (unknown.tokens, unknown.capacity, unknown.full_in_ms),
            (-2.0, None, None)
        );
    }

    #[test]
    fn the_text_says_what_waits_and_when_it_is_full() {
        let shown = |state| Shown {
            budget: "api".into(),
            store: "redis://cache".into(),
            location: "retry:budget:{api}".into(),
            state,
        };
        let mut text = Vec::new();
        write_text(&mut text, &shown(None)).unwrap();
        assert_eq!(
            String::from_utf8(text).unwrap(),
            "retry budget api in redis://cache, key retry:budget:{api}: no state, so a full \
             bucket (no run has used it lately)\n"
        );
        let mut text = Vec::new();
        let now = shown_state(state(-1.0, 0.0), Some(terms("5/1m")), 0);
        write_text(&mut text, &shown(Some(now))).unwrap();
        let text = String::from_utf8(text).unwrap();
        assert!(
            text.contains("rate tokens     -1.00 of 5, 5 more every 1m; full in 1m12s\n"),
            "{text}"
        );
        assert!(
            text.contains("(1.00 reserved by retries waiting for them)"),
            "{text}"
        );
    }
}
