//! `retry budget show NAME`: a budget's state now, read from its store without changing it, as
//! text or as one JSON object, on the clock of the store (the Redis server's, or this machine's
//! for the file store) and on the budget's terms (`retry budget set`'s, or the defaults).

use std::io::{self, Write};

use serde::Serialize;

use super::BudgetName;
use super::breaker::{BreakerState, BreakerTerms};
use super::file;
use super::model::{BucketState, DEFAULT_TERMS, Terms};
use super::redis::{RedisStore, TermsDamaged};
use super::store::Location;
use super::unread::Unread;
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

/// What `retry budget show` prints: the `budget show` object of the reference.
#[derive(Debug, Serialize)]
struct Shown {
    budget: String,
    /// `file`, or the shared store's address, its password hidden.
    store: String,
    /// The state file's path, or the Redis key.
    location: String,
    /// The budget's terms, which every run sharing it uses.
    terms: ShownTerms,
    /// None when the store has no state: a full bucket.
    state: Option<ShownState>,
    /// The breaker now, when the budget has one.
    breaker: Option<ShownBreaker>,
}

/// A breaker's terms.
#[derive(Debug, Serialize)]
struct ShownBreakerTerms {
    give_ups: u32,
    window_ms: f64,
    share: f64,
    hosts: u32,
    cool_down_ms: f64,
}

/// A breaker now.
#[derive(Debug, Serialize)]
struct ShownBreaker {
    /// `closed`; `open`; `half_open` (its cool-down over, the next run is its probe); or
    /// `probing` (a probe's attempt is out, and decides).
    state: &'static str,
    /// How long it stays open, or the probe holds it, yet; null when closed.
    open_for_ms: Option<f64>,
    /// Runs that ended, and that gave up, in its current window.
    runs: u32,
    give_ups: u32,
}

/// The budget's terms: those `retry budget set` kept, or the defaults.
#[derive(Debug, Serialize)]
struct ShownTerms {
    capacity: u32,
    period_ms: f64,
    ratio: Option<f64>,
    window_ms: f64,
    /// Whether `retry budget set` gave them (else they are the defaults).
    set: bool,
    /// When runs stop making attempts, if ever.
    breaker: Option<ShownBreakerTerms>,
}

/// The state as of now, on the budget's terms.
#[derive(Debug, Serialize)]
struct ShownState {
    tokens: f64,
    full_in_ms: f64,
    earned: f64,
    first_attempts: u64,
    retries: u64,
    refusals: u64,
    /// How long every run's retries are still held for a wait a command asked for (0: none).
    held_for_ms: f64,
    changed_ms_ago: f64,
}

/// Why `retry budget show` (or `retry job show`, `retry job history`) printed nothing, or not
/// all of it.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
#[allow(
    missing_docs,
    reason = "a field is the value its variant's message names"
)]
pub enum ShowError {
    /// The state could not be read, in words that say what (a file store's refusal names its
    /// path).
    #[error(transparent)]
    Unread(Unread),
    /// What could not be read ("retry budget api from redis://host"), and why.
    #[error("cannot read {what}")]
    Unreadable {
        what: String,
        #[source]
        why: Unread,
    },
    /// The state could not be written to `out`.
    #[error("cannot write it")]
    Write(#[source] io::Error),
}

/// Print the state of the budget `request` names to `out`, in `format`, reading a shared store
/// with the waiter `watch`.
pub fn print(
    request: &ShowRequest,
    format: Format,
    watch: &impl Waiter,
    out: &mut impl Write,
) -> Result<(), ShowError> {
    let shown = read(request, watch)?;
    write_as(format, out, &shown, write_text)
}

/// Write `shown` to `out` as one line of JSON, or in words as `text` writes it.
pub(crate) fn write_as<T: Serialize, W: Write>(
    format: Format,
    out: &mut W,
    shown: &T,
    text: impl FnOnce(&mut W, &T) -> io::Result<()>,
) -> Result<(), ShowError> {
    match format {
        Format::Text => text(out, shown),
        Format::Json => serde_json::to_writer(&mut *out, shown)
            .map_err(io::Error::from)
            .and_then(|()| writeln!(out)),
    }
    .map_err(ShowError::Write)
}

/// The terms the store at `location` keeps for the budget `name`; none when none were set.
/// A file store's place is checked as setting the terms checks it (and made), so that what
/// cannot be used there is said as that says it.
pub fn kept_terms(
    name: &BudgetName,
    location: &Location,
    watch: &impl Waiter,
) -> Result<Option<Terms>, ShowError> {
    if let Location::File(dir) = location {
        file::BudgetFile::check(dir, name).map_err(|refused| ShowError::Unread(refused.into()))?;
    }
    let request = ShowRequest {
        name: name.clone(),
        location: location.clone(),
    };
    read_stored(&request, watch).map(|(_, _, terms, _, _)| terms)
}

/// What the store keeps of a budget: where, its state, its terms, its breaker, and the store's
/// now.
type Stored = (
    String,
    Option<BucketState>,
    Option<Terms>,
    Option<BreakerState>,
    u64,
);

/// The budget's state now, from its store.
fn read(request: &ShowRequest, watch: &impl Waiter) -> Result<Shown, ShowError> {
    let stored = read_stored(request, watch)?;
    let set = stored.2.is_some() && stored.2 != Some(DEFAULT_TERMS);
    Ok(shown_from(request, stored, set))
}

/// What the store keeps of the budget `request` names, read with the waiter `watch`.
fn read_stored(request: &ShowRequest, watch: &impl Waiter) -> Result<Stored, ShowError> {
    let name = &request.name;
    Ok(match &request.location {
        Location::File(dir) => {
            let written =
                file::peek(dir, name).map_err(|refused| ShowError::Unread(refused.into()))?;
            let path = dir.join(name.as_str()).display().to_string();
            let (state, terms, breaker) = match written {
                Some(kept) => (Some(kept.state), Some(kept.terms), Some(kept.breaker)),
                None => (None, None, None),
            };
            (path, state, terms, breaker, file::now_micros())
        }
        Location::Shared { address, .. } => {
            let mut store = RedisStore::new(address.clone(), name, watch);
            let cannot = |why: Unread| ShowError::Unreadable {
                what: format!("retry budget {} from {address}", name.as_str()),
                why,
            };
            let stored = store.show().map_err(|failure| cannot(failure.into()))?;
            let terms = stored.terms.map_err(|TermsDamaged| {
                cannot(Unread::Damaged {
                    at: None,
                    mend: "its terms are not ones retry budget set stores",
                })
            })?;
            let key = store.key().to_string();
            (key, stored.written, terms, stored.breaker, stored.now)
        }
    })
}

/// The tail of [`read`]: the budget's state made into what is shown.
fn shown_from(
    request: &ShowRequest,
    (location, written, terms, breaker, now): Stored,
    set: bool,
) -> Shown {
    let name = &request.name;
    let terms = terms.unwrap_or(DEFAULT_TERMS);
    Shown {
        budget: name.as_str().to_string(),
        store: request.location.to_string(),
        location,
        terms: ShownTerms {
            capacity: terms.rate.tokens,
            period_ms: to_millis(terms.rate.period),
            ratio: terms.ratio,
            window_ms: to_millis(terms.window),
            set,
            breaker: terms.breaker.map(shown_breaker_terms),
        },
        state: written.map(|state| shown_state(state, &terms, now)),
        breaker: terms
            .breaker
            .map(|_| shown_breaker(&breaker.unwrap_or_default(), now)),
    }
}

fn shown_breaker_terms(terms: BreakerTerms) -> ShownBreakerTerms {
    ShownBreakerTerms {
        give_ups: terms.give_ups,
        window_ms: to_millis(terms.window),
        share: terms.share,
        hosts: terms.hosts,
        cool_down_ms: to_millis(terms.cool_down),
    }
}

/// The breaker's `state` as of `now`.
fn shown_breaker(state: &BreakerState, now: u64) -> ShownBreaker {
    let open_for = state.open_for(now);
    ShownBreaker {
        state: match (state.open_until, open_for) {
            (0, _) => "closed",
            (_, Some(_)) if state.probe_until > now => "probing",
            (_, Some(_)) => "open",
            (_, None) => "half_open",
        },
        open_for_ms: open_for.map(to_millis),
        runs: state.runs,
        give_ups: state.give_ups,
    }
}

/// `state` as of `now`, advanced on `terms`.
fn shown_state(state: BucketState, terms: &Terms, now: u64) -> ShownState {
    let current = terms.advance(Some(terms.adopt(state)), now);
    ShownState {
        tokens: current.tokens,
        full_in_ms: to_millis(terms.full_in(&current)),
        earned: current.earned,
        first_attempts: current.first_attempts,
        retries: current.retries,
        refusals: current.refusals,
        held_for_ms: current.not_before.saturating_sub(now) as f64 / 1000.0,
        changed_ms_ago: now.saturating_sub(state.at) as f64 / 1000.0,
    }
}

fn write_text(out: &mut impl Write, shown: &Shown) -> io::Result<()> {
    // The state file's path may hold anything; the store's address is escaped already.
    let place = match shown.store.as_str() {
        "file" => format!("in {}", printable(&shown.location)),
        store => format!("in {store}, key {}", shown.location),
    };
    let millis = |ms: f64| format_duration(std::time::Duration::from_secs_f64(ms / 1000.0));
    let terms = &shown.terms;
    let mut described = format!("{}/{}", terms.capacity, millis(terms.period_ms));
    if let Some(ratio) = terms.ratio {
        described += &format!(
            " plus {ratio} per first attempt over {}",
            millis(terms.window_ms)
        );
    }
    let whose = match terms.set {
        true => "kept by retry budget set",
        false => "the defaults; retry budget set changes them",
    };
    let Some(state) = &shown.state else {
        return writeln!(
            out,
            "retry budget {} {place}: no state, so a full bucket (no run has used it lately); \
             terms {described} ({whose})",
            shown.budget
        );
    };
    writeln!(out, "retry budget {} {place}:", shown.budget)?;
    writeln!(out, "  terms           {described} ({whose})")?;
    let full = match state.full_in_ms > 0.0 {
        true => format!("full in {}", millis(state.full_in_ms)),
        false => "full".into(),
    };
    writeln!(
        out,
        "  rate tokens     {:.2} of {}; {full}",
        state.tokens, terms.capacity
    )?;
    if state.tokens < 0.0 {
        writeln!(
            out,
            "                  ({:.2} reserved by retries waiting for them)",
            -state.tokens
        )?;
    }
    writeln!(out, "  earned tokens   {:.2}", state.earned)?;
    writeln!(out, "  first attempts  {}", state.first_attempts)?;
    writeln!(out, "  retries         {}", state.retries)?;
    writeln!(out, "  refused         {}", state.refusals)?;
    if state.held_for_ms > 0.0 {
        writeln!(
            out,
            "  held            no retry for another {}, as a command asked",
            millis(state.held_for_ms)
        )?;
    }
    writeln!(
        out,
        "  last changed    {} ago",
        millis(state.changed_ms_ago)
    )?;
    write_breaker(out, shown)
}

/// The breaker's lines, when the budget has one.
fn write_breaker(out: &mut impl Write, shown: &Shown) -> io::Result<()> {
    let (Some(terms), Some(breaker)) = (&shown.terms.breaker, &shown.breaker) else {
        return Ok(());
    };
    let millis = |ms: f64| format_duration(std::time::Duration::from_secs_f64(ms / 1000.0));
    // The hosts are counted only where a fleet's runs meet: on this machine's file, all are one.
    let hosts = match (shown.store.as_str(), terms.hosts) {
        ("file", _) => String::new(),
        (_, 1) => ", from any host".to_string(),
        (_, hosts) => format!(", from at least {hosts} hosts"),
    };
    writeln!(
        out,
        "  breaker         open after {} give-ups in {} that are {} of the runs{hosts}; \
         cool-down {}, doubling",
        terms.give_ups,
        millis(terms.window_ms),
        terms.share,
        millis(terms.cool_down_ms)
    )?;
    let now = match (breaker.state, breaker.open_for_ms) {
        ("open", Some(ms)) => format!("open for another {}", millis(ms)),
        ("probing", Some(ms)) => {
            format!("probing: one run's attempt decides, within {}", millis(ms))
        }
        ("half_open", _) => "half open: the next run is its probe".into(),
        _ => "closed".into(),
    };
    writeln!(
        out,
        "  breaker now     {now}; {} of {} runs gave up in its window",
        breaker.give_ups, breaker.runs
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
            not_before: 0,
        }
    }

    /// Terms at `rate`, with a window of a minute.
    fn terms(rate: &str) -> Terms {
        Terms {
            rate: rate.parse().unwrap(),
            ratio: None,
            window: std::time::Duration::from_secs(60),
            breaker: None,
        }
    }

    fn shown(state: Option<ShownState>) -> Shown {
        let terms = terms("5/1m");
        Shown {
            budget: "api".into(),
            store: "redis://cache".into(),
            location: "retry:budget:{api}".into(),
            terms: ShownTerms {
                capacity: terms.rate.tokens,
                period_ms: 60_000.0,
                ratio: None,
                window_ms: 60_000.0,
                set: true,
                breaker: None,
            },
            state,
            breaker: None,
        }
    }

    #[test]
    fn the_reference_lists_every_key() {
        let mut shown = shown(Some(shown_state(
            state(1.5, 0.5),
            &terms("5/1m"),
            2_000_000,
        )));
        let breaker = BreakerTerms {
            give_ups: 5,
            window: std::time::Duration::from_secs(60),
            share: 0.5,
            hosts: 2,
            cool_down: std::time::Duration::from_secs(30),
        };
        shown.terms.breaker = Some(shown_breaker_terms(breaker));
        shown.breaker = Some(shown_breaker(&BreakerState::default(), 0));
        let value = serde_json::to_value(&shown).unwrap();
        let mut keys = object_keys(&value, &["terms", "state", "breaker"]);
        keys.extend(object_keys(&value["terms"]["breaker"], &[]));
        keys.sort();
        keys.dedup();
        assert_eq!(keys, row_keys("budget show"));
    }

    #[test]
    fn the_state_is_told_as_of_now_on_the_budgets_terms() {
        let state = state(-2.0, 2.0);
        let shown = shown_state(state, &terms("4/1m"), 30_000_000);
        assert_eq!((shown.tokens, shown.full_in_ms), (0.0, 60_000.0));
        assert!((shown.earned - 2.0 * (-0.5f64).exp()).abs() < 1e-12);
        assert_eq!(shown.changed_ms_ago, 30_000.0);
    }

    #[test]
    fn the_text_says_the_terms_what_waits_and_when_it_is_full() {
        let mut text = Vec::new();
        write_text(&mut text, &shown(None)).unwrap();
        assert_eq!(
            String::from_utf8(text).unwrap(),
            "retry budget api in redis://cache, key retry:budget:{api}: no state, so a full \
             bucket (no run has used it lately); terms 5/1m (kept by retry budget set)\n"
        );
        let mut text = Vec::new();
        let now = shown_state(state(-1.0, 0.0), &terms("5/1m"), 0);
        write_text(&mut text, &shown(Some(now))).unwrap();
        let text = String::from_utf8(text).unwrap();
        assert!(
            text.contains("  terms           5/1m (kept by retry budget set)\n"),
            "{text}"
        );
        assert!(
            text.contains("rate tokens     -1.00 of 5; full in 1m12s\n"),
            "{text}"
        );
        assert!(
            text.contains("(1.00 reserved by retries waiting for them)"),
            "{text}"
        );
    }

    #[test]
    fn the_breaker_counts_hosts_only_where_a_fleet_shares_the_store() {
        let breaker_line = |store: &str, hosts: u32| {
            let mut shown = shown(None);
            shown.store = store.into();
            let terms = BreakerTerms {
                give_ups: 5,
                window: std::time::Duration::from_secs(60),
                share: 0.5,
                hosts,
                cool_down: std::time::Duration::from_secs(30),
            };
            shown.terms.breaker = Some(shown_breaker_terms(terms));
            shown.breaker = Some(shown_breaker(&BreakerState::default(), 0));
            let mut text = Vec::new();
            write_breaker(&mut text, &shown).unwrap();
            String::from_utf8(text)
                .unwrap()
                .lines()
                .next()
                .unwrap()
                .to_string()
        };
        assert_eq!(
            breaker_line("redis://cache", 2),
            "  breaker         open after 5 give-ups in 1m that are 0.5 of the runs, from at \
             least 2 hosts; cool-down 30s, doubling"
        );
        assert!(breaker_line("redis://cache", 1).contains("runs, from any host;"));
        assert!(breaker_line("file", 2).contains("of the runs; cool-down"));
    }
}
