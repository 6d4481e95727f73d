//! Hooks: the shell lines a run runs when it retries and when it gives up (`--on-retry`,
//! `--on-give-up`), their definitions, and the lines they resolve to.

use retry_policy::outcome::Hook;

use super::HOOKS;
use crate::process::hooks::{HookLines, parse_shell_line};

/// The hooks' shell lines.
#[derive(clap::Args, Debug)]
#[group(skip)]
pub(crate) struct HooksArgs {
    /// Run SHELL_LINE before each retry's wait
    ///
    /// After a failed attempt that will be retried, before the wait, run SHELL_LINE with sh -c,
    /// its output on stderr (e.g. 'rm -f /tmp/app.lock'); it gets RETRY_STATUS and
    /// RETRY_NEXT_WAIT_MS. Its failure changes nothing but a warning.
    #[arg(long, value_name = "SHELL_LINE", value_parser = parse_shell_line, allow_hyphen_values = true, hide_short_help = true, help_heading = HOOKS)]
    pub(crate) on_retry: Option<String>,

    /// Run SHELL_LINE once when the run gives up
    ///
    /// When the run gives up (not after a success, not when a signal stops it), run SHELL_LINE
    /// with sh -c, its output on stderr; it gets RETRY_STATUS and RETRY_REASON.
    #[arg(long, value_name = "SHELL_LINE", value_parser = parse_shell_line, allow_hyphen_values = true, hide_short_help = true, help_heading = HOOKS)]
    pub(crate) on_give_up: Option<String>,
}

impl HooksArgs {
    /// The hooks' lines, taken out of the options.
    pub(super) fn lines(&mut self) -> HookLines {
        HookLines::new([
            (Hook::OnRetry, self.on_retry.take()),
            (Hook::OnGiveUp, self.on_give_up.take()),
        ])
    }
}
