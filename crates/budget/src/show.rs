//! `retry budget show NAME`: a budget's state now, read from its store without changing it, as
//! text or as one JSON object, on the clock of the store (the Redis server's, or this machine's
//! for the file store) and the terms of the run that changed it last.

use std::io::{self, Write};

use serde::Serialize;

use super::BudgetName;
use super::file;
use super::model::{BucketState, Terms};
use super::redis::{Failure, RedisStore};
use super::store::Location;
use crate::waiter::Waiter;
use retry_policy::duration::{format_duration, to_millis};
use retry_policy::printable::printable;

/// Which budget to show, and where it lives.
#[derive(Debug)]
pub struct ShowRequest {
    /// The budget's name.
    pub name: BudgetName,
    /// Where it lives.
    pub location: Location,
}

/// The form `retry budget show` prints the state in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// Lines for a person.
    Text,
    /// One JSON object.
    Json,
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

/// Why `retry budget show` printed nothing, or not all of it.
#[derive(Debug)]
pub enum ShowError {
    /// The state could not be read; the message says why.
    Unreadable(String),
    /// The state could not be written to `out`.
    Write(io::Error),
}

/// Print the state of the budget `request` names to `out`, in `format`, reading a shared store
/// with the waiter `watch`.
pub fn print(
    request: &ShowRequest,
    format: Format,
    watch: &impl Waiter,
    out: &mut impl Write,
) -> Result<(), ShowError> {
    let shown = read(request, watch).map_err(ShowError::Unreadable)?;
    match format {
        Format::Text => write_text(out, &shown),
        Format::Json => serde_json::to_writer(&mut *out, &shown)
            .map_err(io::Error::from)
            .and_then(|()| writeln!(out)),
    }
    .map_err(ShowError::Write)
}

/// The budget's state now, from its store.
fn read(request: &ShowRequest, watch: &impl Waiter) -> Result<Shown, String> {
    let name = &request.name;
    let (location, written, now) = match &request.location {
        Location::File(dir) => {
            let written = file::peek(dir, name).map_err(|refused| refused.to_string())?;
            let path = dir.join(name.as_str()).display().to_string();
            (path, written, file::now_micros())
        }
        Location::Shared { address, .. } => {
            let mut store = RedisStore::new(address.clone(), name, watch);
            let stored = store.show().map_err(|failure| {
                let why = match failure {
                    Failure::Failed(why) => why,
                    Failure::Interrupted(_) => "interrupted".to_string(),
                };
                format!(
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
