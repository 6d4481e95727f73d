//! The environment table a child executes with: `NAME=value` C strings and the null-terminated
//! array of pointers to them that `execve` and its kin take. The strings the run inherits are
//! made once; the attempt's, whose values alone change from one attempt to the next, are
//! rewritten in place, so that an attempt allocates nothing once the first has made room.
//!
//! The table is handed to a start as an [`Environ`], which borrows it: the pointers cannot
//! dangle, because changing or dropping the table while a start holds its `Environ` does not
//! compile:
//!
//! ```compile_fail,E0502
//! use std::ffi::OsStr;
//! use retry_exec::sys::environ::ChildEnvironment;
//!
//! let mut table = ChildEnvironment::new(Vec::new());
//! table.set_attempt([("RETRY_ATTEMPT", OsStr::new("1"))]);
//! let environ = table.environ();
//! // The next attempt's values, while the start still holds the table: refused.
//! table.set_attempt([("RETRY_ATTEMPT", OsStr::new("2"))]);
//! environ.pointer();
//! ```
//!
//! ```compile_fail,E0505
//! use retry_exec::sys::environ::ChildEnvironment;
//!
//! let table = ChildEnvironment::new(Vec::new());
//! let environ = table.environ();
//! drop(table); // The table gone while the start holds it: refused.
//! environ.pointer();
//! ```
//!
//! The same steps in the order a start takes them compile (so that the two above fail for the
//! borrow alone):
//!
//! ```
//! use std::ffi::OsStr;
//! use retry_exec::sys::environ::ChildEnvironment;
//!
//! let mut table = ChildEnvironment::new(Vec::new());
//! table.set_attempt([("RETRY_ATTEMPT", OsStr::new("1"))]);
//! let environ = table.environ();
//! assert!(!environ.pointer().is_null());
//! table.set_attempt([("RETRY_ATTEMPT", OsStr::new("2"))]);
//! drop(table);
//! ```

use std::ffi::{CString, OsStr, c_char};
use std::os::unix::ffi::OsStrExt;

/// What a child gets as its environment.
#[derive(Debug)]
pub struct ChildEnvironment {
    /// The variables every child inherits, as `NAME=value`.
    inherited: Vec<CString>,
    /// The attempt's own variables, as `NAME=value` and a NUL, rewritten in place.
    attempt: Vec<Vec<u8>>,
    /// `inherited` then `attempt`, then a null: what the child's `environ` becomes.
    pointers: Vec<*const c_char>,
}

/// A [`ChildEnvironment`]'s table, for a child to execute with: it borrows the environment, so
/// that the table cannot change or go while a start uses it.
#[derive(Clone, Copy, Debug)]
pub struct Environ<'a>(&'a ChildEnvironment);

impl ChildEnvironment {
    /// A table of `inherited` and, until [`ChildEnvironment::set_attempt`], nothing else.
    pub fn new(inherited: Vec<CString>) -> Self {
        let mut environment = ChildEnvironment {
            inherited,
            attempt: Vec::new(),
            pointers: Vec::new(),
        };
        environment.set_attempt([]);
        environment
    }

    /// Give the next child the attempt's variables `values`, in place of the last attempt's; a
    /// value with a NUL, which no environment can hold, is left out.
    pub fn set_attempt<'a>(&mut self, values: impl IntoIterator<Item = (&'a str, &'a OsStr)>) {
        let mut count = 0;
        for (name, value) in values {
            if value.as_bytes().contains(&0) {
                continue;
            }
            if count == self.attempt.len() {
                self.attempt.push(Vec::new());
            }
            let entry = &mut self.attempt[count];
            entry.clear();
            entry.extend_from_slice(name.as_bytes());
            entry.push(b'=');
            entry.extend_from_slice(value.as_bytes());
            entry.push(0);
            count += 1;
        }
        self.attempt.truncate(count);
        self.pointers.clear();
        self.pointers
            .extend(self.inherited.iter().map(|entry| entry.as_ptr()));
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

    /// The `NAME=value` entries the next child gets.
    #[cfg(test)]
    pub(crate) fn entries(&self) -> Vec<String> {
        let attempt = self.attempt.iter().map(|entry| &entry[..entry.len() - 1]);
        self.inherited
            .iter()
            .map(|entry| entry.as_bytes())
            .chain(attempt)
            .map(|entry| String::from_utf8_lossy(entry).into_owned())
            .collect()
    }
}

impl<'a> Environ<'a> {
    /// The table, null-terminated, for `execve` and its kin.
    pub fn pointer(self) -> *const *const c_char {
        self.0.pointers.as_ptr()
    }

    /// The `NAME=value` entries, for a start that builds its own table (`posix_spawnp`).
    #[cfg(not(target_os = "linux"))]
    pub(crate) fn entries(self) -> impl Iterator<Item = &'a std::ffi::CStr> {
        let attempt = self
            .0
            .attempt
            .iter()
            .filter_map(|entry| std::ffi::CStr::from_bytes_with_nul(entry).ok());
        self.0
            .inherited
            .iter()
            .map(CString::as_c_str)
            .chain(attempt)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_attempt_replaces_the_last_ones_values() {
        let mut environment = ChildEnvironment::new(vec![CString::new("PATH=/bin").unwrap()]);
        environment.set_attempt([("RETRY_ATTEMPT", OsStr::new("1"))]);
        environment.set_attempt([
            ("RETRY_ATTEMPT", OsStr::new("2")),
            ("RETRY_DEPTH", OsStr::new("1")),
        ]);
        assert_eq!(
            environment.entries(),
            ["PATH=/bin", "RETRY_ATTEMPT=2", "RETRY_DEPTH=1"]
        );
        assert_eq!(environment.pointers.len(), 4);
        assert!(environment.pointers[3].is_null());
        environment.set_attempt([("RETRY_AFTER_FILE", OsStr::new("a\0b"))]);
        assert_eq!(environment.entries(), ["PATH=/bin"]);
    }
}
