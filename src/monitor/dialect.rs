//! What each monitor's pings are: for a run's start, its success, its failure with the status
//! the tool exits with, and a failure its job tolerates (`retry job set --alert-after`), the URL
//! to ask and whether it takes the output as its body. Pure: the requests are built here and
//! sent by `pings`.
//!
//! - healthchecks.io (and its self-hosted server): `URL/start`, `URL`, `URL/STATUS`, and
//!   `URL/log` for a tolerated failure, which alerts no one; each with `rid=RETRY_RUN_ID`, and
//!   the body kept with the ping.
//! - Cronitor's telemetry: `state=run`, `complete` and `fail` with `status_code`, one `series`
//!   for the run, and the summary as its `message`.
//! - Sentry Crons over HTTP: `status=in_progress`, `ok` and `error`, one `check_in_id`.
//! - Better Stack heartbeats: no start; `URL` and `URL/STATUS`, the body kept.

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
    /// The run failed with this status, but its job tolerates it: noted, alerting no one.
    Tolerated(u8),
}

/// A ping to send: where, and whether the run's output goes as its body.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Request {
    pub(crate) url: Url,
    pub(crate) with_body: bool,
}

impl Dialect {
    /// The request that sends `ping` for the run `run_id` (summed up by `summary`) to the
    /// monitor at `url`; none where the monitor has no such ping.
    pub(crate) fn request(
        self,
        url: &Url,
        ping: Ping,
        run_id: &str,
        summary: &str,
    ) -> Option<Request> {
        let (url, with_body) = match self {
            Dialect::Healthchecks => {
                let url = match ping {
                    Ping::Start => url.joined("start"),
                    Ping::Success => url.clone(),
                    Ping::Failure(status) => url.joined(&status.to_string()),
                    Ping::Tolerated(_) => url.joined("log"),
                };
                (url.with_query(&[("rid", run_id)]), ping != Ping::Start)
            }
            Dialect::Cronitor => {
                let state = match ping {
                    Ping::Start => url.with_query(&[("state", "run")]),
                    Ping::Success => url.with_query(&[("state", "complete"), ("status_code", "0")]),
                    Ping::Failure(status) => {
                        url.with_query(&[("state", "fail"), ("status_code", &status.to_string())])
                    }
                    Ping::Tolerated(_) => return None,
                };
                let url = state.with_query(&[("series", run_id)]);
                match ping {
                    Ping::Start => (url, false),
                    _ => (url.with_query(&[("message", summary)]), false),
                }
            }
            Dialect::Sentry => {
                let status = match ping {
                    Ping::Start => "in_progress",
                    Ping::Success => "ok",
                    Ping::Failure(_) => "error",
                    Ping::Tolerated(_) => return None,
                };
                let url = url.with_query(&[("status", status), ("check_in_id", run_id)]);
                (url, false)
            }
            Dialect::BetterStack => match ping {
                Ping::Success => (url.clone(), true),
                Ping::Failure(status) => (url.joined(&status.to_string()), true),
                Ping::Start | Ping::Tolerated(_) => return None,
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
        ]
        .into_iter()
        .map(|ping| {
            dialect
                .request(&url, ping, RUN, "retry: 3 attempts")
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
                Some(format!("hc-ping.com +body /abc/log?{rid}")),
            ]
        );
        let series = format!("series={RUN}");
        assert_eq!(
            pings(Dialect::Cronitor, "https://cronitor.link/p/key/nightly"),
            [
                Some(format!("cronitor.link /p/key/nightly?state=run&{series}")),
                Some(format!(
                    "cronitor.link /p/key/nightly?state=complete&status_code=0&{series}&message=retry%3A%203%20attempts"
                )),
                Some(format!(
                    "cronitor.link /p/key/nightly?state=fail&status_code=75&{series}&message=retry%3A%203%20attempts"
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
                None,
            ]
        );
    }
}
