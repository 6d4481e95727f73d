//! The output conditions: `--retry-on-output` and `--stop-on-output` patterns, and matching a
//! stream's lines against them in bounded memory.
//!
//! A [`LineMatcher`] looks at lines of at most [`MAX_LINE`] bytes: a command printing gigabytes
//! costs constant memory. `^` and `$` anchor at line ends (before `\r\n` too), and no match
//! spans two lines.

use std::sync::Arc;

use regex::bytes::{RegexSet, RegexSetBuilder};

/// The longest line matched as one; a longer line is matched in pieces of this size.
pub(crate) const MAX_LINE: usize = 64 * 1024;
/// The `--retry-on-output` and `--stop-on-output` patterns.
#[derive(Clone, Debug, Default)]
pub(crate) struct OutputConditions {
    retry: Option<Patterns>,
    stop: Option<Patterns>,
}

/// A set of patterns and their texts, for reports.
#[derive(Clone, Debug)]
struct Patterns {
    set: RegexSet,
    texts: Vec<String>,
}

/// Which patterns an attempt's output matched: the first match of each kind.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct OutputMatch {
    /// The `--retry-on-output` pattern that matched, if any.
    pub(crate) retry: Option<String>,
    /// The `--stop-on-output` pattern that matched, if any.
    pub(crate) stop: Option<String>,
}

/// A pattern that does not compile: the flag, the pattern, and the error with its position.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct PatternError(pub String);

impl OutputConditions {
    /// Compile the patterns of both flags (each flag may be given several times).
    pub(crate) fn new(retry: &[String], stop: &[String]) -> Result<Self, PatternError> {
        Ok(OutputConditions {
            retry: compile("--retry-on-output", retry)?,
            stop: compile("--stop-on-output", stop)?,
        })
    }

    /// Whether any pattern was given.
    pub(crate) fn any(&self) -> bool {
        self.retry.is_some() || self.stop.is_some()
    }

    /// Whether `--retry-on-output` was given: then a failure is retried only on a match.
    pub(crate) fn requires_retry_match(&self) -> bool {
        self.retry.is_some()
    }
}

fn compile(flag: &str, patterns: &[String]) -> Result<Option<Patterns>, PatternError> {
    if patterns.is_empty() {
        return Ok(None);
    }
    for pattern in patterns {
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

/// What is wrong with `pattern` and where, as "unclosed group at character 2", when the parser
/// can say (it cannot for limits such as a pattern too large once compiled).
fn position_of_error(pattern: &str) -> Option<String> {
    let (kind, span) = match regex_syntax::Parser::new().parse(pattern).err()? {
        regex_syntax::Error::Parse(err) => (err.kind().to_string(), *err.span()),
        regex_syntax::Error::Translate(err) => (err.kind().to_string(), *err.span()),
        _ => return None,
    };
    Some(match span.start.line {
        1 => format!("{kind} at character {}", span.start.column),
        line => format!("{kind} at line {line}, character {}", span.start.column),
    })
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
pub(crate) struct LineMatcher {
    conditions: Arc<OutputConditions>,
    line: Vec<u8>,
    found: OutputMatch,
}

impl LineMatcher {
    /// A matcher for one stream.
    pub(crate) fn new(conditions: Arc<OutputConditions>) -> Self {
        LineMatcher {
            conditions,
            line: Vec::new(),
            found: OutputMatch::default(),
        }
    }

    /// Take the next bytes of the stream.
    pub(crate) fn feed(&mut self, mut bytes: &[u8]) {
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
        {
            for line in block.split(|&b| b == b'\n') {
                self.match_line(line);
            }
        }
    }

    /// The stream ended: match a last line without a newline, and say what matched.
    pub(crate) fn finish(mut self) -> OutputMatch {
        if !self.line.is_empty() {
            self.match_held_line();
        }
        self.found
    }

    /// Whether every kind of pattern has matched already, so nothing more can change.
    fn done(&self) -> bool {
        let settled = |patterns: &Option<Patterns>, found: &Option<String>| {
            patterns.is_none() || found.is_some()
        };
        settled(&self.conditions.retry, &self.found.retry)
            && settled(&self.conditions.stop, &self.found.stop)
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
    }
}

fn first_match(patterns: &Option<Patterns>, line: &[u8], found: &mut Option<String>) {
    if let (Some(patterns), None) = (patterns, &found) {
        if let Some(index) = patterns.set.matches(line).iter().next() {
            *found = Some(patterns.texts[index].clone());
        }
    }
}

impl OutputMatch {
    /// Both streams' matches together.
    pub(crate) fn merge(self, other: OutputMatch) -> OutputMatch {
        OutputMatch {
            retry: self.retry.or(other.retry),
            stop: self.stop.or(other.stop),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn conditions(retry: &[&str], stop: &[&str]) -> Arc<OutputConditions> {
        let owned = |list: &[&str]| list.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        Arc::new(OutputConditions::new(&owned(retry), &owned(stop)).unwrap())
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
            OutputConditions::new(&[], &[pattern.to_string()])
                .unwrap_err()
                .0
        };
        assert_eq!(
            error("a(b"),
            "--stop-on-output 'a(b' is not a valid regex: unclosed group at character 2"
        );
        assert!(error("ok|x{2,1}").ends_with("the start must be <= the end at character 5"));
        assert!(
            error("a\nb(").ends_with("at line 2, character 2"),
            "{}",
            error("a\nb(")
        );
    }
}
