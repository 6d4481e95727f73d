//! An attempt's output piped through the tool: passed on at once, matched line by line, or held.
//!
//! Only with `--retry-on-output`, `--stop-on-output` or `--hold-output`; otherwise the command's
//! stdout and stderr stay attached directly. Each piped stream gets a thread of its own that
//! writes every chunk on as soon as it is read (so bytes keep their order within the stream and
//! nothing waits for a line to end) and feeds a [`LineMatcher`], which looks at lines of at most
//! [`MAX_LINE`] bytes: a command printing gigabytes costs constant memory. Held stdout goes to a
//! [`SpillBuffer`].

use std::fs::File;
use std::io::{self, Read, Write};
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::sync::{Arc, Mutex, PoisonError};

use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
use regex::bytes::{RegexSet, RegexSetBuilder};

use crate::process::signals::{SignalWatch, Waited};
use crate::spill::{HoldError, SpillBuffer};

/// The longest line matched as one; a longer line is matched in pieces of this size.
pub const MAX_LINE: usize = 64 * 1024;

/// Bytes read from a pipe at a time.
const CHUNK: usize = 64 * 1024;

/// The `--retry-on-output` and `--stop-on-output` patterns.
#[derive(Clone, Debug, Default)]
pub struct OutputConditions {
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
pub struct OutputMatch {
    /// The `--retry-on-output` pattern that matched, if any.
    pub retry: Option<String>,
    /// The `--stop-on-output` pattern that matched, if any.
    pub stop: Option<String>,
}

/// A pattern that does not compile: the flag, the pattern, and the error with its position.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PatternError(pub String);

impl OutputConditions {
    /// Compile the patterns of both flags (each flag may be given several times).
    pub fn new(retry: &[String], stop: &[String]) -> Result<Self, PatternError> {
        Ok(OutputConditions {
            retry: compile("--retry-on-output", retry)?,
            stop: compile("--stop-on-output", stop)?,
        })
    }

    /// Whether any pattern was given.
    pub fn any(&self) -> bool {
        self.retry.is_some() || self.stop.is_some()
    }

    /// Whether `--retry-on-output` was given: then a failure is retried only on a match.
    pub fn requires_retry_match(&self) -> bool {
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
    pub fn merge(self, other: OutputMatch) -> OutputMatch {
        OutputMatch {
            retry: self.retry.or(other.retry),
            stop: self.stop.or(other.stop),
        }
    }
}

/// Where a piped stream goes.
pub enum Destination {
    /// Straight on to this file (a duplicate of the tool's stdout or stderr).
    PassOn(File),
    /// Into a buffer, to be released when the attempt is judged.
    Hold(SpillBuffer),
    /// Nowhere: the tool's own stream is closed.
    Nowhere,
}

impl Destination {
    /// A duplicate of the tool's stdout, or nowhere if it is closed.
    pub fn stdout() -> Destination {
        duplicate(io::stdout().as_fd()).map_or(Destination::Nowhere, Destination::PassOn)
    }

    /// A duplicate of the tool's stderr, or nowhere if it is closed.
    pub fn stderr() -> Destination {
        duplicate(io::stderr().as_fd()).map_or(Destination::Nowhere, Destination::PassOn)
    }
}

/// A file of its own on the same open stream as `fd`, to write without std's locks.
fn duplicate(fd: BorrowedFd<'_>) -> Option<File> {
    fd.try_clone_to_owned().ok().map(File::from)
}

/// An attempt's held stdout, until the attempt is judged (empty without `--hold-output`).
#[derive(Debug, Default)]
pub struct HeldOutput(Option<SpillBuffer>);

/// What reading one attempt's piped output came to.
#[derive(Debug, Default)]
pub struct CopyOutcome {
    /// What the output conditions found.
    pub matched: OutputMatch,
    /// The held stdout, with `--hold-output`.
    pub held: HeldOutput,
    /// Output the tool could neither keep nor pass on, and why: the run cannot vouch for it.
    pub failure: Option<String>,
    /// A stream was still open when the tool stopped reading it: a process that left the
    /// attempt's group holds it.
    pub cut_short: bool,
}

impl CopyOutcome {
    /// Both streams' outcomes together.
    pub fn merge(self, other: CopyOutcome) -> CopyOutcome {
        CopyOutcome {
            matched: self.matched.merge(other.matched),
            held: HeldOutput(self.held.0.or(other.held.0)),
            failure: self.failure.or(other.failure),
            cut_short: self.cut_short || other.cut_short,
        }
    }
}

/// What a copy has done so far, shared between its thread and the tool.
#[derive(Debug, Default)]
struct Progress {
    matcher: Option<LineMatcher>,
    hold: Option<SpillBuffer>,
    failure: Option<String>,
    /// The stream reached its end.
    ended: bool,
    /// The thread is over.
    finished: bool,
    /// The tool asked the thread to stop reading.
    stopped: bool,
}

impl Progress {
    /// Take the next bytes read: match them, and hold them if holding.
    fn take(&mut self, bytes: &[u8]) {
        if let Some(matcher) = &mut self.matcher {
            matcher.feed(bytes);
        }
        if let Some(hold) = &mut self.hold {
            if let Err(err) = hold.write_all(bytes) {
                self.fail(format!("cannot hold the command's stdout: {err}"));
                self.hold = None;
            }
        }
    }

    fn fail(&mut self, message: String) {
        self.failure.get_or_insert(message);
    }
}

/// A stream being copied on a thread of its own.
pub struct StreamCopy {
    progress: Arc<Mutex<Progress>>,
    /// The write end of a pipe the thread watches: closing it tells the thread to stop reading.
    stop: Option<OwnedFd>,
}

impl StreamCopy {
    /// Start copying `pipe` to `destination`, matching lines if `conditions` has patterns;
    /// `on_end` is called on the copy's thread once it is over.
    pub fn start(
        pipe: OwnedFd,
        destination: Destination,
        conditions: Arc<OutputConditions>,
        on_end: impl FnOnce() + Send + 'static,
    ) -> io::Result<StreamCopy> {
        let (pass_on, hold) = match destination {
            Destination::PassOn(file) => (Some(file), None),
            Destination::Hold(buffer) => (None, Some(buffer)),
            Destination::Nowhere => (None, None),
        };
        let progress = Arc::new(Mutex::new(Progress {
            matcher: conditions.any().then(|| LineMatcher::new(conditions)),
            hold,
            ..Progress::default()
        }));
        let (stop_read, stop) = nix::unistd::pipe()?;
        let theirs = Arc::clone(&progress);
        std::thread::Builder::new().spawn(move || {
            copy(File::from(pipe), &stop_read, pass_on, &theirs);
            lock(&theirs).finished = true;
            on_end();
        })?;
        Ok(StreamCopy {
            progress,
            stop: Some(stop),
        })
    }

    /// Whether the stream has ended and everything read has been passed on.
    pub fn is_finished(&self) -> bool {
        lock(&self.progress).finished
    }

    /// Stop reading: the thread finishes the chunk in hand and ends.
    pub fn stop(&mut self) {
        lock(&self.progress).stopped = true;
        self.stop = None;
    }

    /// What the copy found and kept so far.
    pub fn outcome(self) -> CopyOutcome {
        let mut progress = lock(&self.progress);
        CopyOutcome {
            matched: progress
                .matcher
                .take()
                .map(LineMatcher::finish)
                .unwrap_or_default(),
            held: HeldOutput(progress.hold.take()),
            failure: progress.failure.take(),
            cut_short: progress.stopped && !progress.ended,
        }
    }
}

fn lock(progress: &Mutex<Progress>) -> std::sync::MutexGuard<'_, Progress> {
    progress.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The copy thread: read `pipe` until it ends or `stop` closes, pass each chunk on at once, and
/// give it to `progress`.
fn copy(mut pipe: File, stop: &OwnedFd, mut pass_on: Option<File>, progress: &Mutex<Progress>) {
    let mut chunk = vec![0; CHUNK];
    while readable(&pipe, stop) {
        let count = match pipe.read(&mut chunk) {
            Ok(0) => {
                lock(progress).ended = true;
                break;
            }
            Ok(count) => count,
            Err(err) if err.kind() == io::ErrorKind::Interrupted => continue,
            Err(err) => {
                lock(progress).fail(format!("cannot read the command's output: {err}"));
                break;
            }
        };
        if let Some(out) = &mut pass_on {
            match out.write_all(&chunk[..count]) {
                Ok(()) => {}
                // The tool's own reader is gone: drop the pipe too, so the command meets the
                // broken pipe as it would without the tool in between.
                Err(err) if err.kind() == io::ErrorKind::BrokenPipe => break,
                Err(err) => {
                    lock(progress).fail(format!("cannot pass on the command's output: {err}"));
                    pass_on = None;
                }
            }
        }
        let mut progress = lock(progress);
        progress.take(&chunk[..count]);
        if progress.stopped {
            break;
        }
    }
}

/// Wait until `pipe` has something to read (or has ended); false once `stop` has closed.
fn readable(pipe: &File, stop: &OwnedFd) -> bool {
    let mut fds = [
        PollFd::new(pipe.as_fd(), PollFlags::POLLIN),
        PollFd::new(stop.as_fd(), PollFlags::POLLIN),
    ];
    loop {
        match poll(&mut fds, PollTimeout::NONE) {
            Ok(_) => return fds[1].revents().is_none_or(|events| events.is_empty()),
            Err(nix::errno::Errno::EINTR) => continue,
            Err(_) => return false,
        }
    }
}

/// Where held output goes once its attempt is judged.
pub trait Release {
    /// Write `held` to stdout if its attempt succeeded, to stderr otherwise.
    fn release(&mut self, held: HeldOutput, success: bool) -> Released;
}

/// How a release went.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Released {
    /// Written, or nothing to write, or its reader had gone (the reader's business).
    Done,
    /// A signal that ends the run arrived while a slow reader held the release up.
    Interrupted(i32),
    /// The output could not be written; the message says why.
    Failed(String),
}

/// Releases held output to the tool's own stdout and stderr, awake to signals meanwhile.
pub struct StdRelease<'a> {
    watch: &'a SignalWatch,
}

impl<'a> StdRelease<'a> {
    /// Release with `watch` taking the signals that end the run.
    pub fn new(watch: &'a SignalWatch) -> Self {
        StdRelease { watch }
    }
}

impl Release for StdRelease<'_> {
    fn release(&mut self, held: HeldOutput, success: bool) -> Released {
        let Some(buffer) = held.0 else {
            return Released::Done;
        };
        let (destination, name) = match success {
            true => (Destination::stdout(), "stdout"),
            false => (Destination::stderr(), "stderr"),
        };
        let Destination::PassOn(mut out) = destination else {
            return Released::Done;
        };
        let written = match self
            .watch
            .run_job(None, move || buffer.drain_into(&mut out))
        {
            Ok(Waited::Done(written)) => written,
            Ok(Waited::Stopped(signal)) => return Released::Interrupted(signal),
            Ok(Waited::TimedOut) => Ok(()),
            Err(err) => return Released::Failed(format!("cannot start a thread: {err}")),
        };
        match written {
            Ok(()) => Released::Done,
            Err(HoldError::Transfer(err)) if err.kind() == io::ErrorKind::BrokenPipe => {
                Released::Done
            }
            Err(HoldError::Transfer(err)) => {
                Released::Failed(format!("cannot write the held output to {name}: {err}"))
            }
            Err(HoldError::Spill(err)) => {
                Released::Failed(format!("cannot read back the held output: {err}"))
            }
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

    #[test]
    fn copies_every_byte_in_order_while_matching() {
        let input: Vec<u8> = (0..300_000u32)
            .flat_map(|i| format!("{i}\n").into_bytes())
            .collect();
        let mut source = tempfile::tempfile().unwrap();
        source.write_all(&input).unwrap();
        std::io::Seek::rewind(&mut source).unwrap();
        let (ended, end) = std::sync::mpsc::channel();
        let copy = StreamCopy::start(
            OwnedFd::from(source),
            Destination::Hold(SpillBuffer::default()),
            conditions(&["^299999$"], &[]),
            move || ended.send(()).unwrap(),
        )
        .unwrap();
        end.recv().unwrap();
        assert!(copy.is_finished());
        let outcome = copy.outcome();
        assert_eq!(outcome.matched.retry.as_deref(), Some("^299999$"));
        assert!(!outcome.cut_short && outcome.failure.is_none());
        let mut out = Vec::new();
        outcome.held.0.unwrap().drain_into(&mut out).unwrap();
        assert_eq!(out, input);
    }

    #[test]
    fn a_stopped_copy_keeps_what_it_read() {
        let (read, mut write) = std::io::pipe().unwrap();
        let (mut passed, passed_on) = std::io::pipe().unwrap();
        let (ended, end) = std::sync::mpsc::channel();
        let mut copy = StreamCopy::start(
            OwnedFd::from(read),
            Destination::PassOn(File::from(OwnedFd::from(passed_on))),
            conditions(&["^important$"], &[]),
            move || ended.send(()).unwrap(),
        )
        .unwrap();
        write.write_all(b"important\n").unwrap();
        let mut seen = [0; 10];
        passed.read_exact(&mut seen).unwrap();
        // The writer stays open, as a process that left the attempt's group would hold it.
        copy.stop();
        end.recv().unwrap();
        let outcome = copy.outcome();
        assert_eq!(outcome.matched.retry.as_deref(), Some("^important$"));
        assert!(outcome.cut_short, "the stream had not ended");
        drop(write);
    }
}
