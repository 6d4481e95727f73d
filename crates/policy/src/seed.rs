//! Where the jitter's randomness comes from: a number, the host and the command, or the OS
//! (whose name and randomness the caller reads, and hands in).
//!
//! `--seed host` hashes the host name and the command line, so the same job on the same host
//! draws the same waits on every run (a problem recurs in a pattern one can recognise), while
//! other hosts and other jobs draw differently. The hash is FNV-1a with a SplitMix64 finaliser:
//! both are fixed, published algorithms, so the seed does not change with the Rust release.

use std::ffi::OsString;
use std::fmt;
use std::os::unix::ffi::OsStrExt;
use std::str::FromStr;

use crate::error::Error;

/// The `--seed` value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Seed {
    /// This number.
    Number(u64),
    /// Derived from the host name and the command line.
    Host,
}

impl Seed {
    /// The number to seed the generator with, for a run of `command` on the host named by
    /// `host`; `None` takes the number `random` draws.
    pub fn resolve(
        seed: Option<Seed>,
        command: &[OsString],
        host: impl FnOnce() -> Vec<u8>,
        random: impl FnOnce() -> u64,
    ) -> u64 {
        match seed {
            Some(Seed::Number(number)) => number,
            Some(Seed::Host) => host_seed(&host(), command),
            None => random(),
        }
    }
}

impl FromStr for Seed {
    type Err = Error;

    fn from_str(text: &str) -> Result<Self, Error> {
        match text {
            "host" => Ok(Seed::Host),
            _ if text.bytes().all(|b| b.is_ascii_digit()) => text
                .parse()
                .map(Seed::Number)
                .map_err(|_| Error::SeedTooLarge),
            _ => Err(Error::NotASeed),
        }
    }
}

impl fmt::Display for Seed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Seed::Number(number) => write!(f, "{number}"),
            Seed::Host => f.write_str("host"),
        }
    }
}

/// The seed for `command` on the host `host`: the [`words_hash`] of the host and each word.
fn host_seed(host: &[u8], command: &[OsString]) -> u64 {
    words_hash(std::iter::once(host).chain(command.iter().map(|word| word.as_bytes())))
}

/// A hash of `words` that no Rust release changes: FNV-1a over each word followed by a zero
/// byte (so word boundaries count), finished with SplitMix64.
pub fn words_hash<'a>(words: impl Iterator<Item = &'a [u8]>) -> u64 {
    const OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
    const PRIME: u64 = 0x0000_0100_0000_01b3;
    let hash = words.fold(OFFSET, |hash, word| {
        word.iter().chain(&[0]).fold(hash, |hash, &byte| {
            (hash ^ u64::from(byte)).wrapping_mul(PRIME)
        })
    });
    split_mix(hash)
}

/// SplitMix64's finaliser: spreads every input bit over the whole output.
pub fn split_mix(mut value: u64) -> u64 {
    value = value.wrapping_add(0x9e37_79b9_7f4a_7c15);
    value = (value ^ (value >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    value = (value ^ (value >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    value ^ (value >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(list: &[&str]) -> Vec<OsString> {
        list.iter().map(OsString::from).collect()
    }

    #[test]
    fn the_same_job_on_the_same_host_gets_the_same_seed() {
        let job = words(&["curl", "-fsS", "https://example.com"]);
        assert_eq!(host_seed(b"web-1", &job), host_seed(b"web-1", &job));
        assert_ne!(host_seed(b"web-1", &job), host_seed(b"web-2", &job));
        assert_ne!(
            host_seed(b"web-1", &job),
            host_seed(b"web-1", &words(&["curl", "-fsS"]))
        );
    }

    #[test]
    fn word_boundaries_count() {
        assert_ne!(
            host_seed(b"h", &words(&["ab", "c"])),
            host_seed(b"h", &words(&["a", "bc"]))
        );
    }

    #[test]
    fn parses_numbers_and_host() {
        assert_eq!("42".parse(), Ok(Seed::Number(42)));
        assert_eq!("host".parse(), Ok(Seed::Host));
        for bad in ["-4", "x", "", "18446744073709551616", "Host"] {
            assert!(bad.parse::<Seed>().is_err(), "{bad}");
        }
    }
}
