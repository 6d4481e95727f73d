//! Matching the command's output: the rules' patterns, each of which matched or not, and the
//! `--retry-after-output` patterns, whose last match's capture is the command's requested wait;
//! each stream's lines matched in bounded memory.
//!
//! A [`LineMatcher`] looks at lines of at most [`MAX_LINE`] bytes: a command printing gigabytes
//! costs constant memory. `^` and `$` anchor at line ends (before `\r\n` too), and no match
//! spans two lines.

use std::sync::Arc;
use std::time::Instant;

use regex::bytes::{Regex, RegexBuilder, RegexSet, RegexSetBuilder};

use crate::choice::Choice;
use crate::error::Error;
use crate::requested::MAX_REQUEST;

/// The most output patterns a list may hold, the preset's included: which matched is a bit each.
pub const MAX_PATTERNS: usize = 64;

/// A pattern a line of the command's output must match, and the streams it reads.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OutputPattern {
    /// The streams whose lines it reads.
    pub stream: OutputStream,
    /// The regular expression, as given.
    pub regex: String,
}

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

/// What one of the command's streams is matched against: the rules' patterns that read it,
/// whose first match each counts, and the `--retry-after-output` patterns, whose last match's
/// capture is the command's requested wait.
#[derive(Clone, Debug, Default)]
pub struct OutputConditions {
    rules: Option<Patterns>,
    after: Option<Captures>,
}

/// A set of the rules' patterns, and the bit each sets when it matches.
#[derive(Clone, Debug)]
struct Patterns {
    set: RegexSet,
    bits: Vec<u64>,
    /// Every bit of the set: once all are found, nothing more can change.
    all: u64,
}

/// The `--retry-after-output` patterns: a set, to rule out most blocks of lines in one search,
/// and each pattern on its own with the group to read.
#[derive(Clone, Debug)]
struct Captures {
    set: RegexSet,
    patterns: Vec<(Regex, usize)>,
}

/// What an attempt's output matched: a bit for each rule pattern (the i-th of the rule list's
/// patterns sets bit i), and the last `--retry-after-output` capture.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct OutputMatch {
    /// The patterns that matched a line, a bit each.
    pub matched: u64,
    /// The last `--retry-after-output` capture, if any.
    pub requested: Option<Capture>,
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

impl OutputConditions {
    /// The conditions `stream`'s lines are matched against: each of `patterns` that reads it
    /// (the i-th setting bit i), and the `after` patterns (`--retry-after-output`, which read
    /// both streams).
    pub fn for_stream(
        stream: Stream,
        patterns: &[OutputPattern],
        after: &[String],
    ) -> Result<Self, Error> {
        let (regexes, bits): (Vec<&str>, Vec<u64>) = patterns
            .iter()
            .enumerate()
            .take(MAX_PATTERNS)
            .filter(|(_, pattern)| pattern.stream.reads(stream))
            .map(|(index, pattern)| (pattern.regex.as_str(), 1 << index))
            .unzip();
        let rules = match regexes.is_empty() {
            true => None,
            false => Some(Patterns {
                set: line_set(&regexes).map_err(|err| Error::PatternSet {
                    flag: "the output patterns",
                    why: err,
                })?,
                all: bits.iter().fold(0, |all, bit| all | bit),
                bits,
            }),
        };
        Ok(OutputConditions {
            rules,
            after: compile_captures(after)?,
        })
    }

    /// Whether any pattern reads this stream.
    pub fn any(&self) -> bool {
        self.rules.is_some() || self.after.is_some()
    }
}

/// Refuse a pattern no line could match as meant, or that does not compile; `whose` names the
/// option and value for the message.
pub fn check_pattern(pattern: &str, whose: &str) -> Result<(), Error> {
    if pattern.contains('\n') {
        // Pasted from a help text wrapped mid-pattern, most likely.
        return Err(Error::PatternLineBreak(whose.to_string()));
    }
    if let Err(err) = Regex::new(pattern) {
        let detail = position_of_error(pattern).unwrap_or_else(|| fold(&err.to_string()));
        return Err(Error::InvalidPattern {
            whose: whose.to_string(),
            detail,
        });
    }
    Ok(())
}

/// The patterns as one set that matches line by line: multi-line, so that ^ and $ anchor at
/// line ends when a block of lines is searched at once (see `LineMatcher::match_lines`); CRLF,
/// so that $ also matches before "\r\n".
fn line_set(patterns: &[&str]) -> Result<RegexSet, regex::Error> {
    RegexSetBuilder::new(patterns)
        .multi_line(true)
        .crlf(true)
        .build()
}

/// The `--retry-after-output` patterns; each must have a group to read the wait from: the one
/// named `after`, or else the first.
fn compile_captures(patterns: &[String]) -> Result<Option<Captures>, Error> {
    const FLAG: &str = "--retry-after-output";
    if patterns.is_empty() {
        return Ok(None);
    }
    let mut compiled = Vec::with_capacity(patterns.len());
    for text in patterns {
        check_pattern(text, &format!("{FLAG} '{}'", text.escape_debug()))?;
        let regex = RegexBuilder::new(text)
            .multi_line(true)
            .crlf(true)
            .build()
            .map_err(|err| Error::PatternSet {
                flag: FLAG,
                why: err,
            })?;
        let named = regex.capture_names().position(|name| name == Some("after"));
        let group = match (named, regex.captures_len()) {
            (Some(index), _) => index,
            (None, 2..) => 1,
            (None, _) => {
                return Err(Error::PatternWithoutGroup(text.clone()));
            }
        };
        compiled.push((regex, group));
    }
    let texts: Vec<&str> = patterns.iter().map(String::as_str).collect();
    Ok(Some(Captures {
        set: line_set(&texts).map_err(|err| Error::PatternSet {
            flag: FLAG,
            why: err,
        })?,
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
        if conditions
            .rules
            .as_ref()
            .is_some_and(|rules| rules.set.is_match(block))
            || conditions
                .after
                .as_ref()
                .is_some_and(|after| after.set.is_match(block))
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

    /// Whether nothing more can change: every pattern has matched, and there is no last match
    /// to keep looking for.
    fn done(&self) -> bool {
        let settled = self
            .conditions
            .rules
            .as_ref()
            .is_none_or(|rules| self.found.matched & rules.all == rules.all);
        settled && self.conditions.after.is_none()
    }

    fn match_held_line(&mut self) {
        let line = std::mem::take(&mut self.line);
        self.match_line(&line);
        self.line = line;
        self.line.clear();
    }

    fn match_line(&mut self, line: &[u8]) {
        let conditions = Arc::clone(&self.conditions);
        if let Some(rules) = &conditions.rules {
            for index in rules.set.matches(line).iter() {
                self.found.matched |= rules.bits[index];
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

impl OutputMatch {
    /// Both streams' matches together.
    pub fn merge(self, other: OutputMatch) -> OutputMatch {
        let requested = match (self.requested, other.requested) {
            (Some(one), Some(two)) => Some(if two.at >= one.at { two } else { one }),
            (one, two) => one.or(two),
        };
        OutputMatch {
            matched: self.matched | other.matched,
            requested,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The conditions of rule patterns `rules` (all on both streams) and `after` patterns.
    fn conditions(rules: &[&str], after: &[&str]) -> Arc<OutputConditions> {
        Arc::new(built(rules, after).unwrap())
    }

    fn built(rules: &[&str], after: &[&str]) -> Result<OutputConditions, Error> {
        let patterns: Vec<OutputPattern> = rules
            .iter()
            .map(|regex| OutputPattern {
                stream: OutputStream::Both,
                regex: regex.to_string(),
            })
            .collect();
        let after: Vec<String> = after.iter().map(|s| s.to_string()).collect();
        OutputConditions::for_stream(Stream::Stdout, &patterns, &after)
    }

    #[test]
    fn patterns_too_large_together_are_refused_with_the_engines_error_as_the_cause() {
        let pattern = "[a-z]{1,2000}";
        check_pattern(pattern, "--retry-on").unwrap();
        let Err(err) = built(&[pattern; 64], &[]) else {
            panic!("64 large patterns compiled as one set");
        };
        assert!(
            matches!(
                &err,
                Error::PatternSet {
                    why: regex::Error::CompiledTooBig(_),
                    ..
                }
            ),
            "{err:?}"
        );
        let said = crate::causes::with_causes(&err);
        assert!(
            said.starts_with("the output patterns: Compiled regex exceeds size limit"),
            "{said}"
        );
    }

    fn matches(conditions: Arc<OutputConditions>, chunks: &[&[u8]]) -> OutputMatch {
        let mut matcher = LineMatcher::new(conditions);
        chunks.iter().for_each(|chunk| matcher.feed(chunk));
        matcher.finish()
    }

    fn requested(patterns: &[&str], chunks: &[&[u8]]) -> Option<String> {
        matches(conditions(&[], patterns), chunks)
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
    fn of_two_streams_the_later_capture_counts_and_the_matches_add_up() {
        let side = |text: &str, matched| OutputMatch {
            matched,
            requested: Some(Capture {
                text: text.into(),
                at: Instant::now(),
            }),
        };
        let (early, late) = (side("1", 0b01), side("2", 0b10));
        let merged = early.clone().merge(late.clone());
        assert_eq!(merged.requested.unwrap().text, "2");
        assert_eq!(merged.matched, 0b11);
        assert_eq!(late.merge(early).requested.unwrap().text, "2");
    }

    #[test]
    fn a_retry_after_pattern_needs_a_group() {
        let err = built(&[], &["Retry-After: \\d+"]).unwrap_err();
        assert!(
            err.to_string()
                .contains("has no group to read the wait from"),
            "{err}"
        );
        assert!(built(&[], &["("]).is_err());
    }

    #[test]
    fn every_pattern_that_matches_sets_its_bit() {
        let found = matches(conditions(&["^a$", "^b$", "^c$"], &[]), &[b"c\nx\na\n"]);
        assert_eq!(found.matched, 0b101);
    }

    #[test]
    fn a_stream_reads_only_the_patterns_for_it() {
        let patterns = [
            ("x", OutputStream::Stdout),
            ("x", OutputStream::Stderr),
            ("x", OutputStream::Both),
        ]
        .map(|(regex, stream)| OutputPattern {
            stream,
            regex: regex.into(),
        });
        let on = |stream| {
            let conditions = OutputConditions::for_stream(stream, &patterns, &[]).unwrap();
            matches(Arc::new(conditions), &[b"x\n"]).matched
        };
        assert_eq!(on(Stream::Stdout), 0b101);
        assert_eq!(on(Stream::Stderr), 0b110);
        assert!(
            !OutputConditions::for_stream(Stream::Stdout, &[], &[])
                .unwrap()
                .any()
        );
    }

    #[test]
    fn matches_lines_split_across_chunks() {
        let found = matches(
            conditions(&["^HTTP 503$", "404"], &[]),
            &[b"x\nHTTP 5", b"03\nok\n"],
        );
        assert_eq!(found.matched, 0b01);
    }

    #[test]
    fn anchors_apply_to_each_line() {
        assert_eq!(matches(conditions(&["^b$"], &[]), &[b"a\nb\nc"]).matched, 1);
        assert_eq!(
            matches(conditions(&["^a b$"], &[]), &[b"a\nb\n"]).matched,
            0
        );
    }

    #[test]
    fn crlf_lines_end_before_the_carriage_return() {
        assert_eq!(
            matches(conditions(&["^ok$"], &[]), &[b"ok\r\nnext\r\n"]).matched,
            1
        );
    }

    #[test]
    fn a_pattern_spanning_lines_never_matches() {
        assert_eq!(
            matches(conditions(&["a\\sb"], &[]), &[b"a\nb\n"]).matched,
            0
        );
    }

    #[test]
    fn the_last_line_needs_no_newline() {
        assert_eq!(
            matches(conditions(&["fatal"], &[]), &[b"one\nfatal: no"]).matched,
            1
        );
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
        assert_eq!(matcher.finish().matched, 1);
    }

    #[test]
    fn invalid_patterns_name_the_option_and_the_position() {
        let error = |pattern: &str| {
            check_pattern(pattern, &format!("--stop-on 'stdout:{pattern}'"))
                .unwrap_err()
                .to_string()
        };
        assert_eq!(
            error("a(b"),
            "--stop-on 'stdout:a(b' is not a valid regex: unclosed group at character 2"
        );
        assert!(error("ok|x{2,1}").ends_with("the start must be <= the end at character 5"));
        assert!(error("a\nb").contains("holds a line break, which no line of output can match"));
    }
}
