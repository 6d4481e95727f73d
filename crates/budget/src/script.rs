//! The Lua script of the Redis store (`budget.lua`), the SHA-1 by which `EVALSHA` names it, and
//! the words of a server's error about one of its lines (the Redis crate runs it). The digest
//! is a constant, written here rather than computed: a test loads the script into a real Redis
//! and, when the script changed and this did not, fails naming the digest to write.

use retry_redis::Script;

/// The script, and the SHA-1 by which `EVALSHA` names it.
pub(crate) const SCRIPT: Script = Script {
    text: include_str!("budget.lua"),
    sha1: b"cc2d183d626968db7b50a7a77a6520bd6f2268db",
};

/// The command the script's line that a server's error names (`@user_script:135`) calls,
/// in capitals, if the error names a line and it calls one.
pub(crate) fn command_at(error: &str) -> Option<String> {
    let after = error.split("@user_script:").nth(1)?;
    let digits: String = after.chars().take_while(char::is_ascii_digit).collect();
    let line = SCRIPT
        .text
        .lines()
        .nth(digits.parse::<usize>().ok()?.checked_sub(1)?)?;
    let called = line.split("redis.call('").nth(1)?;
    Some(called.split('\'').next()?.to_ascii_uppercase())
}
