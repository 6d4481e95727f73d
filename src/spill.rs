//! Bytes held in memory up to a bound, and in an unnamed temporary file beyond it.
//!
//! What `--replay-stdin` and `--hold-output` keep: megabytes cost memory, gigabytes cost disk, and
//! the temporary file has no name, so it vanishes with the tool whatever way it ends.

use std::fs::File;
use std::io::{self, Read, Seek, Write};

/// The most bytes held in memory; more go to the temporary file.
pub const MEMORY_BOUND: usize = 1 << 20;

/// A growing sequence of bytes, in memory or spilled to a file.
#[derive(Debug, Default)]
pub struct SpillBuffer {
    memory: Vec<u8>,
    file: Option<File>,
}

/// Where the bytes ended up.
#[derive(Debug)]
pub enum Held {
    /// All of them fit in memory.
    Memory(Vec<u8>),
    /// They are in this file, which is rewound to its start.
    Spilled(File),
}

impl SpillBuffer {
    /// The bytes written so far, rewound for reading.
    pub fn finish(self) -> io::Result<Held> {
        match self.file {
            None => Ok(Held::Memory(self.memory)),
            Some(mut file) => {
                file.rewind()?;
                Ok(Held::Spilled(file))
            }
        }
    }

    /// Copy everything written so far into `out`, leaving the buffer empty.
    pub fn drain_into(self, out: &mut impl Write) -> io::Result<()> {
        match self.finish()? {
            Held::Memory(bytes) => out.write_all(&bytes),
            Held::Spilled(mut file) => io::copy(&mut file, out).map(drop),
        }
    }
}

impl Write for SpillBuffer {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        if let Some(file) = &mut self.file {
            return file.write(bytes);
        }
        if self.memory.len() + bytes.len() <= MEMORY_BOUND {
            self.memory.extend_from_slice(bytes);
            return Ok(bytes.len());
        }
        let mut file = tempfile::tempfile()?;
        file.write_all(&std::mem::take(&mut self.memory))?;
        file.write_all(bytes)?;
        self.file = Some(file);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.file.as_mut().map_or(Ok(()), File::flush)
    }
}

/// Read `input` to its end into a [`SpillBuffer`].
pub fn hold_all(mut input: impl Read) -> io::Result<Held> {
    let mut buffer = SpillBuffer::default();
    io::copy(&mut input, &mut buffer)?;
    buffer.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_amounts_stay_in_memory() {
        let held = hold_all(&b"abc"[..]).unwrap();
        assert!(matches!(held, Held::Memory(ref bytes) if bytes == b"abc"));
    }

    #[test]
    fn large_amounts_spill_whole_and_in_order() {
        let input: Vec<u8> = (0..MEMORY_BOUND + 5_000).map(|i| (i % 251) as u8).collect();
        let Held::Spilled(mut file) = hold_all(&input[..]).unwrap() else {
            panic!("kept in memory")
        };
        let mut copy = Vec::new();
        file.read_to_end(&mut copy).unwrap();
        assert_eq!(copy, input);
    }

    #[test]
    fn drains_what_was_written() {
        let mut buffer = SpillBuffer::default();
        buffer.write_all(b"one ").unwrap();
        buffer.write_all(&vec![b'x'; MEMORY_BOUND]).unwrap();
        let mut out = Vec::new();
        buffer.drain_into(&mut out).unwrap();
        assert_eq!(out.len(), 4 + MEMORY_BOUND);
        assert!(out.starts_with(b"one x"));
    }
}
