//! What an outcome's ping says beside its status: one summary line (attempts, reason, flaky,
//! exit status), then the end of the last attempt's output, the tail the tool keeps of each
//! stream, cut to the monitor's limit (its `Ping-Body-Limit`, or [`DEFAULT_LIMIT`]). A monitor
//! keeps the first bytes of a body up to its limit, so the body is cut here, and what matters
//! most is kept first: the output's last line (the error, as a rule), then the summary, then as
//! much of the output before the last line as fits, whole lines, after a line that says how
//! much was cut.

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

/// The line that says a run failed, though its monitor is told of it as a success: the
/// `in_a_row`th failed run in a row of a job that alerts from the `alert_after`th.
pub(crate) fn tolerated(in_a_row: u32, alert_after: u32) -> String {
    format!(
        "retry: FAILED, tolerated: failed run {in_a_row} in a row; this job alerts from failed \
         run {alert_after} in a row (retry job set --alert-after {alert_after})"
    )
}

/// The line that says which of a monitor's own settings (`setting`, with its value) alerts as
/// a job that alerts from the `alert_after`th failed run in a row does.
pub(crate) fn own_tolerance(setting: &str, alert_after: u32) -> String {
    format!(
        "retry: this job alerts from failed run {alert_after} in a row (retry job set \
         --alert-after {alert_after}), which this monitor counts itself: set its {setting}"
    )
}

/// The body: `summary`, then the output in `tails`, in at most `limit` bytes: the output's
/// last line first of all, then the summary, then the output before the last line.
pub(crate) fn body(summary: &str, tails: Option<&Tails>, limit: usize) -> Vec<u8> {
    let output: String = tails
        .into_iter()
        .flat_map(|tails| [&tails.stdout, &tails.stderr])
        .filter(|tail| !tail.is_empty())
        .map(|tail| tail.text())
        .collect();
    if output.is_empty() {
        return cut_to(summary, limit).as_bytes().to_vec();
    }
    let last_start = output
        .trim_end_matches('\n')
        .rfind('\n')
        .map_or(0, |at| at + 1);
    let (before, last) = output.split_at(last_start);
    if last.len() >= limit {
        return end_of(last, limit).as_bytes().to_vec();
    }
    let mut room = limit - last.len();
    let mut body = String::with_capacity(limit);
    if summary.len() < room {
        body.push_str(summary);
        body.push('\n');
        room -= summary.len() + 1;
    }
    if before.len() <= room {
        body.push_str(before);
    } else {
        let notice = |cut: usize| format!("[{cut} bytes of output before these not sent]\n");
        if let Some(room) = room.checked_sub(notice(before.len()).len()) {
            let kept = whole_lines_at_the_end(before, room);
            body.push_str(&notice(before.len() - kept.len()));
            body.push_str(kept);
        }
    }
    body.push_str(last);
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

/// The end of `text`, in at most `room` bytes, on a character's boundary.
fn end_of(text: &str, room: usize) -> &str {
    let mut start = text.len() - room.min(text.len());
    while !text.is_char_boundary(start) {
        start += 1;
    }
    &text[start..]
}

/// The whole lines at the end of `text` (which ends with a line's end) in at most `room` bytes.
fn whole_lines_at_the_end(text: &str, room: usize) -> &str {
    let tail = end_of(text, room);
    match tail.len() == text.len() || text[..text.len() - tail.len()].ends_with('\n') {
        true => tail,
        false => tail.find('\n').map_or("", |at| &tail[at + 1..]),
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

    #[test]
    fn at_any_limit_the_outputs_last_line_is_kept_before_the_summary() {
        let summary = "retry: 3 attempts, reason exhausted, flaky no, exit status 3";
        let output = "connecting\nerror: the disk is full\n";
        // 50 bytes: the last line, not the summary.
        let cut = text(body(summary, Some(&tails(output, "")), 50));
        assert_eq!(cut, output, "the output that fits, without the summary");
        let cut = text(body(summary, Some(&tails(output, "")), 30));
        assert_eq!(cut, "error: the disk is full\n");
        // Room for both: the summary, then the last line.
        let cut = text(body(summary, Some(&tails(output, "")), 90));
        assert_eq!(cut, format!("{summary}\nerror: the disk is full\n"));
        // A 2,000-byte limit and much more output: the summary, a notice, whole lines, and
        // the last line, in the limit's first bytes, as a monitor that keeps them keeps them.
        let many: String = (1..=500).map(|line| format!("line {line}\n")).collect();
        let cut = text(body(summary, Some(&tails(&many, "the last line\n")), 2000));
        assert!(cut.len() <= 2000, "{}", cut.len());
        assert!(cut.starts_with(summary) && cut.ends_with("line 500\nthe last line\n"));
    }
}
