//! `--report [FORMAT:]FILE`: which of the files a run writes when it ends each value asks for,
//! by the prefix that names its format or else by the file's name: a JSON summary (`json:`,
//! `*.json` and any other name), GitLab's dotenv lines (`dotenv:`, `*.env`), Prometheus
//! gauges for node_exporter's textfile collector (`prom:`, `*.prom`, the only names that
//! collector reads), or a JUnit XML test case for a CI system's test reports (`junit:`,
//! `*.xml`).

use std::path::PathBuf;
use std::str::FromStr;

/// What a report holds, and how it is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ReportFormat {
    /// The run's JSON summary.
    Json,
    /// `RETRY_RUN_NAME=value` lines.
    Dotenv,
    /// Gauges in Prometheus's text format.
    Prometheus,
    /// One JUnit test case, flaky attempts and reruns as Surefire writes them.
    Junit,
}

impl ReportFormat {
    /// A file name for a report of this format, for an example in a message.
    pub(crate) fn example_file(self) -> &'static str {
        match self {
            ReportFormat::Json => "retry-report.json",
            ReportFormat::Dotenv => "retry.env",
            ReportFormat::Prometheus => "retry.prom",
            ReportFormat::Junit => "retry-junit.xml",
        }
    }
}

/// One `--report` value: a file, and its format.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ReportSpec {
    /// What it holds.
    pub(crate) format: ReportFormat,
    /// Where it goes.
    pub(crate) path: PathBuf,
}

/// A `--report` value that names no file the tool can write its format to.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub(crate) enum BadSpec {
    #[error("no FILE after the format; expected e.g. json:report.json")]
    NoFile,
    /// A metrics file whose name does not end in `.prom`: the last part of the path given.
    #[error(
        "node_exporter's textfile collector reads only files whose names end in .prom; give \
         such a name, e.g. prom:/var/lib/prometheus/node-exporter/{0}.prom"
    )]
    NotProm(String),
    /// A word before a colon that is no format's, and the value it begins.
    #[error(
        "'{word}' is not a report's format; expected json:, dotenv:, prom: or junit: before \
         FILE (for a file whose name holds a colon, give ./{value})"
    )]
    UnknownFormat { word: String, value: String },
}

/// The prefixes that name a format, and the endings that imply one.
const PREFIXES: [(&str, ReportFormat); 4] = [
    ("json:", ReportFormat::Json),
    ("dotenv:", ReportFormat::Dotenv),
    ("prom:", ReportFormat::Prometheus),
    ("junit:", ReportFormat::Junit),
];
const ENDINGS: [(&str, ReportFormat); 4] = [
    (".json", ReportFormat::Json),
    (".env", ReportFormat::Dotenv),
    (".prom", ReportFormat::Prometheus),
    (".xml", ReportFormat::Junit),
];

impl FromStr for ReportSpec {
    type Err = BadSpec;

    fn from_str(text: &str) -> Result<Self, BadSpec> {
        let prefixed = PREFIXES
            .iter()
            .find_map(|&(prefix, format)| text.strip_prefix(prefix).map(|path| (format, path)));
        if prefixed.is_none()
            && let Some(word) = unknown_format(text)
        {
            let (word, value) = (word.to_string(), text.to_string());
            return Err(BadSpec::UnknownFormat { word, value });
        }
        let (format, path) = prefixed.unwrap_or_else(|| {
            let ending = ENDINGS.iter().find(|(ending, _)| text.ends_with(ending));
            (
                ending.map_or(ReportFormat::Json, |&(_, format)| format),
                text,
            )
        });
        if path.is_empty() {
            return Err(BadSpec::NoFile);
        }
        if format == ReportFormat::Prometheus && !path.ends_with(".prom") {
            let name = path.rsplit('/').next().unwrap_or("backup");
            return Err(BadSpec::NotProm(name.to_string()));
        }
        Ok(ReportSpec {
            format,
            path: PathBuf::from(path),
        })
    }
}

/// The word before the first colon of `text`, when it reads as a format's name (letters and
/// digits alone) and so a mistyped one (`juint:report.xml`) rather than a file's name: a name
/// with a colon is written into a path, `./name:x`, to say so.
fn unknown_format(text: &str) -> Option<&str> {
    let (word, _) = text.split_once(':')?;
    let a_word = !word.is_empty() && word.bytes().all(|byte| byte.is_ascii_alphanumeric());
    a_word.then_some(word)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn format(text: &str) -> ReportFormat {
        text.parse::<ReportSpec>().unwrap().format
    }

    #[test]
    fn a_prefix_names_the_format_or_else_the_name_implies_it() {
        assert_eq!(format("report.json"), ReportFormat::Json);
        assert_eq!(format("report.out"), ReportFormat::Json);
        assert_eq!(format("build.env"), ReportFormat::Dotenv);
        assert_eq!(
            format("/var/lib/node-exporter/backup.prom"),
            ReportFormat::Prometheus
        );
        assert_eq!(format("dotenv:retry.txt"), ReportFormat::Dotenv);
        assert_eq!(format("json:run.env"), ReportFormat::Json);
        assert_eq!(format("TEST-retry.xml"), ReportFormat::Junit);
        assert_eq!(format("junit:report"), ReportFormat::Junit);
        let spec: ReportSpec = "prom:m.prom".parse().unwrap();
        assert_eq!(spec.path, PathBuf::from("m.prom"));
    }

    #[test]
    fn metrics_need_a_name_node_exporter_reads_and_every_format_a_file() {
        let err = "prom:metrics.txt".parse::<ReportSpec>().unwrap_err();
        assert_eq!(err, BadSpec::NotProm("metrics.txt".into()));
        assert!(err.to_string().contains("end in .prom"), "{err}");
        assert_eq!("json:".parse::<ReportSpec>(), Err(BadSpec::NoFile));
    }

    #[test]
    fn a_word_before_a_colon_that_is_no_format_is_refused_and_a_path_with_one_is_not() {
        let err = "juint:report.xml".parse::<ReportSpec>().unwrap_err();
        assert_eq!(
            err,
            BadSpec::UnknownFormat {
                word: "juint".into(),
                value: "juint:report.xml".into()
            }
        );
        assert!(err.to_string().contains("./juint:report.xml"), "{err}");
        assert_eq!(format("./juint:report.xml"), ReportFormat::Junit);
        assert_eq!(format("/tmp/a:b.json"), ReportFormat::Json);
        assert_eq!(format("out/12:00.env"), ReportFormat::Dotenv);
        assert_eq!(format(":x.prom"), ReportFormat::Prometheus);
    }
}
