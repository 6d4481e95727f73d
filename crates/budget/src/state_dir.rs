//! Where the tool may keep state on this machine, and how it makes a directory for it: only
//! where the state is the user's own.
//!
//! The state home is an absolute `XDG_STATE_HOME` (the XDG spec ignores a relative one), or else
//! `~/.local/state` under a `HOME` that is an absolute path, exists, and belongs to the
//! effective user: the tool never makes a home (daemon users have `/nonexistent`), never takes
//! an empty or relative `HOME` for the current directory (a CI checkout), and never writes in
//! another user's home (root with a user's `HOME`, as `sudo -E` leaves it). It makes a missing
//! directory only inside one that belongs to the effective user, with mode 0700, so that no
//! user is left with a directory of root's in their home. The home is checked when a state is
//! first needed, not before: a run that keeps nothing reads nothing.

use std::ffi::OsString;
use std::fs::DirBuilder;
use std::io;
use std::os::unix::fs::{DirBuilderExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The user's state home, as the environment names it, not yet checked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StateHome {
    /// An absolute `XDG_STATE_HOME`.
    Xdg(PathBuf),
    /// `$HOME/.local/state`, for this `HOME` (checked when used).
    Home(OsString),
    /// Neither names one.
    Unset,
}

/// Why the environment names no state home of this user's; each message names the value.
#[derive(Clone, Debug, thiserror::Error)]
#[non_exhaustive]
#[allow(
    missing_docs,
    reason = "a field is the value its variant's message names"
)]
pub enum NoStateHome {
    /// Neither `XDG_STATE_HOME` nor `HOME` is set.
    #[error("neither XDG_STATE_HOME nor HOME is set")]
    Unset,
    /// A `HOME` that is not an absolute path.
    #[error("HOME ('{0}') is not an absolute path, so it names no home of this user's")]
    NotAbsolute(String),
    /// A `HOME` that does not exist.
    #[error("HOME ({0}) does not exist, and a home is not retry's to make")]
    Missing(String),
    /// A `HOME` that cannot be looked at, and the system's error (shared, so that the reason
    /// can go with each budget that falls back on the home).
    #[error("HOME ({home})")]
    Unreadable {
        home: String,
        #[source]
        why: Arc<io::Error>,
    },
    /// A `HOME` that is not a directory.
    #[error("HOME ({0}) is not a directory")]
    NotADirectory(String),
    /// A `HOME` of another user's: its owner, and the effective user.
    #[error(
        "HOME ({home}) belongs to uid {owner}, not to this user (uid {user}), as after sudo -E; \
         set XDG_STATE_HOME to a directory of this user's"
    )]
    NotOurs { home: String, owner: u32, user: u32 },
}

impl StateHome {
    /// The state home `env` names: an absolute `XDG_STATE_HOME`, else `HOME`'s.
    pub fn of(env: &impl Fn(&str) -> Option<OsString>) -> StateHome {
        let xdg = env("XDG_STATE_HOME").filter(|dir| Path::new(dir).is_absolute());
        match (xdg, env("HOME")) {
            (Some(dir), _) => StateHome::Xdg(PathBuf::from(dir)),
            (None, Some(home)) => StateHome::Home(home),
            (None, None) => StateHome::Unset,
        }
    }

    /// The directory `below` inside the state home, once the home is found to be the user's
    /// own; why not, in words, when it is not.
    pub fn dir(&self, below: &str) -> Result<PathBuf, NoStateHome> {
        match self {
            StateHome::Xdg(dir) => Ok(dir.join(below)),
            StateHome::Home(home) => {
                Ok(own_home(Path::new(home))?.join(".local/state").join(below))
            }
            StateHome::Unset => Err(NoStateHome::Unset),
        }
    }
}

/// `home`, if it can hold this user's state: an absolute path to an existing directory of the
/// effective user's.
fn own_home(home: &Path) -> Result<&Path, NoStateHome> {
    let shown = || home.display().to_string();
    if !home.is_absolute() {
        return Err(NoStateHome::NotAbsolute(shown()));
    }
    let metadata = std::fs::metadata(home).map_err(|err| match err.kind() {
        io::ErrorKind::NotFound => NoStateHome::Missing(shown()),
        _ => NoStateHome::Unreadable {
            home: shown(),
            why: Arc::new(err),
        },
    })?;
    if !metadata.is_dir() {
        return Err(NoStateHome::NotADirectory(shown()));
    }
    let user = effective_user();
    if metadata.uid() != user {
        return Err(NoStateHome::NotOurs {
            home: shown(),
            owner: metadata.uid(),
            user,
        });
    }
    Ok(home)
}

/// Make `dir` and whatever of its parents is missing, each with mode 0700, but only inside a
/// directory that belongs to the effective user; one that is there is left as it is, for the
/// caller to check.
pub(crate) fn make(dir: &Path) -> io::Result<()> {
    let dir = std::path::absolute(dir)?;
    let mut missing = Vec::new();
    let mut existing = dir.as_path();
    let metadata = loop {
        match std::fs::metadata(existing) {
            Ok(metadata) => break metadata,
            Err(err) if err.kind() == io::ErrorKind::NotFound => {
                missing.push(existing);
                existing = existing.parent().ok_or(err)?;
            }
            Err(err) => return Err(err),
        }
    };
    if missing.is_empty() {
        return Ok(());
    }
    let user = effective_user();
    if metadata.uid() != user {
        return Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            format!(
                "{} belongs to uid {}, not to this user (uid {user}), and retry makes no \
                 directory inside another user's",
                existing.display(),
                metadata.uid()
            ),
        ));
    }
    for dir in missing.into_iter().rev() {
        match DirBuilder::new().mode(0o700).create(dir) {
            Ok(()) => {}
            // Another run made it meanwhile: the caller checks it as any directory there.
            Err(err) if err.kind() == io::ErrorKind::AlreadyExists => {}
            Err(err) => return Err(err),
        }
    }
    Ok(())
}

/// The user the tool runs as.
pub(crate) fn effective_user() -> u32 {
    nix::unistd::geteuid().as_raw()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn home(vars: &[(&str, &str)]) -> StateHome {
        let vars: Vec<(String, OsString)> = vars
            .iter()
            .map(|(name, value)| (name.to_string(), OsString::from(value)))
            .collect();
        StateHome::of(&|name| {
            vars.iter()
                .find(|(var, _)| var == name)
                .map(|(_, value)| value.clone())
        })
    }

    #[test]
    fn an_absolute_xdg_state_home_comes_first_and_a_relative_one_is_ignored() {
        assert_eq!(
            home(&[("XDG_STATE_HOME", "/state"), ("HOME", "/h")])
                .dir("retry")
                .unwrap(),
            PathBuf::from("/state/retry")
        );
        assert_eq!(
            home(&[("XDG_STATE_HOME", "state"), ("HOME", "/h")]),
            StateHome::Home("/h".into())
        );
        assert_eq!(home(&[("XDG_STATE_HOME", "")]), StateHome::Unset);
    }

    #[test]
    fn a_home_that_is_not_the_users_own_keeps_no_state() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().to_str().unwrap();
        assert_eq!(
            home(&[("HOME", path)]).dir("retry").unwrap(),
            dir.path().join(".local/state/retry")
        );
        for (value, said) in [
            ("", "not an absolute path"),
            (".", "not an absolute path"),
            ("relative/home", "not an absolute path"),
            ("/nonexistent", "does not exist"),
            ("/dev/null", "not a directory"),
        ] {
            let why = home(&[("HOME", value)])
                .dir("retry")
                .unwrap_err()
                .to_string();
            assert!(why.contains(said), "{value}: {why}");
        }
        assert!(StateHome::Unset.dir("retry").is_err());
    }

    #[test]
    fn directories_are_made_private_and_only_inside_the_users_own() {
        let dir = tempfile::tempdir().unwrap();
        let nested = dir.path().join("a/b/c");
        make(&nested).unwrap();
        for made in ["a", "a/b", "a/b/c"] {
            let mode = std::fs::metadata(dir.path().join(made))
                .unwrap()
                .permissions();
            assert_eq!(mode.mode() & 0o777, 0o700, "{made}");
        }
        make(&nested).unwrap();
        if effective_user() == 0 {
            let theirs = dir.path().join("theirs");
            std::fs::create_dir(&theirs).unwrap();
            std::os::unix::fs::chown(&theirs, Some(65534), Some(65534)).unwrap();
            let err = make(&theirs.join(".local/state")).unwrap_err().to_string();
            assert!(err.to_string().contains("belongs to uid 65534"), "{err}");
            assert!(!theirs.join(".local").exists());
        }
    }
}
