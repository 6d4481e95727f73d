//! The URL of a git remote, by its name (`origin`), read from the repository's own config file
//! without running git: so that `git push origin` and `git fetch origin` spend from the budget
//! of the host the remote names, not of their command lines.
//!
//! Only what can be read for sure is read: the repository's `.git/config` (found from the
//! directory git is pointed at, upwards, or `GIT_DIR`), at most 64 KiB of it, opened without
//! blocking. A config whose answer git could make different (an `include`, a `url.*.insteadOf`
//! rewrite, a `pushurl`, several URLs, a quoted or escaped value), or a repository that is not a
//! plain `.git` directory (a worktree's or a submodule's `.git` file), gives no URL, and the
//! command line stays the target. Hand-written: git's config grammar is larger than this, but a
//! reader of all of it would answer more, not better, for this one question.

use std::ffi::OsString;
use std::fs::OpenOptions;
use std::io::Read;
use std::path::{Path, PathBuf};

use retry_budget::named_files;

/// The most of a config file that is read: a larger one gives no URL.
const LONGEST_CONFIG: u64 = 64 * 1024;

/// How many directories upwards a repository is looked for.
const DEEPEST: usize = 64;

/// The URL of the remote `remote` in the repository at or above `dir` (relative to the current
/// directory), or of `git_dir` when `GIT_DIR` names one; none when it cannot be read for sure.
/// `git_dir` is read as git reads it: a relative one from `dir`, where git runs after its `-C`,
/// and an empty one as no repository at all (git refuses to run).
pub(crate) fn url(dir: &Path, remote: &str, git_dir: Option<OsString>) -> Option<String> {
    let config = match git_dir {
        Some(git_dir) if git_dir.is_empty() => return None,
        Some(git_dir) => dir.join(git_dir).join("config"),
        None => repository(dir)?.join("config"),
    };
    let opened = named_files::open(&config, OpenOptions::new().read(true), 0).ok()?;
    if !opened.metadata.is_file() || opened.metadata.len() > LONGEST_CONFIG {
        return None;
    }
    let mut text = String::new();
    opened
        .file
        .take(LONGEST_CONFIG)
        .read_to_string(&mut text)
        .ok()?;
    remote_url(&text, remote)
}

/// The `.git` directory of the repository at or above `dir`.
fn repository(dir: &Path) -> Option<PathBuf> {
    let dir = std::path::absolute(dir).ok()?;
    dir.ancestors().take(DEEPEST).find_map(|dir| {
        let git = dir.join(".git");
        let metadata = std::fs::symlink_metadata(&git).ok()?;
        metadata.is_dir().then_some(git)
    })
}

/// The one `url` of `[remote "NAME"]` in the config `text`, if nothing in it could make git
/// answer otherwise.
fn remote_url(text: &str, remote: &str) -> Option<String> {
    let mut in_remote = false;
    let mut urls = Vec::new();
    for line in text.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with(['#', ';']) {
            continue;
        }
        if let Some(header) = line.strip_prefix('[') {
            let header = header.strip_suffix(']')?;
            let (section, subsection) = match header.split_once(char::is_whitespace) {
                Some((section, subsection)) => (section, Some(subsection.trim())),
                None => (header, None),
            };
            let section = section.to_ascii_lowercase();
            if matches!(section.as_str(), "include" | "includeif" | "url") {
                return None;
            }
            in_remote = section == "remote" && subsection == Some(&format!("\"{remote}\""));
            continue;
        }
        if !in_remote {
            continue;
        }
        let (key, value) = line.split_once('=')?;
        match key.trim().to_ascii_lowercase().as_str() {
            "url" => urls.push(value.trim()),
            "pushurl" => return None,
            _ => {}
        }
    }
    match urls[..] {
        [url] if !url.contains(['"', '\\', '#', ';']) && !url.is_empty() => Some(url.to_string()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CONFIG: &str = "[core]\n\trepositoryformatversion = 0\n\tbare = false\n\
                          [remote \"origin\"]\n\turl = git@github.com:org/app.git\n\
                          \tfetch = +refs/heads/*:refs/remotes/origin/*\n\
                          [remote \"Upstream\"]\n\tURL = https://git.example/app\n\
                          [branch \"main\"]\n\tremote = origin\n";

    #[test]
    fn reads_a_remotes_url_by_its_exact_name() {
        assert_eq!(
            remote_url(CONFIG, "origin").as_deref(),
            Some("git@github.com:org/app.git")
        );
        assert_eq!(
            remote_url(CONFIG, "Upstream").as_deref(),
            Some("https://git.example/app")
        );
        assert_eq!(remote_url(CONFIG, "upstream"), None, "names are exact");
        assert_eq!(remote_url(CONFIG, "main"), None);
    }

    #[test]
    fn anything_that_could_make_git_answer_otherwise_gives_no_url() {
        for added in [
            "[include]\n\tpath = more\n",
            "[includeIf \"gitdir:~/work/\"]\n\tpath = work\n",
            "[url \"https://mirror/\"]\n\tinsteadOf = git@github.com:\n",
            "[remote \"origin\"]\n\tpushurl = ssh://elsewhere/app\n",
            "[remote \"origin\"]\n\turl = https://second/app\n",
        ] {
            assert_eq!(
                remote_url(&format!("{CONFIG}{added}"), "origin"),
                None,
                "{added}"
            );
        }
        let quoted = "[remote \"origin\"]\n\turl = \"https://git.example/a\"\n";
        assert_eq!(remote_url(quoted, "origin"), None);
    }

    #[test]
    fn the_repository_is_found_upwards_and_only_as_a_git_directory() {
        let top = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(top.path().join(".git")).unwrap();
        std::fs::write(top.path().join(".git/config"), CONFIG).unwrap();
        let deep = top.path().join("src/module");
        std::fs::create_dir_all(&deep).unwrap();
        assert_eq!(
            url(&deep, "origin", None).as_deref(),
            Some("git@github.com:org/app.git")
        );
        let worktree = tempfile::tempdir().unwrap();
        std::fs::write(worktree.path().join(".git"), "gitdir: /elsewhere\n").unwrap();
        assert_eq!(url(worktree.path(), "origin", None), None);
        let git_dir = top.path().join(".git").into_os_string();
        assert_eq!(
            url(worktree.path(), "origin", Some(git_dir)).as_deref(),
            Some("git@github.com:org/app.git")
        );
    }

    #[test]
    fn git_dir_is_read_as_git_reads_it() {
        let top = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(top.path().join("app.git")).unwrap();
        std::fs::write(top.path().join("app.git/config"), CONFIG).unwrap();
        assert_eq!(
            url(top.path(), "origin", Some("app.git".into())).as_deref(),
            Some("git@github.com:org/app.git"),
            "a relative GIT_DIR is found from where git runs (its -C), not from here"
        );
        // What an empty GIT_DIR would name if it were a path: the directory itself.
        std::fs::write(top.path().join("config"), CONFIG).unwrap();
        assert_eq!(
            url(top.path(), "origin", Some("".into())),
            None,
            "git refuses an empty GIT_DIR: not a git repository"
        );
    }
}
