//! `--hold all`: the whole story of a run, held until it is known whether anybody
//! needs it. Each attempt's stdout and stderr, under a header saying which attempt it was and
//! how it ended, and the tool's own lines, are kept in the order they came; a run that succeeds
//! drops them, one that does not writes them out in that order, stdout's bytes to stdout and the
//! rest to stderr, so that cron's mail holds everything.
//!
//! The bytes are held as `--hold stdout` holds them (memory up to a bound, then an unnamed
//! temporary file), all in one [`SpillBuffer`], with a short index of which stream each stretch
//! belongs to; a failure to keep them is returned for the run to say loudly.

use std::cell::RefCell;
use std::io::{self, Read, Write};
use std::rc::Rc;

use crate::output::copy::HeldOutput;
use crate::spill::{Held, SpillBuffer};
use retry_policy::matching::Stream;

/// Bytes copied at a time when the transcript is written out.
const CHUNK: usize = 64 * 1024;

/// The held story of a run, shared by the reporter (its lines) and the release of each
/// attempt's output; cloning gives another handle on the same transcript.
#[derive(Clone, Default)]
pub(crate) struct Transcript(Rc<RefCell<Store>>);

#[derive(Default)]
struct Store {
    bytes: SpillBuffer,
    /// Each stretch of `bytes`, in order: its stream and its length.
    stretches: Vec<(Stream, u64)>,
    /// The first failure to keep bytes; nothing more is kept after it.
    failure: Option<String>,
}

impl Store {
    fn keep(&mut self, stream: Stream, bytes: &[u8]) {
        if self.failure.is_some() || bytes.is_empty() {
            return;
        }
        if let Err(err) = self.bytes.write_all(bytes) {
            self.failure = Some(format!("cannot hold the output for --hold all: {err}"));
            return;
        }
        let length = bytes.len() as u64;
        match self.stretches.last_mut() {
            Some((last, total)) if *last == stream => *total += length,
            _ => self.stretches.push((stream, length)),
        }
    }

    fn keep_held(&mut self, stream: Stream, held: Option<SpillBuffer>) {
        let Some(held) = held else { return };
        let mut into = StreamInto {
            store: self,
            stream,
        };
        if let Err(err) = held.drain_into(&mut into) {
            self.failure
                .get_or_insert(format!("cannot hold the output for --hold all: {err}"));
        }
    }
}

/// A writer that keeps what it is given as one stream's bytes.
struct StreamInto<'a> {
    store: &'a mut Store,
    stream: Stream,
}

impl Write for StreamInto<'_> {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        self.store.keep(self.stream, bytes);
        match &self.store.failure {
            Some(failure) => Err(io::Error::other(failure.clone())),
            None => Ok(bytes.len()),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl Transcript {
    /// Keep one of the tool's own lines (ending in a line feed).
    pub(crate) fn keep_line(&self, line: &[u8]) {
        self.0.borrow_mut().keep(Stream::Stderr, line);
    }

    /// Keep an attempt's output under `header` (one line, without its line feed), which says
    /// whether the attempt wrote nothing or the output could not all be held; the failure to
    /// keep it, if there was one, in words.
    pub(crate) fn keep_attempt(&self, header: &str, held: HeldOutput) -> Result<(), String> {
        let mut store = self.0.borrow_mut();
        let header = match (held.is_empty(), held.lost) {
            (true, false) => format!("{header}, with no output\n"),
            (false, false) => format!("{header}; its output:\n"),
            (true, true) => format!("{header}; its output could not be held\n"),
            (false, true) => format!("{header}; the part of its output that could be held:\n"),
        };
        store.keep(Stream::Stderr, header.as_bytes());
        store.keep_held(Stream::Stdout, held.stdout);
        store.keep_held(Stream::Stderr, held.stderr);
        store.failure.clone().map_or(Ok(()), Err)
    }

    /// Everything kept so far, taken out of the transcript to be written out.
    pub(crate) fn take(self) -> Story {
        Story(std::mem::take(&mut *self.0.borrow_mut()))
    }
}

/// The kept story of a run, to be written out (on a thread of its own, if need be).
pub(crate) struct Story(Store);

/// What became of a story written out.
#[derive(Debug, Default)]
pub(crate) struct WrittenOut {
    /// The first failure to write to stdout, then to stderr: a stream that failed takes nothing
    /// more, and the other still gets its part.
    pub(crate) broken: [Option<io::Error>; 2],
    /// The held bytes could not be read back, or not all were kept; why.
    pub(crate) lost: Option<String>,
}

impl Story {
    /// Write everything kept, in order, to `stdout` and `stderr`. A stream whose write fails
    /// takes nothing more, but the other still gets its whole part: a closed stdout never costs
    /// the command's error lines.
    pub(crate) fn write_out(self, stdout: &mut impl Write, stderr: &mut impl Write) -> WrittenOut {
        let store = self.0;
        let mut written = WrittenOut {
            lost: store.failure,
            ..WrittenOut::default()
        };
        let mut source: Box<dyn Read + Send> = match store.bytes.finish() {
            Ok(Held::Memory(bytes)) => Box::new(io::Cursor::new(bytes)),
            Ok(Held::Spilled(file)) => Box::new(file),
            Err(err) => {
                written.lost = Some(format!("cannot read back the held output: {err}"));
                return written;
            }
        };
        let mut chunk = vec![0; CHUNK];
        for (stream, length) in store.stretches {
            let (out, broken): (&mut dyn Write, _) = match stream {
                Stream::Stdout => (stdout, &mut written.broken[0]),
                Stream::Stderr => (stderr, &mut written.broken[1]),
            };
            let mut left = length;
            while left > 0 {
                let want = usize::try_from(left).unwrap_or(CHUNK).min(CHUNK);
                let count = match source.read(&mut chunk[..want]) {
                    Ok(0) => break,
                    Ok(count) => count,
                    Err(err) if err.kind() == io::ErrorKind::Interrupted => continue,
                    Err(err) => {
                        written.lost = Some(format!("cannot read back the held output: {err}"));
                        return written;
                    }
                };
                if broken.is_none()
                    && let Err(err) = out.write_all(&chunk[..count])
                {
                    *broken = Some(err);
                }
                left -= count as u64;
            }
            if broken.is_none()
                && let Err(err) = out.flush()
            {
                *broken = Some(err);
            }
        }
        written
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spill::MEMORY_BOUND;

    fn held(stdout: &[u8], stderr: &[u8]) -> HeldOutput {
        let buffer = |bytes: &[u8]| {
            let mut buffer = SpillBuffer::default();
            buffer.write_all(bytes).unwrap();
            Some(buffer)
        };
        HeldOutput {
            stdout: buffer(stdout),
            stderr: buffer(stderr),
            ..HeldOutput::default()
        }
    }

    #[test]
    fn the_story_comes_out_in_order_on_each_stream() {
        let transcript = Transcript::default();
        let lines = transcript.clone();
        transcript
            .keep_attempt("retry: attempt 1/2 failed", held(b"out 1\n", b"err 1\n"))
            .unwrap();
        lines.keep_line(b"retry: retrying in 1s\n");
        transcript
            .keep_attempt("retry: attempt 2/2 failed", held(b"", b""))
            .unwrap();
        let (mut stdout, mut stderr) = (Vec::new(), Vec::new());
        let written = transcript.take().write_out(&mut stdout, &mut stderr);
        assert!(written.broken.iter().all(Option::is_none) && written.lost.is_none());
        assert_eq!(String::from_utf8(stdout).unwrap(), "out 1\n");
        assert_eq!(
            String::from_utf8(stderr).unwrap(),
            "retry: attempt 1/2 failed; its output:\nerr 1\nretry: retrying in 1s\n\
             retry: attempt 2/2 failed, with no output\n"
        );
    }

    #[test]
    fn a_header_never_calls_output_that_could_not_be_held_no_output() {
        let transcript = Transcript::default();
        let lost = |held: HeldOutput| HeldOutput { lost: true, ..held };
        transcript
            .keep_attempt("retry: attempt 1/2 failed", lost(held(b"", b"")))
            .unwrap();
        transcript
            .keep_attempt("retry: attempt 2/2 failed", lost(held(b"", b"err 2\n")))
            .unwrap();
        let mut stderr = Vec::new();
        transcript.take().write_out(&mut io::sink(), &mut stderr);
        assert_eq!(
            String::from_utf8(stderr).unwrap(),
            "retry: attempt 1/2 failed; its output could not be held\n\
             retry: attempt 2/2 failed; the part of its output that could be held:\nerr 2\n"
        );
    }

    #[test]
    fn output_that_could_not_be_kept_is_said_after_what_was() {
        let transcript = Transcript::default();
        transcript.keep_line(b"kept\n");
        transcript.0.borrow_mut().failure = Some("the disk is full".into());
        let (mut stdout, mut stderr) = (Vec::new(), Vec::new());
        let written = transcript.take().write_out(&mut stdout, &mut stderr);
        assert_eq!(stderr, b"kept\n");
        let lost = written.lost.unwrap();
        assert!(lost.contains("the disk is full"), "{lost}");
    }

    #[test]
    fn a_stream_that_breaks_never_costs_the_other_its_part() {
        let transcript = Transcript::default();
        transcript
            .keep_attempt("retry: attempt 1/2 failed", held(b"out 1\n", b"err 1\n"))
            .unwrap();
        transcript
            .keep_attempt("retry: attempt 2/2 failed", held(b"out 2\n", b"err 2\n"))
            .unwrap();
        let mut full = std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .unwrap();
        let mut stderr = Vec::new();
        let written = transcript.take().write_out(&mut full, &mut stderr);
        assert_eq!(
            String::from_utf8(stderr).unwrap(),
            "retry: attempt 1/2 failed; its output:\nerr 1\n\
             retry: attempt 2/2 failed; its output:\nerr 2\n"
        );
        let broken = written.broken[0].as_ref().unwrap();
        assert_eq!(broken.raw_os_error(), Some(libc::ENOSPC));
        assert!(written.broken[1].is_none());
    }

    #[test]
    fn a_large_story_is_spilled_and_comes_back_whole() {
        let transcript = Transcript::default();
        let big: Vec<u8> = (0..MEMORY_BOUND + 70_000)
            .map(|i| (i % 251) as u8)
            .collect();
        transcript
            .keep_attempt("retry: attempt 1/1 failed", held(&big, b"tail\n"))
            .unwrap();
        let (mut stdout, mut stderr) = (Vec::new(), Vec::new());
        let written = transcript.take().write_out(&mut stdout, &mut stderr);
        assert!(written.lost.is_none());
        assert_eq!(stdout, big);
        assert!(stderr.ends_with(b"its output:\ntail\n"));
    }
}
