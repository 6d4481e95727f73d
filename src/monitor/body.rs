//! What an outcome's ping says beside its status: one summary line (attempts, reason, flaky,
//! exit status), then the end of the last attempt's output, the tail the tool keeps of each
//! stream, cut to the monitor's limit (its `Ping-Body-Limit`, or [`DEFAULT_LIMIT`]). The
//! summary line and the output's last line are always kept; what is cut is the start of the
//! output, and a line says how much.

use retry_policy::outcome::RunEnd;

use crate::output::tail::Tails;

/// The most bytes of a body when the monitor announces no limit.
pub(crate) const DEFAULT_LIMIT: usize = 10_000;

/// The summary line of the run that ended as `end`, with the tool exiting `status`.
pub(crate) fn summary(end: &RunEnd, status: u8) -> String {
    let attempts = match end.attempts {
        1 => "1 attempt".to_string(),
        count => format!("{count} attempts"),
    };
    let flaky = if end.flaky() { "yes" } else { "no" };
    format!(
        "retry: {attempts}, reason {}, flaky {flaky}, exit status {status}",
        end.reason.name()
    )
}

/// The body: `summary`, then the output in `tails`, in at most `limit` bytes.
pub(crate) fn body(summary: &str, tails: Option<&Tails>, limit: usize) -> Vec<u8> {
    let output: String = tails
        .into_iter()
        .flat_map(|tails| [&tails.stdout, &tails.stderr])
        .filter(|tail| !tail.is_empty())
        .map(|tail| tail.text())
        .collect();
    let mut body = cut_to(summary, limit).to_string();
    if output.is_empty() || body.len() >= limit {
        return body.into_bytes();
    }
    body.push('\n');
    let room = limit - body.len();
    if output.len() <= room {
        body.push_str(&output);
        return body.into_bytes();
    }
    let notice = |cut: usize| format!("[{cut} bytes of output before these not sent]\n");
    let room = room.saturating_sub(notice(output.len()).len());
    let kept = kept_end(&output, room);
    body.push_str(&notice(output.len() - kept.len()));
    body.push_str(kept);
    body.into_bytes()
}

/// The start of `text`, in at most `limit` bytes, on a character's boundary.
fn cut_to(text: &str, limit: usize) -> &str {
    let mut end = limit.min(text.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// The end of `output` in at most `room` bytes: whole lines where the last line fits, else the
/// end of the last line.
fn kept_end(output: &str, room: usize) -> &str {
    let mut start = output.len() - room.min(output.len());
    while !output.is_char_boundary(start) {
        start += 1;
    }
    let tail = &output[start..];
    let last_line_start = output
        .trim_end_matches('\n')
        .rfind('\n')
        .map_or(0, |at| at + 1);
    match tail.find('\n') {
        // The first whole line, unless that leaves out the last line.
        Some(at) if start + at < last_line_start => &tail[at + 1..],
        _ => tail,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use retry_policy::outcome::Reason;

    fn tails(stdout: &str, stderr: &str) -> Tails {
        let mut tails = Tails::default();
        tails.stdout.push(stdout.as_bytes());
        tails.stderr.push(stderr.as_bytes());
        tails
    }

    fn text(bytes: Vec<u8>) -> String {
        String::from_utf8(bytes).unwrap()
    }

    #[test]
    fn the_summary_says_attempts_reason_flakiness_and_status() {
        let end = RunEnd {
            attempts: 3,
            last: None,
            last_unready: None,
            reason: Reason::Success,
            elapsed: std::time::Duration::ZERO,
            report_error: None,
            flaky_exit: None,
        };
        assert_eq!(
            summary(&end, 0),
            "retry: 3 attempts, reason success, flaky yes, exit status 0"
        );
    }

    #[test]
    fn the_output_follows_the_summary_and_its_start_is_cut_first() {
        let whole = body("retry: s", Some(&tails("out\n", "err\n")), 100);
        assert_eq!(text(whole), "retry: s\nout\nerr\n");
        let many: String = (1..=50).map(|line| format!("line {line}\n")).collect();
        let cut = text(body("retry: s", Some(&tails(&many, "")), 120));
        assert!(cut.len() <= 120, "{cut}");
        assert!(cut.starts_with("retry: s\n["), "{cut}");
        assert!(cut.ends_with("line 49\nline 50\n"), "{cut}");
        let after_notice = cut.split_once("sent]\n").unwrap().1;
        assert!(after_notice.starts_with("line "), "whole lines: {cut}");
        // A last line longer than the room keeps its end.
        let long = format!("start {}end\n", "x".repeat(500));
        let cut = text(body("retry: s", Some(&tails(&long, "")), 100));
        assert!(cut.len() <= 100 && cut.ends_with("xxend\n"), "{cut}");
        assert_eq!(text(body("retry: a long summary", None, 8)), "retry: a");
        assert_eq!(text(body("retry: s", None, 100)), "retry: s");
        let multibyte = text(body("retry: s", Some(&tails(&"é".repeat(100), "")), 60));
        assert!(multibyte.ends_with('é'), "{multibyte}");
    }
}
