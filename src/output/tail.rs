//! The end of each attempt's output, kept for a report that shows it (`--report junit:`): the
//! last [`TAIL_BYTES`] of each stream, and how many bytes came before them. Bounded however
//! much the command writes; it is the start of a long output that is dropped, since the end is
//! where a failure shows. The copy threads fill an attempt's tails; the runner hands the latest
//! attempt's to the report, and to the monitor's outcome ping, through [`KeptTails`].

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, PoisonError};

/// The most bytes kept of each stream of an attempt.
pub(crate) const TAIL_BYTES: usize = 4096;

/// The last bytes of one stream.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Tail {
    bytes: VecDeque<u8>,
    /// How many bytes came before those kept.
    dropped: u64,
}

impl Tail {
    /// Take the next bytes the stream gave.
    pub(crate) fn push(&mut self, bytes: &[u8]) {
        let kept = &bytes[bytes.len().saturating_sub(TAIL_BYTES)..];
        self.dropped += (bytes.len() - kept.len()) as u64;
        self.bytes.extend(kept);
        let excess = self.bytes.len().saturating_sub(TAIL_BYTES);
        self.bytes.drain(..excess);
        self.dropped += excess as u64;
    }

    /// The kept bytes as text (invalid UTF-8 replaced), after a line that says how many came
    /// before them, if any did.
    pub(crate) fn text(&self) -> String {
        let (front, back) = self.bytes.as_slices();
        let kept = String::from_utf8_lossy(&[front, back].concat()).into_owned();
        match self.dropped {
            0 => kept,
            dropped => format!("[{dropped} bytes before these not kept]\n{kept}"),
        }
    }

    /// Whether the stream gave nothing.
    pub(crate) fn is_empty(&self) -> bool {
        self.bytes.is_empty() && self.dropped == 0
    }
}

/// Both streams' tails of one attempt.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Tails {
    pub(crate) stdout: Tail,
    pub(crate) stderr: Tail,
}

/// The latest attempt's tails, shared by the runner that fills them, the report that takes
/// them when the attempt's end is reported, and the monitor's ping that reads them at the end.
#[derive(Clone, Debug, Default)]
pub(crate) struct KeptTails(Arc<Mutex<Latest>>);

/// The latest attempt's tails, and whether the report took them.
#[derive(Debug, Default)]
struct Latest {
    tails: Option<Tails>,
    taken: bool,
}

impl KeptTails {
    /// Keep `tails` as the latest attempt's.
    pub(crate) fn keep(&self, tails: Tails) {
        *self.0.lock().unwrap_or_else(PoisonError::into_inner) = Latest {
            tails: Some(tails),
            taken: false,
        };
    }

    /// The latest attempt's tails, if the report has not taken them yet: an attempt that could
    /// not start kept none, and takes none of the one before.
    pub(crate) fn take(&self) -> Option<Tails> {
        let mut latest = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        match std::mem::replace(&mut latest.taken, true) {
            true => None,
            false => latest.tails.clone(),
        }
    }

    /// The last tails kept, taken or not.
    pub(crate) fn latest(&self) -> Option<Tails> {
        let latest = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        latest.tails.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_last_bytes_and_counts_the_rest() {
        let mut tail = Tail::default();
        tail.push(b"first\n");
        assert_eq!(tail.text(), "first\n");
        tail.push(&vec![b'x'; TAIL_BYTES - 2]);
        tail.push(b"end\n");
        let text = tail.text();
        assert!(
            text.starts_with("[8 bytes before these not kept]\n"),
            "{text:.60}"
        );
        assert!(text.ends_with("xxend\n"));
        assert_eq!(
            text.len(),
            "[8 bytes before these not kept]\n".len() + TAIL_BYTES
        );
        let mut big = Tail::default();
        big.push(&vec![b'y'; 3 * TAIL_BYTES]);
        assert!(
            big.text()
                .starts_with(&format!("[{} bytes", 2 * TAIL_BYTES))
        );
    }

    #[test]
    fn invalid_utf8_is_replaced() {
        let mut tail = Tail::default();
        tail.push(b"ok \xff\n");
        assert_eq!(tail.text(), "ok \u{fffd}\n");
        assert!(Tail::default().is_empty());
    }
}
