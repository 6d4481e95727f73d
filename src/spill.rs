//! Bytes held in memory up to a bound, and in an unnamed temporary file beyond it.
//!
//! What `--replay-stdin` and `--hold` keep: megabytes cost memory, gigabytes cost disk, and
//! the temporary file has no name, so it vanishes with the tool whatever way it ends. Nothing
//! held is dropped before it is safe elsewhere, and an error of the temporary file names the
//! directory it was made in, so that a missing or full TMPDIR is seen for what it is.

use std::fmt;
use std::fs::File;
use std::io::{self, Read, Seek, Write};

/// The most bytes held in memory; more go to the temporary file.
pub(crate) const MEMORY_BOUND: usize = 1 << 20;

/// Bytes read at a time by [`hold_all`].
const CHUNK: usize = 64 * 1024;

/// A growing sequence of bytes, in memory or spilled to a file.
#[derive(Debug, Default)]
pub(crate) struct SpillBuffer {
    memory: Vec<u8>,
    file: Option<File>,
}

/// Where the bytes ended up.
#[derive(Debug)]
pub(crate) enum Held {
    /// All of them fit in memory.
    Memory(Vec<u8>),
    /// They are in this file, which is rewound to its start.
    Spilled(File),
}

/// Why [`hold_all`] or [`SpillBuffer::drain_into`] failed.
#[derive(Debug)]
pub(crate) enum HoldError {
    /// Reading the input (or writing the output) failed.
    Transfer(io::Error),
    /// The temporary file failed; the message names its directory.
    Spill(io::Error),
}

impl fmt::Display for HoldError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HoldError::Transfer(err) | HoldError::Spill(err) => write!(f, "{err}"),
        }
    }
}

impl SpillBuffer {
    /// Whether nothing was written.
    pub(crate) fn is_empty(&self) -> bool {
        self.memory.is_empty() && self.file.is_none()
    }

    /// The bytes written so far, rewound for reading.
    pub(crate) fn finish(self) -> io::Result<Held> {
        match self.file {
            None => Ok(Held::Memory(self.memory)),
            Some(mut file) => {
                file.rewind().map_err(in_temporary_file)?;
                Ok(Held::Spilled(file))
            }
        }
    }

    /// Copy everything written so far into `out`.
    pub(crate) fn drain_into(self, out: &mut impl Write) -> Result<(), HoldError> {
        match self.finish().map_err(HoldError::Spill)? {
            Held::Memory(bytes) => out.write_all(&bytes).map_err(HoldError::Transfer),
            Held::Spilled(mut file) => {
                let mut chunk = vec![0; CHUNK];
                loop {
                    let count = match file.read(&mut chunk) {
                        Ok(0) => return Ok(()),
                        Ok(count) => count,
                        Err(err) if err.kind() == io::ErrorKind::Interrupted => continue,
                        Err(err) => return Err(HoldError::Spill(in_temporary_file(err))),
                    };
                    out.write_all(&chunk[..count])
                        .map_err(HoldError::Transfer)?;
                }
            }
        }
    }
}

impl Write for SpillBuffer {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        if let Some(file) = &mut self.file {
            return file.write(bytes).map_err(in_temporary_file);
        }
        if self.memory.len() + bytes.len() <= MEMORY_BOUND {
            self.memory.extend_from_slice(bytes);
            return Ok(bytes.len());
        }
        // The memory is given up only once the file holds it.
        let mut file = tempfile::tempfile().map_err(in_temporary_file)?;
        file.write_all(&self.memory)
            .and_then(|()| file.write_all(bytes))
            .map_err(in_temporary_file)?;
        self.memory = Vec::new();
        self.file = Some(file);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.file.as_mut().map_or(Ok(()), File::flush)
    }
}

/// `err`, saying that it concerns a temporary file, and in which directory.
fn in_temporary_file(err: io::Error) -> io::Error {
    let dir = std::env::temp_dir();
    let source = match std::env::var_os("TMPDIR") {
        Some(_) => "TMPDIR",
        None => "the default; set TMPDIR to use another",
    };
    io::Error::new(
        err.kind(),
        format!("a temporary file in {} ({source}): {err}", dir.display()),
    )
}

/// Read `input` to its end into a [`SpillBuffer`].
pub(crate) fn hold_all(mut input: impl Read) -> Result<Held, HoldError> {
    let mut buffer = SpillBuffer::default();
    let mut chunk = vec![0; CHUNK];
    loop {
        let count = match input.read(&mut chunk) {
            Ok(0) => break,
            Ok(count) => count,
            Err(err) if err.kind() == io::ErrorKind::Interrupted => continue,
            Err(err) => return Err(HoldError::Transfer(err)),
        };
        buffer
            .write_all(&chunk[..count])
            .map_err(HoldError::Spill)?;
    }
    buffer.finish().map_err(HoldError::Spill)
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
