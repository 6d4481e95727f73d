//! `--replay-stdin`: read the tool's stdin to its end once, and give every attempt the same bytes.
//!
//! Up to [`MEMORY_BOUND`] bytes are held in memory and written to each attempt through a pipe by
//! a short-lived thread; anything longer is spilled to an unnamed temporary file (it vanishes
//! with the tool), which each attempt reads from the start, so gigabytes of input cost no more
//! memory than megabytes. Without `--replay-stdin` none of this runs and stdin is never touched.

use std::fs::File;
use std::io::{self, Read, Seek, Write};
use std::process::{ChildStdin, Stdio};
use std::sync::Arc;

/// The most input held in memory; more is spilled to a temporary file.
pub const MEMORY_BOUND: usize = 1 << 20;

/// The whole input, held for replay.
#[derive(Debug)]
pub enum HeldInput {
    /// Input short enough to keep in memory.
    Memory(Arc<[u8]>),
    /// Longer input, in an unnamed temporary file.
    Spilled(File),
}

impl HeldInput {
    /// Read `input` to its end.
    pub fn read_all(mut input: impl Read) -> io::Result<Self> {
        let mut head = Vec::new();
        input
            .by_ref()
            .take(MEMORY_BOUND as u64 + 1)
            .read_to_end(&mut head)?;
        if head.len() <= MEMORY_BOUND {
            return Ok(HeldInput::Memory(head.into()));
        }
        let mut file = tempfile::tempfile()?;
        file.write_all(&head)?;
        drop(head);
        io::copy(&mut input, &mut file)?;
        Ok(HeldInput::Spilled(file))
    }

    /// The stdin to give the next attempt.
    pub fn stdin(&self) -> io::Result<Stdio> {
        match self {
            HeldInput::Memory(_) => Ok(Stdio::piped()),
            HeldInput::Spilled(file) => {
                let mut file = file.try_clone()?;
                file.rewind()?;
                Ok(Stdio::from(file))
            }
        }
    }

    /// Start writing held bytes into an attempt's stdin pipe, if the input lives in memory. The
    /// writer ends when all is written or the attempt closes its end.
    pub fn feed(&self, pipe: Option<ChildStdin>) {
        if let (HeldInput::Memory(bytes), Some(mut pipe)) = (self, pipe) {
            let bytes = Arc::clone(bytes);
            std::thread::spawn(move || {
                // An attempt that stops reading early is its own business.
                let _ = pipe.write_all(&bytes);
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_input_stays_in_memory() {
        let held = HeldInput::read_all(&b"abc"[..]).unwrap();
        assert!(matches!(held, HeldInput::Memory(ref bytes) if &bytes[..] == b"abc"));
    }

    #[test]
    fn long_input_is_spilled_whole() {
        let input: Vec<u8> = (0..MEMORY_BOUND + 5000).map(|i| (i % 251) as u8).collect();
        let held = HeldInput::read_all(&input[..]).unwrap();
        let HeldInput::Spilled(file) = &held else {
            panic!("kept in memory")
        };
        for _ in 0..2 {
            held.stdin().unwrap();
            let mut copy = Vec::new();
            file.try_clone().unwrap().read_to_end(&mut copy).unwrap();
            assert_eq!(copy, input);
            file.try_clone().unwrap().rewind().unwrap();
        }
    }
}
