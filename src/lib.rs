//! `retry`: run a command again when it fails, with capped exponential backoff and jitter.
//!
//! The binary parses a [`cli::Cli`] and hands it to [`run`], which resolves it into a
//! [`config::Config`] and either prints the plan of waits or runs the [`retry_loop`] with the real
//! process runner, clock and reporter. Every module below has one job; the pure ones
//! ([`backoff`], [`policy`], [`codes`], [`config`]) are tested without processes or sleeping.

#![warn(missing_docs)]

pub mod attempts;
pub mod backoff;
pub mod budget;
pub mod cli;
pub mod codes;
pub mod config;
pub mod duration;
pub mod exit;
pub mod output;
pub mod plan;
pub mod policy;
pub mod process;
pub mod report;
pub mod retry_loop;
pub mod seed;
pub mod simulate;
pub mod spill;

use std::io::{self, Write};

use anyhow::Context;
use rand::rngs::Xoshiro256PlusPlus;
use rand::SeedableRng;

use crate::budget::file::{BudgetFile, FileBudget};
use crate::cli::{Cli, Subcommand};
use crate::config::{Action, Config};
use crate::exit::Exit;
use crate::output::StdRelease;
use crate::plan::PlanRequest;
use crate::process::clock::SignalClock;
use crate::process::command_line::CommandLine;
use crate::process::signals::SignalWatch;
use crate::process::startup::Inherited;
use crate::process::stdin_replay::HeldInput;
use crate::process::terminal::Terminal;
use crate::process::{Isolation, ProcessRunner};
use crate::report::events::{Event, EventSink, Moment, Reason, Reporter};
use crate::report::file::{ReportError, ReportTarget, ReportWriter};
use crate::retry_loop::Rules;
use crate::seed::Seed;
use crate::spill::HoldError;

/// Carry out the invocation `cli` describes, in a process that `startup::prepare` prepared and
/// that inherited `inherited`; returns how the tool ends, or an error in the tool's own usage
/// (exit 125).
pub fn run(mut cli: Cli, inherited: Inherited) -> anyhow::Result<Exit> {
    if let Some(Subcommand::Simulate(args)) = cli.subcommand.take() {
        let seed = Seed::resolve(args.seed.map(Seed::Number), &[]);
        simulate::run(args, seed)?;
        return Ok(Exit::Status(exit::SUCCESS));
    }
    let seed = Seed::resolve(cli.seed, &cli.command);
    let report_options = cli
        .report
        .is_some()
        .then(|| report::file::options(&cli, seed));
    let config = Config::try_from(cli)?;
    match &config.action {
        Action::Plan => {
            let request = PlanRequest {
                limit: config.limit,
                backoff: config.backoff,
                seed,
                splay: config.splay,
            };
            print_plan(&request, &config)?;
            Ok(Exit::Status(exit::SUCCESS))
        }
        Action::Run(command) => {
            run_command(command.clone(), &config, seed, report_options, inherited)
        }
    }
}

/// Run `command` under `config`'s rules until it succeeds or the run gives up; `report_options`
/// are the options to record with `--report`.
fn run_command(
    command: CommandLine,
    config: &Config,
    seed: u64,
    report_options: Option<serde_json::Value>,
    inherited: Inherited,
) -> anyhow::Result<Exit> {
    // Everything that can be checked is checked before anything runs.
    let report = match (&config.report, report_options) {
        (Some(path), Some(options)) => Some(ReportWriter::new(
            ReportTarget::check(path).map_err(anyhow::Error::msg)?,
            path,
            options,
        )),
        _ => None,
    };
    let budget_file = match &config.budget {
        Some(settings) => Some(
            BudgetFile::check(&settings.dir, &settings.name)
                .context(format!("cannot use --budget {}", settings.name.as_str()))?,
        ),
        None => None,
    };
    let terminal = match config.process.isolation {
        Isolation::OwnGroup => Terminal::if_in_foreground(),
        Isolation::Foreground => None,
    };
    // Read before the signals are blocked: a Ctrl-C while the input is still coming must end the
    // tool at once, before any attempt.
    let input = match config.replay_stdin {
        true => Some(
            HeldInput::read_all(io::stdin().lock()).map_err(|err| match err {
                HoldError::Transfer(err) => {
                    anyhow::anyhow!("cannot read stdin for --replay-stdin: {err}")
                }
                HoldError::Spill(err) => {
                    anyhow::anyhow!("cannot keep stdin for --replay-stdin beyond 1 MiB: {err}")
                }
            })?,
        ),
        false => None,
    };
    let watch = SignalWatch::install(terminal.is_some(), inherited)
        .context("cannot set up signal handling")?;
    process::reaper::adopt_orphans();
    let mut budget = match (budget_file, &config.budget) {
        (Some(file), Some(settings)) => Some(FileBudget::new(file, settings.rate, &watch)),
        _ => None,
    };
    let rules = Rules {
        limit: config.limit,
        policy: config.policy.clone(),
        max_time: config.max_time,
        reset_after: config.reset_after,
        splay: backoff::splay(seed, config.splay),
    };
    let mut waits = config
        .backoff
        .schedule(Xoshiro256PlusPlus::seed_from_u64(seed));
    let mut runner = ProcessRunner {
        command,
        limit: config.limit,
        options: config.process,
        watch: &watch,
        terminal,
        input,
        output: config.output.clone(),
    };
    let mut clock = SignalClock::new(&watch);
    let mut release = StdRelease::new(&watch);
    let mut reporter = Reporter::new(io::stderr(), config.log);
    let (mut done, report) = {
        let mut sinks = (&mut reporter, report);
        let done = retry_loop::run(
            &rules,
            &mut waits,
            &mut runner,
            &mut clock,
            &mut budget,
            &mut release,
            &mut sinks,
        );
        (done, sinks.1)
    };
    if let Some(report) = report {
        match report.write(&done, &watch) {
            Ok(()) => {}
            Err(ReportError::Failed(error)) => {
                if !matches!(done.reason, Reason::Interrupted(..)) {
                    done.status = exit::USAGE;
                }
                done.report_error = Some(error);
            }
            Err(ReportError::Interrupted(signal)) => {
                done.reason = Reason::Interrupted(signal, Moment::Report);
                done.status = exit::signal_status(signal);
            }
        }
    }
    reporter.emit(Event::Done(done.clone()));
    Ok(done.exit())
}

/// Print the plan on stdout; a reader that closed the pipe early is not an error.
fn print_plan(request: &PlanRequest, config: &Config) -> anyhow::Result<()> {
    let mut out = io::BufWriter::new(io::stdout().lock());
    let written = plan::print(&mut out, request, config.log.format).and_then(|()| out.flush());
    match written {
        Err(err) if err.kind() == io::ErrorKind::BrokenPipe => Ok(()),
        other => other.context("cannot write the plan to stdout"),
    }
}

/// What the fuzz target (`fuzz/`) drives: parsing, and the arithmetic of a run. Not part of the
/// library's interface.
#[doc(hidden)]
pub mod fuzzing {
    pub use crate::budget::{BucketState, Rate};
    pub use crate::cli::{one_line_error, Cli, Subcommand};
    pub use crate::config::Config;
    pub use crate::plan::PlanRequest;
    pub use crate::report::message::printable;
}
