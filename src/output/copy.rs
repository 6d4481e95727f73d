//! An attempt's piped stdout or stderr, copied on a thread of its own: passed on at once, matched
//! line by line, or held; its end kept for a report that shows it.
//!
//! Each chunk is written on as soon as it is read, so bytes keep their order within the stream
//! and nothing waits for a line to end. The thread watches a second pipe too: when the tool closes
//! it, the thread stops reading (a process that left the attempt's group may hold the stream open
//! for ever), and what was read so far is kept.

use std::fs::File;
use std::io::{self, Read, Write};
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};
use std::sync::{Arc, Mutex, PoisonError};

use nix::poll::{PollFd, PollFlags, PollTimeout, poll};

use crate::output::tail::{Tail, Tails};
use crate::spill::SpillBuffer;
use retry_policy::matching::Stream;
use retry_policy::matching::{LineMatcher, OutputConditions};
use retry_policy::run::AttemptOutput;

/// Bytes read from a pipe at a time.
const CHUNK: usize = 64 * 1024;
/// Where a piped stream goes.
pub(crate) enum Destination {
    /// Straight on to the tool's own stdout or stderr.
    PassOn(Outlet),
    /// Into a buffer, to be released when the attempt is judged.
    Hold(SpillBuffer),
}

/// The tool's own stdout or stderr, to write the command's output to without std's locks: a
/// file of its own on the stream, or why there is none, which every write then returns, so
/// that output the tool cannot pass on is said to be lost, never dropped.
pub(crate) struct Outlet {
    name: &'static str,
    file: Result<File, i32>,
}

impl Outlet {
    /// The tool's stdout.
    pub(crate) fn stdout() -> Outlet {
        Outlet::own(io::stdout().as_fd(), "stdout")
    }

    /// The tool's stderr.
    pub(crate) fn stderr() -> Outlet {
        Outlet::own(io::stderr().as_fd(), "stderr")
    }

    /// A duplicate of the tool's stream `fd`; none where the tool's parent left it closed
    /// (EBADF, as on the closed descriptor, never the `/dev/null` std's runtime put there), or
    /// where no descriptor is left to duplicate it with.
    fn own(fd: BorrowedFd<'_>, name: &'static str) -> Outlet {
        let file = match retry_sys::descriptors::closed_at_start(fd.as_raw_fd()) {
            true => Err(libc::EBADF),
            false => fd
                .try_clone_to_owned()
                .map(File::from)
                .map_err(|err| err.raw_os_error().unwrap_or(libc::EBADF)),
        };
        Outlet { name, file }
    }

    /// `stdout` or `stderr`.
    pub(crate) fn name(&self) -> &'static str {
        self.name
    }
}

impl Write for Outlet {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        match &mut self.file {
            Ok(file) => file.write(bytes),
            Err(errno) => Err(io::Error::from_raw_os_error(*errno)),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match &mut self.file {
            Ok(file) => file.flush(),
            Err(errno) => Err(io::Error::from_raw_os_error(*errno)),
        }
    }
}

/// An attempt's held output, until the attempt is judged: stdout with `--hold stdout`, both
/// streams with `--hold all`, else none.
#[derive(Debug, Default)]
pub(crate) struct HeldOutput {
    pub(crate) stdout: Option<SpillBuffer>,
    pub(crate) stderr: Option<SpillBuffer>,
    /// The end of each stream, when a report shows it.
    pub(crate) tails: Tails,
    /// Some of the output meant to be held could not be (the temporary file could not be made
    /// or written): what is held is not all the attempt wrote.
    pub(crate) lost: bool,
}

impl HeldOutput {
    /// Whether no byte is held.
    pub(crate) fn is_empty(&self) -> bool {
        [&self.stdout, &self.stderr]
            .iter()
            .all(|held| held.as_ref().is_none_or(SpillBuffer::is_empty))
    }
}

/// What reading one attempt's piped output came to, its held output the tool's own.
pub(crate) type CopyOutcome = AttemptOutput<HeldOutput>;

/// Both streams' outcomes together.
pub(crate) fn merge(one: CopyOutcome, other: CopyOutcome) -> CopyOutcome {
    CopyOutcome {
        matched: one.matched.merge(other.matched),
        held: HeldOutput {
            stdout: one.held.stdout.or(other.held.stdout),
            stderr: one.held.stderr.or(other.held.stderr),
            tails: Tails {
                stdout: longer(one.held.tails.stdout, other.held.tails.stdout),
                stderr: longer(one.held.tails.stderr, other.held.tails.stderr),
            },
            lost: one.held.lost || other.held.lost,
        },
        failure: one.failure.or(other.failure),
        cut_short: one.cut_short || other.cut_short,
        stalled: one.stalled.or(other.stalled),
    }
}

/// The one of two tails of a stream that holds anything (only one copy reads each stream).
fn longer(one: Tail, other: Tail) -> Tail {
    match one.is_empty() {
        true => other,
        false => one,
    }
}

/// What a copy has done so far, shared between its thread and the tool.
#[derive(Debug, Default)]
struct Progress {
    /// The command's stream being copied.
    stream: Stream,
    matcher: Option<LineMatcher>,
    hold: Option<SpillBuffer>,
    /// Holding failed, and what was held is gone.
    hold_lost: bool,
    /// The stream's end, when a report shows it.
    tail: Option<Tail>,
    failure: Option<String>,
    /// The stream reached its end.
    ended: bool,
    /// The thread is over.
    finished: bool,
    /// The tool asked the thread to stop reading before it was over.
    stopped: bool,
    /// The thread is passing a chunk on to this stream of the tool's.
    writing: Option<&'static str>,
}

impl Progress {
    /// Take the next bytes read: match them, and hold them if holding.
    fn take(&mut self, bytes: &[u8]) {
        if let Some(matcher) = &mut self.matcher {
            matcher.feed(bytes);
        }
        if let Some(tail) = &mut self.tail {
            tail.push(bytes);
        }
        if let Some(hold) = &mut self.hold
            && let Err(err) = hold.write_all(bytes)
        {
            let stream = self.stream.name();
            self.fail(format!("cannot hold the command's {stream}: {err}"));
            self.hold = None;
            self.hold_lost = true;
        }
    }

    fn fail(&mut self, message: String) {
        self.failure.get_or_insert(message);
    }
}

/// A stream being copied on a thread of its own.
pub(crate) struct StreamCopy {
    progress: Arc<Mutex<Progress>>,
    /// The write end of a pipe the thread watches: closing it tells the thread to stop reading.
    stop: Option<OwnedFd>,
}

impl StreamCopy {
    /// Start copying `pipe`, the command's `stream`, to `destination`,
    /// matching lines if `conditions` has patterns, keeping its end if `tail`; `on_end` is called
    /// on the copy's thread once it is over.
    pub(crate) fn start(
        stream: Stream,
        pipe: OwnedFd,
        destination: Destination,
        conditions: Arc<OutputConditions>,
        tail: bool,
        on_end: impl FnOnce() + Send + 'static,
    ) -> io::Result<StreamCopy> {
        let (pass_on, hold) = match destination {
            Destination::PassOn(outlet) => (Some(outlet), None),
            Destination::Hold(buffer) => (None, Some(buffer)),
        };
        let progress = Arc::new(Mutex::new(Progress {
            stream,
            matcher: conditions.any().then(|| LineMatcher::new(conditions)),
            hold,
            tail: tail.then(Tail::default),
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
    pub(crate) fn is_finished(&self) -> bool {
        lock(&self.progress).finished
    }

    /// Stop reading: the thread finishes the chunk in hand and ends.
    pub(crate) fn stop(&mut self) {
        let mut progress = lock(&self.progress);
        if !progress.finished {
            progress.stopped = true;
        }
        drop(progress);
        self.stop = None;
    }

    /// What the copy found and kept so far.
    pub(crate) fn outcome(self) -> CopyOutcome {
        let mut progress = lock(&self.progress);
        let hold = progress.hold.take();
        let tail = progress.tail.take().unwrap_or_default();
        let held = match progress.stream {
            Stream::Stdout => HeldOutput {
                stdout: hold,
                stderr: None,
                tails: Tails {
                    stdout: tail,
                    stderr: Tail::default(),
                },
                lost: progress.hold_lost,
            },
            Stream::Stderr => HeldOutput {
                stdout: None,
                stderr: hold,
                tails: Tails {
                    stdout: Tail::default(),
                    stderr: tail,
                },
                lost: progress.hold_lost,
            },
        };
        CopyOutcome {
            matched: progress
                .matcher
                .take()
                .map(LineMatcher::finish)
                .unwrap_or_default(),
            held,
            failure: progress.failure.take(),
            cut_short: progress.stopped && !progress.ended && progress.writing.is_none(),
            stalled: progress.writing.filter(|_| !progress.finished),
        }
    }
}

fn lock(progress: &Mutex<Progress>) -> std::sync::MutexGuard<'_, Progress> {
    progress.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The copy thread: read `pipe` until it ends or `stop` closes, pass each chunk on at once, and
/// give it to `progress`. Once `stop` closes, what the pipe holds then (what the attempt wrote
/// before it ended) is still read, at most the pipe's capacity, so that only a stream that a
/// leftover process keeps open is cut. A reader of the tool's stream that went away ends the
/// copy, as the command would have met the broken pipe without the tool in between.
fn copy(mut pipe: File, stop: &OwnedFd, mut pass_on: Option<Outlet>, progress: &Mutex<Progress>) {
    let mut chunk = vec![0; CHUNK];
    // Once stopped, how much more may be read: what the pipe could hold.
    let mut left_to_drain: Option<usize> = None;
    loop {
        let ready = match left_to_drain {
            None => wait_readable(&pipe, stop),
            Some(0) => Ready::No,
            Some(_) => ready_now(&pipe),
        };
        match ready {
            Ready::Yes => {}
            Ready::Stopped => {
                left_to_drain = Some(capacity(&pipe));
                continue;
            }
            Ready::No => break,
        }
        let most = left_to_drain.map_or(CHUNK, |left| left.min(CHUNK));
        let count = match pipe.read(&mut chunk[..most]) {
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
        if let Some(left) = &mut left_to_drain {
            *left -= count;
        }
        if let Some(out) = &mut pass_on {
            lock(progress).writing = Some(out.name());
            let written = out.write_all(&chunk[..count]);
            lock(progress).writing = None;
            match written {
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
        if progress.stopped && left_to_drain.is_none() {
            left_to_drain = Some(capacity(&pipe));
        }
    }
}

/// Whether a pipe has something to read.
enum Ready {
    /// It has bytes, or has ended: a read will not block.
    Yes,
    /// The tool asked the copy to stop reading what is still to come.
    Stopped,
    /// Nothing to read now, or the pipe cannot be polled.
    No,
}

/// Wait until `pipe` has something to read (or has ended), or until `stop` has closed.
fn wait_readable(pipe: &File, stop: &OwnedFd) -> Ready {
    let mut fds = [
        PollFd::new(pipe.as_fd(), PollFlags::POLLIN),
        PollFd::new(stop.as_fd(), PollFlags::POLLIN),
    ];
    loop {
        match poll(&mut fds, PollTimeout::NONE) {
            Ok(_) if fds[1].revents().is_some_and(|events| !events.is_empty()) => {
                return Ready::Stopped;
            }
            Ok(_) => return Ready::Yes,
            Err(nix::errno::Errno::EINTR) => continue,
            Err(_) => return Ready::No,
        }
    }
}

/// Whether `pipe` has something to read right now (or has ended), without waiting.
fn ready_now(pipe: &File) -> Ready {
    let mut fds = [PollFd::new(pipe.as_fd(), PollFlags::POLLIN)];
    match poll(&mut fds, PollTimeout::ZERO) {
        Ok(_) if fds[0].revents().is_some_and(|events| !events.is_empty()) => Ready::Yes,
        _ => Ready::No,
    }
}

/// The most a pipe can hold: what it may still hold of an attempt's output once the attempt has
/// ended (on Linux as the pipe says, which a command may have enlarged; elsewhere 64 KiB).
fn capacity(pipe: &File) -> usize {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    if let Ok(size) = nix::fcntl::fcntl(pipe, nix::fcntl::FcntlArg::F_GETPIPE_SZ) {
        return usize::try_from(size).unwrap_or(CHUNK);
    }
    let _ = pipe;
    CHUNK
}

#[cfg(test)]
mod tests {
    use super::*;
    use retry_policy::matching::OutputPattern;
    use retry_policy::matching::{OutputConditions, OutputStream, Stream};
    use std::io::{Read, Write};

    /// Conditions of the rules' `patterns`, on both streams.
    fn conditions(patterns: &[&str]) -> Arc<OutputConditions> {
        let patterns: Vec<OutputPattern> = patterns
            .iter()
            .map(|regex| OutputPattern {
                stream: OutputStream::Both,
                regex: regex.to_string(),
            })
            .collect();
        Arc::new(OutputConditions::for_stream(Stream::Stdout, &patterns, &[]).unwrap())
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
            Stream::Stdout,
            OwnedFd::from(source),
            Destination::Hold(SpillBuffer::default()),
            conditions(&["^299999$"]),
            false,
            move || ended.send(()).unwrap(),
        )
        .unwrap();
        end.recv().unwrap();
        assert!(copy.is_finished());
        let outcome = copy.outcome();
        assert_eq!(outcome.matched.matched, 1);
        assert!(!outcome.cut_short && outcome.failure.is_none());
        let mut out = Vec::new();
        outcome.held.stdout.unwrap().drain_into(&mut out).unwrap();
        assert_eq!(out, input);
    }

    #[test]
    fn a_stopped_copy_keeps_what_it_read() {
        let (read, mut write) = std::io::pipe().unwrap();
        let (mut passed, passed_on) = std::io::pipe().unwrap();
        let (ended, end) = std::sync::mpsc::channel();
        let mut copy = StreamCopy::start(
            Stream::Stdout,
            OwnedFd::from(read),
            Destination::PassOn(Outlet {
                name: "stdout",
                file: Ok(File::from(OwnedFd::from(passed_on))),
            }),
            conditions(&["^important$"]),
            true,
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
        assert_eq!(outcome.matched.matched, 1);
        assert!(outcome.cut_short, "the stream had not ended");
        assert_eq!(outcome.held.tails.stdout.text(), "important\n");
        drop(write);
    }

    /// What a copy told to stop before it read a byte makes of `written`, its writer closed
    /// afterwards or not (a leftover process holding it): the bytes it read, and whether it
    /// reached the stream's end.
    fn stopped_at_once(written: &[u8], writer_closes: bool) -> (Vec<u8>, bool) {
        let (read, mut write) = std::io::pipe().unwrap();
        write.write_all(written).unwrap();
        let kept_open = match writer_closes {
            true => {
                drop(write);
                None
            }
            false => Some(write),
        };
        let (stop_read, stop) = nix::unistd::pipe().unwrap();
        drop(stop);
        let progress = Mutex::new(Progress {
            hold: Some(SpillBuffer::default()),
            ..Progress::default()
        });
        copy(File::from(OwnedFd::from(read)), &stop_read, None, &progress);
        drop(kept_open);
        let mut progress = progress.into_inner().unwrap();
        let mut held = Vec::new();
        progress.hold.take().unwrap().drain_into(&mut held).unwrap();
        (held, progress.ended)
    }

    #[test]
    fn a_stopped_copy_still_reads_what_the_pipe_holds() {
        let written: Vec<u8> = (0..60_000u32).map(|i| i as u8).collect();
        let (read, ended) = stopped_at_once(&written, true);
        assert!(
            read == written && ended,
            "{} bytes read, ended: {ended}",
            read.len()
        );
        let (read, ended) = stopped_at_once(&written, false);
        assert!(
            read == written && !ended,
            "a writer still open: what it wrote is read, and the stream has not ended; {} \
             bytes read, ended: {ended}",
            read.len()
        );
    }
}
