//! How the file store knows its own records: by their signature, the word every record it
//! writes starts with (`retry-budget-`, `retry-history-`), and by nothing else. An empty file is
//! one the store just created; anything else (a disk image, zeros, a file of a record's size,
//! a `Makefile`) is somebody else's, however it came to have the name, and is never written:
//! the caller says so once and goes on without it. Only a record that carries the signature
//! whole and does not parse is the store's own damaged record, which it may start over.

/// What the start of a state file is, to the store that reads it.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Recognised {
    /// Nothing: a file the store created and has not written yet.
    Empty,
    /// The store's own record: it starts with the signature.
    Own,
    /// Somebody else's file: never to be written.
    Foreign,
}

/// What `start` (the first bytes of a file) is to a store whose records begin with `signature`.
pub(crate) fn recognise(start: &[u8], signature: &str) -> Recognised {
    if start.is_empty() {
        Recognised::Empty
    } else if start.starts_with(signature.as_bytes()) {
        Recognised::Own
    } else {
        Recognised::Foreign
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_signature_makes_a_record_the_stores() {
        let signature = "retry-budget-";
        assert_eq!(recognise(b"", signature), Recognised::Empty);
        assert_eq!(
            recognise(b"retry-budget-v9 anything", signature),
            Recognised::Own
        );
        assert_eq!(recognise(b"retry-budget-", signature), Recognised::Own);
        for foreign in [
            &[0u8; 512][..],
            &[0u8; 256],
            &[b' '; 512],
            &[b'a'; 512],
            b"\0retry-budget-v4",
            b"retry-budge",
            b"r",
            b"QFI\xfb\0\0\0\x03",
            b"\x7fELF\x02\x01\x01",
            b"all:\n\tcc -o app app.c\n",
            b" retry-budget-v4",
        ] {
            assert_eq!(
                recognise(foreign, signature),
                Recognised::Foreign,
                "{:?}",
                String::from_utf8_lossy(&foreign[..foreign.len().min(20)])
            );
        }
    }
}
