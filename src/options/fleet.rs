//! Fleets: the budget a run spends from (`--budget`, and `--budget-store`, declared here once
//! for the run and for `retry budget` and `retry job`), and the splay of a fleet's starts
//! (`--splay`): their definitions, and the budget they resolve to, with `RETRY_BUDGET` and
//! `RETRY_BUDGET_STORE`.

use std::ffi::OsString;
use std::time::Duration;

use retry_budget::default_budget::DefaultBudget;
use retry_budget::state_dir::StateHome;
use retry_budget::store::StoreSettings;
use retry_budget::{BudgetChoice, BudgetSettings, RunBudget};
use retry_policy::causes::{WithCauses, parsed};
use retry_policy::duration::parse_duration;
use retry_policy::presets::Preset;
use retry_policy::seed::words_hash;
use retry_policy::target::Target;

use super::from_environment::host_name;
use super::record::BudgetInForce;
use super::{ConfigError, FLEET, refuse};
use crate::environment;
use crate::git_remote;

/// The budget a run spends from, and its splay.
#[derive(clap::Args, Debug)]
#[group(skip)]
pub(crate) struct FleetArgs {
    /// A random wait below DURATION before the first attempt
    ///
    /// Wait a random time below DURATION before the first attempt, drawn from the seed, so that
    /// a fleet's cron jobs spread out (e.g. 5m).
    #[arg(long, value_name = "DURATION", value_parser = parse_duration, allow_hyphen_values = true, hide_short_help = true, help_heading = FLEET)]
    pub(crate) splay: Option<Duration>,

    /// Share the retry budget NAME, or 'off'
    ///
    /// Take a token from the retry budget NAME for each retry, shared with every other run that
    /// names it (e.g. the API host they call), on the terms its store keeps (retry budget set
    /// NAME --rate 10/1m; 10/1m unless set). Without one, each retry takes a token from this
    /// machine's default budget for the command's target (the host a preset finds in its
    /// arguments, else the command line): 20 in 5m, a retry waiting for its token as long as
    /// the run's own limits allow (a named budget refuses one not there within --cap), and
    /// nothing spent while nothing fails. 'off': no budget at all [default: $RETRY_BUDGET].
    #[arg(long, value_name = "NAME", value_parser = parsed::<BudgetChoice>, allow_hyphen_values = true, hide_short_help = true, help_heading = FLEET)]
    pub(crate) budget: Option<BudgetChoice>,

    #[command(flatten, next_help_heading = FLEET)]
    pub(crate) store: StoreOption,
}

impl FleetArgs {
    /// The budget a run spends from: the one `--budget` names, else the one `RETRY_BUDGET` names
    /// (either may say `off`), else this machine's default one for the command's target.
    pub(super) fn run_budget(
        &self,
        words: &[OsString],
        env: &impl Fn(&str) -> Option<OsString>,
        preset: Option<&'static Preset>,
    ) -> Result<RunBudget, ConfigError> {
        let variable = environment::BUDGET.name;
        let from_environment = match environment::BUDGET.given(env) {
            None => None,
            Some(value) => Some(
                value
                    .to_str()
                    .unwrap_or("\u{fffd}")
                    .parse::<BudgetChoice>()
                    .map_err(|why| {
                        let value = value.to_string_lossy();
                        ConfigError(format!("{variable} '{value}': {}", WithCauses(&why)))
                    })?,
            ),
        };
        let (choice, by) = match (&self.budget, from_environment) {
            (Some(choice), _) => (Some(choice.clone()), "--budget off"),
            (None, choice) => (choice, "RETRY_BUDGET=off"),
        };
        let budget = match choice {
            Some(BudgetChoice::Off) => RunBudget::Off(by),
            Some(BudgetChoice::Named(name)) => RunBudget::Named(Box::new(BudgetSettings {
                name,
                store: self.store.settings(env, "--budget")?,
                host: words_hash(std::iter::once(host_name(env).as_slice())),
                unanswered: None,
            })),
            None => {
                let program = words.first().and_then(|program| program.to_str());
                let finder = preset.or_else(|| program.and_then(Preset::for_program));
                RunBudget::Default(DefaultBudget {
                    target: Target::of(finder, words, &|dir, remote| {
                        git_remote::url(dir, remote, env("GIT_DIR"))
                    }),
                    home: StateHome::of(env),
                })
            }
        };
        Ok(budget)
    }

    /// Refuse a `--budget-store` with nothing to place: neither the named `budget` nor a job
    /// (`job_named`: `--job` was given) lives there.
    pub(super) fn store_has_a_place(
        &self,
        budget: &RunBudget,
        job_named: bool,
    ) -> Result<(), ConfigError> {
        refuse(
            self.store.budget_store.is_some()
                && !matches!(budget, RunBudget::Named(_))
                && !job_named,
            "--budget-store says where a named budget or a job lives: give --budget NAME (or \
             RETRY_BUDGET=NAME) or --job NAME too, or leave --budget-store out",
        )
    }
}

/// `--budget-store`, declared once: where a run's budget lives, and where `retry budget` and
/// `retry job` look, so that each reads the store the runs use; a run hides it from `-h`.
#[derive(clap::Args, Debug, Default)]
#[group(skip)]
pub(crate) struct StoreOption {
    /// Where budgets live: file, file:DIR, or redis://HOST
    ///
    /// Keep budgets, and jobs' terms and histories, in STORE: 'file' (a file on this machine, in
    /// $XDG_STATE_HOME/retry/budgets or ~/.local/state/retry/budgets), file:DIR, or a Redis or
    /// Valkey server a fleet shares: redis://[USER@]HOST[:PORT][/DB] (any node of a Cluster),
    /// rediss://... (TLS), redis+sentinel://HOST:PORT,HOST:PORT/PRIMARY (sentinels, then the
    /// primary's name), or redis+unix:///PATH/TO/SOCKET. Query keys: ?fail=closed counts a store
    /// that cannot be used as no token (default open: warn once and go on, a shared store falling
    /// back to the file store); ?timeout=2s bounds each call (default 500ms); ?password_file=FILE
    /// logs in with FILE's first line; after rediss://, ?ca_file=FILE trusts that authority instead
    /// of the system's, and ?cert_file=FILE&key_file=FILE (the key its owner's alone) is the client
    /// certificate a TLS server asks for. An address with a password is refused here, where every
    /// user can read it (ps): give it in RETRY_BUDGET_STORE [default: $RETRY_BUDGET_STORE, or
    /// file].
    #[arg(long, value_name = "STORE")]
    pub(crate) budget_store: Option<String>,
}

impl StoreOption {
    /// The store it names, else the one `RETRY_BUDGET_STORE` names, else the file store, for
    /// `who` (what needs the file store's directory, when there is none); `env` reads the
    /// environment.
    pub(crate) fn settings(
        &self,
        env: &impl Fn(&str) -> Option<OsString>,
        who: &str,
    ) -> Result<StoreSettings, retry_budget::Error> {
        StoreSettings::resolve(self.budget_store.as_deref(), env, who)
    }
}

/// The budget in force, as the report records it.
pub(super) fn budget_in_force(budget: &RunBudget) -> BudgetInForce {
    match budget {
        RunBudget::Named(settings) => BudgetInForce::Named {
            name: settings.name.as_str().to_string(),
        },
        RunBudget::Default(budget) => BudgetInForce::Default(budget.clone()),
        RunBudget::Off(by) => BudgetInForce::Off { by },
    }
}

/// The store a run was given (`--budget-store` as `flag`, or else `RETRY_BUDGET_STORE`, read
/// through `env`), as the runs inside its attempts are given it: without its password, which
/// stays this run's (a `password_file` is a path, and goes along).
pub(crate) fn store_passed_on(
    flag: Option<&str>,
    env: &impl Fn(&str) -> Option<OsString>,
) -> Option<String> {
    let given = match flag {
        Some(flag) => Some(flag.to_string()),
        None => env(retry_budget::store::BUDGET_STORE)?.into_string().ok(),
    };
    given
        .filter(|text| !text.is_empty())
        .map(|text| retry_budget::store::without_password(&text))
}
