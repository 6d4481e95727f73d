//! The Lua script of the Redis store (`budget.lua`), the SHA-1 by which `EVALSHA` names it, and
//! its call on a server, which loads it there first if the server does not have it (a server's
//! cache of scripts is its own: each node of a cluster, a primary after a failover). The digest
//! is a constant, written here rather than computed: a test loads the script into a real Redis
//! and, when the script changed and this did not, fails naming the digest to write.

use super::resp::{Connection, Reply, Trouble, describe};

/// The script.
pub(crate) const TEXT: &str = include_str!("budget.lua");

/// The script's SHA-1, in lowercase hexadecimal, as `SCRIPT LOAD` answers it.
pub(crate) const SHA1: &[u8; 40] = b"cc2d183d626968db7b50a7a77a6520bd6f2268db";

/// Call the script with `args` (its key first) by its SHA-1, loading it if the server does
/// not have it yet.
pub(crate) fn evaluate(connection: &mut Connection, args: &[Vec<u8>]) -> Result<Reply, Trouble> {
    let mut call: Vec<&[u8]> = vec![b"EVALSHA", SHA1, b"2"];
    call.extend(args.iter().map(Vec::as_slice));
    match connection.call(&call)? {
        Reply::Error(error) if error.starts_with("NOSCRIPT") => {
            match connection.call(&[b"SCRIPT", b"LOAD", TEXT.as_bytes()])? {
                Reply::Bulk(Some(sha)) if sha == SHA1 => connection.call(&call),
                Reply::Error(error) => Ok(Reply::Error(error)),
                other => Err(Trouble::Malformed(format!(
                    "SCRIPT LOAD answered {}, not the script's SHA-1",
                    describe(&other)
                ))),
            }
        }
        reply => Ok(reply),
    }
}
/// The command the script's line that a server's error names (`@user_script:135`) calls,
/// in capitals, if the error names a line and it calls one.
pub(crate) fn command_at(error: &str) -> Option<String> {
    let after = error.split("@user_script:").nth(1)?;
    let digits: String = after.chars().take_while(char::is_ascii_digit).collect();
    let line = TEXT
        .lines()
        .nth(digits.parse::<usize>().ok()?.checked_sub(1)?)?;
    let called = line.split("redis.call('").nth(1)?;
    Some(called.split('\'').next()?.to_ascii_uppercase())
}
