//! Carrying out one invocation of the tool: a subcommand of the tool's own (`budget show`,
//! `budget set`), the plan of a run, or the run itself, in the order that keeps every promise:
//! check everything checkable before the first attempt, read stdin before signals are blocked,
//! report the run once its report is written, and decide the exit status from how it ended. The
//! run's parts are built here, each by the module that owns it, from the settings `config`
//! resolved.

use std::ffi::OsString;
use std::io::{self, Write};
use std::time::Instant;

use anyhow::Context;

use crate::end_files::EndFiles;
use crate::environment;
use crate::held_job::SharedJob;
use crate::job_history::JobHistory;
use crate::lifecycle::{Ending, Observers};
use crate::monitor::Pings;
use crate::options::{self, Config, HistoryPlace};
use crate::options::{
    BudgetCommand, BudgetSetArgs, BudgetShowArgs, Cli, Deferred, JobCommand, JobSetArgs,
    JobShowArgs, ToolCommand, requested_log_format,
};
use crate::output::copy::HeldOutput;
use crate::output::tail::KeptTails;
use crate::output::transcript::Transcript;
use crate::overlap::JobHold;
use crate::plan;
use crate::process::ProcessRunner;
use crate::process::environ;
use crate::process::hooks::HookRunner;
use crate::process::release::StdRelease;
use crate::process::release::{TranscriptRelease, write_transcript};
use crate::process::request_file::RequestFiles;
use crate::process::stdin_replay::HeldInput;
use crate::report::ci::log::CiLog;
use crate::report::outlet::Outlet;
use crate::report::reporter::{self, Reporter};
use crate::report::verbosity::LogFormat;
use crate::spill::HoldError;
use crate::trace::Tracing;
use retry_budget::Prepared;
use retry_budget::default_budget;
use retry_budget::history;
use retry_budget::job;
use retry_budget::model::DEFAULT_TERMS;
use retry_budget::show::{self, ShowError};
use retry_budget::state_dir::StateHome;
use retry_budget::store::Location;
use retry_budget::terms_change::TermsChange;
use retry_budget::waiter::Threads;
use retry_policy::causes::WithCauses;
use retry_policy::events::{Event, EventSink};
use retry_policy::exit::Exit;
use retry_policy::outcome::{Reason, RunEnd};
use retry_policy::run::Release;
use retry_policy::run::{self, Parts};
use retry_process::clock::SignalClock;
use retry_process::command_line::CommandLine;
use retry_process::signals::SignalWatch;
use retry_process::signals::reaper;
use retry_process::signals::startup::{self, Inherited};
use retry_process::terminal::Terminal;
use retry_sys::environ::ChildEnvironment;
use retry_sys::spawn::Launcher;

/// What the process brought with it from its parent, read first thing in `main`.
pub struct Started {
    /// What it must not take on trust (see `startup`).
    inherited: Inherited,
    /// Whether its environment gives a budget store, which the run passes on.
    store_given: bool,
    /// The environment its commands inherit, copied before anything else allocates: a buffer
    /// of that size made after the command line's parse (and its many small frees) costs
    /// glibc's allocator a consolidation of them, 15,000 instructions when measured.
    environment: ChildEnvironment,
}

impl Started {
    /// The budget store the run `config` describes passes on to its children, without its
    /// password: looked for in the environment only where the process was given one there.
    fn store_passed_on(&self, config: &Config) -> Option<String> {
        let given = self.store_given.then_some(environment::own);
        options::store_passed_on(config.store_flag.as_deref(), &|name| given?(name))
    }
}

/// Prepare the process, first thing in `main`: what it must not take on trust from its parent
/// (see `startup`), the environment its commands get, and a panic (a bug) made the tool's own
/// failure: one line and exit 125, never a backtrace, and never 134, which would read as "the
/// last attempt died of SIGABRT".
pub fn prepare() -> Started {
    std::panic::set_hook(Box::new(|panic| {
        let message = format!("internal error: {panic}; this is a bug, please report it");
        let args: Vec<OsString> = std::env::args_os().collect();
        say_error(&message, &args);
        std::process::exit(i32::from(Exit::ToolFailed.status()));
    }));
    let inherited = startup::prepare();
    let (environment, store_given) = crate::process::environ::inherited();
    Started {
        inherited,
        store_given,
        environment,
    }
}

/// Say that the tool itself failed before any attempt, in the log format `args` (the tool's
/// arguments, parsed or not) ask for.
pub fn say_error(message: &str, args: &[OsString]) {
    reporter::say_failure(message, requested_log_format(args));
}

/// Carry out the invocation `cli` describes, in a process that [`prepare`] prepared (`started`);
/// returns how the tool ends, or an error in its own usage (125).
pub fn run(mut cli: Cli, started: Started) -> anyhow::Result<Exit> {
    match cli.tool.take() {
        Some(ToolCommand::Budget(Deferred(budget))) => match budget.command {
            BudgetCommand::Show(options) => show_budget(&options),
            BudgetCommand::Set(options) => set_budget(&options),
        },
        Some(ToolCommand::Job(Deferred(job))) => match job.command {
            JobCommand::Show(options) => show_job(&options, job::print),
            JobCommand::Set(options) => set_job(&options),
            JobCommand::History(options) => show_job(&options, history::print),
        },
        None => {
            let config = Config::try_from(cli)?;
            match config.command.as_ref() {
                None => {
                    let mut out = io::BufWriter::new(io::stdout().lock());
                    let mut request = config.plan();
                    request.past = config
                        .history
                        .as_ref()
                        .map(|place| (config.job.as_str(), past_runs(place)));
                    plan::print(&mut out, &request, config.log.format)
                        .and_then(|()| out.flush())
                        .context("cannot write the plan to stdout")?;
                    Ok(Exit::Success)
                }
                Some(command) => run_command(&config, command.clone(), started),
            }
        }
    }
}

/// `retry budget show`: print a budget's state on stdout.
fn show_budget(options: &BudgetShowArgs) -> anyhow::Result<Exit> {
    let request = options.request(&environment::own)?;
    print_on_stdout(
        "the budget's state",
        options.reading.log_format,
        |format, out| show::print(&request, format, &Threads, out),
    )
}

/// Print `what` on stdout in `format`, as `print` writes it; an error if it could not be read or
/// written.
fn print_on_stdout(
    what: &str,
    format: LogFormat,
    print: impl FnOnce(
        show::Format,
        &mut io::BufWriter<io::StdoutLock<'static>>,
    ) -> Result<(), ShowError>,
) -> anyhow::Result<Exit> {
    let mut out = io::BufWriter::new(io::stdout().lock());
    let format = match format {
        LogFormat::Text => show::Format::Text,
        LogFormat::Json => show::Format::Json,
    };
    let cannot_write = || format!("cannot write {what} to stdout");
    print(format, &mut out).map_err(|err| match err {
        ShowError::Write(err) => anyhow::Error::from(err).context(cannot_write()),
        unread => anyhow::Error::new(unread),
    })?;
    out.flush().with_context(cannot_write)?;
    Ok(Exit::Success)
}

/// How `retry job show` and `retry job history` print what they read of a job.
type JobPrint = fn(
    &str,
    &Location,
    show::Format,
    &Threads,
    &mut io::BufWriter<io::StdoutLock<'static>>,
) -> Result<(), ShowError>;

/// `retry job show` and `retry job history`: print a job's terms, or its history of runs, as
/// `print` does.
fn show_job(options: &JobShowArgs, print: JobPrint) -> anyhow::Result<Exit> {
    let store = (options.reading.store).settings(&environment::own, "retry job")?;
    print_on_stdout("the job", options.reading.log_format, |format, out| {
        print(&options.job, &store.location, format, &Threads, out)
    })
}

/// How long the past runs of the job whose history is at `place` took, for `--plan`.
fn past_runs(place: &HistoryPlace) -> plan::PastRuns {
    match history::read(&place.location, &place.job, &Threads) {
        Ok(history) => Ok(history.and_then(|history| history.took())),
        Err(why) => Err(format!("cannot read its history: {}", WithCauses(&why))),
    }
}

/// `retry job set`: keep a job's terms in its store, for every run of it.
fn set_job(options: &JobSetArgs) -> anyhow::Result<Exit> {
    let store = (options.store).settings(&environment::own, "retry job set")?;
    let name = history::history_name(&options.job);
    let schedule = match options.schedule.as_deref() {
        None => None,
        Some(job::NO_SCHEDULE) => Some(None),
        Some(text) => {
            let env =
                |name: &str| environment::own(name).and_then(|value| value.into_string().ok());
            let schedule = job::Schedule::parse(text, &env)
                .map_err(|why| anyhow::anyhow!("--schedule {why}"))?;
            if schedule.next_slot(std::time::SystemTime::now()).is_none() {
                anyhow::bail!(
                    "--schedule '{text}' names no time that comes in the next years (the 30th of \
                     February?); give one cron would run, e.g. '0 3 * * *'"
                );
            }
            Some(Some(schedule.text().to_string()))
        }
    };
    let change = job::TermsChange {
        overlap: options.overlap,
        alert_after: options.alert_after,
        schedule,
    };
    job::set_terms(&store.location, &name, change, &Threads)?;
    Ok(Exit::Success)
}

/// `retry budget set`: keep a budget's terms in its store, for every run that shares it.
fn set_budget(options: &BudgetSetArgs) -> anyhow::Result<Exit> {
    let store = (options.store).settings(&environment::own, "retry budget set")?;
    let change = TermsChange {
        rate: options.rate,
        ratio: options.ratio.map(|ratio| ratio.0),
        window: options.window,
        breaker: options.breaker,
        breaker_share: options.breaker_share.map(|share| share.0),
        breaker_hosts: options.breaker_hosts,
        cool_down: options.cool_down,
        cleared: options.clear.clone(),
    };
    // A term a default budget cannot act on is refused before anything is read or made.
    let home = StateHome::of(&environment::own);
    let asked = change.applied(Some(DEFAULT_TERMS))?;
    default_budget::refuse_inactive_terms(&store.location, &home, &asked)?;
    let kept = show::kept_terms(&options.name, &store.location, &Threads)?;
    let terms = change.applied(kept)?;
    retry_budget::set_terms(&options.name, &store, terms, &Threads)?;
    Ok(Exit::Success)
}

/// Run `command` under `config` until it succeeds or the run gives up: the observers of the
/// run (`lifecycle`), and the run between its ends.
fn run_command(config: &Config, command: CommandLine, started: Started) -> anyhow::Result<Exit> {
    let tails = config.output.keep_tails.then(KeptTails::default);
    let files = EndFiles::prepare(config, tails.clone())?;
    let launcher = Launcher::new(command.program(), command.args())
        .with_context(|| format!("cannot prepare to start {command}"))?;
    let budget = config.budget.prepare();
    let terminal = terminal(config);
    // Read before the signals are blocked: a Ctrl-C while the input is still coming must end the
    // tool at once, before any attempt.
    let input = config.replay_stdin.then(read_stdin).transpose()?;
    let watch = SignalWatch::install(terminal.is_some(), started.inherited)
        .context("cannot set up signal handling")?;
    reaper::adopt_orphans();
    let (mut reporter, transcript, mut release) = say_the_run(config, &watch);
    let budget_unusable = budget.as_ref().and_then(Prepared::unusable_warning);
    let mut budget = budget.map(|budget| budget.open(&watch, config.cap()));
    let mut job = JobHold::new(config, &watch);
    let store = started.store_passed_on(config);
    let attempts = Attempts {
        command,
        launcher,
        store: store.as_deref(),
        environment: started.environment,
        input,
        tails: tails.clone(),
    };
    let mut runner = attempts.runner(config, &watch, terminal.as_ref(), job.shared());
    let mut hooks = hooks(config, &watch, terminal.as_ref(), store.as_deref());
    let pings = config.monitor.as_ref().map(|monitor| {
        let tails = tails.unwrap_or_default();
        Pings::new(monitor, options::new_id(), job.shared(), tails)
    });
    let mut observers = Observers::default()
        .with(config.history.as_ref().map(JobHistory::at))
        .with(config.history.as_ref().map(|_| job.give_back()))
        .with(files.observer())
        .with(pings)
        .with(config.traced());
    let mut sink = (&mut reporter, &mut observers);
    say_the_start(config, budget_unusable, &mut sink);
    let end = run::run(
        &config.rules(),
        Parts {
            job: &mut job,
            waits: &mut config.waits(),
            attempts: &mut runner,
            clock: &mut SignalClock::new(&watch),
            budget: &mut budget,
            release: &mut release,
            hooks: &mut hooks,
            sink: &mut sink,
        },
    );
    // The run's one deadline, which the loop counts to, bounds what is done after it too.
    let deadline = config.deadline_at();
    let end = observers.finish(Ending::new(end, &watch, deadline, &mut reporter));
    Ok(say_the_end(reporter, transcript, end, &watch, deadline))
}

/// The terminal the run hands its attempts, if it hands one over and is in the foreground.
fn terminal(config: &Config) -> Option<Terminal> {
    config
        .hands_over_terminal()
        .then(Terminal::if_in_foreground)
        .flatten()
}

/// The run's reporter (on stderr, in the CI system's dialect, holding its lines in the run's
/// transcript with `--hold all`), the transcript, and where each attempt's held output goes.
fn say_the_run<'w>(
    config: &Config,
    watch: &'w SignalWatch,
) -> (
    StderrReporter,
    Option<Transcript>,
    Box<dyn Release<HeldOutput> + 'w>,
) {
    let ci = config
        .ci_log()
        .map(|system| CiLog::new(system, config.command_words()).for_job(config.job_given()));
    let mut reporter = Reporter::on_stderr(config.log).with_ci(ci);
    let transcript = config.holds_everything().then(Transcript::default);
    let release: Box<dyn Release<HeldOutput> + 'w> = match &transcript {
        Some(transcript) => {
            reporter.hold_in(transcript.clone());
            Box::new(TranscriptRelease::new(transcript.clone()))
        }
        None => Box::new(StdRelease::new(watch)),
    };
    (reporter, transcript, release)
}

/// Say to `sink` (the reporter and the run's observers, which keep warnings for a report and a
/// monitor's body) the warnings of the run's settings, `budget_unusable` among them, and a
/// deadline from outside the command line.
fn say_the_start(config: &Config, budget_unusable: Option<String>, sink: &mut impl EventSink) {
    for warning in config.warnings().into_iter().chain(budget_unusable) {
        sink.emit(&Event::Warning(warning));
    }
    // A deadline from outside the command line is said (in words with -v).
    if let (Some(deadline), Some(described)) = (config.deadline(), config.deadline_described()) {
        sink.emit(&Event::Deadline(deadline, described));
    }
}

/// The runner of the hooks of the run `config` describes, awake to `watch`'s signals, handing
/// over `terminal`, the budget `store` passed on to them.
fn hooks<'r>(
    config: &Config,
    watch: &'r SignalWatch,
    terminal: Option<&'r Terminal>,
    store: Option<&'r str>,
) -> HookRunner<'r> {
    let run = (config.total_attempts(), config.run_id, store);
    HookRunner::new(config.hooks.clone(), config.process, watch, terminal, run)
}

/// Say how the run ended: the transcript of a run that did not succeed, then the `done` event,
/// and the exit status (the signal that stopped the tool while it said so, if one did).
fn say_the_end(
    mut reporter: StderrReporter,
    transcript: Option<Transcript>,
    end: RunEnd,
    watch: &SignalWatch,
    deadline: Option<Instant>,
) -> Exit {
    let interrupted = matches!(end.reason, Reason::Interrupted(..));
    if let Some(transcript) = transcript {
        let written = Exit::of(&end) != Exit::Success;
        reporter.stop_holding(written);
        if written && let Err(message) = write_transcript(transcript, watch, deadline, interrupted)
        {
            reporter.emit(&Event::Warning(message));
        }
    }
    reporter.emit(&Event::Done(end.clone()));
    match reporter.finish(watch, deadline, interrupted) {
        Some(signal) => Exit::Stopped(signal),
        None => Exit::of(&end),
    }
}

/// The run's reporter, on stderr.
type StderrReporter = Reporter<Outlet>;

/// What each attempt's process is made of, gathered before the run.
struct Attempts<'s> {
    command: CommandLine,
    launcher: Launcher,
    /// The budget store passed on to the run's children, without its password.
    store: Option<&'s str>,
    /// The environment the tool's commands inherit.
    environment: ChildEnvironment,
    input: Option<HeldInput>,
    tails: Option<KeptTails>,
}

impl Attempts<'_> {
    /// The runner of the attempts of the run `config` describes, awake to `watch`'s signals,
    /// handing over `terminal`, each attempt handed the proof of the `job`'s hold.
    fn runner<'r>(
        self,
        config: &Config,
        watch: &'r SignalWatch,
        terminal: Option<&'r Terminal>,
        job: SharedJob,
    ) -> ProcessRunner<'r> {
        let environment = environ::of_run(self.environment, config.run_id, self.store);
        ProcessRunner {
            command: self.command,
            total: config.total_attempts(),
            options: config.process,
            watch,
            terminal,
            input: self.input,
            output: config.output.clone(),
            requests: Some(RequestFiles::new()),
            environment: environ::of_attempts(environment, config.tracing.is_some()),
            launcher: self.launcher,
            tails: self.tails,
            trace: config.tracing.as_ref().map(Tracing::context),
            job,
            holds_job: false,
        }
    }
}

/// Read stdin to its end for `--replay-stdin`: one the tool's parent left closed cannot be
/// read, as the command could not (never the `/dev/null` std's runtime put there).
fn read_stdin() -> anyhow::Result<HeldInput> {
    if retry_sys::descriptors::closed_at_start(0) {
        anyhow::bail!(
            "cannot read stdin for --replay-stdin: {}",
            io::Error::from_raw_os_error(libc::EBADF)
        );
    }
    HeldInput::read_all(io::stdin().lock()).map_err(|err| match err {
        HoldError::Transfer(err) => anyhow::anyhow!("cannot read stdin for --replay-stdin: {err}"),
        HoldError::Spill(err) => {
            anyhow::anyhow!("cannot keep stdin for --replay-stdin beyond 1 MiB: {err}")
        }
    })
}
