//! The environment table a child executes with: `NAME=value` C strings and the null-terminated
//! array of pointers to them that `execve` and its kin take, and the process's own environment,
//! read where the C runtime keeps it. The variables the run inherits are copied once, when the
//! table is made, into one buffer of the table's own (so that no borrow of the process's
//! `environ` outlives the reading, whatever a `set_var` does after); the attempt's, whose values
//! alone change from one attempt to the next, are rewritten in place, so that an attempt
//! allocates nothing once the first has made room.
//!
//! The table is handed to a start as an [`Environ`], which borrows it: the pointers cannot
//! dangle, because changing or dropping the table while a start holds its `Environ` does not
//! compile:
//!
//! ```compile_fail,E0502
//! use retry_sys::environ::{ChildEnvironment, Value};
//!
//! let mut table = ChildEnvironment::new(["PATH=/bin"]);
//! table.set_attempt([("RETRY_ATTEMPT", Value::Number(1))]);
//! let environ = table.environ();
//! // The next attempt's values, while the start still holds the table: refused.
//! table.set_attempt([("RETRY_ATTEMPT", Value::Number(2))]);
//! environ.pointer();
//! ```
//!
//! ```compile_fail,E0505
//! use retry_sys::environ::ChildEnvironment;
//!
//! let table = ChildEnvironment::new(["PATH=/bin"]);
//! let environ = table.environ();
//! drop(table); // The table gone while the start holds it: refused.
//! environ.pointer();
//! ```
//!
//! The same steps in the order a start takes them compile (so that the two above fail for the
//! borrow alone):
//!
//! ```
//! use retry_sys::environ::{ChildEnvironment, Value};
//!
//! let mut table = ChildEnvironment::new(["PATH=/bin"]);
//! table.set_attempt([("RETRY_ATTEMPT", Value::Number(1))]);
//! let environ = table.environ();
//! assert!(!environ.pointer().is_null());
//! table.set_attempt([("RETRY_ATTEMPT", Value::Number(2))]);
//! drop(table);
//! ```
//!
//! An attempt's numbers are written in decimal by `decimal`, not by the itoa crate: the few
//! lines inline where they are used, while itoa's function lay on a page of the static binary
//! that nothing else a run executes is on, which cost every run 64 KiB of resident memory
//! (BENCHMARKS.md, "What a run pays for what it does not use").

use std::ffi::{CStr, OsStr, OsString, c_char};
use std::os::unix::ffi::OsStrExt;

/// `number` in decimal, written at the end of `digits` (20 bytes hold any `u64`): the part
/// written.
fn decimal(number: u64, digits: &mut [u8; 20]) -> &[u8] {
    let mut start = digits.len();
    let mut rest = number;
    loop {
        start -= 1;
        digits[start] = b'0' + (rest % 10) as u8;
        rest /= 10;
        if rest == 0 {
            return &digits[start..];
        }
    }
}

/// The process's own environment, as its `NAME=value` strings (an entry without a `=` after its
/// first byte, which names no variable, is left out, as std leaves it out), with each one's name.
/// The borrows last no longer than the caller's look at them: this crate's own, and only to copy
/// what it keeps.
///
/// The C runtime sets `environ` up before `main`. Changing it takes std's `set_var` or
/// `remove_var` (refused by the workspace's clippy `disallowed-methods`, and `unsafe`, which every
/// other crate of the workspace forbids), or libc's `setenv` and kin, which no code of the tool
/// calls.
fn own_variables() -> impl Iterator<Item = (&'static OsStr, &'static [u8])> {
    own_entries().filter_map(|entry| {
        let entry = entry.to_c_str().to_bytes();
        let length = 1 + entry.get(1..)?.iter().position(|&byte| byte == b'=')?;
        Some((OsStr::from_bytes(&entry[..length]), entry))
    })
}

/// The process's own value of the variable `name`, as `std::env::var_os` finds it (the first
/// entry of that name), copied.
pub fn own_value(name: &str) -> Option<OsString> {
    let name = name.as_bytes();
    if name.is_empty() || name.contains(&0) {
        return None;
    }
    let entry = own_entries().find(|entry| entry.is_named(name))?;
    Some(OsStr::from_bytes(&entry.to_c_str().to_bytes()[name.len() + 1..]).to_owned())
}

/// One `NAME=value` string of the process's own environment (see [`own_variables`]), where the
/// process keeps it: a lookup reads it only as far as it differs from the name looked for.
#[derive(Clone, Copy, Debug)]
struct OwnEntry(*const c_char);

impl OwnEntry {
    /// Whether the entry sets the variable `name` (not empty, no NUL), read as libc's `getenv`
    /// reads it: only as far as it differs.
    fn is_named(self, name: &[u8]) -> bool {
        // SAFETY: the entry is a NUL-terminated string (`own_variables`), and the bytes read are
        // at most `name`'s length and one more: each one read is not the NUL, which differs from
        // every byte of `name`, so the string goes on past it.
        let at = |index: usize| unsafe { *self.0.cast::<u8>().add(index) };
        name.iter()
            .enumerate()
            .all(|(index, &byte)| at(index) == byte)
            && at(name.len()) == b'='
    }

    /// The whole `NAME=value` string, for as long as the caller reads it (`own_variables`).
    fn to_c_str(self) -> &'static CStr {
        // SAFETY: a NUL-terminated string that lives as long as the process (`own_variables`).
        unsafe { CStr::from_ptr(self.0) }
    }
}

/// The entries of the process's `environ`, each its `NAME=value` string.
fn own_entries() -> impl Iterator<Item = OwnEntry> {
    let mut next = process_environ();
    std::iter::from_fn(move || {
        if next.is_null() {
            return None;
        }
        // SAFETY: `next` points into the null-terminated array of `environ` (above), which stays
        // as it is for the life of the process; it is advanced only past an entry that is not
        // the terminating null.
        let entry = unsafe { *next };
        if entry.is_null() {
            return None;
        }
        // SAFETY: as above; `entry` is one of the array's entries, so not its end.
        next = unsafe { next.add(1) };
        Some(OwnEntry(entry))
    })
}

/// The first entry of the process's `environ`.
fn process_environ() -> *const *const c_char {
    #[cfg(target_vendor = "apple")]
    {
        // SAFETY: `_NSGetEnviron` returns the address of the process's `environ`, which a
        // program (as against a library) may read.
        unsafe { (*libc::_NSGetEnviron()).cast_const().cast() }
    }
    #[cfg(not(target_vendor = "apple"))]
    {
        unsafe extern "C" {
            // libc's declares it for glibc only; musl's and the BSDs' C libraries define it too.
            static environ: *const *const c_char;
        }
        // SAFETY: the C runtime sets `environ` before `main`, and nothing writes it after
        // (`own_variables`).
        unsafe { environ }
    }
}

/// The value of one of the attempt's variables, written straight into the child's table.
#[derive(Clone, Copy, Debug)]
pub enum Value<'a> {
    /// A whole number, in decimal: written without formatting machinery or a string of its own,
    /// because every attempt has five of them. 64 bits hold any count or time in milliseconds.
    Number(u64),
    /// Bytes as they are: a path, a word.
    Text(&'a OsStr),
}

/// What a child gets as its environment.
#[derive(Debug)]
pub struct ChildEnvironment {
    /// The variables every child inherits, as `NAME=value` and a NUL each, one after another.
    inherited: Vec<u8>,
    /// Where each entry of `inherited` starts.
    starts: Vec<usize>,
    /// The attempt's own variables, as `NAME=value` and a NUL, rewritten in place.
    attempt: Vec<Vec<u8>>,
    /// `inherited`'s entries then `attempt`'s, then a null: what the child's `environ` becomes.
    pointers: Vec<*const c_char>,
}

/// A [`ChildEnvironment`]'s table, for a child to execute with: it borrows the environment, so
/// that the table cannot change or go while a start uses it.
#[derive(Clone, Copy, Debug)]
pub struct Environ<'a>(&'a ChildEnvironment);

impl ChildEnvironment {
    /// A table of the `NAME=value` entries `inherited` (one with a NUL, which no environment can
    /// hold, left out) and, until [`ChildEnvironment::set_attempt`], nothing else.
    pub fn new<E: AsRef<[u8]>>(inherited: impl IntoIterator<Item = E>) -> Self {
        let inherited: Vec<E> = inherited.into_iter().collect();
        let size = inherited.iter().map(|entry| entry.as_ref().len() + 1).sum();
        let mut environment = ChildEnvironment {
            inherited: Vec::with_capacity(size),
            starts: Vec::with_capacity(inherited.len()),
            attempt: Vec::new(),
            pointers: Vec::new(),
        };
        for entry in &inherited {
            environment.inherit(entry.as_ref());
        }
        environment.point();
        environment
    }

    /// This table with `name` set to `value` for every child, besides the inherited variables:
    /// a value that is the run's, the same for each attempt (one with a NUL is left out).
    pub fn with(mut self, name: &str, value: &OsStr) -> Self {
        let mut entry = Vec::with_capacity(name.len() + 1 + value.len());
        entry.extend_from_slice(name.as_bytes());
        entry.push(b'=');
        entry.extend_from_slice(value.as_bytes());
        self.inherit(&entry);
        self.point();
        self
    }

    /// This table without the inherited variable `name`: one the run gives every child a value
    /// of its own for (one per attempt, say).
    pub fn without(mut self, name: &str) -> Self {
        self.remove(name);
        self
    }

    /// Remove the inherited variable `name` from the table (and the attempt's variables, which
    /// the next start sets anew).
    pub fn remove(&mut self, name: &str) {
        let buffer = &self.inherited;
        self.starts.retain(|&start| {
            let entry = &buffer[start..];
            !(entry.starts_with(name.as_bytes()) && entry.get(name.len()) == Some(&b'='))
        });
        self.point();
    }

    /// Make the inherited entries' pointers, once `inherited` is whole: it does not change
    /// again while children use them.
    fn point(&mut self) {
        let buffer = &self.inherited;
        self.pointers = self
            .starts
            .iter()
            .map(|&start| buffer[start..].as_ptr().cast::<c_char>())
            .collect();
        self.set_attempt([]);
    }

    /// A table of the process's own variables but those `keep` refuses by name, copied as they
    /// stand now (into one buffer, sized first).
    pub fn inheriting(mut keep: impl FnMut(&OsStr) -> bool) -> Self {
        let kept: Vec<&[u8]> = own_variables()
            .filter(|(name, _)| keep(name))
            .map(|(_, entry)| entry)
            .collect();
        ChildEnvironment::new(kept)
    }

    /// Add `entry`, a `NAME=value`, to the inherited variables.
    fn inherit(&mut self, entry: &[u8]) {
        if entry.contains(&0) {
            return;
        }
        self.starts.push(self.inherited.len());
        self.inherited.extend_from_slice(entry);
        self.inherited.push(0);
    }

    /// Give the next child the attempt's variables `values`, in place of the last attempt's; a
    /// value with a NUL, which no environment can hold, is left out.
    pub fn set_attempt<'a>(&mut self, values: impl IntoIterator<Item = (&'a str, Value<'a>)>) {
        let mut count = 0;
        let mut digits = [0; 20];
        for (name, value) in values {
            let value = match value {
                Value::Number(number) => decimal(number, &mut digits),
                Value::Text(text) if text.as_bytes().contains(&0) => continue,
                Value::Text(text) => text.as_bytes(),
            };
            if count == self.attempt.len() {
                self.attempt.push(Vec::new());
            }
            let entry = &mut self.attempt[count];
            entry.clear();
            entry.extend_from_slice(name.as_bytes());
            entry.push(b'=');
            entry.extend_from_slice(value);
            entry.push(0);
            count += 1;
        }
        self.attempt.truncate(count);
        self.pointers.truncate(self.starts.len());
        self.pointers.extend(
            self.attempt
                .iter()
                .map(|entry| entry.as_ptr().cast::<c_char>()),
        );
        self.pointers.push(std::ptr::null());
    }

    /// The table for the child, as `set_attempt` last made it.
    pub fn environ(&self) -> Environ<'_> {
        Environ(self)
    }

    /// The `NAME=value` entries the next child gets, in order.
    pub fn entries(&self) -> impl Iterator<Item = &CStr> {
        let inherited = self
            .starts
            .iter()
            .filter_map(|&start| CStr::from_bytes_until_nul(&self.inherited[start..]).ok());
        let attempt = self
            .attempt
            .iter()
            .filter_map(|entry| CStr::from_bytes_with_nul(entry).ok());
        inherited.chain(attempt)
    }
}

impl<'a> Environ<'a> {
    /// The table, null-terminated, for `execve` and its kin.
    pub fn pointer(self) -> *const *const c_char {
        self.0.pointers.as_ptr()
    }

    /// The `NAME=value` entries, for a start that builds its own table (`posix_spawnp`).
    pub fn entries(self) -> impl Iterator<Item = &'a CStr> {
        self.0.entries()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The entries of `environment`, as text.
    fn texts(environment: &ChildEnvironment) -> Vec<String> {
        environment
            .entries()
            .map(|entry| entry.to_string_lossy().into_owned())
            .collect()
    }

    #[test]
    fn a_runs_own_value_goes_to_every_child_and_the_pointers_follow_it() {
        let environment = ChildEnvironment::new(["PATH=/bin", "HOME=/root"])
            .with(
                "RETRY_RUN_ID",
                OsStr::new("6ba7b810-9dad-41d1-80b4-00c04fd430c8"),
            )
            .with("BAD", OsStr::new("a\0b"));
        let expected = [
            "PATH=/bin",
            "HOME=/root",
            "RETRY_RUN_ID=6ba7b810-9dad-41d1-80b4-00c04fd430c8",
        ];
        assert_eq!(texts(&environment), expected);
        // The table the child gets points at the entries as they are now, the buffer moved.
        let pointed: Vec<String> = environment.pointers[..3]
            .iter()
            .map(|&pointer| {
                // SAFETY: each pointer is to a NUL-terminated entry of `environment`, alive here.
                unsafe { CStr::from_ptr(pointer) }
                    .to_string_lossy()
                    .into_owned()
            })
            .collect();
        assert_eq!(pointed, expected);
        assert!(environment.pointers[3].is_null());
    }

    #[test]
    fn a_variable_left_out_is_gone_and_only_it() {
        let environment =
            ChildEnvironment::new(["TRACEPARENT=00-a", "TRACEPARENTS=kept", "PATH=/bin"])
                .without("TRACEPARENT");
        assert_eq!(texts(&environment), ["TRACEPARENTS=kept", "PATH=/bin"]);
    }

    #[test]
    fn numbers_are_written_in_decimal() {
        let mut digits = [0; 20];
        for number in [0, 7, 10, 99, 1_000_000, u64::MAX] {
            assert_eq!(decimal(number, &mut digits), number.to_string().as_bytes());
        }
    }

    #[test]
    fn each_attempt_replaces_the_last_ones_values() {
        let mut environment = ChildEnvironment::new(["PATH=/bin", "BAD=a\0b"]);
        environment.set_attempt([("RETRY_ATTEMPT", Value::Number(1))]);
        environment.set_attempt([
            ("RETRY_ATTEMPT", Value::Number(2)),
            ("RETRY_DEPTH", Value::Text(OsStr::new("1"))),
            ("RETRY_DEADLINE", Value::Number(u64::MAX)),
        ]);
        assert_eq!(
            texts(&environment),
            [
                "PATH=/bin",
                "RETRY_ATTEMPT=2",
                "RETRY_DEPTH=1",
                "RETRY_DEADLINE=18446744073709551615"
            ]
        );
        assert_eq!(environment.pointers.len(), 5);
        assert!(environment.pointers[4].is_null());
        environment.set_attempt([("RETRY_AFTER_FILE", Value::Text(OsStr::new("a\0b")))]);
        assert_eq!(texts(&environment), ["PATH=/bin"]);
    }

    #[test]
    fn the_processs_own_variables_are_those_std_reads_and_are_copied() {
        let own: Vec<_> = own_variables()
            .map(|(name, entry)| {
                let value = &entry[name.len() + 1..];
                (name.to_owned(), OsStr::from_bytes(value).to_owned())
            })
            .collect();
        let std: Vec<_> = std::env::vars_os().collect();
        assert!(!own.is_empty());
        assert_eq!(own, std);
        for (name, value) in &std {
            let name = name.to_str().unwrap();
            assert_eq!(own_value(name), std::env::var_os(name), "{name}");
            assert_eq!(own_value(name).as_ref(), Some(value), "{name}");
        }
        assert_eq!(own_value("RETRY_NO_SUCH_VARIABLE_IS_SET"), None);
        let inherited = ChildEnvironment::inheriting(|name| name != OsStr::new("PATH"));
        let expected: Vec<String> = std
            .iter()
            .filter(|(name, _)| name != "PATH")
            .map(|(name, value)| format!("{}={}", name.display(), value.display()))
            .collect();
        assert_eq!(texts(&inherited), expected);
    }
}
