//! What a run's retries are aimed at, for the budget on this machine that a run spends from when
//! it names none: the host a preset finds in the command's arguments (a URL's host and port,
//! `user@host` for ssh and rsync, `-h` for psql), else the command line itself. One failing
//! service then cannot starve the retries of another, and every run against the same service,
//! whatever its other arguments, spends from the same budget.
//!
//! The arguments are the user's, but a target becomes a file name: it is bounded
//! ([`LONGEST_HOST`]), and the file name keeps only letters, digits, `.`, `_` and `-` of it, with
//! a hash of the whole when anything was left out. Where the host cannot be found for sure (a
//! remote named `origin`, a local socket) the command line stands for the target.

use std::ffi::OsString;
use std::fmt;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use crate::presets::{Finder, Preset};
use crate::seed::words_hash;

/// The longest host name a target takes (DNS allows 253 characters, a port and a user more).
pub const LONGEST_HOST: usize = 300;

/// What a run's retries are aimed at.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Target {
    /// A host (with its port or user, where the command gives them), lowercase.
    Host(String),
    /// The command line, by a hash of its words.
    Command(u64),
}

impl Target {
    /// The target of `command` (its program first), by what `preset` finds in its arguments;
    /// `remote_url` gives the URL of a git remote by its name, where the repository's config
    /// can be read (none where it cannot, and the command line is the target).
    pub fn of(
        preset: Option<&Preset>,
        command: &[OsString],
        remote_url: &dyn Fn(&Path, &str) -> Option<String>,
    ) -> Target {
        let args: Vec<&str> = command
            .iter()
            .skip(1)
            .filter_map(|word| word.to_str())
            .collect();
        let found = match preset.map_or(Finder::Nothing, |preset| preset.finds) {
            Finder::Url => first_url(&args),
            Finder::GitRemote => git_host(&args, remote_url),
            Finder::Rsync => positionals(&args, &|word| RSYNC_OPTIONS_WITH_VALUES.contains(&word))
                .find_map(|arg| url_authority(arg).or_else(|| scp_host(arg, true))),
            Finder::SshDestination => ssh_destination(&args),
            Finder::Postgres => postgres_host(&args),
            Finder::Nothing => None,
        };
        match found.filter(|host| !host.is_empty() && host.len() <= LONGEST_HOST) {
            Some(host) => Target::Host(host.to_ascii_lowercase()),
            None => Target::Command(words_hash(command.iter().map(|word| word.as_bytes()))),
        }
    }

    /// The name of the budget file this target's retries spend from: `host-` and the host, or
    /// `command-` and the command line's hash; at most 64 letters, digits, `.`, `_` and `-`.
    pub fn file_name(&self) -> String {
        match self {
            Target::Host(host) => {
                let kept: String = host
                    .chars()
                    .map(
                        |c| match c.is_ascii_alphanumeric() || matches!(c, '.' | '-') {
                            true => c,
                            false => '_',
                        },
                    )
                    .collect();
                match kept == *host && host.len() <= 59 {
                    true => format!("host-{host}"),
                    false => {
                        let hash = words_hash(std::iter::once(host.as_bytes()));
                        let prefix: String = kept.chars().take(42).collect();
                        format!("host-{prefix}-{hash:016x}")
                    }
                }
            }
            Target::Command(hash) => format!("command-{hash:016x}"),
        }
    }
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Target::Host(host) => f.write_str(host),
            Target::Command(_) => f.write_str("this command line"),
        }
    }
}

/// Options of curl, wget, pip and npm whose value is a URL other than the one the command is
/// about: a proxy, a referrer, a DNS-over-HTTPS server.
const URL_OPTIONS_NOT_THE_TARGET: &[&str] = &[
    "-x",
    "--proxy",
    "--preproxy",
    "--https-proxy",
    "--doh-url",
    "-e",
    "--referer",
];

/// The host of the first URL among `args` that is not the value of an option naming another
/// server.
fn first_url(args: &[&str]) -> Option<String> {
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        if URL_OPTIONS_NOT_THE_TARGET.contains(arg) {
            args.next();
        } else if let Some(authority) = url_authority(arg) {
            return Some(authority);
        }
    }
    None
}

/// The arguments among `args` that are neither options nor the values of the options that
/// `takes_value` says take the next word (given apart, as `--exclude PATTERN`); all after `--`.
fn positionals<'a>(
    args: &'a [&'a str],
    takes_value: &'a dyn Fn(&str) -> bool,
) -> impl Iterator<Item = &'a str> + 'a {
    let mut words = args.iter();
    let mut ended = false;
    std::iter::from_fn(move || {
        loop {
            let word = *words.next()?;
            if ended || word == "-" || !word.starts_with('-') {
                return Some(word);
            }
            if word == "--" {
                ended = true;
            } else if takes_value(word) {
                words.next();
            }
        }
    })
}

/// The host (and port) of `text` if it is a URL, without the user and password.
fn url_authority(text: &str) -> Option<String> {
    let (scheme, rest) = text.split_once("://")?;
    let scheme_ok = !scheme.is_empty()
        && scheme
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
    if !scheme_ok {
        return None;
    }
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    let host = authority.rsplit('@').next().unwrap_or_default();
    Some(host.to_string()).filter(|host| !host.is_empty())
}

/// `[user@]host` of scp's `[user@]host:path` (and rsync's `host::module`), keeping the user when
/// `with_user` says so; none for anything with a slash before its colon (a local path), as git
/// and rsync tell them apart.
fn scp_host(text: &str, with_user: bool) -> Option<String> {
    let (destination, _) = text.split_once(':')?;
    if destination.is_empty() || destination.contains('/') || text.starts_with('[') {
        return None;
    }
    match destination.rsplit_once('@') {
        Some((user, host)) if with_user => Some(format!("{user}@{host}")),
        Some((_, host)) => Some(host.to_string()),
        None => Some(destination.to_string()),
    }
}

/// git's options before its subcommand that take the next word as their value (git(1)).
const GIT_OPTIONS_WITH_VALUES: &[&str] = &[
    "-C",
    "-c",
    "--git-dir",
    "--work-tree",
    "--namespace",
    "--config-env",
    "--attr-source",
];

/// The options of git's clone, fetch, pull, push, ls-remote, remote and submodule that take the
/// next word as their value (their manuals); `-u` is clone's `--upload-pack` (push's and fetch's
/// `-u` take none).
const GIT_SUBCOMMAND_OPTIONS_WITH_VALUES: &[&str] = &[
    "-o",
    "--origin",
    "-b",
    "--branch",
    "-t",
    "--track",
    "-m",
    "--master",
    "--upload-pack",
    "--receive-pack",
    "--exec",
    "--reference",
    "--reference-if-able",
    "--separate-git-dir",
    "--depth",
    "--deepen",
    "--shallow-since",
    "--shallow-exclude",
    "-c",
    "--config",
    "-j",
    "--jobs",
    "--filter",
    "--template",
    "--server-option",
    "--push-option",
    "--bundle-uri",
    "--ref-format",
    "--negotiation-tip",
    "--refmap",
    "--recurse-submodules-default",
    "-s",
    "--strategy",
    "-X",
    "--strategy-option",
    "--sort",
    "--repo",
    "--name",
];

/// The host of the repository a git command talks to: the repository argument of clone, fetch,
/// pull, push, ls-remote, `remote add` and `submodule add` (or `push --repo`), when it is a URL
/// or scp-like `[user@]host:path`; a remote's name, through `remote_url` (read in the
/// repository at the command's `-C`, or here); never a refspec (`HEAD:main`), a commit message
/// or a path.
fn git_host(args: &[&str], remote_url: &dyn Fn(&Path, &str) -> Option<String>) -> Option<String> {
    let mut repository_dir = PathBuf::from(".");
    let mut words = args.iter();
    let subcommand = loop {
        let word = *words.next()?;
        if GIT_OPTIONS_WITH_VALUES.contains(&word) {
            let value = words.next()?;
            if word == "-C" {
                repository_dir.push(value);
            }
        } else if let Some(dir) = word.strip_prefix("-C") {
            repository_dir.push(dir);
        } else if !word.starts_with('-') {
            break word;
        }
    };
    let rest: Vec<&str> = words.copied().collect();
    let given_repo = rest.iter().find_map(|word| word.strip_prefix("--repo="));
    let takes_value = |word: &str| {
        GIT_SUBCOMMAND_OPTIONS_WITH_VALUES.contains(&word)
            || (subcommand == "clone" && word == "-u")
    };
    let mut positional = positionals(&rest, &takes_value);
    let repository = match subcommand {
        "clone" | "fetch" | "pull" | "push" | "ls-remote" => {
            given_repo.or_else(|| positional.next())?
        }
        "remote" | "submodule" if positional.next() == Some("add") => match subcommand {
            "remote" => positional.nth(1)?,
            _ => positional.next()?,
        },
        _ => return None,
    };
    url_authority(repository)
        .or_else(|| scp_host(repository, false))
        .or_else(|| {
            let named_remote = !repository.contains(['/', ':']) && !repository.starts_with('.');
            named_remote
                .then(|| remote_url(&repository_dir, repository))
                .flatten()
                .and_then(|url| url_authority(&url).or_else(|| scp_host(&url, false)))
        })
}

/// rsync's options that take the next word as their value (rsync(1)): patterns, paths and
/// settings, which may hold a colon without naming a host.
const RSYNC_OPTIONS_WITH_VALUES: &[&str] = &[
    "-e",
    "--rsh",
    "--rsync-path",
    "-f",
    "--filter",
    "--exclude",
    "--include",
    "--exclude-from",
    "--include-from",
    "--files-from",
    "-T",
    "--temp-dir",
    "--compare-dest",
    "--copy-dest",
    "--link-dest",
    "-B",
    "--block-size",
    "--max-size",
    "--min-size",
    "--partial-dir",
    "--log-file",
    "--log-file-format",
    "--out-format",
    "--password-file",
    "--port",
    "--sockopts",
    "--timeout",
    "--contimeout",
    "--bwlimit",
    "--chmod",
    "--chown",
    "--usermap",
    "--groupmap",
    "--suffix",
    "--backup-dir",
    "--modify-window",
    "--iconv",
    "--checksum-choice",
    "--compress-choice",
    "--skip-compress",
    "--max-delete",
    "--info",
    "--debug",
    "--write-batch",
    "--read-batch",
    "-M",
    "--remote-option",
];

/// ssh's options that take a value (ssh(1) SYNOPSIS).
const SSH_OPTIONS_WITH_VALUES: &str = "BbcDEeFIiJLlmOoPpQRSWw";

/// ssh's destination, `[user@]host` or `ssh://[user@]host[:port]`: the first argument that is
/// neither an option nor an option's value.
fn ssh_destination(args: &[&str]) -> Option<String> {
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        if *arg == "--" {
            return args.next().and_then(|arg| ssh_host(arg));
        }
        match arg.strip_prefix('-') {
            Some(flags) if !flags.is_empty() => {
                // `-p 22` takes the next word; `-p22` and `-vp22` hold their value.
                let value_at = flags.find(|flag| SSH_OPTIONS_WITH_VALUES.contains(flag));
                if value_at.is_some_and(|at| at + 1 == flags.len()) {
                    args.next();
                }
            }
            _ => return ssh_host(arg),
        }
    }
    None
}

/// The `[user@]host` of an ssh destination.
fn ssh_host(destination: &str) -> Option<String> {
    match destination.strip_prefix("ssh://") {
        Some(rest) => rest.split('/').next().map(str::to_string),
        None => Some(destination.to_string()),
    }
}

/// psql's and pg_isready's options that take the next word as their value (their manuals).
const POSTGRES_OPTIONS_WITH_VALUES: &[&str] = &[
    "-c",
    "--command",
    "-f",
    "--file",
    "-L",
    "--log-file",
    "-o",
    "--output",
    "-p",
    "--port",
    "-P",
    "--pset",
    "-R",
    "--record-separator",
    "-T",
    "--table-attr",
    "-U",
    "--username",
    "-v",
    "--set",
    "--variable",
    "-F",
    "--field-separator",
    "-t",
    "--timeout",
];

/// psql's and pg_isready's server: `-h HOST`, `-hHOST`, `--host HOST` or `--host=HOST`, else the
/// host of its database name (`-d`, `--dbname`, or the first argument) when that is a
/// `postgres://` URL or a connection string with `host=`; never a word of an SQL command.
fn postgres_host(args: &[&str]) -> Option<String> {
    let mut words = args.iter();
    let mut dbname = None;
    while let Some(&arg) = words.next() {
        if let Some(host) = arg
            .strip_prefix("--host=")
            .or_else(|| arg.strip_prefix("-h").filter(|host| !host.is_empty()))
        {
            return Some(host.to_string());
        }
        match arg {
            "-h" | "--host" => return words.next().map(|host| host.to_string()),
            "-d" | "--dbname" => dbname = dbname.or(words.next().copied()),
            _ if POSTGRES_OPTIONS_WITH_VALUES.contains(&arg) => {
                words.next();
            }
            _ if arg.starts_with("--dbname=") => dbname = dbname.or(arg.get(9..)),
            _ if !arg.starts_with('-') => dbname = dbname.or(Some(arg)),
            _ => {}
        }
    }
    let dbname = dbname?;
    match dbname.starts_with("postgres://") || dbname.starts_with("postgresql://") {
        true => url_authority(dbname),
        false => dbname
            .split_whitespace()
            .find_map(|word| word.strip_prefix("host="))
            .map(str::to_string),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The URL a repository's config gives its remote `upstream`; no other remote can be read.
    fn config(_dir: &Path, remote: &str) -> Option<String> {
        (remote == "upstream").then(|| "git@github.com:org/r.git".to_string())
    }

    fn target(words: &[&str]) -> Target {
        let command: Vec<OsString> = words.iter().map(OsString::from).collect();
        Target::of(Preset::for_program(words[0]), &command, &config)
    }

    fn host(words: &[&str]) -> Option<String> {
        match target(words) {
            Target::Host(host) => Some(host),
            Target::Command(_) => None,
        }
    }

    /// Command lines of docs/presets.md, the README and the programs' own manuals, each with the
    /// host its retries are aimed at (none: the command line is the target).
    const COMMAND_LINES: &[(&[&str], Option<&str>)] = &[
        (
            &["curl", "-fsS", "https://Example.com/health"],
            Some("example.com"),
        ),
        (
            &[
                "curl",
                "-fsS",
                "-D",
                "/dev/stderr",
                "https://example.com/api",
            ],
            Some("example.com"),
        ),
        (
            &["curl", "-fsS", "-o", "file", "https://example.com/file"],
            Some("example.com"),
        ),
        (
            &["curl", "http://u:pw@127.0.0.1:8080/x?y"],
            Some("127.0.0.1:8080"),
        ),
        (
            &["curl", "-x", "http://proxy:3128", "https://api.example.com"],
            Some("api.example.com"),
        ),
        (
            &[
                "curl",
                "--doh-url",
                "https://doh.example/q",
                "https://a.example",
            ],
            Some("a.example"),
        ),
        (
            &[
                "curl",
                "-H",
                "Referer: https://b.example",
                "https://a.example",
            ],
            Some("a.example"),
        ),
        (
            &[
                "curl",
                "-d",
                "next=https://b.example",
                "https://a.example/f",
            ],
            Some("a.example"),
        ),
        (
            &["curl", "-u", "user:secret", "https://a.example"],
            Some("a.example"),
        ),
        (&["curl", "localhost:8080"], None),
        (
            &["wget", "-nv", "https://example.com/artifact.tar.gz"],
            Some("example.com"),
        ),
        (&["wget", "-q", "http://[::1]:80/"], Some("[::1]:80")),
        (
            &[
                "wget",
                "-e",
                "robots=off",
                "-r",
                "https://example.com/docs/",
            ],
            Some("example.com"),
        ),
        (
            &["wget", "--referer=https://b.example", "https://a.example/"],
            Some("a.example"),
        ),
        (
            &["git", "clone", "git@github.com:org/r.git"],
            Some("github.com"),
        ),
        (
            &[
                "git",
                "clone",
                "--depth",
                "1",
                "https://git.example/r.git",
                "d",
            ],
            Some("git.example"),
        ),
        (
            &[
                "git",
                "clone",
                "-b",
                "main",
                "-u",
                "/opt/git-upload-pack",
                "ssh://git@h.example:2222/r.git",
            ],
            Some("h.example:2222"),
        ),
        (
            &[
                "git",
                "-C",
                "/src",
                "fetch",
                "https://git.example/r",
                "main",
            ],
            Some("git.example"),
        ),
        (
            &["git", "ls-remote", "https://git.example/r"],
            Some("git.example"),
        ),
        (
            &["git", "push", "--repo=https://git.example/r"],
            Some("git.example"),
        ),
        (
            &[
                "git",
                "remote",
                "add",
                "-f",
                "mirror",
                "git@mirror.example:r.git",
            ],
            Some("mirror.example"),
        ),
        (
            &[
                "git",
                "submodule",
                "add",
                "https://git.example/lib.git",
                "lib",
            ],
            Some("git.example"),
        ),
        (
            &["git", "push", "upstream", "HEAD:release"],
            Some("github.com"),
        ),
        (&["git", "push", "origin", "HEAD:main"], None),
        (&["git", "push", "-u", "origin", "feature"], None),
        (&["git", "pull", "--rebase", "origin", "main"], None),
        (&["git", "fetch", "--all"], None),
        (&["git", "fetch", "origin"], None),
        (&["git", "fetch", "../other", "main:main"], None),
        (&["git", "fetch", "/srv/repo.git"], None),
        (&["git", "commit", "-m", "fix: the thing"], None),
        (&["git", "checkout", "HEAD:main"], None),
        (&["rsync", "-avz", "foo:src/bar", "/data/tmp"], Some("foo")),
        (&["rsync", "-a", "src/", "u@backup:/srv/"], Some("u@backup")),
        (&["rsync", "-av", "mirror::pub", "dst/"], Some("mirror")),
        (&["rsync", "rsync://m.example/pub/", "."], Some("m.example")),
        (
            &["rsync", "-e", "ssh -p 2234", "-a", "src/", "web1:/srv/"],
            Some("web1"),
        ),
        (
            &["rsync", "-a", "--exclude", "a:b", "src/", "/mnt/dst/"],
            None,
        ),
        (&["rsync", "-a", "./src/", "/mnt/dst/"], None),
        (&["rsync", "-a", "./a:b", "/mnt/"], None),
        (&["ssh", "deploy@host", "./release.sh"], Some("deploy@host")),
        (
            &["ssh", "-p", "2222", "-o", "A=b", "deploy@web1", "uptime"],
            Some("deploy@web1"),
        ),
        (&["ssh", "-vp22", "web1"], Some("web1")),
        (
            &[
                "ssh", "-i", "k", "-l", "admin", "-J", "jump", "db1", "uptime",
            ],
            Some("db1"),
        ),
        (&["ssh", "ssh://u@h:2222/"], Some("u@h:2222")),
        (&["psql", "-h", "db1", "-c", "select 1"], Some("db1")),
        (&["psql", "-hdb3"], Some("db3")),
        (&["psql", "postgresql://u@db4:5433/app"], Some("db4:5433")),
        (&["psql", "-d", "host=db5 dbname=app"], Some("db5")),
        (&["psql", "host=db6 dbname=app"], Some("db6")),
        (&["psql", "-c", "select 'host=evil'"], None),
        (&["psql", "-U", "app", "-f", "setup.sql", "app"], None),
        (&["psql", "-c", "select 1"], None),
        (&["pg_isready", "-h", "db", "-p", "5432"], Some("db")),
        (&["pg_isready", "--host=db2"], Some("db2")),
        (&["pg_isready", "-d", "postgres://db3/app"], Some("db3")),
        (&["pip", "install", "-r", "requirements.txt"], None),
        (
            &["pip", "install", "-i", "https://pypi.example/simple", "x"],
            Some("pypi.example"),
        ),
        (
            &[
                "pip",
                "install",
                "--proxy",
                "http://p:3128",
                "-i",
                "https://pypi.example/simple",
                "x",
            ],
            Some("pypi.example"),
        ),
        (
            &["pip", "install", "git+https://github.com/org/pkg"],
            Some("github.com"),
        ),
        (&["npm", "ci"], None),
        (
            &["npm", "install", "--registry", "http://reg:4873/", "x"],
            Some("reg:4873"),
        ),
        (
            &[
                "npm",
                "install",
                "--https-proxy",
                "http://p:8080",
                "--registry",
                "https://r.example",
                "x",
            ],
            Some("r.example"),
        ),
        (&["apt-get", "update"], None),
        (&["apt-get", "install", "-y", "jq"], None),
        (&["make", "deploy"], None),
    ];

    #[test]
    fn every_preset_finds_the_host_of_its_programs_command_lines() {
        for (words, expected) in COMMAND_LINES {
            assert_eq!(host(words).as_deref(), *expected, "{words:?}");
        }
    }

    #[test]
    fn a_refspec_is_never_a_host_so_two_remotes_never_share_a_budget() {
        assert_ne!(
            target(&["git", "push", "origin", "HEAD:main"]),
            target(&["git", "push", "other", "HEAD:main"])
        );
        assert_eq!(target(&["make", "a"]), target(&["make", "a"]));
        assert_ne!(target(&["make", "a"]), target(&["make", "b"]));
    }

    #[test]
    fn a_remote_is_read_in_the_repository_git_is_pointed_at() {
        let seen = std::cell::RefCell::new(Vec::new());
        let reader = |dir: &Path, remote: &str| {
            seen.borrow_mut()
                .push((dir.to_path_buf(), remote.to_string()));
            None
        };
        let command: Vec<OsString> = ["git", "-C", "/src/app", "push", "origin"]
            .iter()
            .map(OsString::from)
            .collect();
        Target::of(Preset::for_program("git"), &command, &reader);
        assert_eq!(
            seen.into_inner(),
            [(PathBuf::from("/src/app"), "origin".to_string())]
        );
    }

    #[test]
    fn every_target_names_a_file_of_the_allowed_characters() {
        let allowed = |name: &str| {
            name.len() <= 64
                && name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
        };
        let long = format!("https://{}.example/", "a".repeat(280));
        for words in [
            &["curl", "https://example.com"][..],
            &["curl", "http://[::1]:80/"],
            &["ssh", "u@h"],
            &["curl", &long],
            &["make"],
        ] {
            let name = target(words).file_name();
            assert!(allowed(&name), "{words:?}: {name}");
        }
        assert_eq!(
            target(&["curl", "https://example.com"]).file_name(),
            "host-example.com"
        );
        assert_ne!(
            target(&["curl", "http://[::1]:80/"]).file_name(),
            target(&["curl", "http://[::1]_80/"]).file_name(),
            "names that differ only in what is replaced stay apart"
        );
    }
}
