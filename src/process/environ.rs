//! The environment every attempt's process starts with, built once for the run: the tool's own
//! variables but those no child may inherit, then the attempt's, whose values alone change from
//! one attempt to the next (the table itself, and why it is built by hand, is `sys::environ`'s).
//!
//! Given variables on its `Command`, std copies the tool's whole environment into a map and out
//! again for every spawn (most of an attempt's cost, in instructions, when this was measured);
//! this way an attempt costs the few strings that change, and the inherited variables are copied
//! once, into one buffer, for the whole run.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;

use crate::environment::{self, Variable};
use retry_policy::run_id::RunId;
use retry_sys::environ::ChildEnvironment;

/// The tool's environment as its children inherit it: without `WITHHELD`, and without the
/// attempt's variables an outer run set, which each attempt's values replace; and whether it
/// held `RETRY_BUDGET_STORE`, which the run passes on without its password (so that a run
/// given none looks for it no further).
/// The walk notes which of the prefixes of the names a run looks up it found (`environment::own`
/// answers the others at once).
pub(crate) fn inherited() -> (ChildEnvironment, bool) {
    let (mut store_given, mut prefixes) = (false, 0);
    let environment = ChildEnvironment::inheriting(|name| {
        prefixes |= environment::prefix_bit(name.as_bytes());
        let replaced = is_replaced(name);
        store_given |= replaced && name == environment::BUDGET_STORE.name;
        !replaced
    });
    environment::note_prefixes(prefixes);
    (environment, store_given)
}

/// `environment` with the run's identity `run_id` in `RETRY_RUN_ID`, and the store the run
/// passes on (`store`, without its password) in `RETRY_BUDGET_STORE`, for every child of the
/// run.
pub(crate) fn of_run(
    environment: ChildEnvironment,
    run_id: RunId,
    store: Option<&str>,
) -> ChildEnvironment {
    let environment = environment.with(environment::RUN_ID.name, OsStr::new(&run_id.to_string()));
    match store {
        Some(store) => environment.with(environment::BUDGET_STORE.name, OsStr::new(store)),
        None => environment,
    }
}

/// `environment` (the run's) for its attempts: in a traced run each attempt gets a
/// `TRACEPARENT` of its own in place of the one the run joined.
pub(crate) fn of_attempts(environment: ChildEnvironment, traced: bool) -> ChildEnvironment {
    match traced {
        true => environment.without(environment::TRACEPARENT.name),
        false => environment,
    }
}

/// Whether the tool's own value of `name` never reaches a child: withheld, or set per attempt
/// or per hook. All of those but the exporter's secrets are named with the tool's prefix, so
/// that most of an environment is passed by a comparison or two.
fn is_replaced(name: &OsStr) -> bool {
    let name_bytes = name.as_bytes();
    if name_bytes.starts_with(b"OTEL_EXPORTER_OTLP_") {
        return environment::EXPORTER_SECRETS
            .iter()
            .any(|secret| name == *secret);
    }
    if !name_bytes.starts_with(environment::PREFIX.as_bytes()) {
        return false;
    }
    // An outer run's hold on a job passes through, but where this run holds one of its own
    // (the runner then puts its own value in its place): so only a run of a job reads it.
    let named = |variable: &Variable| name == variable.name && name != environment::JOB_HOLD.name;
    [
        &environment::WITHHELD[..],
        &environment::ALL,
        &environment::HOOK,
    ]
    .into_iter()
    .any(|variables| variables.iter().any(named))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The entries of `environment` that set a variable the tool withholds or sets itself.
    fn replaced_entries(environment: &ChildEnvironment) -> Vec<String> {
        environment
            .entries()
            .map(|entry| entry.to_string_lossy().into_owned())
            .filter(|entry| is_replaced(OsStr::new(entry.split('=').next().unwrap_or_default())))
            .collect()
    }

    #[test]
    fn the_tools_own_values_of_replaced_variables_are_left_out() {
        let variables = environment::WITHHELD.iter().chain(&environment::ALL);
        for variable in variables.chain(&environment::HOOK) {
            assert!(
                variable.name.starts_with(environment::PREFIX),
                "{}",
                variable.name
            );
            let passes_through = variable.name == environment::JOB_HOLD.name;
            assert_eq!(
                is_replaced(OsStr::new(variable.name)),
                !passes_through,
                "{}",
                variable.name
            );
        }
        assert!(!is_replaced(OsStr::new("PATH")));
        for secret in environment::EXPORTER_SECRETS {
            assert!(is_replaced(OsStr::new(secret)), "{secret}");
        }
        assert!(!is_replaced(OsStr::new("OTEL_EXPORTER_OTLP_ENDPOINT")));
        let (mut environment, _) = inherited();
        environment.set_attempt([]);
        // Whatever the test runner's environment holds, none of the tool's own goes on.
        assert_eq!(replaced_entries(&environment), Vec::<String>::new());
    }
}
