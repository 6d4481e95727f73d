//! Reports: the files a run writes when it ends (`--report`), their definition, and what they
//! ask of the run.

use super::OUTPUT;
use crate::report::formats::{ReportFormat, ReportSpec};

/// The reports a run writes when it ends.
#[derive(clap::Args, Debug)]
#[group(skip)]
pub(crate) struct ReportsArgs {
    /// Write a report to FILE when the run ends; may be repeated
    ///
    /// When the run ends, write a report of it to FILE, in the format its prefix names or else
    /// its name's ending: json: (or *.json, and any other name) a JSON summary; dotenv: (or
    /// *.env) RETRY_RUN_... NAME=value lines, as GitLab's dotenv report reads them; prom: (or
    /// *.prom) the run's gauges for node_exporter's textfile collector, each labelled with --job;
    /// junit: (or *.xml) one JUnit test case, failed attempts before a success as Surefire's
    /// flakyFailure, with the end of each attempt's output (e.g. retry-report.json,
    /// dotenv:build.env, /var/lib/node-exporter/backup.prom, TEST-retry.xml). Another word before
    /// a colon is refused as a mistyped format: write a FILE whose name holds one as ./NAME. May
    /// be repeated.
    #[arg(long, value_name = "[FORMAT:]FILE", hide_short_help = true, help_heading = OUTPUT)]
    pub(crate) report: Vec<ReportSpec>,
}

impl ReportsArgs {
    /// Whether a report shows each attempt's output (JUnit's), so that both streams go
    /// through the tool and their ends are kept.
    pub(super) fn show_output(&self) -> bool {
        self.report
            .iter()
            .any(|spec| spec.format == ReportFormat::Junit)
    }
}
