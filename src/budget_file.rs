//! The retry budget kept in a file on this machine, shared by every run that names it.
//!
//! One small file per budget, `DIR/NAME`, read and rewritten under an exclusive `flock`, so that
//! concurrent runs lose no update and never spend a token twice. The directory is created with
//! mode 0700 and the file 0600; the file is opened with `O_NOFOLLOW`, so a symlink planted in its
//! place is refused, and a [`BudgetName`] cannot name anything outside the directory. A missing
//! file is a full bucket; a corrupt or unreadable one is reset to a full bucket with one warning.
//! Should the file fail mid-run (the disk full, say), retries go on without the budget, with a
//! warning: the budget is a courtesy to the service, and must not turn a retry into a failure.

use std::fs::{DirBuilder, File, OpenOptions};
use std::io::{self, Read, Seek, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use nix::fcntl::{Flock, FlockArg};

use crate::budget::{BucketState, BudgetName, Rate, Reservation, RetryBudget};

/// The first word of every state file, naming its format.
const FORMAT: &str = "retry-budget-v1";

/// A budget whose state lives in a file.
#[derive(Debug)]
pub struct FileBudget {
    path: PathBuf,
    rate: Rate,
    /// Warnings go out once per run; the first one tells the story.
    warned: bool,
}

impl FileBudget {
    /// The budget `name` in `dir`, creating the directory if needed and checking that the file
    /// can be opened, so that a bad `--budget-dir` fails before anything runs.
    pub fn open(dir: &Path, name: &BudgetName, rate: Rate) -> io::Result<Self> {
        DirBuilder::new().recursive(true).mode(0o700).create(dir)?;
        let budget = FileBudget {
            path: dir.join(name.as_str()),
            rate,
            warned: false,
        };
        budget.open_file()?;
        Ok(budget)
    }

    fn open_file(&self) -> io::Result<File> {
        OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW)
            .open(&self.path)
    }

    /// Take a token under the lock; `Err` only when the file itself failed.
    fn try_reserve(&mut self, latest: Option<Duration>) -> io::Result<Reservation> {
        let mut file = Flock::lock(self.open_file()?, FlockArg::LockExclusive)
            .map_err(|(_, errno)| io::Error::from(errno))?;
        let mut text = String::new();
        let state = match file.read_to_string(&mut text) {
            Ok(_) if text.is_empty() => None,
            Ok(_) => parse(&text).or_else(|| self.reset("its content is not a budget state")),
            Err(err) => self.reset(&err.to_string()),
        };
        let now = SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .unwrap_or_default();
        let (reservation, next) = self.rate.reserve(state, now, latest);
        if let Some(next) = next {
            file.rewind()?;
            file.set_len(0)?;
            file.write_all(
                format!("{FORMAT} {} {}\n", next.tokens, next.at.as_nanos()).as_bytes(),
            )?;
        }
        Ok(reservation)
    }

    /// Say once that the state was unreadable and is starting over from a full bucket.
    fn reset(&mut self, why: &str) -> Option<BucketState> {
        self.warn(&format!("{why}; starting again from a full bucket"));
        None
    }

    fn warn(&mut self, what: &str) {
        if !self.warned {
            self.warned = true;
            let line = format!(
                "retry: warning: retry budget {}: {what}\n",
                self.path.display()
            );
            let _ = io::stderr().write_all(line.as_bytes());
        }
    }
}

impl RetryBudget for FileBudget {
    fn reserve(&mut self, latest: Option<Duration>) -> Reservation {
        self.try_reserve(latest).unwrap_or_else(|err| {
            self.warn(&format!("{err}; retrying without the budget"));
            Reservation::Granted(Duration::ZERO)
        })
    }
}

/// A state file's content: `retry-budget-v1 TOKENS NANOS_SINCE_EPOCH`.
fn parse(text: &str) -> Option<BucketState> {
    let mut words = text.split_whitespace();
    if words.next()? != FORMAT {
        return None;
    }
    let tokens: f64 = words.next()?.parse().ok().filter(|t: &f64| t.is_finite())?;
    let nanos: u64 = words.next()?.parse().ok()?;
    words.next().is_none().then_some(BucketState {
        tokens,
        at: Duration::from_nanos(nanos),
    })
}

/// The default `--budget-dir`: `$XDG_STATE_HOME/retry/budgets`, or
/// `$HOME/.local/state/retry/budgets`.
pub fn default_dir() -> Option<PathBuf> {
    let state_home = std::env::var_os("XDG_STATE_HOME")
        .filter(|dir| Path::new(dir).is_absolute())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|home| Path::new(&home).join(".local/state")))?;
    Some(state_home.join("retry/budgets"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn budget(dir: &Path, rate: &str) -> FileBudget {
        FileBudget::open(dir, &"api".parse().unwrap(), rate.parse().unwrap()).unwrap()
    }

    #[test]
    fn tokens_are_shared_through_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let mut first = budget(dir.path(), "2/1h");
        let mut second = budget(dir.path(), "2/1h");
        assert_eq!(first.reserve(None), Reservation::Granted(Duration::ZERO));
        assert_eq!(second.reserve(None), Reservation::Granted(Duration::ZERO));
        assert_eq!(
            first.reserve(Some(Duration::from_secs(60))),
            Reservation::Refused
        );
    }

    #[test]
    fn creates_a_private_directory_and_file() {
        let dir = tempfile::tempdir().unwrap();
        let nested = dir.path().join("state/budgets");
        budget(&nested, "1/1m");
        let mode = |path: &Path| std::fs::metadata(path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&nested), 0o700);
        assert_eq!(mode(&nested.join("api")), 0o600);
    }

    #[test]
    fn a_corrupt_file_is_a_full_bucket() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("api"), "garbage\0\n").unwrap();
        let mut budget = budget(dir.path(), "1/1h");
        assert_eq!(budget.reserve(None), Reservation::Granted(Duration::ZERO));
        assert!(budget.warned);
        let text = std::fs::read_to_string(dir.path().join("api")).unwrap();
        assert!(text.starts_with("retry-budget-v1 0 "), "{text}");
    }

    #[test]
    fn a_symlink_in_place_of_the_file_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink("/etc/passwd", dir.path().join("api")).unwrap();
        let opened = FileBudget::open(dir.path(), &"api".parse().unwrap(), "1/1m".parse().unwrap());
        assert!(opened.is_err());
    }

    #[test]
    fn parses_only_its_own_format() {
        let state = parse("retry-budget-v1 2.5 1000000000\n").unwrap();
        assert_eq!((state.tokens, state.at), (2.5, Duration::from_secs(1)));
        for bad in [
            "",
            "retry-budget-v1 NaN 1",
            "retry-budget-v1 1",
            "v0 1 1",
            "retry-budget-v1 1 1 1",
        ] {
            assert_eq!(parse(bad), None, "{bad}");
        }
    }
}
