//! Telling a heartbeat monitor of a run (healthchecks.io, Cronitor, Sentry Crons, Better Stack):
//! one ping when the first attempt starts and one with the run's outcome, never one per attempt,
//! so that a failure the next attempt fixes pages nobody. This file reads which monitor, from
//! `RETRY_MONITOR=DIALECT:URL` or the file `RETRY_MONITOR_FILE` names (a monitor's URL is a
//! credential: never on the command line, never in a message, never in a child's environment);
//! `dialect` says what each monitor's URLs are, `body` what an outcome's body holds, and `pings`
//! sends them for a run, never changing its exit status or its output.

mod body;
mod dialect;
mod pings;

use std::ffi::OsString;
use std::path::Path;

use crate::environment;
use crate::http::Url;
use retry_budget::PasswordFileProblem;
use retry_policy::choice::Choice;

pub(crate) use dialect::Dialect;
pub(crate) use pings::Pings;

/// The monitor a run tells: how it speaks, and its URL (a secret).
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Monitor {
    dialect: Dialect,
    url: Url,
}

/// The most bytes of the first line of `RETRY_MONITOR_FILE`.
const MAX_LINE: usize = 4096;

/// A monitor the environment names that cannot be used, each way in words that never repeat
/// its URL (a credential).
#[derive(Debug, thiserror::Error)]
pub(crate) enum BadMonitor {
    #[error("{inline} and {file} are both set; name the monitor in one of them", inline = environment::MONITOR.name, file = environment::MONITOR_FILE.name)]
    BothSet,
    #[error("{} is not UTF-8", environment::MONITOR.name)]
    NotUtf8,
    /// The file's path, made printable, and why it gives no line.
    #[error("cannot read the monitor from {} ({path}): {why}", environment::MONITOR_FILE.name)]
    File {
        path: String,
        why: PasswordFileProblem,
    },
    /// The variable that names it, and what is wrong with its value.
    #[error("{variable}: {why}")]
    Value {
        variable: &'static str,
        why: BadValue,
    },
}

/// What is wrong with a monitor's `DIALECT:URL`.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub(crate) enum BadValue {
    #[error(
        "give DIALECT:URL, DIALECT one of {}, e.g. healthchecks:https://hc-ping.com/UUID",
        dialects()
    )]
    NoDialect,
    /// The dialect given, made printable.
    #[error("'{0}' is not a monitor's dialect; give one of {names}", names = dialects())]
    UnknownDialect(String),
    /// What is wrong with the URL.
    #[error("the monitor's URL: {0}")]
    Url(&'static str),
}

/// The dialects' names, for messages.
fn dialects() -> String {
    let names: Vec<&str> = Dialect::ALL.iter().map(|dialect| dialect.name()).collect();
    names.join(", ")
}

impl Monitor {
    /// The monitor `env` names, if any: `RETRY_MONITOR`, or the first line of the file
    /// `RETRY_MONITOR_FILE` names; the error says what is wrong without repeating the URL.
    pub(crate) fn from_environment(
        env: &impl Fn(&str) -> Option<OsString>,
    ) -> Result<Option<Monitor>, BadMonitor> {
        let (inline, file) = (
            environment::MONITOR.given(env),
            environment::MONITOR_FILE.given(env),
        );
        let (name, text) = match (inline, file) {
            (None, None) => return Ok(None),
            (Some(_), Some(_)) => return Err(BadMonitor::BothSet),
            (Some(value), None) => (
                environment::MONITOR.name,
                value.into_string().map_err(|_| BadMonitor::NotUtf8)?,
            ),
            (None, Some(path)) => (
                environment::MONITOR_FILE.name,
                retry_budget::named_files::secret_line(Path::new(&path), MAX_LINE).map_err(
                    |why| BadMonitor::File {
                        path: retry_policy::printable::printable(&path.to_string_lossy()),
                        why,
                    },
                )?,
            ),
        };
        Monitor::parse(&text)
            .map(Some)
            .map_err(|why| BadMonitor::Value {
                variable: name,
                why,
            })
    }

    /// `DIALECT:URL`, its URL never repeated in the error.
    fn parse(text: &str) -> Result<Monitor, BadValue> {
        let Some((dialect, url)) = text.split_once(':') else {
            return Err(BadValue::NoDialect);
        };
        let dialect = Dialect::named(dialect)
            .ok_or_else(|| BadValue::UnknownDialect(retry_policy::printable::printable(dialect)))?;
        let url = Url::parse(url).map_err(BadValue::Url)?;
        Ok(Monitor { dialect, url })
    }

    /// The host the monitor is on, which messages may name.
    pub(crate) fn host(&self) -> &str {
        self.url.host()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn from(pairs: &[(&str, &str)]) -> Result<Option<Monitor>, BadMonitor> {
        let env = |name: &str| {
            pairs
                .iter()
                .find(|(key, _)| *key == name)
                .map(|(_, value)| OsString::from(value))
        };
        Monitor::from_environment(&env)
    }

    #[test]
    fn a_monitor_is_named_in_the_environment_or_a_file_and_never_repeated() {
        assert!(from(&[]).unwrap().is_none());
        let monitor = from(&[("RETRY_MONITOR", "healthchecks:https://hc-ping.com/s3cret")]);
        let monitor = monitor.unwrap().unwrap();
        assert_eq!(
            (monitor.dialect, monitor.host()),
            (Dialect::Healthchecks, "hc-ping.com")
        );
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("monitor");
        std::fs::write(&file, "cronitor:https://cronitor.link/p/s3cret/nightly\n").unwrap();
        let path = file.to_str().unwrap();
        let monitor = from(&[("RETRY_MONITOR_FILE", path)]).unwrap().unwrap();
        assert_eq!(monitor.dialect, Dialect::Cronitor);
        for (pairs, why) in [
            (
                vec![("RETRY_MONITOR", "pagerduty:https://x/s3cret")],
                "not a monitor's dialect",
            ),
            (
                vec![("RETRY_MONITOR", "https://hc-ping.com/s3cret")],
                "not a monitor's dialect",
            ),
            (vec![("RETRY_MONITOR", "s3cret")], "give DIALECT:URL"),
            (vec![("RETRY_MONITOR", "sentry:ftp://x/s3cret")], "https://"),
            (
                vec![
                    ("RETRY_MONITOR", "sentry:https://x/"),
                    ("RETRY_MONITOR_FILE", path),
                ],
                "both set",
            ),
            (
                vec![("RETRY_MONITOR_FILE", "/nonexistent/s3cret")],
                "cannot read",
            ),
        ] {
            let err = from(&pairs).unwrap_err().to_string();
            assert!(err.contains(why), "{pairs:?}: {err}");
            if why != "cannot read" {
                assert!(!err.contains("s3cret"), "{err}");
            }
        }
    }
}
