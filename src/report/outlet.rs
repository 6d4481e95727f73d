//! The tool's own stderr, written by a thread of its own, so that a reader that stops reading
//! (a stalled log collector, a terminal held by Ctrl-S) can never hold the run.
//!
//! Every message is queued and written in order by a writer thread started with the first one;
//! the run never waits for a write while it runs. The queue is bounded by [`QUEUE_BOUND`]: past
//! it, messages are dropped and counted, and once the writer catches up it says how many. When
//! the run is over, [`Outlet::finish`] waits for the queue to empty: a signal that ends the run
//! ends the wait, and past the run's deadline (or once a signal has ended the run) so does a
//! reader that has not taken a line for [`STALLED`] and leaves no room to write. A writer that
//! is merely slow to be scheduled on a busy machine (its line in hand, the destination
//! writable) is waited for, so that no line is lost to the load.

use std::collections::VecDeque;
use std::fs::File;
use std::io::{self, Write};
use std::os::fd::AsFd;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use nix::poll::{PollFd, PollFlags, PollTimeout, poll};

use retry_process::signals::reaper;
use retry_process::signals::{Doorbell, Signal, SignalWatch, Wake};

/// The most bytes waiting to be written; messages beyond are dropped and counted.
pub(crate) const QUEUE_BOUND: usize = 1 << 20;

pub(crate) use retry_policy::deadline::GRACE;

/// How long a reader may hold one line before it counts as having stopped reading.
pub(crate) const STALLED: Duration = Duration::from_millis(100);

/// The longest a flush waits for a writer that is writing, but slowly (a busy machine's).
const FLUSH_MOST: Duration = Duration::from_secs(5);

/// The line that says how many messages were dropped, in the reporter's format.
pub(crate) type Notice = fn(u64) -> Vec<u8>;

/// A destination that the run never waits for.
pub(crate) struct Outlet {
    shared: Arc<Shared>,
    writer: Writer,
    notice: Notice,
    /// The writer thread's destination, to ask whether it has room: a writer busy that long
    /// with room to write is starved of the processor, not held by its reader.
    probe: Option<File>,
}

/// Who writes the lines.
enum Writer {
    /// Nobody yet: the thread starts with the first line.
    NotStarted(File),
    /// The writer thread.
    Thread,
    /// The run itself, as no thread or descriptor could be had (a tool out of them): a stalled
    /// reader can hold it up, which is better than losing the messages. On this file, or on
    /// std's stderr when there is none.
    Direct(Option<File>),
}

struct Shared {
    queue: Mutex<Queue>,
    changed: Condvar,
}

#[derive(Default)]
struct Queue {
    lines: VecDeque<Vec<u8>>,
    bytes: usize,
    dropped: u64,
    /// Since when the writer has been writing a line, if it is.
    busy: Option<Instant>,
    /// Rung when the writer runs out of lines, once somebody waits for that.
    doorbell: Option<Doorbell>,
}

impl Queue {
    fn is_empty(&self) -> bool {
        self.lines.is_empty() && self.dropped == 0 && self.busy.is_none()
    }

    /// Whether the reader has held the line being written for [`STALLED`].
    fn is_stalled(&self) -> bool {
        self.busy.is_some_and(|since| since.elapsed() >= STALLED)
    }
}

impl Outlet {
    /// The tool's stderr (a duplicate of it, written without std's lock); `notice` words the
    /// count of dropped messages.
    pub(crate) fn stderr(notice: Notice) -> Outlet {
        let destination = io::stderr().as_fd().try_clone_to_owned().ok();
        Outlet::new(destination.map(File::from), notice)
    }

    /// An outlet to `destination`; none writes directly to std's stderr.
    fn new(destination: Option<File>, notice: Notice) -> Outlet {
        let writer = match destination {
            Some(file) => Writer::NotStarted(file),
            None => Writer::Direct(None),
        };
        Outlet {
            shared: Arc::new(Shared {
                queue: Mutex::new(Queue::default()),
                changed: Condvar::new(),
            }),
            writer,
            notice,
            probe: None,
        }
    }

    /// Queue `line` (whole lines, so that two are never interleaved); never blocks.
    pub(crate) fn send(&mut self, line: Vec<u8>) {
        match std::mem::replace(&mut self.writer, Writer::Thread) {
            Writer::Thread => self.queue(line),
            Writer::NotStarted(destination) => self.start(destination, line),
            Writer::Direct(mut destination) => {
                let _ = match &mut destination {
                    Some(file) => file.write_all(&line),
                    None => io::stderr().write_all(&line),
                };
                self.writer = Writer::Direct(destination);
            }
        }
    }

    fn queue(&self, line: Vec<u8>) {
        let mut queue = lock(&self.shared);
        if queue.bytes + line.len() > QUEUE_BOUND {
            queue.dropped += 1;
            return;
        }
        queue.bytes += line.len();
        queue.lines.push_back(line);
        self.shared.changed.notify_all();
    }

    /// Start the writer thread with `first` queued; if no thread can be had, write here.
    fn start(&mut self, mut destination: File, first: Vec<u8>) {
        self.queue(first);
        let started = destination.try_clone().and_then(|mut theirs| {
            let shared = Arc::clone(&self.shared);
            let notice = self.notice;
            std::thread::Builder::new().spawn(move || write_queued(&shared, &mut theirs, notice))
        });
        if started.is_ok() {
            self.probe = Some(destination);
            return;
        }
        let lines = {
            let mut queue = lock(&self.shared);
            queue.bytes = 0;
            std::mem::take(&mut queue.lines)
        };
        for line in lines {
            let _ = destination.write_all(&line);
        }
        self.writer = Writer::Direct(Some(destination));
    }

    /// Wait until everything queued is written. A signal that ends the run ends the wait and is
    /// returned, unless a signal has ended the run already (`interrupted`); then, as past
    /// `deadline`, a reader that stopped reading ends it too.
    pub(crate) fn finish(
        &self,
        watch: &SignalWatch,
        deadline: Option<Instant>,
        interrupted: bool,
    ) -> Option<Signal> {
        lock(&self.shared).doorbell = Some(watch.doorbell());
        loop {
            let now = Instant::now();
            let over = interrupted || deadline.is_some_and(|deadline| now >= deadline);
            let queue = lock(&self.shared);
            if queue.is_empty() || (over && queue.is_stalled() && !self.has_room()) {
                return None;
            }
            drop(queue);
            // Past the limit, look again as soon as the reader could count as stalled.
            let until = match over {
                true => Some(now + STALLED / 4),
                false => deadline,
            };
            match watch.wait_until(until) {
                Wake::Stop(signal) if !interrupted => return Some(signal),
                Wake::Changed => {
                    reaper::reap_ended(None, false);
                }
                Wake::Stop(_) | Wake::Timeout | Wake::PassOn(_) => {}
            }
        }
    }
}

impl Outlet {
    /// Whether the writer's destination would take bytes now (a pipe or terminal with room, any
    /// regular file); when it cannot tell, no.
    fn has_room(&self) -> bool {
        let Some(probe) = &self.probe else {
            return false;
        };
        let mut fds = [PollFd::new(probe.as_fd(), PollFlags::POLLOUT)];
        matches!(poll(&mut fds, PollTimeout::ZERO), Ok(1))
            && fds[0]
                .revents()
                .is_some_and(|events| events.contains(PollFlags::POLLOUT))
    }
}

/// The writer thread: write each queued line in order, and the notice of dropped ones.
fn write_queued(shared: &Shared, destination: &mut File, notice: Notice) {
    let mut queue = lock(shared);
    loop {
        queue.busy = None;
        let line = match (queue.lines.pop_front(), queue.dropped) {
            (Some(line), _) => {
                queue.bytes -= line.len();
                line
            }
            (None, 0) => {
                if let Some(doorbell) = queue.doorbell {
                    doorbell.ring();
                }
                queue = shared
                    .changed
                    .wait(queue)
                    .unwrap_or_else(PoisonError::into_inner);
                continue;
            }
            (None, dropped) => {
                queue.dropped = 0;
                notice(dropped)
            }
        };
        queue.busy = Some(Instant::now());
        drop(queue);
        // A closed stderr is not worth a word: there is nobody to tell.
        let _ = destination.write_all(&line);
        queue = lock(shared);
        queue.busy = None;
        shared.changed.notify_all();
    }
}

fn lock(shared: &Shared) -> MutexGuard<'_, Queue> {
    shared.queue.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Write for Outlet {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        self.send(bytes.to_vec());
        Ok(bytes.len())
    }

    /// Wait until the writer has written every line queued, so that what reaches the same
    /// destination another way (an attempt's output) comes after them; never longer than
    /// [`FLUSH_MOST`], nor once the reader has held a line for [`STALLED`]. Signals wait meanwhile
    /// (they are blocked, not lost), for that short while at most.
    fn flush(&mut self) -> io::Result<()> {
        if !matches!(self.writer, Writer::Thread) {
            return Ok(());
        }
        let give_up = Instant::now() + FLUSH_MOST;
        let mut queue = lock(&self.shared);
        while !queue.lines.is_empty() || queue.busy.is_some() {
            let now = Instant::now();
            if now >= give_up || queue.is_stalled() {
                break;
            }
            let wait = (give_up - now).min(STALLED);
            queue = self
                .shared
                .changed
                .wait_timeout(queue, wait)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    #[test]
    fn a_reader_that_stops_costs_bounded_memory_and_is_told_what_it_missed() {
        let (mut reader, writer) = std::io::pipe().unwrap();
        let notice: Notice = |dropped| format!("{dropped} dropped\n").into_bytes();
        let mut outlet = Outlet::new(Some(File::from(std::os::fd::OwnedFd::from(writer))), notice);
        let line = vec![b'x'; 1023];
        let lines = 3 * QUEUE_BOUND / 1024;
        for _ in 0..lines {
            let mut line = line.clone();
            line.push(b'\n');
            outlet.send(line);
        }
        assert!(
            lock(&outlet.shared).bytes <= QUEUE_BOUND,
            "bounded while nobody reads"
        );
        drop(outlet);
        let mut text = String::new();
        let mut chunk = [0; 65536];
        while !text.ends_with(" dropped\n") {
            let count = reader.read(&mut chunk).unwrap();
            text.push_str(std::str::from_utf8(&chunk[..count]).unwrap());
        }
        let written = text.lines().filter(|line| line.len() == 1023).count();
        let dropped: usize = text
            .lines()
            .last()
            .unwrap()
            .split(' ')
            .next()
            .unwrap()
            .parse()
            .unwrap();
        assert_eq!(written + dropped, lines, "every line written or counted");
        assert!(dropped > 0);
    }
}
