//! What each monitor's pings are: for a run's start, its success, its failure with the status
//! the tool exits with, a failure its job tolerates (`retry job set --alert-after`), and a run
//! another run of its job kept out; the URL to ask, and whether it takes the output as its
//! body. Pure: the requests are built here and sent by `pings`, every one a `POST` (a check may
//! take no other method). Each is built to what the monitor's own server does with it:
//!
//! - healthchecks.io (and its self-hosted server): `URL/start`, `URL`, `URL/STATUS`, and
//!   `URL/log` for a run kept out, which alerts no one; each with a `rid` of the run's own, and
//!   the body kept with the ping. It keeps no tolerance of its own, and its timer runs from the
//!   last success or failure (not a `/log`), so a failure the job tolerates is sent as the one
//!   ping that keeps the check from alerting: a success, whose body says it failed.
//! - Cronitor's telemetry: `state=run`, `complete` and `fail` with `status_code`, one `series`
//!   for the run, the summary and the output's end as its `message` (as `cronitor exec` sends
//!   them), and the `host`. It keeps its own tolerance (`failure_tolerance`): every failure is a
//!   failure.
//! - Sentry Crons over HTTP: `status=in_progress`, `ok` and `error`, a `check_in_id` of the
//!   run's own (Sentry looks a check-in up by its id alone). It keeps its own tolerance
//!   (`failure_issue_threshold`): every failure is a failure.
//! - Better Stack heartbeats: no start; `URL` and `URL/STATUS`, the body kept. Like
//!   Healthchecks, it keeps no tolerance, and a tolerated failure is a success that says so.

use retry_policy::choice::Choice;

use crate::http::Url;

/// How a monitor is spoken to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Dialect {
    Healthchecks,
    Cronitor,
    Sentry,
    BetterStack,
}

impl Choice for Dialect {
    const ALL: &'static [Dialect] = &[
        Dialect::Healthchecks,
        Dialect::Cronitor,
        Dialect::Sentry,
        Dialect::BetterStack,
    ];

    fn name(self) -> &'static str {
        match self {
            Dialect::Healthchecks => "healthchecks",
            Dialect::Cronitor => "cronitor",
            Dialect::Sentry => "sentry",
            Dialect::BetterStack => "betterstack",
        }
    }

    fn about(self) -> &'static str {
        match self {
            Dialect::Healthchecks => "healthchecks.io, or a self-hosted Healthchecks",
            Dialect::Cronitor => "Cronitor's telemetry URL",
            Dialect::Sentry => "Sentry Crons' HTTP check-in URL",
            Dialect::BetterStack => "a Better Stack heartbeat URL",
        }
    }
}

/// What a ping says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Ping {
    /// The first attempt starts.
    Start,
    /// The run succeeded.
    Success,
    /// The run failed, and the tool exits with this status.
    Failure(u8),
    /// The run failed with this status, but its job tolerates it: alerting no one, where the
    /// monitor keeps no tolerance of its own.
    Tolerated(u8),
    /// Another run of the job kept this one out, and the tool exits with this status: a note
    /// where the monitor keeps notes, else nothing.
    KeptOut(u8),
}

/// The most bytes of a message Cronitor keeps, as `cronitor exec` sends it.
const CRONITOR_MESSAGE: usize = 1000;

impl Dialect {
    /// The monitor's own setting that tolerates failures in a row, where it has one, with the
    /// value that alerts from the `alert_after`th failed run in a row: a job's `--alert-after`
    /// belongs there, for every failure is sent to such a monitor as a failure.
    pub(crate) fn own_tolerance(self, alert_after: u32) -> Option<String> {
        match self {
            // Failures tolerated before an alert.
            Dialect::Cronitor => Some(format!("failure_tolerance to {}", alert_after - 1)),
            // Failed check-ins in a row that open an issue.
            Dialect::Sentry => Some(format!("failure_issue_threshold to {alert_after}")),
            Dialect::Healthchecks | Dialect::BetterStack => None,
        }
    }

    /// The most bytes of the summary and the output the monitor takes in a URL's `message`,
    /// where it takes them there rather than in a body.
    pub(crate) fn message_limit(self) -> Option<usize> {
        match self {
            Dialect::Cronitor => Some(CRONITOR_MESSAGE),
            _ => None,
        }
    }
}

/// A ping to send: where, and whether the run's output goes as its body.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Request {
    pub(crate) url: Url,
    pub(crate) with_body: bool,
}

impl Dialect {
    /// The request that sends `ping` for the check-in `check_in` (the run's own, per run and
    /// monitor) to the monitor at `url`, `message` its words where it takes them in the URL,
    /// from the machine `host`; none where the monitor has no such ping.
    pub(crate) fn request(
        self,
        url: &Url,
        ping: Ping,
        check_in: &str,
        (message, host): (&str, &str),
    ) -> Option<Request> {
        let (url, with_body) = match self {
            Dialect::Healthchecks => {
                let url = match ping {
                    Ping::Start => url.joined("start"),
                    Ping::Success | Ping::Tolerated(_) => url.clone(),
                    Ping::Failure(status) => url.joined(&status.to_string()),
                    Ping::KeptOut(_) => url.joined("log"),
                };
                (url.with_query(&[("rid", check_in)]), ping != Ping::Start)
            }
            Dialect::Cronitor => {
                let state = match ping {
                    Ping::Start => url.with_query(&[("state", "run")]),
                    Ping::Success => url.with_query(&[("state", "complete"), ("status_code", "0")]),
                    Ping::Failure(status) | Ping::Tolerated(status) => {
                        url.with_query(&[("state", "fail"), ("status_code", &status.to_string())])
                    }
                    Ping::KeptOut(_) => return None,
                };
                let url = state.with_query(&[("series", check_in), ("host", host)]);
                match ping {
                    Ping::Start => (url, false),
                    _ => (url.with_query(&[("message", message)]), false),
                }
            }
            Dialect::Sentry => {
                let status = match ping {
                    Ping::Start => "in_progress",
                    Ping::Success => "ok",
                    Ping::Failure(_) | Ping::Tolerated(_) => "error",
                    Ping::KeptOut(_) => return None,
                };
                let url = url.with_query(&[("status", status), ("check_in_id", check_in)]);
                (url, false)
            }
            Dialect::BetterStack => match ping {
                Ping::Success | Ping::Tolerated(_) => (url.clone(), true),
                Ping::Failure(status) => (url.joined(&status.to_string()), true),
                Ping::Start | Ping::KeptOut(_) => return None,
            },
        };
        Some(Request { url, with_body })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const RUN: &str = "6ba7b810-9dad-41d1-80b4-00c04fd430c8";

    /// Each ping of `dialect` to `url`: its path and query, and whether it has a body.
    fn pings(dialect: Dialect, url: &str) -> Vec<Option<String>> {
        let url = Url::parse(url).unwrap();
        [
            Ping::Start,
            Ping::Success,
            Ping::Failure(75),
            Ping::Tolerated(1),
            Ping::KeptOut(75),
        ]
        .into_iter()
        .map(|ping| {
            dialect
                .request(&url, ping, RUN, ("retry: 3 attempts", "web-1"))
                .map(|request| {
                    let body = if request.with_body { " +body" } else { "" };
                    format!("{}{body} {}", request.url.host(), request.url.target())
                })
        })
        .collect()
    }

    #[test]
    fn each_dialect_says_each_ping_its_own_way() {
        let rid = format!("rid={RUN}");
        assert_eq!(
            pings(Dialect::Healthchecks, "https://hc-ping.com/abc"),
            [
                Some(format!("hc-ping.com /abc/start?{rid}")),
                Some(format!("hc-ping.com +body /abc?{rid}")),
                Some(format!("hc-ping.com +body /abc/75?{rid}")),
                Some(format!("hc-ping.com +body /abc?{rid}")),
                Some(format!("hc-ping.com +body /abc/log?{rid}")),
            ]
        );
        let series = format!("series={RUN}&host=web-1");
        let message = "message=retry%3A%203%20attempts";
        assert_eq!(
            pings(Dialect::Cronitor, "https://cronitor.link/p/key/nightly"),
            [
                Some(format!("cronitor.link /p/key/nightly?state=run&{series}")),
                Some(format!(
                    "cronitor.link /p/key/nightly?state=complete&status_code=0&{series}&{message}"
                )),
                Some(format!(
                    "cronitor.link /p/key/nightly?state=fail&status_code=75&{series}&{message}"
                )),
                Some(format!(
                    "cronitor.link /p/key/nightly?state=fail&status_code=1&{series}&{message}"
                )),
                None,
            ]
        );
        let check_in = format!("check_in_id={RUN}");
        assert_eq!(
            pings(
                Dialect::Sentry,
                "https://o1.ingest.sentry.io/api/2/cron/nightly/key/"
            ),
            [
                Some(format!(
                    "o1.ingest.sentry.io /api/2/cron/nightly/key/?status=in_progress&{check_in}"
                )),
                Some(format!(
                    "o1.ingest.sentry.io /api/2/cron/nightly/key/?status=ok&{check_in}"
                )),
                Some(format!(
                    "o1.ingest.sentry.io /api/2/cron/nightly/key/?status=error&{check_in}"
                )),
                Some(format!(
                    "o1.ingest.sentry.io /api/2/cron/nightly/key/?status=error&{check_in}"
                )),
                None,
            ]
        );
        assert_eq!(
            pings(
                Dialect::BetterStack,
                "https://uptime.betterstack.com/api/v1/heartbeat/tok"
            ),
            [
                None,
                Some("uptime.betterstack.com +body /api/v1/heartbeat/tok".into()),
                Some("uptime.betterstack.com +body /api/v1/heartbeat/tok/75".into()),
                Some("uptime.betterstack.com +body /api/v1/heartbeat/tok".into()),
                None,
            ]
        );
    }
}
