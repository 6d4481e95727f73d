//! The CI systems the tool speaks to in their own conventions: which one a run is in (`--ci`,
//! or the variable each system sets in its jobs), the lines it adds to the log there (`log`),
//! and the step outputs it leaves for later steps (`outputs`).

pub(crate) mod log;
pub(crate) mod outputs;

use std::ffi::OsString;

use clap::ValueEnum;
use clap::builder::PossibleValue;

use crate::environment;

/// A CI system whose conventions the tool follows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum CiSystem {
    /// GitHub Actions: `::group::`, `::warning::`, `$GITHUB_OUTPUT`, `$GITHUB_STEP_SUMMARY`.
    #[value(name = "github")]
    GitHub,
    /// GitLab CI/CD: `section_start` and `section_end` lines.
    #[value(name = "gitlab")]
    GitLab,
    /// Buildkite: `---` headers, `^^^ +++` to open a failing one.
    Buildkite,
    /// Azure Pipelines: `##[group]`, `##vso[task.logissue]`, `##vso[task.setvariable]`.
    Azure,
}

/// `--ci`: which system's conventions to follow.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum CiChoice {
    /// The system whose variable is set (GITHUB_ACTIONS, GITLAB_CI, BUILDKITE, TF_BUILD).
    Auto,
    /// None: speak as to a terminal.
    None,
    /// This one.
    System(CiSystem),
}

impl ValueEnum for CiChoice {
    fn value_variants<'a>() -> &'a [Self] {
        &[
            CiChoice::Auto,
            CiChoice::None,
            CiChoice::System(CiSystem::GitHub),
            CiChoice::System(CiSystem::GitLab),
            CiChoice::System(CiSystem::Buildkite),
            CiChoice::System(CiSystem::Azure),
        ]
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        match self {
            CiChoice::Auto => Some(
                PossibleValue::new("auto")
                    .help("The system whose variable is set (GITHUB_ACTIONS, GITLAB_CI, ...)"),
            ),
            CiChoice::None => Some(PossibleValue::new("none").help("None: speak as to a terminal")),
            CiChoice::System(system) => system.to_possible_value(),
        }
    }
}

/// The variable each system sets in its jobs, and the value it sets it to (compared without
/// regard to case, as Azure sets `True`).
const MARKERS: [(CiSystem, &str, &str); 4] = [
    (CiSystem::GitHub, environment::GITHUB_ACTIONS.name, "true"),
    (CiSystem::GitLab, environment::GITLAB_CI.name, "true"),
    (CiSystem::Buildkite, environment::BUILDKITE.name, "true"),
    (CiSystem::Azure, environment::TF_BUILD.name, "true"),
];

impl CiChoice {
    /// The system this choice names, or for `auto` the first whose variable `env` has.
    pub(crate) fn resolve(self, env: &impl Fn(&str) -> Option<OsString>) -> Option<CiSystem> {
        match self {
            CiChoice::Auto => MARKERS.iter().find_map(|(system, name, value)| {
                env(name)
                    .is_some_and(|set| set.to_string_lossy().eq_ignore_ascii_case(value))
                    .then_some(*system)
            }),
            CiChoice::None => None,
            CiChoice::System(system) => Some(system),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env_with(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<OsString> {
        let pairs: Vec<(String, String)> = pairs
            .iter()
            .map(|(name, value)| (name.to_string(), value.to_string()))
            .collect();
        move |wanted| {
            pairs
                .iter()
                .find(|(name, _)| name == wanted)
                .map(|(_, value)| OsString::from(value))
        }
    }

    #[test]
    fn auto_finds_the_system_by_its_variable() {
        let cases = [
            (vec![("GITHUB_ACTIONS", "true")], Some(CiSystem::GitHub)),
            (vec![("GITLAB_CI", "true")], Some(CiSystem::GitLab)),
            (vec![("BUILDKITE", "true")], Some(CiSystem::Buildkite)),
            (vec![("TF_BUILD", "True")], Some(CiSystem::Azure)),
            (vec![("GITHUB_ACTIONS", "false")], None),
            (vec![("CI", "true")], None),
            (vec![], None),
        ];
        for (pairs, expected) in cases {
            assert_eq!(
                CiChoice::Auto.resolve(&env_with(&pairs)),
                expected,
                "{pairs:?}"
            );
        }
    }

    #[test]
    fn a_choice_overrides_the_environment() {
        let github = env_with(&[("GITHUB_ACTIONS", "true")]);
        assert_eq!(CiChoice::None.resolve(&github), None);
        assert_eq!(
            CiChoice::System(CiSystem::Buildkite).resolve(&github),
            Some(CiSystem::Buildkite)
        );
        let named: Vec<String> = CiChoice::value_variants()
            .iter()
            .filter_map(|choice| Some(choice.to_possible_value()?.get_name().to_string()))
            .collect();
        assert_eq!(
            named,
            ["auto", "none", "github", "gitlab", "buildkite", "azure"]
        );
    }
}
