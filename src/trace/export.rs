//! Where a run's spans go, from OpenTelemetry's standard exporter variables, and nothing else:
//! `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` (used as it is) or `OTEL_EXPORTER_OTLP_ENDPOINT` (with
//! `/v1/traces` after it); the protocol, `http/protobuf`, the one every OTLP receiver takes
//! (`http/json`, which the protocol makes optional, is said once and sent as `http/protobuf`;
//! `grpc` is said once and nothing is sent); the headers, `key=value` pairs, percent-decoded, which
//! are secrets and never said; the timeout in milliseconds (10 s by default); and the resource:
//! `OTEL_SERVICE_NAME`, `OTEL_RESOURCE_ATTRIBUTES`. Each `TRACES_` variable wins over the
//! general one. A value that cannot be used is said once, never repeating a header's value,
//! and no trace is sent.

use std::ffi::OsString;
use std::time::Duration;

use crate::http::Url;
use retry_policy::encoding::{Stray, percent_decoded};

/// Where and how a run's spans are sent.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Export {
    pub(crate) url: Url,
    /// The headers each request carries: secrets.
    pub(crate) headers: Vec<(String, String)>,
    pub(crate) timeout: Duration,
    /// The resource's attributes, `service.name` among them.
    pub(crate) resource: Vec<(String, String)>,
}

/// The timeout when none is given.
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);

impl Export {
    /// The export `env` configures, if it names an endpoint; a problem with a value is said in
    /// `problems`, and then nothing is sent.
    pub(crate) fn from_environment(
        env: &impl Fn(&str) -> Option<OsString>,
        problems: &mut Vec<String>,
    ) -> Option<Export> {
        let value = |name: &str| {
            env(name)
                .and_then(|value| value.into_string().ok())
                .filter(|value| !value.trim().is_empty())
        };
        let either = |suffix: &str| {
            value(&format!("OTEL_EXPORTER_OTLP_TRACES_{suffix}"))
                .or_else(|| value(&format!("OTEL_EXPORTER_OTLP_{suffix}")))
        };
        let endpoint = match value("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") {
            Some(endpoint) => endpoint,
            None => {
                let base = value("OTEL_EXPORTER_OTLP_ENDPOINT")?;
                format!("{}/v1/traces", base.trim_end_matches('/'))
            }
        };
        let mut problem = |why: String| {
            problems.push(format!("traces: {why}; no trace is sent"));
            None
        };
        let json = match either("PROTOCOL").as_deref().map(str::trim) {
            None | Some("http/protobuf") => false,
            Some("http/json") => true,
            Some("grpc") => {
                return problem(
                    "the OTLP protocol grpc is not supported; give http/protobuf".into(),
                );
            }
            Some(other) => {
                return problem(format!(
                    "the OTLP protocol '{}' is not http/protobuf",
                    retry_policy::printable::printable(other)
                ));
            }
        };
        let url = match Url::parse(endpoint.trim()) {
            Ok(url) => url,
            Err(why) => return problem(format!("the OTLP endpoint: {why}")),
        };
        let headers = match either("HEADERS").map(|text| pairs(&text)).transpose() {
            Ok(headers) => headers.unwrap_or_default(),
            Err(why) => return problem(format!("the OTLP headers: {why}")),
        };
        let timeout = match either("TIMEOUT").map(|text| text.trim().parse::<u64>()) {
            None => DEFAULT_TIMEOUT,
            Some(Ok(millis)) if millis > 0 => Duration::from_millis(millis),
            Some(_) => {
                return problem(
                    "the OTLP timeout is not a number of milliseconds above 0, e.g. 10000".into(),
                );
            }
        };
        let mut resource = match value("OTEL_RESOURCE_ATTRIBUTES").map(|text| pairs(&text)) {
            None => Vec::new(),
            Some(Ok(resource)) => resource,
            Some(Err(why)) => return problem(format!("OTEL_RESOURCE_ATTRIBUTES: {why}")),
        };
        let service = value("OTEL_SERVICE_NAME").map(|name| name.trim().to_string());
        resource.retain(|(key, _)| key != "service.name" || service.is_none());
        if let Some(service) = service {
            resource.push(("service.name".into(), service));
        }
        if !resource.iter().any(|(key, _)| key == "service.name") {
            resource.push(("service.name".into(), "retry".into()));
        }
        if json {
            problems.push(
                "traces: the OTLP protocol http/json is not supported (the protocol makes it \
                 optional); the spans are sent as http/protobuf, which every OTLP receiver takes"
                    .into(),
            );
        }
        Some(Export {
            url,
            headers,
            timeout,
            resource,
        })
    }
}

/// The `key=value` pairs of `text`, comma-separated, each part trimmed and percent-decoded; the
/// error never repeats a value.
fn pairs(text: &str) -> Result<Vec<(String, String)>, String> {
    text.split(',')
        .filter(|pair| !pair.trim().is_empty())
        .map(|pair| {
            let (key, value) = pair
                .split_once('=')
                .ok_or("a pair has no '=' (give key=value,key=value)")?;
            let decoded = |part: &str| {
                percent_decoded(part.trim(), Stray::Refused)
                    .ok_or("a pair is not valid percent-encoded UTF-8")
            };
            let (key, value) = (decoded(key)?, decoded(value)?);
            if key.is_empty() || key.chars().chain(value.chars()).any(char::is_control) {
                return Err("a pair has an empty key or a control character".to_string());
            }
            Ok((key, value))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn export(pairs: &[(&str, &str)]) -> (Option<Export>, Vec<String>) {
        let env = |name: &str| {
            pairs
                .iter()
                .find(|(key, _)| *key == name)
                .map(|(_, value)| OsString::from(value))
        };
        let mut problems = Vec::new();
        (Export::from_environment(&env, &mut problems), problems)
    }

    #[test]
    fn the_standard_variables_say_where_and_how() {
        assert_eq!(export(&[]), (None, vec![]));
        let (Some(general), _) = export(&[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector:4318/"),
            (
                "OTEL_EXPORTER_OTLP_HEADERS",
                "Authorization=Bearer%20s3cret, x-team = ops",
            ),
            (
                "OTEL_RESOURCE_ATTRIBUTES",
                "deployment.environment=prod,service.name=old",
            ),
            ("OTEL_SERVICE_NAME", "backup"),
        ]) else {
            panic!("an endpoint is an export")
        };
        assert_eq!(general.url.target(), "/v1/traces");
        assert_eq!(general.timeout, DEFAULT_TIMEOUT);
        assert_eq!(
            general.headers,
            [
                ("Authorization".into(), "Bearer s3cret".into()),
                ("x-team".into(), "ops".into())
            ]
        );
        assert_eq!(
            general.resource,
            [
                ("deployment.environment".into(), "prod".into()),
                ("service.name".into(), "backup".into())
            ]
        );
        let (Some(traces), problems) = export(&[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector:4318"),
            (
                "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
                "https://traces.example/ingest",
            ),
            ("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc"),
            ("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "http/json"),
            ("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", "500"),
        ]) else {
            panic!("an endpoint is an export")
        };
        assert_eq!(traces.url.target(), "/ingest");
        assert!(
            problems[0].contains("sent as http/protobuf"),
            "{problems:?}"
        );
        assert_eq!(traces.timeout, Duration::from_millis(500));
        assert_eq!(traces.resource, [("service.name".into(), "retry".into())]);
    }

    #[test]
    fn a_value_that_cannot_be_used_is_said_once_without_a_secret() {
        let endpoint = ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector:4318");
        for (pair, why) in [
            (
                ("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc"),
                "grpc is not supported",
            ),
            (
                ("OTEL_EXPORTER_OTLP_PROTOCOL", "thrift"),
                "'thrift' is not http/protobuf",
            ),
            (("OTEL_EXPORTER_OTLP_HEADERS", "s3cret"), "has no '='"),
            (
                ("OTEL_EXPORTER_OTLP_HEADERS", "a=s3cret%zz"),
                "percent-encoded",
            ),
            (("OTEL_EXPORTER_OTLP_TIMEOUT", "10s"), "milliseconds"),
            (
                ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "collector:4318"),
                "https://",
            ),
        ] {
            let (export, problems) = export(&[endpoint, pair]);
            assert_eq!(export, None, "{pair:?}");
            assert_eq!(problems.len(), 1, "{pair:?}");
            assert!(problems[0].contains(why), "{}", problems[0]);
            assert!(!problems[0].contains("s3cret"), "{}", problems[0]);
        }
    }
}
