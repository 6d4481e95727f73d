//! The output conditions: `--retry-on-output` and `--stop-on-output` patterns, whose first match
//! counts, and `--retry-after-output` patterns, whose last match's capture is the command's
//! requested wait; and matching a stream's lines against them in bounded memory.
//!
//! A [`LineMatcher`] looks at lines of at most [`MAX_LINE`] bytes: a command printing gigabytes
//! costs constant memory. `^` and `$` anchor at line ends (before `\r\n` too), and no match
//! spans two lines.

use std::sync::Arc;
use std::time::Instant;

use regex::bytes::{Regex, RegexBuilder, RegexSet, RegexSetBuilder};

use crate::choice::Choice;
use crate::requested::MAX_REQUEST;

/// One of the command's (and the tool's) two output streams.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Stream {
    /// Standard output.
    #[default]
    Stdout,
    /// Standard error.
    Stderr,
}

impl Stream {
    /// Its name, for messages.
    pub fn name(self) -> &'static str {
        match self {
            Stream::Stdout => "stdout",
            Stream::Stderr => "stderr",
        }
    }
}

/// Which of the command's streams a pattern reads.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum OutputStream {
    /// Stdout and stderr.
    #[default]
    Both,
    /// Stdout only.
    Stdout,
    /// Stderr only.
    Stderr,
}

impl Choice for OutputStream {
    const ALL: &'static [OutputStream] = &[
        OutputStream::Both,
        OutputStream::Stdout,
        OutputStream::Stderr,
    ];

    fn name(self) -> &'static str {
        match self {
            OutputStream::Both => "both",
            OutputStream::Stdout => "stdout",
            OutputStream::Stderr => "stderr",
        }
    }

    fn about(self) -> &'static str {
        match self {
            OutputStream::Both => "Stdout and stderr",
            OutputStream::Stdout => "Stdout only",
            OutputStream::Stderr => "Stderr only",
        }
    }
}

impl OutputStream {
    /// The streams in words: `stdout`, `stderr`, or `stdout and stderr`.
    pub fn described(self) -> &'static str {
        match self {
            OutputStream::Both => "stdout and stderr",
            OutputStream::Stdout => "stdout",
            OutputStream::Stderr => "stderr",
        }
    }

    /// Whether these streams take in `stream`.
    pub fn reads(self, stream: Stream) -> bool {
        matches!(
            (self, stream),
            (OutputStream::Both, _)
                | (OutputStream::Stdout, Stream::Stdout)
                | (OutputStream::Stderr, Stream::Stderr)
        )
    }
}

/// The longest line matched as one; a longer line is matched in pieces of this size.
pub const MAX_LINE: usize = 64 * 1024;
/// The `--retry-on-output` and `--stop-on-output` patterns.
#[derive(Clone, Debug, Default)]
pub struct OutputConditions {
    retry: Option<Patterns>,
    stop: Option<Patterns>,
    success: Option<Patterns>,
    after: Option<Captures>,
    /// The `--preset`'s patterns, each of which may match.
    preset: Option<Patterns>,
}

/// The most patterns a preset may have: which matched is a bit each.
pub const MAX_PRESET_PATTERNS: usize = 64;

/// A set of patterns and their texts, for reports.
#[derive(Clone, Debug)]
struct Patterns {
    set: RegexSet,
    texts: Vec<String>,
}

/// The `--retry-after-output` patterns: a set, to rule out most blocks of lines in one search,
/// and each pattern on its own with the group to read.
#[derive(Clone, Debug)]
struct Captures {
    set: RegexSet,
    patterns: Vec<(Regex, usize)>,
}

/// Which patterns an attempt's output matched: the first match of each kind, and the last
/// `--retry-after-output` capture.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct OutputMatch {
    /// The `--retry-on-output` pattern that matched, if any.
    pub retry: Option<String>,
    /// The `--stop-on-output` pattern that matched, if any.
    pub stop: Option<String>,
    /// The `--success-on-output` pattern that matched, if any.
    pub success: Option<String>,
    /// The last `--retry-after-output` capture, if any.
    pub requested: Option<Capture>,
    /// Which of the `--preset`'s patterns matched: bit i for the i-th.
    pub preset: u64,
}

impl OutputMatch {
    /// Whether the `--preset`'s `index`-th pattern matched.
    pub fn preset_matched(&self, index: usize) -> bool {
        index < MAX_PRESET_PATTERNS && self.preset & (1 << index) != 0
    }
}

/// What a `--retry-after-output` pattern captured (its first 4 KiB), and when it was read: of
/// two streams' captures, the later counts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Capture {
    /// The text captured.
    pub text: String,
    /// When the line it was in was read.
    pub at: Instant,
}

/// The patterns of the four flags, as given, and the preset's.
#[derive(Clone, Debug, Default)]
pub struct PatternTexts {
    /// `--retry-on-output`'s patterns.
    pub retry: Vec<String>,
    /// `--stop-on-output`'s patterns.
    pub stop: Vec<String>,
    /// `--success-on-output`'s patterns.
    pub success: Vec<String>,
    /// `--retry-after-output`'s patterns.
    pub after: Vec<String>,
    /// The preset's patterns.
    pub preset: Vec<String>,
}

/// A pattern that does not compile: the flag, the pattern, and the error with its position.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PatternError(pub String);

impl OutputConditions {
    /// Compile the patterns of the four flags (each flag may be given several times).
    pub fn new(patterns: &PatternTexts) -> Result<Self, PatternError> {
        Ok(OutputConditions {
            retry: compile("--retry-on-output", &patterns.retry)?,
            stop: compile("--stop-on-output", &patterns.stop)?,
            success: compile("--success-on-output", &patterns.success)?,
            after: compile_captures(&patterns.after)?,
            preset: compile(
                "--preset",
                &patterns.preset[..MAX_PRESET_PATTERNS.min(patterns.preset.len())],
            )?,
        })
    }

    /// Whether any pattern was given.
    pub fn any(&self) -> bool {
        self.retry.is_some()
            || self.stop.is_some()
            || self.success.is_some()
            || self.after.is_some()
            || self.preset.is_some()
    }
}

fn compile(flag: &str, patterns: &[String]) -> Result<Option<Patterns>, PatternError> {
    if patterns.is_empty() {
        return Ok(None);
    }
    for pattern in patterns {
        if pattern.contains('\n') {
            // Pasted from a help text wrapped mid-pattern, most likely.
            return Err(PatternError(format!(
                "{flag} '{}' holds a line break, which no line of output can match (output \
                 is matched a line at a time); give the pattern on one line",
                pattern.escape_debug()
            )));
        }
        if let Err(err) = regex::bytes::Regex::new(pattern) {
            let detail = position_of_error(pattern).unwrap_or_else(|| fold(&err.to_string()));
            return Err(PatternError(format!(
                "{flag} '{pattern}' is not a valid regex: {detail}"
            )));
        }
    }
    // Multi-line, so that ^ and $ anchor at line ends when a block of lines is searched at once
    // (see `LineMatcher::match_lines`); CRLF, so that $ also matches before "\r\n".
    let set = RegexSetBuilder::new(patterns)
        .multi_line(true)
        .crlf(true)
        .build()
        .map_err(|err| PatternError(format!("{flag}: {err}")))?;
    Ok(Some(Patterns {
        set,
        texts: patterns.to_vec(),
    }))
}

/// The `--retry-after-output` patterns; each must have a group to read the wait from: the one
/// named `after`, or else the first.
fn compile_captures(patterns: &[String]) -> Result<Option<Captures>, PatternError> {
    const FLAG: &str = "--retry-after-output";
    let Some(Patterns { set, texts }) = compile(FLAG, patterns)? else {
        return Ok(None);
    };
    let mut compiled = Vec::with_capacity(texts.len());
    for text in texts {
        let regex = RegexBuilder::new(&text)
            .multi_line(true)
            .crlf(true)
            .build()
            .map_err(|err| PatternError(format!("{FLAG}: {err}")))?;
        let named = regex.capture_names().position(|name| name == Some("after"));
        let group = match (named, regex.captures_len()) {
            (Some(index), _) => index,
            (None, 2..) => 1,
            (None, _) => {
                return Err(PatternError(format!(
                    "{FLAG} '{text}' has no group to read the wait from; put it in \
                     parentheses, e.g. '(?i)^retry-after:\\s*(.+)$'"
                )));
            }
        };
        compiled.push((regex, group));
    }
    Ok(Some(Captures {
        set,
        patterns: compiled,
    }))
}

/// What is wrong with `pattern` and where, as "unclosed group at character 2", when the parser
/// can say (it cannot for limits such as a pattern too large once compiled).
fn position_of_error(pattern: &str) -> Option<String> {
    let (kind, span) = match regex_syntax::Parser::new().parse(pattern).err()? {
        regex_syntax::Error::Parse(err) => (err.kind().to_string(), *err.span()),
        regex_syntax::Error::Translate(err) => (err.kind().to_string(), *err.span()),
        _ => return None,
    };
    // One line: a pattern with a line break was refused before.
    Some(format!("{kind} at character {}", span.start.column))
}

/// An error text of several lines, on one.
fn fold(text: &str) -> String {
    text.lines()
        .map(str::trim)
        .filter(|line| !line.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

/// Matches a stream's lines against the conditions, holding at most one bounded line.
#[derive(Debug)]
pub struct LineMatcher {
    conditions: Arc<OutputConditions>,
    line: Vec<u8>,
    found: OutputMatch,
}

impl LineMatcher {
    /// A matcher for one stream.
    pub fn new(conditions: Arc<OutputConditions>) -> Self {
        LineMatcher {
            conditions,
            line: Vec::new(),
            found: OutputMatch::default(),
        }
    }

    /// Take the next bytes of the stream.
    pub fn feed(&mut self, mut bytes: &[u8]) {
        if self.done() {
            return;
        }
        if let Some(last) = memchr::memrchr(b'\n', bytes) {
            if self.line.is_empty() {
                self.match_lines(&bytes[..last]);
            } else {
                let mut block = std::mem::take(&mut self.line);
                block.extend_from_slice(&bytes[..last]);
                self.match_lines(&block);
                block.clear();
                self.line = block;
            }
            bytes = &bytes[last + 1..];
        }
        // The unfinished last line waits for its end, matched in pieces if it grows too long.
        while !bytes.is_empty() {
            let take = (MAX_LINE - self.line.len()).min(bytes.len());
            self.line.extend_from_slice(&bytes[..take]);
            bytes = &bytes[take..];
            if self.line.len() == MAX_LINE {
                self.match_held_line();
            }
        }
    }

    /// Match the complete lines of `block` (newline-separated, without the last newline). The
    /// whole block is tried first: a line that matches also matches the block, so most blocks
    /// are ruled out in one search, and only a block that matches is gone through line by line.
    fn match_lines(&mut self, block: &[u8]) {
        let conditions = Arc::clone(&self.conditions);
        let could_match = |patterns: &Option<Patterns>, found: &Option<String>| matches!((patterns, found), (Some(p), None) if p.set.is_match(block));
        if could_match(&conditions.retry, &self.found.retry)
            || could_match(&conditions.stop, &self.found.stop)
            || could_match(&conditions.success, &self.found.success)
            || conditions
                .after
                .as_ref()
                .is_some_and(|after| after.set.is_match(block))
            || conditions
                .preset
                .as_ref()
                .is_some_and(|preset| preset.set.is_match(block))
        {
            for line in block.split(|&b| b == b'\n') {
                self.match_line(line);
            }
        }
    }

    /// The stream ended: match a last line without a newline, and say what matched.
    pub fn finish(mut self) -> OutputMatch {
        if !self.line.is_empty() {
            self.match_held_line();
        }
        self.found
    }

    /// Whether nothing more can change: every first-match kind has matched, and there is no
    /// last match to keep looking for.
    fn done(&self) -> bool {
        let settled = |patterns: &Option<Patterns>, found: &Option<String>| {
            patterns.is_none() || found.is_some()
        };
        settled(&self.conditions.retry, &self.found.retry)
            && settled(&self.conditions.stop, &self.found.stop)
            && settled(&self.conditions.success, &self.found.success)
            && self.conditions.after.is_none()
            && self.conditions.preset.is_none()
    }

    fn match_held_line(&mut self) {
        let line = std::mem::take(&mut self.line);
        self.match_line(&line);
        self.line = line;
        self.line.clear();
    }

    fn match_line(&mut self, line: &[u8]) {
        let conditions = Arc::clone(&self.conditions);
        first_match(&conditions.retry, line, &mut self.found.retry);
        first_match(&conditions.stop, line, &mut self.found.stop);
        first_match(&conditions.success, line, &mut self.found.success);
        if let Some(preset) = &conditions.preset {
            for index in preset.set.matches(line).iter() {
                self.found.preset |= 1 << index;
            }
        }
        if let Some(capture) = conditions
            .after
            .as_ref()
            .and_then(|after| after.capture(line))
        {
            self.found.requested = Some(capture);
        }
    }
}

impl Captures {
    /// What the first pattern that matches `line` captures, if one does.
    fn capture(&self, line: &[u8]) -> Option<Capture> {
        let text = self.patterns.iter().find_map(|(regex, group)| {
            let captures = regex.captures(line)?;
            captures.get(*group).map(|found| found.as_bytes())
        })?;
        let text = &text[..text.len().min(MAX_REQUEST)];
        Some(Capture {
            text: String::from_utf8_lossy(text).into_owned(),
            at: Instant::now(),
        })
    }
}

fn first_match(patterns: &Option<Patterns>, line: &[u8], found: &mut Option<String>) {
    if let (Some(patterns), None) = (patterns, &found)
        && let Some(index) = patterns.set.matches(line).iter().next()
    {
        *found = Some(patterns.texts[index].clone());
    }
}

impl OutputMatch {
    /// Both streams' matches together.
    pub fn merge(self, other: OutputMatch) -> OutputMatch {
        let requested = match (self.requested, other.requested) {
            (Some(one), Some(two)) => Some(if two.at >= one.at { two } else { one }),
            (one, two) => one.or(two),
        };
        OutputMatch {
            retry: self.retry.or(other.retry),
            stop: self.stop.or(other.stop),
            success: self.success.or(other.success),
            requested,
            preset: self.preset | other.preset,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn owned(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    fn conditions(retry: &[&str], stop: &[&str]) -> Arc<OutputConditions> {
        let patterns = PatternTexts {
            retry: owned(retry),
            stop: owned(stop),
            ..PatternTexts::default()
        };
        Arc::new(OutputConditions::new(&patterns).unwrap())
    }

    fn after(patterns: &[&str]) -> Result<OutputConditions, PatternError> {
        OutputConditions::new(&PatternTexts {
            after: owned(patterns),
            ..PatternTexts::default()
        })
    }

    fn requested(patterns: &[&str], chunks: &[&[u8]]) -> Option<String> {
        let conditions = Arc::new(after(patterns).unwrap());
        matches(conditions, chunks)
            .requested
            .map(|capture| capture.text)
    }

    #[test]
    fn the_last_capture_of_the_first_matching_pattern_counts() {
        let header = r"(?i)^retry-after:\s*(.+)$";
        assert_eq!(
            requested(&[header], &[b"HTTP/1.1 503\r\nRetry-After: 3\r\n", b"\r\n"]),
            Some("3".into())
        );
        assert_eq!(
            requested(&[header], &[b"retry-after: 1\nx\nRETRY-AFTER: 2\n"]),
            Some("2".into()),
            "the last match"
        );
        assert_eq!(
            requested(
                &[r"wait (\d+)s", r"(?P<after>\d+) later"],
                &[b"wait 5s, 7 later\n"]
            ),
            Some("5".into()),
            "the first pattern that matches the line"
        );
        assert_eq!(
            requested(&[r"x(\d)?-(?P<after>\d+)"], &[b"x1-12\n"]),
            Some("12".into()),
            "the group named after"
        );
        assert_eq!(requested(&[header], &[b"no header\n"]), None);
        let long = [b"retry-after: ".as_slice(), &[b'9'; 10_000]].concat();
        assert_eq!(requested(&[header], &[&long]).unwrap().len(), MAX_REQUEST);
    }

    #[test]
    fn of_two_streams_the_later_capture_counts() {
        let capture = |text: &str| Capture {
            text: text.into(),
            at: Instant::now(),
        };
        let (early, late) = (capture("1"), capture("2"));
        let merged = |one: &Capture, two: &Capture| {
            let side = |capture: &Capture| OutputMatch {
                requested: Some(capture.clone()),
                ..OutputMatch::default()
            };
            side(one).merge(side(two)).requested.unwrap().text
        };
        assert_eq!(merged(&early, &late), "2");
        assert_eq!(merged(&late, &early), "2");
    }

    #[test]
    fn a_retry_after_pattern_needs_a_group() {
        let err = after(&["Retry-After: \\d+"]).unwrap_err();
        assert!(
            err.0.contains("has no group to read the wait from"),
            "{}",
            err.0
        );
        assert!(after(&["("]).is_err());
    }

    #[test]
    fn a_success_pattern_matches_like_the_others() {
        let patterns = PatternTexts {
            success: owned(&["^ready$"]),
            ..PatternTexts::default()
        };
        let conditions = Arc::new(OutputConditions::new(&patterns).unwrap());
        assert!(conditions.any());
        let found = matches(Arc::clone(&conditions), &[b"pending\nrea", b"dy\n"]);
        assert_eq!(found.success.as_deref(), Some("^ready$"));
        assert_eq!(matches(conditions, &[b"not ready\n"]).success, None);
    }

    #[test]
    fn every_preset_pattern_that_matches_is_noted() {
        let patterns = PatternTexts {
            preset: owned(&["^a$", "^b$", "^c$"]),
            ..PatternTexts::default()
        };
        let conditions = Arc::new(OutputConditions::new(&patterns).unwrap());
        let found = matches(conditions, &[b"c\nx\na\n"]);
        assert_eq!(found.preset, 0b101);
        assert!(found.preset_matched(0) && !found.preset_matched(1) && found.preset_matched(2));
        assert!(!found.preset_matched(MAX_PRESET_PATTERNS));
    }

    fn matches(conditions: Arc<OutputConditions>, chunks: &[&[u8]]) -> OutputMatch {
        let mut matcher = LineMatcher::new(conditions);
        chunks.iter().for_each(|chunk| matcher.feed(chunk));
        matcher.finish()
    }

    #[test]
    fn matches_lines_split_across_chunks() {
        let found = matches(
            conditions(&["^HTTP 503$"], &["404"]),
            &[b"x\nHTTP 5", b"03\nok\n"],
        );
        assert_eq!(found.retry.as_deref(), Some("^HTTP 503$"));
        assert_eq!(found.stop, None);
    }

    #[test]
    fn anchors_apply_to_each_line() {
        let found = matches(conditions(&["^b$"], &[]), &[b"a\nb\nc"]);
        assert_eq!(found.retry.as_deref(), Some("^b$"));
        let found = matches(conditions(&["^a b$"], &[]), &[b"a\nb\n"]);
        assert_eq!(found.retry, None);
    }

    #[test]
    fn crlf_lines_end_before_the_carriage_return() {
        let found = matches(conditions(&["^ok$"], &[]), &[b"ok\r\nnext\r\n"]);
        assert_eq!(found.retry.as_deref(), Some("^ok$"));
    }

    #[test]
    fn a_pattern_spanning_lines_never_matches() {
        let found = matches(conditions(&["a\\sb"], &[]), &[b"a\nb\n"]);
        assert_eq!(found.retry, None);
    }

    #[test]
    fn the_last_line_needs_no_newline() {
        let found = matches(conditions(&[], &["fatal"]), &[b"one\nfatal: no"]);
        assert_eq!(found.stop.as_deref(), Some("fatal"));
    }

    #[test]
    fn reports_the_first_pattern_that_matched() {
        let found = matches(conditions(&["a", "b"], &[]), &[b"b\na\n"]);
        assert_eq!(found.retry.as_deref(), Some("b"));
    }

    #[test]
    fn long_lines_are_matched_in_bounded_pieces() {
        let mut matcher = LineMatcher::new(conditions(&["needle"], &[]));
        let hay = vec![b'x'; 10 * MAX_LINE];
        matcher.feed(&hay);
        assert!(
            matcher.line.capacity() <= 2 * MAX_LINE,
            "the line buffer grew with the line"
        );
        matcher.feed(b"needle\n");
        assert_eq!(matcher.finish().retry.as_deref(), Some("needle"));
    }

    #[test]
    fn invalid_patterns_name_the_flag_and_the_position() {
        let error = |pattern: &str| {
            OutputConditions::new(&PatternTexts {
                stop: vec![pattern.to_string()],
                ..PatternTexts::default()
            })
            .unwrap_err()
            .0
        };
        assert_eq!(
            error("a(b"),
            "--stop-on-output 'a(b' is not a valid regex: unclosed group at character 2"
        );
        assert!(error("ok|x{2,1}").ends_with("the start must be <= the end at character 5"));
        assert_eq!(
            error("a\nb"),
            "--stop-on-output 'a\\nb' holds a line break, which no line of output can match \
             (output is matched a line at a time); give the pattern on one line"
        );
    }
}
