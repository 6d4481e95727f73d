//! The Lua script of the Redis store (`budget.lua`), and its SHA-1, by which `EVALSHA` names it:
//! computed when the tool is built, so that no run spends time on it.

/// The script.
pub(crate) const TEXT: &str = include_str!("budget.lua");

/// The script's SHA-1, in lowercase hexadecimal, as `SCRIPT LOAD` answers it.
pub(crate) const SHA1: [u8; 40] = hex(sha1(TEXT.as_bytes()));

/// `bytes` in lowercase hexadecimal.
const fn hex(bytes: [u8; 20]) -> [u8; 40] {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut text = [0; 40];
    let mut index = 0;
    while index < 20 {
        text[2 * index] = DIGITS[(bytes[index] >> 4) as usize];
        text[2 * index + 1] = DIGITS[(bytes[index] & 0xf) as usize];
        index += 1;
    }
    text
}

/// The SHA-1 digest of `message` (FIPS 180-4): a name for the script, not a safeguard.
const fn sha1(message: &[u8]) -> [u8; 20] {
    let mut state: [u32; 5] = [
        0x6745_2301,
        0xefcd_ab89,
        0x98ba_dcfe,
        0x1032_5476,
        0xc3d2_e1f0,
    ];
    // The message, a 1 bit, zeros, and its length in bits: whole blocks of 64 bytes.
    let blocks = (message.len() + 8) / 64 + 1;
    let bits = (message.len() as u64).wrapping_mul(8);
    let mut block = 0;
    while block < blocks {
        let mut words = [0u32; 80];
        let mut word = 0;
        while word < 16 {
            let mut value = 0u32;
            let mut byte = 0;
            while byte < 4 {
                let at = block * 64 + word * 4 + byte;
                let padded = if at < message.len() {
                    message[at]
                } else if at == message.len() {
                    0x80
                } else if at >= blocks * 64 - 8 {
                    (bits >> (8 * (blocks * 64 - 1 - at))) as u8
                } else {
                    0
                };
                value = (value << 8) | padded as u32;
                byte += 1;
            }
            words[word] = value;
            word += 1;
        }
        while word < 80 {
            words[word] = (words[word - 3] ^ words[word - 8] ^ words[word - 14] ^ words[word - 16])
                .rotate_left(1);
            word += 1;
        }
        let [mut a, mut b, mut c, mut d, mut e] = state;
        let mut round = 0;
        while round < 80 {
            let (f, k) = match round / 20 {
                0 => ((b & c) | (!b & d), 0x5a82_7999),
                1 => (b ^ c ^ d, 0x6ed9_eba1),
                2 => ((b & c) | (b & d) | (c & d), 0x8f1b_bcdc),
                _ => (b ^ c ^ d, 0xca62_c1d6),
            };
            let next = a
                .rotate_left(5)
                .wrapping_add(f)
                .wrapping_add(e)
                .wrapping_add(k)
                .wrapping_add(words[round]);
            e = d;
            d = c;
            c = b.rotate_left(30);
            b = a;
            a = next;
            round += 1;
        }
        state = [
            state[0].wrapping_add(a),
            state[1].wrapping_add(b),
            state[2].wrapping_add(c),
            state[3].wrapping_add(d),
            state[4].wrapping_add(e),
        ];
        block += 1;
    }
    let mut digest = [0u8; 20];
    let mut index = 0;
    while index < 20 {
        digest[index] = (state[index / 4] >> (24 - 8 * (index % 4))) as u8;
        index += 1;
    }
    digest
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digests_match_the_standard_vectors() {
        let digest = |text: &str| String::from_utf8(hex(sha1(text.as_bytes())).to_vec()).unwrap();
        assert_eq!(digest(""), "da39a3ee5e6b4b0d3255bfef95601890afd80709");
        assert_eq!(digest("abc"), "a9993e364706816aba3e25717850c26c9cd0d89d");
        assert_eq!(
            digest("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "84983e441c3bd26ebaae4aa1f95129e5e54670f1"
        );
        assert_eq!(
            digest(&"a".repeat(1000)),
            "291e9a6c66994949b57ba5e650361e98fc36b1ba"
        );
    }
}
