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
pub mod budget_file;
pub mod chart;
pub mod cli;
pub mod clock;
pub mod codes;
pub mod command_line;
pub mod config;
pub mod duration;
pub mod events;
pub mod exit;
pub mod message;
pub mod output;
pub mod plan;
pub mod policy;
pub mod reaper;
pub mod report;
pub mod retry_loop;
pub mod runner;
pub mod seed;
pub mod signals;
pub mod simulate;
pub mod simulation;
pub mod spill;
pub mod startup;
pub mod stdin_replay;
pub mod terminal;
pub mod termination;

use std::io::{self, Write};

use anyhow::Context;
use rand::rngs::Xoshiro256PlusPlus;
use rand::SeedableRng;

use crate::budget_file::FileBudget;
use crate::cli::{Cli, Subcommand};
use crate::clock::SignalClock;
use crate::command_line::CommandLine;
use crate::config::{Action, Config};
use crate::events::Reporter;
use crate::exit::Exit;
use crate::plan::PlanRequest;
use crate::report::ReportWriter;
use crate::retry_loop::Rules;
use crate::runner::{Isolation, ProcessRunner};
use crate::seed::Seed;
use crate::signals::SignalWatch;
use crate::stdin_replay::HeldInput;
use crate::terminal::Terminal;

/// Carry out the invocation `cli` describes; returns how the tool ends, or an error in the
/// tool's own usage (exit 125).
pub fn run(mut cli: Cli) -> anyhow::Result<Exit> {
    if let Some(Subcommand::Simulate(args)) = cli.subcommand.take() {
        let seed = Seed::resolve(args.seed.map(Seed::Number), &[]);
        simulate::run(args, seed)?;
        return Ok(Exit::Status(exit::SUCCESS));
    }
    let seed = Seed::resolve(cli.seed, &cli.command);
    let report_options = cli.report.is_some().then(|| report::options(&cli, seed));
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
        Action::Run(command) => run_command(command.clone(), &config, seed, report_options),
    }
}

/// Run `command` under `config`'s rules until it succeeds or the run gives up; `report_options`
/// are the options to record with `--report`.
fn run_command(
    command: CommandLine,
    config: &Config,
    seed: u64,
    report_options: Option<serde_json::Value>,
) -> anyhow::Result<Exit> {
    let mut budget = match &config.budget {
        Some(settings) => Some(
            FileBudget::open(&settings.dir, &settings.name, settings.rate).with_context(|| {
                let path = settings.dir.join(settings.name.as_str());
                format!("cannot use the retry budget at {}", path.display())
            })?,
        ),
        None => None,
    };
    let report = match (&config.report, report_options) {
        (Some(path), Some(options)) => Some(
            ReportWriter::create(path, options)
                .with_context(|| format!("cannot write --report {}", path.display()))?,
        ),
        _ => None,
    };
    let terminal = match config.process.isolation {
        Isolation::OwnGroup => Terminal::if_in_foreground(),
        Isolation::Foreground => None,
    };
    // Read before the signals are blocked: a Ctrl-C while the input is still coming must end the
    // tool at once, before any attempt.
    let input = match config.replay_stdin {
        true => Some(
            HeldInput::read_all(io::stdin().lock()).context("cannot read stdin to replay it")?,
        ),
        false => None,
    };
    let watch =
        SignalWatch::install(terminal.is_some()).context("cannot set up signal handling")?;
    reaper::adopt_orphans();
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
        held: None,
    };
    let mut clock = SignalClock::new(&watch);
    let mut sinks = (Reporter::new(io::stderr(), config.log), report);
    let done = retry_loop::run(
        &rules,
        &mut waits,
        &mut runner,
        &mut clock,
        &mut budget,
        &mut sinks,
    );
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
