//! Hiding a secret the tool was given in its own argv and environment, where `ps` and
//! `/proc/PID/cmdline` and `/proc/PID/environ` show them to every process of the same user (the
//! command and the hooks among them) for as long as the tool runs.
//!
//! On Linux the kernel says (in `/proc/self/stat`) where it copied argv and the environment when
//! the tool started; the secret's bytes there are overwritten with `*`, in the one argument or
//! variable that gave it and nowhere else, as mysql and psql do with a password in argv. Until
//! then (the tool's first microseconds) they show as given: a password file shows nothing ever.
//! Elsewhere this does nothing.

use std::ops::Range;

/// Overwrite with `*` the bytes at `spans` of `text`, where it stands whole in the tool's argv
/// (as the value of `flag`) or in its environment (as the value of `variable`).
pub(crate) fn hide(text: &str, spans: &[Range<usize>], flag: &str, variable: &str) {
    if spans.is_empty() {
        return;
    }
    #[cfg(target_os = "linux")]
    linux::hide(text, spans, flag, variable);
    #[cfg(not(target_os = "linux"))]
    let _ = (text, flag, variable);
}

/// Where in `entries` (NUL-separated, as the kernel lays out argv and the environment) `text`
/// stands whole as an entry, after `prefix` in that entry (empty for none): the offsets of the
/// text in `entries`.
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
fn places(entries: &[u8], text: &[u8], prefixes: &[&[u8]]) -> Vec<usize> {
    let mut found = Vec::new();
    let mut start = 0;
    for entry in entries.split(|&byte| byte == 0) {
        for prefix in prefixes {
            if entry.len() == prefix.len() + text.len()
                && entry.starts_with(prefix)
                && entry.ends_with(text)
            {
                found.push(start + prefix.len());
            }
        }
        start += entry.len() + 1;
    }
    found
}

#[cfg(target_os = "linux")]
mod linux {
    use std::ops::Range;

    /// Hide the secret as [`super::hide`] says.
    pub(super) fn hide(text: &str, spans: &[Range<usize>], flag: &str, variable: &str) {
        let Some([arguments, environment]) = own_blocks() else {
            return;
        };
        let with_equals = format!("{flag}=");
        let assigned = format!("{variable}=");
        let blocks = [
            (arguments, vec![&b""[..], with_equals.as_bytes()]),
            (environment, vec![assigned.as_bytes()]),
        ];
        for (block, prefixes) in blocks {
            // SAFETY: the kernel reports these ranges as where it copied argv and the
            // environment at exec: they lie in this process's stack, mapped readable and
            // writable for its whole life. This runs before any thread of the tool's starts,
            // and std has copied argv already; nothing else reads or writes them meanwhile.
            let entries =
                unsafe { std::slice::from_raw_parts_mut(block.start as *mut u8, block.len()) };
            for at in super::places(entries, text.as_bytes(), &prefixes) {
                for span in spans {
                    entries[at + span.start..at + span.end].fill(b'*');
                }
            }
        }
    }

    /// The address ranges of the tool's argv and environment strings, as the kernel gives them:
    /// fields 48 to 51 of `/proc/self/stat`.
    fn own_blocks() -> Option<[Range<usize>; 2]> {
        let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
        // The fields after the command name, which is in parentheses, start with field 3.
        let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
        let field = |number: usize| fields.get(number - 3)?.parse::<usize>().ok();
        let (arg_start, arg_end) = (field(48)?, field(49)?);
        let (env_start, env_end) = (field(50)?, field(51)?);
        let valid = |start: usize, end: usize| start != 0 && start <= end;
        (valid(arg_start, arg_end) && valid(env_start, env_end))
            .then_some([arg_start..arg_end, env_start..env_end])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_text_only_as_a_whole_entry_after_its_prefix() {
        let entries =
            b"retry\0--budget-store\0redis://:pw@h\0--budget-store=redis://:pw@h\0xredis://:pw@h\0";
        let text = b"redis://:pw@h";
        assert_eq!(places(entries, text, &[b"", b"--budget-store="]), [21, 50]);
        let environment = b"A=redis://:pw@h\0RETRY_BUDGET_STORE=redis://:pw@h\0";
        assert_eq!(places(environment, text, &[b"RETRY_BUDGET_STORE="]), [35]);
    }
}
