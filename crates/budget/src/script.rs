//! The Lua script of the Redis store (`budget.lua`), and the SHA-1 by which `EVALSHA` names it.
//! The digest is a constant, written here rather than computed: a test loads the script into a
//! real Redis and, when the script changed and this did not, fails naming the digest to write.

/// The script.
pub(crate) const TEXT: &str = include_str!("budget.lua");

/// The script's SHA-1, in lowercase hexadecimal, as `SCRIPT LOAD` answers it.
pub(crate) const SHA1: &[u8; 40] = b"fed66ce64e29d946c6c7e9559a1603da6094a9d0";
