//! What an attempt's end means: the user's rules (`--success-on`, `--stop-on`, `--retry-on`),
//! `--flaky-exit`, the `--preset` of the program wrapped, and `--retry-after-output`: their
//! definitions, and the one ordered list of rules they resolve to.

use retry_policy::causes::parsed;
use retry_policy::presets::{Preset, PresetChoice};
use retry_policy::requests::Request;
use retry_policy::rules::{RuleList, RuleSpec, UserRules};

use super::{ConfigError, DECIDING, choice};
use retry_policy::numbers::whole_number;

/// The rules an attempt's end is judged by.
#[derive(clap::Args, Debug)]
#[group(skip)]
pub(crate) struct RulesArgs {
    /// Retry what RULE names; may be repeated
    ///
    /// Retry an attempt whose end RULE names: CODES, STREAM:REGEX or both, e.g. 6,7,28 or
    /// stderr:'\b503\b'. May be repeated. Once given, it names what is retried: any other
    /// failure stops (a --preset's rules still decide the ends they name). Default: any failure
    /// but 130 (Ctrl-C) and 141 (SIGPIPE) is retried. CODES:max=N retries them at most N times
    /// in the run (e.g. 124:max=1, or 1-255:max=2,stderr:reset); once spent, the rules below it
    /// decide, and --plan shows the bound on attempts the limits give.
    #[arg(long, value_name = "RULE", value_parser = parsed::<RuleSpec>, allow_hyphen_values = true, help_heading = DECIDING)]
    pub(crate) retry_on: Vec<RuleSpec>,

    /// Never retry what RULE names; may be repeated
    ///
    /// Never retry an attempt whose end RULE names: CODES, STREAM:REGEX or both, e.g. 2,64-78 or
    /// stderr:'HTTP 4\d\d'. May be repeated. A rule without CODES concerns failures only.
    #[arg(long, value_name = "RULE", value_parser = parsed::<RuleSpec>, allow_hyphen_values = true, help_heading = DECIDING)]
    pub(crate) stop_on: Vec<RuleSpec>,

    /// Count what RULE names as success [default: 0]
    ///
    /// Count an attempt whose end RULE names as a success: CODES (the success statuses, e.g.
    /// 0,3), STREAM:REGEX (a success status and a matching line, e.g. stdout:'rolled out'; the
    /// status alone then no longer succeeds), or both. May be repeated. Default: 0.
    #[arg(long, value_name = "RULE", value_parser = parsed::<RuleSpec>, allow_hyphen_values = true, help_heading = DECIDING)]
    pub(crate) success_on: Vec<RuleSpec>,

    /// Exit STATUS after a success that needed retries
    ///
    /// Exit with STATUS (1-255) when COMMAND succeeded only after failed attempts, a flaky
    /// success, as nextest's --flaky-result=fail: a pipeline keeps its retries and still refuses
    /// flaky merges, e.g. --flaky-exit 3. Default: the success's own 0. The report and the done
    /// event record a flaky success either way.
    #[arg(long, value_name = "STATUS", value_parser = whole_number(1..=u8::MAX), hide_short_help = true, help_heading = DECIDING)]
    pub(crate) flaky_exit: Option<u8>,

    /// As a program's manual says: curl, git, ... or auto
    ///
    /// Retry what the program's manual calls transient and stop at once at what it calls
    /// permanent, from its exit status and, where the status cannot tell, its message (e.g.
    /// curl's '(22) The requested URL returned error: 503'). NAME is curl, wget, git, rsync,
    /// ssh, psql, pg_isready, apt-get, pip, npm, or auto (the preset of COMMAND's program, if it
    /// has one). Its rules come after --success-on, --stop-on and --retry-on; --plan shows them.
    /// For curl and wget run directly, a POST or PATCH without an Idempotency-Key header is not
    /// repeated after a failure that may have come once the server had it (a time-out once
    /// sent, a cut reply, a 500, 502 or 504).
    #[arg(long, value_name = "NAME", value_parser = choice::<PresetChoice>(), hide_possible_values = true, help_heading = DECIDING)]
    pub(crate) preset: Option<PresetChoice>,

    /// Wait as long as a line of output asks
    ///
    /// Read a requested wait from the last line of stdout or stderr matching REGEX, from its
    /// first group or the group named 'after' (e.g. '(?i)^retry-after:\s*(.+)$'): seconds, a
    /// DURATION, an HTTP date, or 'stop'. It can only lengthen a wait, and is cut to
    /// RETRY_MAX_REQUESTED_WAIT (15m). May be repeated.
    #[arg(long, value_name = "REGEX", allow_hyphen_values = true, hide_short_help = true, help_heading = DECIDING)]
    pub(crate) retry_after_output: Vec<String>,
}

impl RulesArgs {
    /// The preset `--preset` names for `program` (the command's): none without one, and none
    /// for `auto` when no preset knows the program.
    pub(super) fn preset(&self, program: Option<&str>) -> Option<&'static Preset> {
        self.preset.and_then(|choice| choice.resolve(program))
    }

    /// The rules an attempt's end is judged by: the user's, then `preset`'s, which may read
    /// `request`, the HTTP request the command sends.
    pub(super) fn resolve(
        &self,
        preset: Option<&'static Preset>,
        request: Option<&Request>,
    ) -> Result<RuleList, ConfigError> {
        let user = UserRules {
            success: self.success_on.clone(),
            stop: self.stop_on.clone(),
            retry: self.retry_on.clone(),
        };
        RuleList::for_request(&user, preset, request).map_err(ConfigError::from)
    }

    /// The patterns of an output line that asks for a wait: `--retry-after-output`'s, then the
    /// preset's.
    pub(super) fn waits_asked(&self, preset: Option<&'static Preset>) -> Vec<String> {
        let preset = preset.and_then(|preset| preset.retry_after);
        let mut patterns = self.retry_after_output.clone();
        patterns.extend(preset.map(str::to_string));
        patterns
    }
}
