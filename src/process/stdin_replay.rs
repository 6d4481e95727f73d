//! `--replay-stdin`: read the tool's stdin to its end once, and give every attempt the same bytes.
//!
//! The input is held in a [`spill`] buffer: in memory up to a bound, in an unnamed temporary file
//! beyond it. Every attempt gets a pipe of its own, which a short-lived thread fills from the
//! held bytes, reading the file by offset (`pread`), never through a shared file position: so a
//! process an earlier attempt left behind that still reads its stdin cannot take bytes from a
//! later attempt, and no attempt can write into the input (a pipe's read end cannot be written).
//! Without `--replay-stdin` none of this runs and stdin is never touched.

use std::fs::File;
use std::io::{self, Read, Write};
use std::os::unix::fs::FileExt;
use std::sync::Arc;

use crate::spill::{self, Held, HoldError};

/// Bytes read from the held file at a time.
const CHUNK: usize = 64 * 1024;

/// The whole input, held for replay.
#[derive(Debug, Clone)]
pub(crate) enum HeldInput {
    /// Input short enough to keep in memory.
    Memory(Arc<[u8]>),
    /// Longer input, in an unnamed temporary file.
    Spilled(Arc<File>),
}

impl HeldInput {
    /// Read `input` to its end.
    pub(crate) fn read_all(input: impl Read) -> Result<Self, HoldError> {
        Ok(match spill::hold_all(input)? {
            Held::Memory(bytes) => HeldInput::Memory(bytes.into()),
            Held::Spilled(file) => HeldInput::Spilled(Arc::new(file)),
        })
    }

    /// Start writing the held bytes into an attempt's stdin pipe (each attempt gets a pipe of
    /// its own). The writer ends when all is written or the attempt closes its end.
    pub(crate) fn feed(&self, pipe: Option<File>) -> io::Result<()> {
        let Some(mut pipe) = pipe else {
            return Ok(());
        };
        let input = self.clone();
        std::thread::Builder::new().spawn(move || {
            // An attempt that stops reading early is its own business.
            let _ = input.write_into(&mut pipe);
        })?;
        Ok(())
    }

    /// Write every held byte into `out`, from the start.
    fn write_into(&self, out: &mut impl Write) -> io::Result<()> {
        match self {
            HeldInput::Memory(bytes) => out.write_all(bytes),
            HeldInput::Spilled(file) => {
                let mut chunk = vec![0; CHUNK];
                let mut offset = 0;
                loop {
                    let count = match file.read_at(&mut chunk, offset) {
                        Ok(0) => return Ok(()),
                        Ok(count) => count,
                        Err(err) if err.kind() == io::ErrorKind::Interrupted => continue,
                        Err(err) => return Err(err),
                    };
                    out.write_all(&chunk[..count])?;
                    offset += count as u64;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_attempt_gets_the_whole_input_from_the_start() {
        let input: Vec<u8> = (0..spill::MEMORY_BOUND + 5000)
            .map(|i| (i % 251) as u8)
            .collect();
        for held in [
            HeldInput::read_all(&input[..]).unwrap(),
            HeldInput::read_all(&input[..100]).unwrap(),
        ] {
            let expected = match &held {
                HeldInput::Spilled(_) => &input[..],
                HeldInput::Memory(_) => &input[..100],
            };
            for _ in 0..2 {
                let mut copy = Vec::new();
                held.write_into(&mut copy).unwrap();
                assert_eq!(copy, expected);
            }
        }
    }
}
