//! The files a run writes when it ends, besides its messages, as an observer of the run: the
//! `--report` files and the CI system's step outputs; each a [`ReportTarget`], so each checked
//! (and opened, where it can be) before the first attempt, and each taking the run's events.
//! Their failure is part of how the run ended (the tool's own error, 125), and a signal while
//! one is written ends the run by it.

use crate::lifecycle::{Ending, Observer, Stage};
use crate::options::Config;
use crate::output::tail::KeptTails;
use crate::report::ci::log::shown_command;
use crate::report::ci::outputs::StepOutputs;
use crate::report::end_file::EndFile;
use crate::report::file::ReportWriter;
use crate::report::formats::{ReportFormat, ReportSpec};
use crate::report::junit::JunitReport;
use crate::report::metrics::Metrics;
use crate::report::target::{ReportError, ReportTarget};
use retry_policy::events::Event;
use retry_policy::outcome::{Moment, Reason, RunEnd};

/// What a run writes when it ends, besides its messages, in this order: the JSON reports, the
/// step outputs, the metrics, the JUnit reports.
pub(crate) struct EndFiles(Vec<Box<dyn EndFile>>);

impl EndFiles {
    /// The files `config` asks for, each checked: one that cannot be written fails the run now.
    /// A JUnit report takes each attempt's output from `tails`.
    pub(crate) fn prepare(config: &Config, tails: Option<KeptTails>) -> anyhow::Result<EndFiles> {
        let target = |spec: &ReportSpec| {
            ReportTarget::check(&spec.path, "--report", spec.format.example_file())
        };
        let (specs, options) = config.reports();
        let (mut reports, mut dotenv, mut metrics) = (Vec::new(), Vec::new(), Vec::new());
        let mut junit = Vec::new();
        let shown = shown_command(config.command_words());
        let case = config.job_given().unwrap_or(&shown);
        for spec in specs {
            match spec.format {
                ReportFormat::Json => {
                    let writer =
                        ReportWriter::new(target(spec)?, options, config.depth(), config.run_id);
                    reports.push(Box::new(writer) as Box<dyn EndFile>);
                }
                ReportFormat::Dotenv => dotenv.push(target(spec)?),
                ReportFormat::Prometheus => {
                    metrics.push(Box::new(Metrics::new(target(spec)?, &config.job)) as _);
                }
                ReportFormat::Junit => junit.push(Box::new(JunitReport::new(
                    target(spec)?,
                    case,
                    tails.clone().unwrap_or_default(),
                )) as _),
            }
        }
        let outputs = StepOutputs::new(&config.github, dotenv, shown.clone())?;
        if outputs.any() {
            reports.push(Box::new(outputs));
        }
        Ok(EndFiles(
            reports.into_iter().chain(metrics).chain(junit).collect(),
        ))
    }
}

impl EndFiles {
    /// The files, as an observer of the run, if there are any to write.
    pub(crate) fn observer(self) -> Option<EndFiles> {
        (!self.0.is_empty()).then_some(self)
    }
}

impl Observer for EndFiles {
    fn stage(&self) -> Stage {
        Stage::Write
    }

    fn emit(&mut self, event: &Event) {
        for file in &mut self.0 {
            file.emit(event);
        }
    }

    /// Write every file, the job's runs as its history counted them shown where a file shows
    /// them, making a failure part of how the run ended.
    fn finish(self: Box<Self>, ending: &mut Ending<'_>) {
        for mut file in self.0 {
            if let Some((_, runs)) = ending.counted {
                file.count_runs(runs);
            }
            written(
                file.write(&ending.end, ending.watch, ending.deadline),
                &mut ending.end,
            );
        }
    }
}

/// Make the failure of a file written at the end (`written`) part of how the run ended as
/// `end`: the first one that failed is said, and a signal while one was written ends the run.
fn written(written: Result<(), ReportError>, end: &mut RunEnd) {
    match written {
        Ok(()) => {}
        Err(ReportError::Failed(error)) => {
            end.report_error.get_or_insert(error);
        }
        Err(ReportError::Interrupted(signal)) => {
            end.reason = Reason::Interrupted(signal, Moment::Report);
        }
    }
}
