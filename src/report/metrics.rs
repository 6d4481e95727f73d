//! `--report prom:FILE`: the run's outcome in the format of node_exporter's textfile collector, for
//! a cron job's monitoring: when the job last ran and last succeeded, its attempts, exit status,
//! duration and time spent waiting, each a gauge named `retry_...` with a `job` label.
//!
//! The file is replaced whole when the run ends (written beside it, then renamed: the collector
//! never reads half a file), readable by every user (the collector runs as its own). The last
//! success is carried over from the file the previous run left when this run did not succeed;
//! that file is read as untrusted input: a regular file, at most [`PREVIOUS_BOUND`] bytes, and a
//! value that is not a finite time since the epoch counts as none.

use std::fs::OpenOptions;
use std::io::Read;
use std::path::Path;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use crate::report::end_file::EndFile;
use crate::report::target::{ReportError, ReportTarget};
use retry_budget::history::{Counts, RunKind};
use retry_budget::named_files;
use retry_policy::events::{Event, EventSink};
use retry_policy::exit::Exit;
use retry_policy::outcome::{Next, Reason, RunEnd};
use retry_process::signals::SignalWatch;

/// The most bytes read of the previous file.
const PREVIOUS_BOUND: u64 = 64 * 1024;

/// The mode of the file: the collector runs as a user of its own.
const MODE: u32 = 0o644;

/// The gauge that carries the last success over from run to run.
const LAST_SUCCESS: &str = "retry_last_success_timestamp_seconds";

/// Collects what the metrics need and writes them when the run ends.
pub(crate) struct Metrics {
    target: ReportTarget,
    /// The `job` label's value, escaped for the format.
    job: String,
    /// The waits between attempts and the `--splay`, as they were drawn.
    waited: Duration,
    /// The job's runs, as its history counts them, when it keeps one.
    runs: Option<Counts>,
}

impl Metrics {
    /// Metrics of the job named `job`, to be written to `target`.
    pub(crate) fn new(target: ReportTarget, job: &str) -> Self {
        Metrics {
            target: target.with_mode(MODE),
            job: label_value(job),
            waited: Duration::ZERO,
            runs: None,
        }
    }

    fn text(&self, end: &RunEnd, now: f64, last_success: f64) -> String {
        let waited = self.waited.min(end.elapsed);
        let gauges = [
            (
                "retry_last_run_timestamp_seconds",
                "When the job's last run ended, in seconds since the epoch.",
                format!("{now:.3}"),
            ),
            (
                LAST_SUCCESS,
                "When the job last succeeded, in seconds since the epoch; 0 if it has not.",
                format!("{last_success:.3}"),
            ),
            (
                "retry_last_run_success",
                "Whether the job's last run succeeded: 1 or 0.",
                u8::from(succeeded(end)).to_string(),
            ),
            (
                "retry_last_run_attempts",
                "How many attempts the job's last run made.",
                end.attempts.to_string(),
            ),
            (
                "retry_last_run_exit_status",
                "The exit status retry ended the job's last run with.",
                Exit::of(end).status().to_string(),
            ),
            (
                "retry_last_run_duration_seconds",
                "How long the job's last run took, attempts and waits together.",
                format!("{:.3}", end.elapsed.as_secs_f64()),
            ),
            (
                "retry_last_run_wait_seconds",
                "How long the job's last run waited before and between attempts.",
                format!("{:.3}", waited.as_secs_f64()),
            ),
        ];
        let mut text: String = gauges
            .iter()
            .map(|(name, help, value)| {
                format!(
                    "# HELP {name} {help}\n# TYPE {name} gauge\n{name}{{job=\"{}\"}} {value}\n",
                    self.job
                )
            })
            .collect();
        if let Some(runs) = self.runs {
            text += &self.run_counters(runs);
        }
        text
    }

    /// `retry_job_runs_total`, by how the runs ended, as the job's history counts them.
    fn run_counters(&self, runs: Counts) -> String {
        let name = "retry_job_runs_total";
        let mut text = format!(
            "# HELP {name} The job's runs by how they ended (clean: at the first attempt; \
             flaky: after failed attempts; failed: given up), as its history counts them.\n\
             # TYPE {name} counter\n"
        );
        for kind in [RunKind::Clean, RunKind::Flaky, RunKind::Failed] {
            text += &format!(
                "{name}{{job=\"{}\",outcome=\"{}\"}} {}\n",
                self.job,
                kind.name(),
                runs.of(kind)
            );
        }
        text
    }
}

impl EndFile for Metrics {
    /// Kept, to be written as counters too.
    fn count_runs(&mut self, runs: Counts) {
        self.runs = Some(runs);
    }

    /// Write the metrics of the run that ended as `end`, now.
    fn write(
        self: Box<Self>,
        end: &RunEnd,
        watch: &SignalWatch,
        deadline: Option<Instant>,
    ) -> Result<(), ReportError> {
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default()
            .as_secs_f64();
        let last_success = match succeeded(end) {
            true => now,
            false => self
                .target
                .replaced_file()
                .and_then(|file| previous_success(file, &self.job))
                .unwrap_or(0.0),
        };
        let text = self.text(end, now, last_success);
        self.target.write(text.into_bytes(), watch, deadline)
    }
}

impl EventSink for Metrics {
    fn emit(&mut self, event: &Event) {
        match event {
            Event::Splay(wait) => self.waited += *wait,
            Event::AttemptEnd(outcome) => {
                if let Next::Retry { wait, .. } = outcome.next {
                    self.waited += wait;
                }
            }
            _ => {}
        }
    }
}

fn succeeded(end: &RunEnd) -> bool {
    end.reason == Reason::Success && end.report_error.is_none()
}

/// The last success the previous run's file at `path` gives for `job` (escaped), if it is a
/// regular file that gives a finite time since the epoch.
fn previous_success(path: &Path, job: &str) -> Option<f64> {
    let opened = named_files::open(path, OpenOptions::new().read(true), libc::O_NOFOLLOW).ok()?;
    if !opened.metadata.is_file() {
        return None;
    }
    let file = opened.file;
    let mut text = String::new();
    file.take(PREVIOUS_BOUND).read_to_string(&mut text).ok()?;
    let prefix = format!("{LAST_SUCCESS}{{job=\"{job}\"}} ");
    text.lines()
        .find_map(|line| line.strip_prefix(&prefix))
        .and_then(|value| value.trim().parse::<f64>().ok())
        .filter(|value| value.is_finite() && *value >= 0.0)
}

/// `text` as a label value of the text format: `\`, `"` and line feeds escaped.
fn label_value(text: &str) -> String {
    text.replace('\\', r"\\")
        .replace('"', "\\\"")
        .replace('\n', r"\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use retry_policy::termination::Termination;
    use std::io::Write;

    fn end(reason: Reason) -> RunEnd {
        RunEnd {
            attempts: 3,
            last: Some(Termination::Exited(4)),
            last_unready: None,
            reason,
            elapsed: Duration::from_millis(2500),
            report_error: None,
            flaky_exit: None,
        }
    }

    fn metrics(dir: &Path, job: &str) -> Metrics {
        let target = ReportTarget::check(&dir.join("job.prom"), "--report", "retry.prom").unwrap();
        Metrics::new(target, job)
    }

    #[test]
    fn every_gauge_in_the_textfile_format() {
        let scratch = tempfile::tempdir().unwrap();
        let mut metrics = metrics(scratch.path(), "nightly \"backup\"");
        metrics.emit(&Event::Splay(Duration::from_millis(250)));
        let text = metrics.text(&end(Reason::Exhausted), 1700000000.5, 1690000000.0);
        let job = r#"{job="nightly \"backup\""}"#;
        let samples: Vec<&str> = text.lines().filter(|line| !line.starts_with('#')).collect();
        assert_eq!(
            samples,
            [
                format!("retry_last_run_timestamp_seconds{job} 1700000000.500"),
                format!("retry_last_success_timestamp_seconds{job} 1690000000.000"),
                format!("retry_last_run_success{job} 0"),
                format!("retry_last_run_attempts{job} 3"),
                format!("retry_last_run_exit_status{job} 4"),
                format!("retry_last_run_duration_seconds{job} 2.500"),
                format!("retry_last_run_wait_seconds{job} 0.250"),
            ]
        );
        assert!(text.starts_with(
            "# HELP retry_last_run_timestamp_seconds When the job's last run ended, in seconds \
             since the epoch.\n# TYPE retry_last_run_timestamp_seconds gauge\n"
        ));
    }

    #[test]
    fn the_last_success_is_read_back_from_a_file_that_gives_it() {
        let scratch = tempfile::tempdir().unwrap();
        let path = scratch.path().join("job.prom");
        let line = |value: &str| format!("{LAST_SUCCESS}{{job=\"a\"}} {value}\n");
        let cases = [
            (line("1690000000.250"), Some(1690000000.25)),
            (line("NaN"), None),
            (line("-5"), None),
            (line("+Inf"), None),
            (format!("{LAST_SUCCESS}{{job=\"b\"}} 7\n"), None),
            ("garbage\n".repeat(10), None),
        ];
        for (text, expected) in cases {
            std::fs::File::create(&path)
                .unwrap()
                .write_all(text.as_bytes())
                .unwrap();
            assert_eq!(previous_success(&path, "a"), expected, "{text}");
        }
        std::fs::remove_file(&path).unwrap();
        std::os::unix::fs::symlink("/etc/hostname", &path).unwrap();
        assert_eq!(previous_success(&path, "a"), None, "a link is not followed");
    }
}
