//! `--report FILE`: a JSON summary of the run, written when it ends, for a CI job to archive.
//!
//! The path is checked before the first attempt and written as `target` says. A write that fails
//! at the end changes the exit status to 125. The schema is the `Report` and `AttemptRecord`
//! types, and the table in the reference.
//!
//! However long the run, the report stays bounded: it keeps the first and the last attempts in
//! full (`KEPT_AT_EACH_END` of each), and counts the rest by status.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use serde::Serialize;
use serde_json::Value;

use crate::first_and_last::FirstAndLast;
use crate::report::end_file::EndFile;
use crate::report::target::{ReportError, ReportTarget};
use retry_policy::deadline::DeadlineSource;
use retry_policy::duration::to_millis;
use retry_policy::events::{Event, EventSink};
use retry_policy::exit::Exit;
use retry_policy::outcome::{AttemptOutcome, Next, Reason, RunEnd, WaitCause};
use retry_policy::run_id::RunId;
use retry_process::signals::signal::{Name, Platform};
use retry_process::signals::{Signal, SignalWatch};

/// The report's format version, raised when a key changes meaning or goes away.
const VERSION: u32 = 1;

/// How many attempts the report keeps in full at each end of the run; those between are counted.
const KEPT_AT_EACH_END: usize = 50;

/// The report: one object, written when the run ends.
#[derive(Debug, Serialize)]
struct Report<'a> {
    version: u32,
    /// The options in force.
    options: &'a Value,
    /// The `--splay` wait before the first attempt, if there was one.
    splay_ms: Option<f64>,
    /// The first and the last attempts, in full.
    attempts: Vec<&'a AttemptRecord>,
    /// Every attempt the run made.
    attempts_total: u64,
    /// The attempts left out of `attempts`, between its first and its last ones.
    attempts_omitted: u64,
    /// How many attempts ended with each status, over every attempt.
    statuses: &'a BTreeMap<u8, u64>,
    exit_code: u8,
    /// Why the run ended, as in the `done` event.
    reason: &'static str,
    /// The signal that stopped the run, if one did.
    signal: Option<Name>,
    /// What went wrong, for a command that could not start or output that was lost.
    error: Option<&'a str>,
    /// Where the deadline that ended the run came from, when one did.
    deadline: Option<DeadlineSource>,
    elapsed_ms: f64,
    /// The run's depth among nested retries: 1 for the outermost.
    depth: u32,
    /// Whether it succeeded only after failed attempts.
    flaky: bool,
    /// The run's identity (`RETRY_RUN_ID`).
    run_id: RunId,
    /// What the run warned of, each once, in order (the first [`MOST_WARNINGS`]).
    warnings: &'a [String],
}

/// The most warnings a report keeps.
const MOST_WARNINGS: usize = 20;

/// One attempt in the report: every key is always there, `null` when it does not apply.
#[derive(Clone, Debug, Default, Serialize)]
struct AttemptRecord {
    attempt: u64,
    attempt_since_reset: u64,
    start_offset_ms: f64,
    duration_ms: Option<f64>,
    /// 128+N for signal N, 124 for a time limit, 126 or 127 if it could not start.
    status: Option<u8>,
    signal: Option<Name>,
    timed_out: bool,
    verdict: Option<&'static str>,
    rule: Option<String>,
    pattern: Option<String>,
    /// A limited rule that named the end but had given all its retries.
    rule_spent: Option<String>,
    reset: bool,
    /// The wait the command asked for, capped at `RETRY_MAX_REQUESTED_WAIT`.
    requested_wait_ms: Option<f64>,
    requested_stop: bool,
    wait_after_ms: Option<f64>,
    wait_cause: Option<WaitCause>,
    /// Why the command could not start, if it could not.
    error: Option<String>,
}

/// Collects a run's attempts and writes the report when the run ends.
pub(crate) struct ReportWriter {
    target: ReportTarget,
    options: Value,
    /// The run's depth among nested retries.
    depth: u32,
    /// The run's identity.
    run_id: RunId,
    /// The `--splay` wait before the first attempt, once it is drawn.
    splay: Option<Duration>,
    attempts: KeptAttempts,
    /// What the run warned of, each once.
    warnings: Vec<String>,
}

/// The attempts a report keeps: the first and the last ones, and counts of all by status.
#[derive(Debug)]
struct KeptAttempts {
    records: FirstAndLast<AttemptRecord>,
    /// How many attempts ended with each status.
    statuses: BTreeMap<u8, u64>,
}

impl Default for KeptAttempts {
    fn default() -> Self {
        KeptAttempts {
            records: FirstAndLast::new(KEPT_AT_EACH_END),
            statuses: BTreeMap::new(),
        }
    }
}

impl KeptAttempts {
    fn start(&mut self, record: AttemptRecord) {
        self.records.push(record);
    }

    /// The attempt under way, or the last one.
    fn current(&mut self) -> Option<&mut AttemptRecord> {
        self.records.latest_mut()
    }

    /// Count the status the attempt under way ended with.
    fn count(&mut self, status: u8) {
        *self.statuses.entry(status).or_default() += 1;
    }
}

impl ReportWriter {
    /// Prepare to write the report of the run `run_id` to `target`, recording `options` as the
    /// options in force.
    pub(crate) fn new(
        target: ReportTarget,
        options: &impl Serialize,
        depth: u32,
        run_id: RunId,
    ) -> Self {
        ReportWriter {
            target,
            options: serde_json::to_value(options).expect("the options serialise"),
            depth,
            run_id,
            splay: None,
            attempts: KeptAttempts::default(),
            warnings: Vec::new(),
        }
    }
}

impl EndFile for ReportWriter {
    fn write(
        mut self: Box<Self>,
        end: &RunEnd,
        watch: &SignalWatch,
        deadline: Option<Instant>,
    ) -> Result<(), ReportError> {
        if let (Reason::SpawnFailed(failure, error), Some(record)) =
            (&end.reason, self.attempts.current())
        {
            let status = Exit::from(*failure).status();
            record.status = Some(status);
            record.duration_ms = Some(0.0);
            record.verdict = Some("stop");
            record.error = Some(error.clone());
            self.attempts.count(status);
        }
        let report = Report {
            version: VERSION,
            options: &self.options,
            splay_ms: self.splay.map(to_millis),
            attempts: self.attempts.records.kept().collect(),
            attempts_total: self.attempts.records.total(),
            attempts_omitted: self.attempts.records.omitted(),
            statuses: &self.attempts.statuses,
            exit_code: Exit::of(end).status(),
            reason: end.reason.name(),
            signal: match end.reason {
                Reason::Interrupted(signal, _) => Some(signal.name()),
                _ => None,
            },
            error: end.reason.error(),
            deadline: end.reason.deadline(),
            elapsed_ms: to_millis(end.elapsed),
            depth: self.depth,
            flaky: end.flaky(),
            run_id: self.run_id,
            warnings: &self.warnings,
        };
        let mut text = serde_json::to_vec_pretty(&report).expect("a report serialises");
        text.push(b'\n');
        self.target.write(text, watch, deadline)
    }
}

impl EventSink for ReportWriter {
    fn emit(&mut self, event: &Event) {
        match event {
            Event::AttemptStart { numbering, at } => self.attempts.start(AttemptRecord {
                attempt: numbering.attempt,
                attempt_since_reset: numbering.since_reset,
                start_offset_ms: to_millis(*at),
                ..AttemptRecord::default()
            }),
            Event::AttemptEnd(outcome) => {
                if let Some(record) = self.attempts.current() {
                    record.record(outcome);
                    self.attempts.count(outcome.termination.status());
                }
            }
            Event::Splay(wait) => self.splay = Some(*wait),
            Event::Warning(message)
                if self.warnings.len() < MOST_WARNINGS && !self.warnings.contains(message) =>
            {
                self.warnings.push(message.clone());
            }
            Event::Done(_)
            | Event::Deadline(..)
            | Event::JobWait { .. }
            | Event::Warning(_)
            | Event::HookEnd(_)
            | Event::Failed(_) => {}
        }
    }
}

impl AttemptRecord {
    fn record(&mut self, outcome: &AttemptOutcome) {
        self.duration_ms = Some(to_millis(outcome.duration));
        self.status = Some(outcome.termination.status());
        self.signal = outcome.termination.signal().map(Signal::name);
        self.timed_out = outcome.termination.time_limit().is_some();
        self.verdict = Some(outcome.next.verdict());
        self.rule = Some(outcome.rule.described.to_string());
        self.pattern = outcome.rule.pattern.as_deref().map(str::to_string);
        self.rule_spent = outcome.rule.spent.as_deref().map(str::to_string);
        self.reset = outcome.reset;
        self.requested_wait_ms = outcome.requested_wait().map(to_millis);
        self.requested_stop = outcome.requested_stop();
        if let Next::Retry { wait, cause } = outcome.next {
            self.wait_after_ms = Some(to_millis(wait));
            self.wait_cause = Some(cause);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reference::{object_keys, row_keys, table_labels};

    #[test]
    fn a_long_run_keeps_its_first_and_last_attempts_and_counts_all() {
        let mut kept = KeptAttempts::default();
        for attempt in 1..=130 {
            kept.start(AttemptRecord {
                attempt,
                ..AttemptRecord::default()
            });
            kept.count(if attempt % 2 == 0 { 1 } else { 124 });
        }
        let numbers: Vec<u64> = kept.records.kept().map(|record| record.attempt).collect();
        let expected: Vec<u64> = (1..=50).chain(81..=130).collect();
        assert_eq!(numbers, expected);
        assert_eq!((kept.records.total(), kept.records.omitted()), (130, 30));
        assert_eq!(kept.statuses, BTreeMap::from([(1, 65), (124, 65)]));
        assert_eq!(kept.current().map(|record| record.attempt), Some(130));
    }

    #[test]
    fn a_short_run_keeps_every_attempt() {
        let mut kept = KeptAttempts::default();
        for attempt in 1..=3 {
            kept.start(AttemptRecord {
                attempt,
                ..AttemptRecord::default()
            });
        }
        assert_eq!(kept.records.kept().count(), 3);
        assert_eq!((kept.records.total(), kept.records.omitted()), (3, 0));
        assert_eq!(kept.current().map(|record| record.attempt), Some(3));
    }

    #[test]
    fn the_reference_lists_every_key_of_the_report() {
        let end = RunEnd {
            attempts: 0,
            last: None,
            last_unready: None,
            reason: Reason::Exhausted,
            elapsed: Duration::ZERO,
            report_error: None,
            flaky_exit: None,
        };
        let options = serde_json::json!({});
        let attempt = AttemptRecord::default();
        let report = Report {
            version: VERSION,
            options: &options,
            splay_ms: None,
            attempts: vec![&attempt],
            attempts_total: 1,
            attempts_omitted: 0,
            statuses: &BTreeMap::new(),
            exit_code: Exit::of(&end).status(),
            reason: end.reason.name(),
            signal: None,
            error: None,
            deadline: Some(DeadlineSource::Schedule),
            elapsed_ms: 0.0,
            depth: 1,
            flaky: false,
            run_id: RunId::from_random([0; 16]),
            warnings: &[],
        };
        let report = serde_json::to_value(&report).unwrap();
        assert_eq!(
            object_keys(&report, &[]),
            table_labels("### The run report")
        );
        assert_eq!(
            object_keys(&serde_json::to_value(&attempt).unwrap(), &[]),
            row_keys("attempts")
        );
    }
}
