//! The environment every attempt's process starts with, built once for the run: the tool's own
//! variables but those no child may inherit, then the attempt's, whose values alone change from
//! one attempt to the next (the table itself, and why it is built by hand, is `sys::environ`'s).
//!
//! Given variables on its `Command`, std copies the tool's whole environment into a map and out
//! again for every spawn (most of an attempt's cost, in instructions, when this was measured);
//! this way an attempt costs the few strings that change, and the tool's own environment is
//! never touched.

use std::ffi::{CString, OsStr};
use std::os::unix::ffi::OsStrExt;

use crate::environment::{self, Variable};
use crate::sys::environ::ChildEnvironment;

/// The tool's environment as its children inherit it: without `WITHHELD`, and without the
/// attempt's variables an outer run set, which each attempt's values replace.
pub(crate) fn inherited() -> ChildEnvironment {
    let inherited = std::env::vars_os()
        .filter(|(name, _)| !is_replaced(name))
        .filter_map(|(name, value)| assignment(&name, &value))
        .collect();
    ChildEnvironment::new(inherited)
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
    fn the_tools_own_values_of_replaced_variables_are_left_out() {
        let variables = environment::WITHHELD.iter().chain(&environment::ALL);
        for variable in variables.chain(&environment::HOOK) {
            assert!(is_replaced(OsStr::new(variable.name)), "{}", variable.name);
        }
        assert!(!is_replaced(OsStr::new("PATH")));
        let mut environment = inherited();
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
