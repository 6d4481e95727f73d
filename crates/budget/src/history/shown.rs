//! `retry job history JOB`: a job's history of runs, read from the store without changing
//! it, as text or as one JSON object: its last runs counted and in order, the pass rate at the
//! first attempt and after retries, each with its 95 % Wilson interval, and the totals.

use std::io::{self, Write};
use std::time::Duration;

use serde::Serialize;

use super::kept::{self, history_name};
use super::{Counts, History, RunKind, wilson};
use crate::show::{Format, ShowError, write_as};
use crate::store::Location;
use crate::waiter::Waiter;
use retry_policy::duration::{format_duration, to_millis};
use retry_policy::printable::printable;

/// What `retry job history` prints: the `job history` object of the reference.
#[derive(Debug, Serialize)]
struct Shown {
    job: String,
    /// `file`, or the shared store's address with its password hidden.
    store: String,
    /// The history's file, or its Redis key.
    location: String,
    /// The last runs, counted, and in order, oldest first (`c` clean, `f` flaky, `x` failed).
    recent: ShownCounts,
    sequence: String,
    /// At the first attempt: clean runs over the last runs.
    pass_rate: Option<Rate>,
    /// In the end: clean and flaky runs over the last runs.
    eventual_pass_rate: Option<Rate>,
    /// Every run counted.
    totals: ShownCounts,
    /// How long the last runs took (those recorded since durations are kept).
    took: Option<ShownTook>,
    /// For a job with no runs kept: the jobs with a history in the same file store.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    others: Vec<String>,
}

#[derive(Debug, Serialize)]
struct ShownCounts {
    runs: u64,
    clean: u64,
    flaky: u64,
    failed: u64,
}

/// How long the last runs took, in milliseconds.
#[derive(Debug, Serialize)]
struct ShownTook {
    runs: usize,
    p50_ms: f64,
    p95_ms: f64,
}

/// A rate, and its 95 % Wilson interval.
#[derive(Debug, Serialize)]
struct Rate {
    rate: f64,
    low: f64,
    high: f64,
}

/// Print the history of the job `job` in the store at `location` to `out`, in `format`.
pub fn print(
    job: &str,
    location: &Location,
    format: Format,
    watch: &impl Waiter,
    out: &mut impl Write,
) -> Result<(), ShowError> {
    let history = kept::read(location, &history_name(job), watch)
        .map_err(|why| ShowError::Unreadable {
            what: format!("the history of job {job}{}", location.named_if_shared()),
            why,
        })?
        .unwrap_or_default();
    let mut shown = shown(job, location, &history);
    if shown.totals.runs == 0 {
        shown.others = kept::jobs_with_history(location, 10);
    }
    write_as(format, out, &shown, write_text)
}

fn shown(job: &str, location: &Location, history: &History) -> Shown {
    let recent = history.recent_counts();
    let runs = recent.runs();
    let rate = |passed: u64| {
        wilson(passed, runs).map(|(low, high)| Rate {
            rate: passed as f64 / runs as f64,
            low,
            high,
        })
    };
    Shown {
        job: job.to_string(),
        store: location.to_string(),
        location: kept::place(location, &history_name(job)),
        recent: counted(recent),
        sequence: history.recent().map(RunKind::letter).collect(),
        pass_rate: rate(recent.clean),
        eventual_pass_rate: rate(recent.clean + recent.flaky),
        totals: counted(history.totals),
        took: history.took().map(|took| ShownTook {
            runs: took.runs,
            p50_ms: to_millis(took.median),
            p95_ms: to_millis(took.p95),
        }),
        others: Vec::new(),
    }
}

fn counted(counts: Counts) -> ShownCounts {
    ShownCounts {
        runs: counts.runs(),
        clean: counts.clean,
        flaky: counts.flaky,
        failed: counts.failed,
    }
}

fn write_text(out: &mut impl Write, shown: &Shown) -> io::Result<()> {
    let job = printable(&shown.job);
    let place = match shown.store.as_str() {
        "file" => printable(&shown.location),
        store => format!("{store}, key {}", shown.location),
    };
    let Some(pass) = &shown.pass_rate else {
        let others = match shown.others.is_empty() {
            true => String::new(),
            false => format!(
                " (jobs with runs kept here: {})",
                printable(&shown.others.join(", "))
            ),
        };
        return writeln!(out, "job {job} in {place}: no runs kept yet{others}");
    };
    let recent = &shown.recent;
    let percent = |rate: &Rate| {
        format!(
            "{:.0}% (95% interval {:.0}% to {:.0}%)",
            100.0 * rate.rate,
            100.0 * rate.low,
            100.0 * rate.high
        )
    };
    writeln!(out, "job {job} in {place}:")?;
    writeln!(
        out,
        "  {:<17} {} clean, {} flaky, {} failed",
        last_runs(recent.runs),
        recent.clean,
        recent.flaky,
        recent.failed
    )?;
    writeln!(out, "  passed at once    {}", percent(pass))?;
    if let Some(eventual) = &shown.eventual_pass_rate {
        writeln!(out, "  passed in the end {}", percent(eventual))?;
    }
    writeln!(
        out,
        "  in order          {} (c clean, f flaky, x failed)",
        shown.sequence
    )?;
    if let Some(took) = &shown.took {
        let shown = |ms: f64| format_duration(Duration::from_secs_f64(ms / 1000.0));
        writeln!(
            out,
            "  took              {} median, {} 95th percentile ({})",
            shown(took.p50_ms),
            shown(took.p95_ms),
            last_runs(took.runs as u64)
        )?;
    }
    let totals = &shown.totals;
    writeln!(
        out,
        "  all runs          {} clean, {} flaky, {} failed",
        totals.clean, totals.flaky, totals.failed
    )
}

/// "last 12 runs", or "the last run" when there is one.
fn last_runs(runs: u64) -> String {
    match runs {
        1 => "the last run".to_string(),
        _ => format!("last {runs} runs"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reference::{object_keys, row_keys};

    #[test]
    fn the_reference_lists_every_key() {
        let mut history = History::default();
        history.record(RunKind::Clean, Duration::from_secs(2));
        let mut shown = shown("j", &Location::File("/s".into()), &history);
        shown.others = vec!["k".into()];
        let value = serde_json::to_value(shown).unwrap();
        let mut keys = object_keys(&value, &["recent", "pass_rate", "totals", "took"]);
        keys.extend(object_keys(&value["pass_rate"], &[]));
        keys.extend(object_keys(&value["took"], &[]));
        keys.sort();
        keys.dedup();
        assert_eq!(keys, row_keys("job history"));
    }

    #[test]
    fn says_the_rates_and_their_intervals() {
        let mut history = History::default();
        for kind in [
            RunKind::Clean,
            RunKind::Flaky,
            RunKind::Clean,
            RunKind::Failed,
        ] {
            history.record(kind, Duration::from_secs(2));
        }
        let location = Location::File("/state".into());
        let mut out = Vec::new();
        write_text(&mut out, &shown("nightly", &location, &history)).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(
            text.contains("  last 4 runs       2 clean, 1 flaky, 1 failed\n"),
            "{text}"
        );
        assert!(
            text.contains("passed at once    50% (95% interval 15% to 85%)"),
            "{text}"
        );
        assert!(text.contains("passed in the end 75%"), "{text}");
        assert!(text.contains("in order          cfcx"), "{text}");
        let mut out = Vec::new();
        write_text(&mut out, &shown("new", &location, &History::default())).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "job new in /state/.history/new: no runs kept yet\n"
        );
    }

    #[test]
    fn one_run_is_the_last_run_and_every_count_is_in_one_column() {
        let mut history = History::default();
        history.record(RunKind::Failed, Duration::from_secs(2));
        let location = Location::File("/state".into());
        let mut out = Vec::new();
        write_text(&mut out, &shown("nightly", &location, &history)).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(text.contains("  the last run      0 clean"), "{text}");
        assert!(text.contains("percentile (the last run)"), "{text}");
        // Each value starts after the longest label, "passed in the end".
        let aligned = |line: &str| line.as_bytes()[19] == b' ' && line.as_bytes()[20] != b' ';
        assert!(text.lines().skip(1).all(aligned), "{text}");
    }
}
