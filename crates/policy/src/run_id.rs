//! A run's identity, `RETRY_RUN_ID`: a random UUID (version 4), written as RFC 9562's canonical
//! lowercase text (`8-4-4-4-12` hexadecimal digits). Every attempt and hook gets it, the events
//! and the reports carry it, and a job's overlap lease is held in its name; a command can send
//! it as an idempotency key, the same for every attempt of the run. A run inside another's
//! attempt keeps the outer run's, so that the whole nest is one run to a server; an outer value
//! that is not a canonical version 4 UUID is not trusted, and a new one is made.

use std::fmt;

/// A run's identity.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RunId([u8; 16]);

impl RunId {
    /// The identity made of 16 random bytes, its version and variant bits set.
    pub fn from_random(mut bytes: [u8; 16]) -> RunId {
        bytes[6] = (bytes[6] & 0x0f) | 0x40;
        bytes[8] = (bytes[8] & 0x3f) | 0x80;
        RunId(bytes)
    }

    /// The identity `text` writes, if it is a version 4 UUID in canonical lowercase text.
    pub fn parse(text: &str) -> Option<RunId> {
        let text = text.as_bytes();
        let hyphens = [8, 13, 18, 23];
        if text.len() != 36 || hyphens.iter().any(|&at| text[at] != b'-') {
            return None;
        }
        let digits = text
            .iter()
            .enumerate()
            .filter(|(at, _)| !hyphens.contains(at))
            .map(|(_, &byte)| byte);
        let bytes: [u8; 16] = crate::encoding::unhex(digits)?;
        let id = RunId::from_random(bytes);
        (id.0 == bytes).then_some(id)
    }
}

/// As its canonical text.
impl serde::Serialize for RunId {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

/// The canonical text: `xxxxxxxx-xxxx-4xxx-yxxx-xxxxxxxxxxxx`, lowercase; written in place with
/// the workspace's hexadecimal digits rather than the formatting machinery, which costs a run's
/// start a hundred times more.
impl fmt::Display for RunId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut text = [b'-'; 36];
        let mut at = 0;
        for (index, &byte) in self.0.iter().enumerate() {
            at += usize::from(matches!(index, 4 | 6 | 8 | 10));
            text[at..at + 2].copy_from_slice(&crate::encoding::hex_pair(byte));
            at += 2;
        }
        f.write_str(std::str::from_utf8(&text).map_err(|_| fmt::Error)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_identity_is_a_version_4_uuid_in_canonical_text_and_reads_back() {
        let id = RunId::from_random([0xff; 16]);
        assert_eq!(id.to_string(), "ffffffff-ffff-4fff-bfff-ffffffffffff");
        let id = RunId::from_random([0; 16]);
        assert_eq!(id.to_string(), "00000000-0000-4000-8000-000000000000");
        for bytes in [[0x5a; 16], [0x01; 16], [0xc3; 16]] {
            let id = RunId::from_random(bytes);
            assert_eq!(RunId::parse(&id.to_string()), Some(id));
        }
    }

    #[test]
    fn only_a_canonical_lowercase_version_4_uuid_is_trusted() {
        for text in [
            "",
            "6ba7b810-9dad-11d1-80b4-00c04fd430c8", // version 1
            "6BA7B810-9DAD-41D1-80B4-00C04FD430C8", // uppercase
            "6ba7b8109dad41d180b400c04fd430c8",     // no hyphens
            "6ba7b810-9dad-41d1-c0b4-00c04fd430c8", // another variant
            "6ba7b810-9dad-41d1-80b4-00c04fd430c8\n", // a line end
            "{6ba7b810-9dad-41d1-80b4-00c04fd430c8}",
            "6ba7b810-9dad-41d1-80b4-00c04fd430cg",
        ] {
            assert_eq!(RunId::parse(text), None, "{text:?}");
        }
        let good = "6ba7b810-9dad-41d1-80b4-00c04fd430c8";
        assert_eq!(
            RunId::parse(good).map(|id| id.to_string()).as_deref(),
            Some(good)
        );
    }
}
