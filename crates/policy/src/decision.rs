//! What an attempt's exit status means for the run: success, worth another attempt, or not.
//!
//! Pure: one status in, one [`Classification`] out. Whether attempts remain is the run loop's
//! business, not this module's. Statuses are numbers 0-255, with death by signal N seen as 128+N.
//! Two statuses are not retried unless `--retry-on` names them: 130 (Ctrl-C: the user asked to
//! stop) and 141 (SIGPIPE: the reader is gone, and another attempt would write to the same closed
//! pipe).

use crate::codes::StatusSet;
use crate::matching::OutputMatch;
use crate::presets::{Preset, Verdict};
use crate::signal::Signal;

/// The exit-status options: `--success-on`, `--retry-on` and `--stop-on`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Policy {
    success_on: StatusSet,
    retry_on: Option<StatusSet>,
    stop_on: StatusSet,
    /// Whether `--retry-on-output` was given: then only a matching failure is retried.
    requires_retry_match: bool,
    /// Whether `--success-on-output` was given: then a success status counts only with a match.
    requires_success_match: bool,
    /// `--preset`: what the statuses the user's sets do not name mean.
    preset: Option<&'static Preset>,
}

/// What one attempt's status says about the run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Classification {
    /// The status counts as success: stop and exit 0.
    Success,
    /// A failure that another attempt could mend.
    Retryable,
    /// A failure that the options say not to retry, and which option says so.
    NotRetryable(Refusal),
}

/// Why an attempt that exited with a success status is not a success.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unready {
    /// Its output lacked the `--success-on-output` match it needed.
    SuccessMatch,
    /// The `--preset` reads its output as a failure (apt-get update, which ends 0 when it could
    /// not fetch an index), what the failure is, and whether another attempt could mend it.
    Preset {
        /// The preset's name.
        preset: &'static str,
        /// What the failure is, in words.
        meaning: &'static str,
        /// Whether another attempt could mend it.
        verdict: Verdict,
    },
}

impl Unready {
    /// Why, in words that follow "exited 0".
    pub fn explain(self) -> String {
        match self {
            Unready::SuccessMatch => "without the --success-on-output match".into(),
            Unready::Preset {
                preset, meaning, ..
            } => format!("but --preset {preset} reads its output as {meaning}"),
        }
    }
}

/// Why a failure is not retried.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// The status is in `--stop-on`.
    InStopOn,
    /// `--retry-on` was given and the status is not in it.
    NotInRetryOn,
    /// 130: the command was interrupted (Ctrl-C), and `--retry-on` does not name 130.
    Interrupted,
    /// 141: the command's output pipe was closed (SIGPIPE), and `--retry-on` does not name 141.
    BrokenPipe,
    /// The output matched `--stop-on-output`.
    StopOnOutput,
    /// The `--preset` calls the failure permanent, and what it is.
    Preset {
        /// The preset's name.
        preset: &'static str,
        /// What the failure is, in words.
        meaning: &'static str,
    },
    /// `--retry-on-output` was given and the output did not match it.
    NoRetryOnOutput,
}

impl Refusal {
    /// The reason in words, for a message after "exit status N".
    pub fn explain(self) -> String {
        let words = match self {
            Refusal::Preset { preset, meaning } => {
                return format!("is not retried: --preset {preset} calls it {meaning}");
            }
            Refusal::InStopOn => "is in --stop-on",
            Refusal::NotInRetryOn => "is not in --retry-on",
            Refusal::Interrupted => {
                "means the command was interrupted (Ctrl-C); name 130 in --retry-on to retry it"
            }
            Refusal::BrokenPipe => {
                "means the command's reader went away (SIGPIPE); name 141 in --retry-on to retry it"
            }
            Refusal::StopOnOutput => "is not retried: the output matched --stop-on-output",
            Refusal::NoRetryOnOutput => {
                "is not retried: the output did not match --retry-on-output"
            }
        };
        words.to_string()
    }
}

/// Which exit-status option makes a policy contradict itself; shown, it names both flags and
/// their values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Overlap {
    /// The status that is both success and failure.
    pub status: u8,
    /// The `--success-on` set.
    pub success_on: StatusSet,
    /// The flag that lists it as a failure (`--retry-on` or `--stop-on`), and its set.
    pub flag: &'static str,
    /// The statuses it lists that `--success-on` lists too.
    pub failures: StatusSet,
}

impl std::fmt::Display for Overlap {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "status {} is in both --success-on ({}) and {} ({}); a status cannot be success and \
             failure",
            self.status, self.success_on, self.flag, self.failures
        )
    }
}

/// 128+SIGINT: the user asked the command to stop.
const INTERRUPTED: u8 = 128 + Signal::INT.number() as u8;
/// 128+SIGPIPE: the command's reader is gone, and would be gone for another attempt too.
const BROKEN_PIPE: u8 = 128 + Signal::PIPE.number() as u8;

impl Policy {
    /// A policy from the three option values; a status may not be both success and failure.
    pub fn new(
        success_on: StatusSet,
        retry_on: Option<StatusSet>,
        stop_on: Option<StatusSet>,
    ) -> Result<Self, Overlap> {
        let stop_on = stop_on.unwrap_or_default();
        let failures = [
            ("--retry-on", retry_on.unwrap_or_default()),
            ("--stop-on", stop_on),
        ];
        for (flag, failures) in failures {
            if let Some(status) = success_on.first_shared(&failures) {
                return Err(Overlap {
                    status,
                    success_on,
                    flag,
                    failures,
                });
            }
        }
        Ok(Policy {
            success_on,
            retry_on,
            stop_on,
            requires_retry_match: false,
            requires_success_match: false,
            preset: None,
        })
    }

    /// The same policy, leaving the statuses the user's sets do not name to `preset`.
    pub fn with_preset(self, preset: Option<&'static Preset>) -> Self {
        Policy { preset, ..self }
    }

    /// The same policy, counting a success status as success only when the output matched
    /// `--success-on-output`.
    pub fn requiring_success_match(self, required: bool) -> Self {
        Policy {
            requires_success_match: required,
            ..self
        }
    }

    /// The same policy, retrying a failure only when its output matched `--retry-on-output`.
    pub fn requiring_retry_match(self, required: bool) -> Self {
        Policy {
            requires_retry_match: required,
            ..self
        }
    }

    /// Whether `--retry-on` was given and names `status`.
    fn names_for_retry(&self, status: u8) -> bool {
        self.retry_on.is_some_and(|set| set.contains(status))
    }

    /// Classify an attempt that ended with `status` after printing output that matched `output`.
    /// A success status without the `--success-on-output` match it needs is a failure that the
    /// status allows to retry (it can be in neither `--retry-on` nor `--stop-on`). The other
    /// output conditions apply only to failures, and only where the status allows a retry.
    pub fn classify(&self, status: u8, output: &OutputMatch) -> Classification {
        let by_status = match self.unready(status, output) {
            Some(Unready::Preset {
                preset,
                meaning,
                verdict: Verdict::Stop,
            }) => Classification::NotRetryable(Refusal::Preset { preset, meaning }),
            Some(_) => Classification::Retryable,
            None => self.classify_status(status, output),
        };
        match by_status {
            Classification::Retryable if output.stop.is_some() => {
                Classification::NotRetryable(Refusal::StopOnOutput)
            }
            Classification::Retryable if self.requires_retry_match && output.retry.is_none() => {
                Classification::NotRetryable(Refusal::NoRetryOnOutput)
            }
            classification => classification,
        }
    }

    /// Why `status`, a success, is not one: `output` lacks the `--success-on-output` match it
    /// needs, or the preset reads it as a failure; none for a success, or a failure.
    pub fn unready(&self, status: u8, output: &OutputMatch) -> Option<Unready> {
        if self.classify_status(status, output) != Classification::Success {
            return None;
        }
        if self.requires_success_match && output.success.is_none() {
            return Some(Unready::SuccessMatch);
        }
        let preset = self.preset?;
        preset
            .failure_despite(status, |index| output.preset_matched(index))
            .map(|(verdict, meaning)| Unready::Preset {
                preset: preset.name,
                meaning,
                verdict,
            })
    }

    /// What `status` means by the status sets, and by the preset's rules (which may read
    /// `output`) for a status those do not name.
    fn classify_status(&self, status: u8, output: &OutputMatch) -> Classification {
        if self.success_on.contains(status) {
            Classification::Success
        } else if self.stop_on.contains(status) {
            Classification::NotRetryable(Refusal::InStopOn)
        } else if status == INTERRUPTED && !self.names_for_retry(status) {
            Classification::NotRetryable(Refusal::Interrupted)
        } else if status == BROKEN_PIPE && !self.names_for_retry(status) {
            Classification::NotRetryable(Refusal::BrokenPipe)
        } else if let Some(preset) = self.preset
            && !self.names_for_retry(status)
        {
            match preset.decide(status, |index| output.preset_matched(index)) {
                (Verdict::Retry, _) => Classification::Retryable,
                (Verdict::Stop, meaning) => Classification::NotRetryable(Refusal::Preset {
                    preset: preset.name,
                    meaning,
                }),
            }
        } else if !self.retry_on.is_none_or(|set| set.contains(status)) {
            Classification::NotRetryable(Refusal::NotInRetryOn)
        } else {
            Classification::Retryable
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use Classification::*;
    use Refusal::*;

    fn policy(success: &str, retry: Option<&str>, stop: Option<&str>) -> Policy {
        let set = |text: &str| text.parse::<StatusSet>().unwrap();
        Policy::new(set(success), retry.map(set), stop.map(set)).unwrap()
    }

    #[test]
    fn a_success_status_a_preset_reads_as_a_failure_is_retried_or_not_as_it_says() {
        let apt = crate::presets::PRESETS
            .iter()
            .find(|preset| preset.name == "apt-get");
        let policy = policy("0", None, None).with_preset(apt);
        let matched = |bits| OutputMatch {
            preset: bits,
            ..OutputMatch::default()
        };
        assert_eq!(policy.classify(0, &matched(0)), Success, "a clean update");
        assert_eq!(
            policy.classify(0, &matched(0b10)),
            Retryable,
            "a mirror down"
        );
        let gone = policy.classify(0, &matched(0b11));
        assert!(
            matches!(
                gone,
                NotRetryable(Refusal::Preset {
                    preset: "apt-get",
                    ..
                })
            ),
            "a mirror that does not exist: {gone:?}"
        );
        assert!(policy.unready(0, &matched(0b11)).is_some());
    }

    #[test]
    fn a_preset_decides_the_statuses_the_users_sets_do_not_name() {
        let curl = crate::presets::PRESETS
            .iter()
            .find(|preset| preset.name == "curl");
        let preset = policy("0", None, None).with_preset(curl);
        let permanent = OutputMatch {
            preset: 1,
            ..OutputMatch::default()
        };
        let none = OutputMatch::default();
        assert_eq!(preset.classify(22, &none), Retryable, "a 503");
        let refusal = preset.classify(22, &permanent);
        assert!(
            matches!(
                refusal,
                NotRetryable(Refusal::Preset { preset: "curl", .. })
            ),
            "{refusal:?}"
        );
        assert_eq!(preset.classify(7, &none), Retryable);
        assert!(matches!(
            preset.classify(3, &none),
            NotRetryable(Refusal::Preset { .. })
        ));
        assert_eq!(preset.classify(0, &none), Success);
        assert_eq!(preset.classify(130, &none), NotRetryable(Interrupted));
        let named = policy("0", Some("3"), Some("7")).with_preset(curl);
        assert_eq!(named.classify(3, &none), Retryable, "--retry-on names it");
        assert_eq!(named.classify(7, &none), NotRetryable(InStopOn));
        assert_eq!(
            named.classify(22, &none),
            Retryable,
            "the rest is the preset's"
        );
        let stop_output = OutputMatch {
            stop: Some("x".into()),
            ..OutputMatch::default()
        };
        assert_eq!(preset.classify(7, &stop_output), NotRetryable(StopOnOutput));
    }

    #[test]
    fn classifies_by_the_exit_status_options() {
        let table = [
            // (success, retry-on, stop-on, status, expected)
            ("0", None, None, 0, Success),
            ("0", None, None, 1, Retryable),
            ("0", None, None, 255, Retryable),
            ("0", None, None, 137, Retryable),
            ("0", Some("75-78"), None, 75, Retryable),
            ("0", Some("75-78"), None, 1, NotRetryable(NotInRetryOn)),
            ("0", None, Some("2"), 2, NotRetryable(InStopOn)),
            ("0", None, Some("2"), 3, Retryable),
            ("0", Some("1-5"), Some("3"), 3, NotRetryable(InStopOn)),
            ("0", Some("1-5"), Some("3"), 4, Retryable),
            ("0,3", None, None, 3, Success),
            ("1", None, None, 0, Retryable),
            ("0", None, None, 124, Retryable),
            ("0", None, None, 130, NotRetryable(Interrupted)),
            ("0", None, None, 141, NotRetryable(BrokenPipe)),
            ("0", Some("1-255"), None, 130, Retryable),
            ("0", Some("130"), None, 130, Retryable),
            ("0", Some("141"), None, 141, Retryable),
            (
                "0",
                Some("130,141"),
                Some("141"),
                141,
                NotRetryable(InStopOn),
            ),
        ];
        for (success, retry, stop, status, expected) in table {
            let got = policy(success, retry, stop).classify(status, &OutputMatch::default());
            assert_eq!(
                got, expected,
                "success {success} retry {retry:?} stop {stop:?} status {status}"
            );
        }
    }

    #[test]
    fn output_conditions_apply_to_retryable_failures_only() {
        let matched = |retry: Option<&str>, stop: Option<&str>| OutputMatch {
            retry: retry.map(String::from),
            stop: stop.map(String::from),
            ..OutputMatch::default()
        };
        let plain = policy("0", None, Some("2"));
        let needs_match = plain.clone().requiring_retry_match(true);
        let table = [
            // (policy, status, output, expected)
            (&plain, 0, matched(None, Some("x")), Success),
            (
                &plain,
                1,
                matched(None, Some("x")),
                NotRetryable(StopOnOutput),
            ),
            (
                &plain,
                1,
                matched(Some("y"), Some("x")),
                NotRetryable(StopOnOutput),
            ),
            (&plain, 2, matched(Some("y"), None), NotRetryable(InStopOn)),
            (&plain, 1, matched(None, None), Retryable),
            (
                &needs_match,
                1,
                matched(None, None),
                NotRetryable(NoRetryOnOutput),
            ),
            (&needs_match, 1, matched(Some("y"), None), Retryable),
            (&needs_match, 0, matched(None, None), Success),
            (
                &needs_match,
                2,
                matched(Some("y"), None),
                NotRetryable(InStopOn),
            ),
        ];
        for (policy, status, output, expected) in table {
            assert_eq!(
                policy.classify(status, &output),
                expected,
                "{status} {output:?}"
            );
        }
    }

    #[test]
    fn a_success_status_needs_its_output_with_success_on_output() {
        let ready = |success: Option<&str>, stop: Option<&str>| OutputMatch {
            success: success.map(String::from),
            stop: stop.map(String::from),
            ..OutputMatch::default()
        };
        let readiness = policy("0", Some("1"), Some("2")).requiring_success_match(true);
        assert_eq!(readiness.classify(0, &ready(Some("ready"), None)), Success);
        assert_eq!(
            readiness.classify(0, &ready(None, None)),
            Retryable,
            "not in --retry-on, still retried"
        );
        assert_eq!(
            readiness.classify(0, &ready(None, Some("x"))),
            NotRetryable(StopOnOutput)
        );
        assert_eq!(
            readiness.classify(2, &ready(Some("ready"), None)),
            NotRetryable(InStopOn)
        );
        let also_retry_match = readiness.requiring_retry_match(true);
        assert_eq!(
            also_retry_match.classify(0, &ready(None, None)),
            NotRetryable(NoRetryOnOutput)
        );
    }

    #[test]
    fn refuses_a_status_that_is_both_success_and_failure() {
        let set = |text: &str| text.parse::<StatusSet>().unwrap();
        let retry = Policy::new(set("0"), Some(set("0-255")), None).unwrap_err();
        assert_eq!(
            retry.to_string(),
            "status 0 is in both --success-on (0) and --retry-on (0-255); a status cannot be \
             success and failure"
        );
        let stop = Policy::new(set("0,3"), None, Some(set("3-4"))).unwrap_err();
        assert_eq!((stop.status, stop.flag), (3, "--stop-on"));
    }
}
