//! The environment every attempt's process starts with, built once for the run: the tool's own
//! variables but those no child may inherit, then the attempt's, whose values alone change from
//! one attempt to the next.
//!
//! The child executes the command with it (or, where std's `Command` starts attempts, installs
//! it as its `environ` between fork and exec, where std would install one it builds itself). Given variables on its `Command`, std copies the tool's whole environment into
//! a map and out again for every spawn (most of an attempt's cost, in instructions, when this
//! was measured); this way an attempt costs the few strings that change, and the tool's own
//! environment is never touched.

use std::ffi::{CString, OsStr, c_char};
use std::marker::PhantomData;
use std::os::unix::ffi::OsStrExt;

use crate::environment::{self, Variable};

/// What an attempt's process gets as its environment.
#[derive(Debug)]
pub(crate) struct ChildEnvironment {
    /// The tool's variables that children inherit, as `NAME=value`.
    inherited: Vec<CString>,
    /// The attempt's own variables, as `NAME=value` and a NUL, rewritten in place for every
    /// attempt (so that an attempt allocates nothing once the first has made room).
    attempt: Vec<Vec<u8>>,
    /// `inherited` then `attempt`, then a null: what the child's `environ` becomes.
    pointers: Vec<*const c_char>,
}

/// A `ChildEnvironment`'s table, for a child to execute with: it borrows the environment, so
/// that the table cannot change or go while a start uses it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Environ<'a> {
    table: *const *const c_char,
    borrowed: PhantomData<&'a ChildEnvironment>,
}

impl ChildEnvironment {
    /// The tool's environment as its children inherit it: without `WITHHELD`, and without the
    /// attempt's variables an outer run set, which `set_attempt` gives their values here.
    pub(crate) fn inherited() -> Self {
        let inherited = std::env::vars_os()
            .filter(|(name, _)| !is_replaced(name))
            .filter_map(|(name, value)| assignment(&name, &value))
            .collect();
        ChildEnvironment {
            inherited,
            attempt: Vec::new(),
            pointers: Vec::new(),
        }
    }

    /// Give the next child the attempt's variables `values`, in place of the last attempt's; a
    /// value with a NUL, which no environment can hold, is left out.
    pub(crate) fn set_attempt<'a>(
        &mut self,
        values: impl IntoIterator<Item = (&'a str, &'a OsStr)>,
    ) {
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
    pub(crate) fn environ(&self) -> Environ<'_> {
        Environ {
            table: self.pointers.as_ptr(),
            borrowed: PhantomData,
        }
    }

    /// The `NAME=value` entries the next child gets, for tests.
    #[cfg(test)]
    fn entries(&self) -> Vec<String> {
        let attempt = self.attempt.iter().map(|entry| &entry[..entry.len() - 1]);
        self.inherited
            .iter()
            .map(|entry| entry.as_bytes())
            .chain(attempt)
            .map(|entry| String::from_utf8_lossy(entry).into_owned())
            .collect()
    }
}

impl Environ<'_> {
    /// The table, null-terminated, for `execve` and its kin.
    pub(crate) fn pointer(self) -> *const *const c_char {
        self.table
    }
}

/// Make `table` the calling process's environment. Async-signal-safe: one pointer is written.
///
/// # Safety
/// Only in a child between fork and exec, with the table alive (the parent's
/// `ChildEnvironment`, borrowed by the start that made the child).
#[cfg(not(target_os = "linux"))]
pub(crate) unsafe fn install(table: *const *const c_char) {
    #[cfg(not(target_vendor = "apple"))]
    {
        unsafe extern "C" {
            static mut environ: *const *const c_char;
        }
        // SAFETY: the caller is a child between fork and exec, with no other thread.
        unsafe { environ = table };
    }
    #[cfg(target_vendor = "apple")]
    // SAFETY: as above; `_NSGetEnviron` is where Apple's libc keeps `environ`.
    unsafe {
        *libc::_NSGetEnviron() = table.cast_mut().cast()
    };
}

/// Whether the tool's own value of `name` never reaches a child: withheld, or set per attempt
/// or per hook.
fn is_replaced(name: &OsStr) -> bool {
    let named = |variable: &Variable| name == variable.name;
    [
        &environment::WITHHELD[..],
        &environment::ALL,
        &environment::HOOK,
    ]
    .into_iter()
    .any(|variables| variables.iter().any(named))
}

/// `name=value` as a C string; none for a value with a NUL, which no environment can hold.
fn assignment(name: &OsStr, value: &OsStr) -> Option<CString> {
    let (name, value) = (name.as_bytes(), value.as_bytes());
    let mut bytes = Vec::with_capacity(name.len() + value.len() + 2);
    bytes.extend_from_slice(name);
    bytes.push(b'=');
    bytes.extend_from_slice(value);
    bytes.push(0);
    CString::from_vec_with_nul(bytes).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The entries of `environment` that set a variable the tool withholds or sets itself.
    fn replaced_entries(environment: &ChildEnvironment) -> Vec<String> {
        environment
            .entries()
            .into_iter()
            .filter(|entry| is_replaced(OsStr::new(entry.split('=').next().unwrap_or_default())))
            .collect()
    }

    #[test]
    fn each_attempt_replaces_the_last_ones_values() {
        let mut environment = ChildEnvironment {
            inherited: vec![CString::new("PATH=/bin").unwrap()],
            attempt: Vec::new(),
            pointers: Vec::new(),
        };
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

    #[test]
    fn the_tools_own_values_of_replaced_variables_are_left_out() {
        let variables = environment::WITHHELD.iter().chain(&environment::ALL);
        for variable in variables.chain(&environment::HOOK) {
            assert!(is_replaced(OsStr::new(variable.name)), "{}", variable.name);
        }
        assert!(!is_replaced(OsStr::new("PATH")));
        let mut environment = ChildEnvironment::inherited();
        environment.set_attempt([]);
        // Whatever the test runner's environment holds, none of the tool's own goes on.
        assert_eq!(replaced_entries(&environment), Vec::<String>::new());
    }

    #[test]
    fn a_value_with_a_nul_is_left_out() {
        assert_eq!(assignment(OsStr::new("A"), OsStr::new("b\0c")), None);
        assert_eq!(
            assignment(OsStr::new("A"), OsStr::new("b")),
            Some(CString::new("A=b").unwrap())
        );
    }
}
