//! `--report junit:FILE`: the run as one JUnit test case, in the convention Maven Surefire and
//! Gradle write for a test run again after failing, which Jenkins, GitLab and the test-report
//! actions read: attempts that failed before a success are `<flakyFailure>` elements, and a
//! run that gave up is a `<failure>` for its last attempt with the earlier ones as
//! `<rerunFailure>`; each with its status, time and the end of its output.
//!
//! Hand-written rather than through an XML crate: one element of fixed shape, and the only
//! care is escaping text from outside (the command line, its output), which [`escaped`] does,
//! dropping what XML 1.0 cannot hold. Bounded: each stream's last 4 KiB per attempt, and the
//! first and last [`KEPT_AT_EACH_END`] attempts of a long run, the rest counted.

use std::time::{Duration, Instant};

use crate::first_and_last::FirstAndLast;
use crate::output::tail::{KeptTails, Tails};
use crate::report::end_file::EndFile;
use crate::report::target::{ReportError, ReportTarget};
use crate::report::text;
use retry_policy::events::{Event, EventSink};
use retry_policy::exit::Exit;
use retry_policy::outcome::{AttemptOutcome, Next, Reason, RunEnd};
use retry_process::signals::SignalWatch;

/// How many attempts the file keeps at each end of the run; those between are counted.
const KEPT_AT_EACH_END: usize = 10;

/// One attempt as the file shows it.
#[derive(Clone, Debug)]
struct Attempt {
    /// "attempt 2/5 failed with exit status 1", as the tool's messages say it.
    described: String,
    status: u8,
    duration: Duration,
    success: bool,
    tails: Tails,
}

/// Collects the attempts and writes the file when the run ends.
pub(crate) struct JunitReport {
    target: ReportTarget,
    /// The test case's name: the job's, else the command line.
    name: String,
    tails: KeptTails,
    attempts: FirstAndLast<Attempt>,
}

impl JunitReport {
    /// A report of the test case `name`, to be written to `target`, its output from `tails`.
    pub(crate) fn new(target: ReportTarget, name: &str, tails: KeptTails) -> Self {
        JunitReport {
            target,
            name: name.to_string(),
            tails,
            attempts: FirstAndLast::new(KEPT_AT_EACH_END),
        }
    }

    /// The whole file.
    fn document(&self, end: &RunEnd) -> String {
        let time = seconds(end.elapsed);
        let (failures, errors, skipped) = match &end.reason {
            Reason::Success => (0, 0, 0),
            Reason::BreakerOpen { .. } | Reason::Overlap(_) => (0, 0, 1),
            reason if reason.gives_up() && end.last.is_some() => (1, 0, 0),
            _ => (0, 1, 0),
        };
        let mut xml = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
        xml += &format!(
            "<testsuite name=\"retry\" tests=\"1\" failures=\"{failures}\" errors=\"{errors}\" \
             skipped=\"{skipped}\" time=\"{time}\">\n"
        );
        xml += &format!(
            "  <testcase name=\"{}\" classname=\"retry\" time=\"{time}\">\n",
            escaped(&self.name)
        );
        xml += &self.verdicts(end);
        xml += "  </testcase>\n</testsuite>\n";
        xml
    }

    /// The test case's elements, in the order Surefire's schema gives them: the failure, the
    /// earlier failed attempts (reruns, or flaky ones before a success), a skip, an error, and
    /// the last attempt's output.
    fn verdicts(&self, end: &RunEnd) -> String {
        let failed: Vec<&Attempt> = self.attempts.kept().filter(|a| !a.success).collect();
        let omitted = self.attempts.omitted();
        let why = text::lines(&Event::Done(end.clone()), false, text::Told::Anew).join("; ");
        let status = Exit::of(end).status();
        let mut xml = String::new();
        let last = self.attempts.kept().last();
        match &end.reason {
            Reason::Success => {
                for attempt in &failed {
                    xml += &attempt.element("flakyFailure");
                }
            }
            Reason::BreakerOpen { .. } | Reason::Overlap(_) => {
                xml += &format!("    <skipped message=\"{}\"/>\n", escaped(&why));
            }
            reason if reason.gives_up() && end.last.is_some() => {
                let (message, earlier) = match failed.split_last() {
                    Some((last, earlier)) => (last.described.clone(), earlier),
                    None => (why.clone(), &[][..]),
                };
                xml += &format!(
                    "    <failure message=\"{}\" type=\"exit status {status}\">{}</failure>\n",
                    escaped(&message),
                    escaped(&why)
                );
                for attempt in earlier {
                    xml += &attempt.element("rerunFailure");
                }
            }
            _ => {
                xml += &format!(
                    "    <error message=\"{}\" type=\"{}\">{}</error>\n",
                    escaped(&why),
                    end.reason.name(),
                    escaped(&why)
                );
            }
        }
        if omitted > 0 {
            xml += &format!(
                "    <!-- {omitted} attempts between the first and the last {KEPT_AT_EACH_END} \
                 not shown -->\n"
            );
        }
        if let Some(last) = last {
            xml += &output_elements("    ", &last.tails);
        }
        xml
    }
}

impl Attempt {
    /// A `<flakyFailure>` or `<rerunFailure>` of this attempt; its time in the trace, as the
    /// schema gives these elements none of their own.
    fn element(&self, name: &str) -> String {
        format!(
            "    <{name} message=\"{}\" type=\"exit status {}\">\n      \
             <stackTrace>{} ({} s)</stackTrace>\n{}    </{name}>\n",
            escaped(&self.described),
            self.status,
            escaped(&self.described),
            seconds(self.duration),
            output_elements("      ", &self.tails),
        )
    }
}

/// `<system-out>` and `<system-err>` for the streams that gave anything, indented by `indent`.
fn output_elements(indent: &str, tails: &Tails) -> String {
    let mut xml = String::new();
    for (name, tail) in [("system-out", &tails.stdout), ("system-err", &tails.stderr)] {
        if !tail.is_empty() {
            xml += &format!("{indent}<{name}>{}</{name}>\n", escaped(&tail.text()));
        }
    }
    xml
}

impl EndFile for JunitReport {
    fn write(
        self: Box<Self>,
        end: &RunEnd,
        watch: &SignalWatch,
        deadline: Option<Instant>,
    ) -> Result<(), ReportError> {
        let text = self.document(end);
        self.target.write(text.into_bytes(), watch, deadline)
    }
}

impl EventSink for JunitReport {
    fn emit(&mut self, event: &Event) {
        if let Event::AttemptEnd(outcome) = event {
            self.attempts.push(attempt(outcome, self.tails.take()));
        }
    }
}

/// The attempt `outcome` tells of, with its output's `tails`.
fn attempt(outcome: &AttemptOutcome, tails: Option<Tails>) -> Attempt {
    Attempt {
        described: text::describe(outcome),
        status: outcome.termination.status(),
        duration: outcome.duration,
        success: outcome.next == Next::Stop(Reason::Success),
        tails: tails.unwrap_or_default(),
    }
}

/// Seconds with three decimals, as Surefire's schema writes a time.
fn seconds(duration: Duration) -> String {
    format!("{:.3}", duration.as_secs_f64())
}

/// `text` as XML character data or an attribute's value: the five special characters escaped,
/// line ends kept, and the characters XML 1.0 cannot hold (other control characters, lone
/// surrogates cannot occur in a `str`, U+FFFE and U+FFFF) replaced by U+FFFD.
fn escaped(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out += "&amp;",
            '<' => out += "&lt;",
            '>' => out += "&gt;",
            '"' => out += "&quot;",
            '\'' => out += "&apos;",
            '\t' | '\n' | '\r' => out.push(c),
            c if u32::from(c) < 0x20 || c == '\u{fffe}' || c == '\u{ffff}' => out.push('\u{fffd}'),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_from_outside_cannot_break_the_document() {
        assert_eq!(
            escaped("a<b>&\"c\"'\u{1b}[31m\u{0}\n"),
            "a&lt;b&gt;&amp;&quot;c&quot;&apos;\u{fffd}[31m\u{fffd}\n"
        );
    }

    #[test]
    fn a_time_has_three_decimals() {
        assert_eq!(seconds(Duration::from_micros(1_234_567)), "1.235");
        assert_eq!(seconds(Duration::ZERO), "0.000");
    }
}
