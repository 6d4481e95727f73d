//! One encoding of each thing the tool writes or reads as text: lowercase hexadecimal (a run's
//! identity, a trace's ids) and percent-escapes (RFC 3986: a URL's query, a store's address, an
//! exporter's headers). Each is written once, here, and every reader and writer of the
//! workspace uses it; hand-written, for each is a few lines, and a run's start pays for every
//! crate it links.

/// The lowercase hexadecimal digits.
const HEX: &[u8; 16] = b"0123456789abcdef";

/// The two lowercase hexadecimal digits of `byte`.
pub fn hex_pair(byte: u8) -> [u8; 2] {
    [HEX[usize::from(byte >> 4)], HEX[usize::from(byte & 0x0f)]]
}

/// `bytes` in lowercase hexadecimal, appended to `text`.
pub fn hex_into(bytes: &[u8], text: &mut String) {
    for &byte in bytes {
        text.extend(hex_pair(byte).map(char::from));
    }
}

/// `bytes` in lowercase hexadecimal.
pub fn hex(bytes: &[u8]) -> String {
    let mut text = String::with_capacity(bytes.len() * 2);
    hex_into(bytes, &mut text);
    text
}

/// The value of one hexadecimal digit, lowercase only when `lowercase_only`.
fn digit(byte: u8, lowercase_only: bool) -> Option<u8> {
    match byte {
        b'0'..=b'9' => Some(byte - b'0'),
        b'a'..=b'f' => Some(byte - b'a' + 10),
        b'A'..=b'F' if !lowercase_only => Some(byte - b'A' + 10),
        _ => None,
    }
}

/// The bytes the lowercase hexadecimal digits `digits` write, if they write exactly `N`.
pub fn unhex<const N: usize>(digits: impl IntoIterator<Item = u8>) -> Option<[u8; N]> {
    let mut digits = digits.into_iter();
    let mut bytes = [0u8; N];
    for byte in &mut bytes {
        *byte = digit(digits.next()?, true)? << 4 | digit(digits.next()?, true)?;
    }
    digits.next().is_none().then_some(bytes)
}

/// `value` with every byte but the unreserved ones (RFC 3986) percent-encoded.
pub fn percent_encoded(value: &str) -> String {
    let mut encoded = String::with_capacity(value.len());
    for byte in value.bytes() {
        match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                encoded.push(char::from(byte));
            }
            _ => {
                encoded.push('%');
                encoded.push(char::from(HEX[usize::from(byte >> 4)].to_ascii_uppercase()));
                encoded.push(char::from(
                    HEX[usize::from(byte & 0x0f)].to_ascii_uppercase(),
                ));
            }
        }
    }
    encoded
}

/// How a `%` that starts no escape is read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stray {
    /// As itself (a URL's userinfo or query, as browsers and Redis clients read one).
    Kept,
    /// As an error (a value a specification says is percent-encoded).
    Refused,
}

/// `text` with each `%XX` decoded, a `%` that starts no escape read as `stray` says; none when
/// one is refused, or the result is not UTF-8.
pub fn percent_decoded(text: &str, stray: Stray) -> Option<String> {
    let bytes = text.as_bytes();
    let mut decoded = Vec::with_capacity(bytes.len());
    let mut at = 0;
    while at < bytes.len() {
        let escape = (bytes[at] == b'%')
            .then(|| bytes.get(at + 1..at + 3))
            .flatten()
            .and_then(|pair| Some(digit(pair[0], false)? << 4 | digit(pair[1], false)?));
        match (escape, bytes[at], stray) {
            (Some(byte), ..) => {
                decoded.push(byte);
                at += 3;
            }
            (None, b'%', Stray::Refused) => return None,
            (None, byte, _) => {
                decoded.push(byte);
                at += 1;
            }
        }
    }
    String::from_utf8(decoded).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hexadecimal_round_trips_lowercase_only() {
        assert_eq!(hex(&[0x00, 0xab, 0xff]), "00abff");
        assert_eq!(unhex::<3>(*b"00abff"), Some([0x00, 0xab, 0xff]));
        assert_eq!(unhex::<3>(*b"00ABff"), None);
        assert_eq!(unhex::<2>(*b"00abff"), None, "too many digits");
        assert_eq!(unhex::<3>(*b"00ab"), None, "too few");
    }

    #[test]
    fn percent_escapes_round_trip_and_strays_are_read_as_asked() {
        let value = "a b/c?d=é%";
        let encoded = percent_encoded(value);
        assert_eq!(encoded, "a%20b%2Fc%3Fd%3D%C3%A9%25");
        assert_eq!(
            percent_decoded(&encoded, Stray::Refused).as_deref(),
            Some(value)
        );
        assert_eq!(
            percent_decoded("100%", Stray::Kept).as_deref(),
            Some("100%")
        );
        assert_eq!(percent_decoded("100%", Stray::Refused), None);
        assert_eq!(percent_decoded("%zz", Stray::Kept).as_deref(), Some("%zz"));
        assert_eq!(percent_decoded("%ff", Stray::Kept), None, "not UTF-8");
    }
}
