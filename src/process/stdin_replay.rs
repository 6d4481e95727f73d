//! `--replay-stdin`: read the tool's stdin to its end once, and give every attempt the same bytes.
//!
//! The input is held in a [`spill`] buffer. Input held in memory is written to each
//! attempt through a pipe by a short-lived thread; spilled input is given to each attempt as the
//! temporary file itself, read from the start. Without `--replay-stdin` none of this runs and
//! stdin is never touched.

use std::fs::File;
use std::io::{self, Read, Seek, Write};
use std::process::{ChildStdin, Stdio};
use std::sync::Arc;

use crate::spill::{self, Held, HoldError};

/// The whole input, held for replay.
#[derive(Debug)]
pub(crate) enum HeldInput {
    /// Input short enough to keep in memory.
    Memory(Arc<[u8]>),
    /// Longer input, in an unnamed temporary file.
    Spilled(File),
}

impl HeldInput {
    /// Read `input` to its end.
    pub(crate) fn read_all(input: impl Read) -> Result<Self, HoldError> {
        Ok(match spill::hold_all(input)? {
            Held::Memory(bytes) => HeldInput::Memory(bytes.into()),
            Held::Spilled(file) => HeldInput::Spilled(file),
        })
    }

    /// The stdin to give the next attempt.
    pub(crate) fn stdin(&self) -> io::Result<Stdio> {
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
    pub(crate) fn feed(&self, pipe: Option<ChildStdin>) -> io::Result<()> {
        if let (HeldInput::Memory(bytes), Some(mut pipe)) = (self, pipe) {
            let bytes = Arc::clone(bytes);
            std::thread::Builder::new().spawn(move || {
                // An attempt that stops reading early is its own business.
                let _ = pipe.write_all(&bytes);
            })?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_attempt_reads_spilled_input_from_the_start() {
        let input: Vec<u8> = (0..spill::MEMORY_BOUND + 5000)
            .map(|i| (i % 251) as u8)
            .collect();
        let held = HeldInput::read_all(&input[..]).unwrap();
        let HeldInput::Spilled(file) = &held else {
            panic!("kept in memory")
        };
        for _ in 0..2 {
            held.stdin().unwrap();
            let mut copy = Vec::new();
            file.try_clone().unwrap().read_to_end(&mut copy).unwrap();
            assert_eq!(copy, input);
        }
    }
}
