//! Carrying out one invocation of the tool: simulate, plan, or run a command, in the order that
//! keeps every promise: check everything checkable before the first attempt, read stdin before
//! signals are blocked, report the run once its report is written, and decide the exit status
//! from how it ended.

use std::io::{self, Write};
use std::time::Instant;

use anyhow::Context;

use crate::budget::{Prepared, show};
use crate::cli::Cli;
use crate::config::{Action, Config};
use crate::environment;
use crate::exit::Exit;
use crate::outcome::{Moment, Reason, RunEnd};
use crate::output::held::StdRelease;
use crate::plan;
use crate::process::clock::SignalClock;
use crate::process::command_line::CommandLine;
use crate::process::reaper;
use crate::process::request_file::RequestFiles;
use crate::process::scrub;
use crate::process::signals::SignalWatch;
use crate::process::startup::Inherited;
use crate::process::stdin_replay::HeldInput;
use crate::process::terminal::Terminal;
use crate::report::events::{Event, EventSink};
use crate::report::file::{ReportError, ReportWriter};
use crate::retry_loop::{self, Parts};
use crate::simulate;
use crate::spill::HoldError;

/// Carry out the invocation `cli` describes, in a process that `startup::prepare` prepared and
/// that inherited `inherited`; returns how the tool ends, or an error in its own usage (125).
pub fn run(cli: Cli, inherited: Inherited) -> anyhow::Result<Exit> {
    let config = Config::try_from(cli)?;
    // The store's password is the tool's secret, not the command's: out of sight in the tool's
    // own argv and environment (and no child inherits the variable; see `process`). Nothing
    // else runs yet to read them at the same time.
    if let Some(address) = config.store_address() {
        let (text, spans) = address.secrets_in_text();
        scrub::hide(
            text,
            spans,
            "--budget-store",
            environment::BUDGET_STORE.name,
        );
    }
    match config.action() {
        Action::Simulate(settings) => {
            simulate::run(settings)?;
            Ok(Exit::Success)
        }
        Action::Plan => {
            let mut out = io::BufWriter::new(io::stdout().lock());
            plan::print(&mut out, &config.plan(), config.log_format())
                .and_then(|()| out.flush())
                .context("cannot write the plan to stdout")?;
            Ok(Exit::Success)
        }
        Action::ShowBudget(request) => {
            let mut out = io::BufWriter::new(io::stdout().lock());
            show::print(request, config.log_format(), &mut out)?;
            out.flush()
                .context("cannot write the budget's state to stdout")?;
            Ok(Exit::Success)
        }
        Action::Run(command) => run_command(&config, command.clone(), inherited),
    }
}

/// Run `command` under `config` until it succeeds or the run gives up.
fn run_command(
    config: &Config,
    command: CommandLine,
    inherited: Inherited,
) -> anyhow::Result<Exit> {
    let report = config.report_writer().map_err(anyhow::Error::msg)?;
    let budget = config.budget();
    let terminal = match config.hands_over_terminal() {
        true => Terminal::if_in_foreground(),
        false => None,
    };
    // Read before the signals are blocked: a Ctrl-C while the input is still coming must end the
    // tool at once, before any attempt.
    let input = match config.replay_stdin() {
        true => Some(read_stdin()?),
        false => None,
    };
    let watch = SignalWatch::install(terminal.is_some(), inherited)
        .context("cannot set up signal handling")?;
    reaper::adopt_orphans();
    let mut reporter = config.reporter();
    for warning in config.warnings() {
        reporter.emit(&Event::Warning(warning));
    }
    if let Some(Prepared::Unusable { why, on_failure }) = &budget {
        let message = format!("retry budget: {why}; {}", on_failure.consequence());
        reporter.emit(&Event::Warning(message));
    }
    let mut budget = budget.map(|budget| budget.open(&watch));
    let mut runner = config.runner(
        command,
        &watch,
        terminal.as_ref(),
        input,
        RequestFiles::new(),
    );
    let mut report = report;
    // The loop counts its own deadline from its own clock; this one, from the same moment, bounds
    // what is written after it.
    let deadline = config
        .max_time()
        .and_then(|max_time| Instant::now().checked_add(max_time));
    let mut end = retry_loop::run(
        &config.rules(),
        Parts {
            waits: &mut config.waits(),
            attempts: &mut runner,
            clock: &mut SignalClock::new(&watch),
            budget: &mut budget,
            release: &mut StdRelease::new(&watch),
            hooks: &mut config.hooks(&watch, terminal.as_ref()),
            sink: &mut (&mut reporter, &mut report),
        },
    );
    if let Some(report) = report {
        write_report(report, &mut end, &watch, deadline);
    }
    reporter.emit(&Event::Done(end.clone()));
    let interrupted = matches!(end.reason, Reason::Interrupted(..));
    if let Some(signal) = reporter.finish(&watch, deadline, interrupted) {
        return Ok(Exit::Stopped(signal));
    }
    Ok(Exit::of(&end))
}

/// Read stdin to its end for `--replay-stdin`.
fn read_stdin() -> anyhow::Result<HeldInput> {
    HeldInput::read_all(io::stdin().lock()).map_err(|err| match err {
        HoldError::Transfer(err) => anyhow::anyhow!("cannot read stdin for --replay-stdin: {err}"),
        HoldError::Spill(err) => {
            anyhow::anyhow!("cannot keep stdin for --replay-stdin beyond 1 MiB: {err}")
        }
    })
}

/// Write the report of the run that ended as `end`, and make its failure part of how it ended.
fn write_report(
    report: ReportWriter,
    end: &mut RunEnd,
    watch: &SignalWatch,
    deadline: Option<Instant>,
) {
    match report.write(end, watch, deadline) {
        Ok(()) => {}
        Err(ReportError::Failed(error)) => end.report_error = Some(error),
        Err(ReportError::Interrupted(signal)) => {
            end.reason = Reason::Interrupted(signal, Moment::Report);
        }
    }
}
