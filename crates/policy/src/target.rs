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
    /// The target of `command` (its program first), by what `preset` finds in its arguments.
    pub fn of(preset: Option<&Preset>, command: &[OsString]) -> Target {
        let args: Vec<&str> = command
            .iter()
            .skip(1)
            .filter_map(|word| word.to_str())
            .collect();
        let found = match preset.map_or(Finder::Nothing, |preset| preset.finds) {
            Finder::Url => first_url(&args, URL_OPTIONS_NOT_THE_TARGET),
            Finder::GitRemote => args
                .iter()
                .filter(|arg| !arg.starts_with('-'))
                .find_map(|arg| url_authority(arg).or_else(|| scp_host(arg, false))),
            Finder::Rsync => args
                .iter()
                .filter(|arg| !arg.starts_with('-'))
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

/// Options whose value is a URL other than the one the command is about: a proxy, a referrer.
const URL_OPTIONS_NOT_THE_TARGET: &[&str] = &["-x", "--proxy", "--preproxy", "-e", "--referer"];

/// The host of the first URL among `args` that is not the value of one of `skipped`.
fn first_url(args: &[&str], skipped: &[&str]) -> Option<String> {
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        if skipped.contains(arg) {
            args.next();
        } else if let Some(authority) = url_authority(arg) {
            return Some(authority);
        }
    }
    None
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
/// `with_user` says so; none for anything with a slash before its colon (a local path).
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

/// psql's and pg_isready's server: `-h HOST`, `-hHOST`, `--host HOST` or `--host=HOST`, else a
/// `postgres://` URL's host, else `host=HOST` in a connection string.
fn postgres_host(args: &[&str]) -> Option<String> {
    let mut words = args.iter();
    while let Some(arg) = words.next() {
        match *arg {
            "-h" | "--host" => return words.next().map(|host| host.to_string()),
            _ => {}
        }
        if let Some(host) = arg.strip_prefix("--host=") {
            return Some(host.to_string());
        }
        if let Some(host) = arg.strip_prefix("-h").filter(|host| !host.is_empty()) {
            return Some(host.to_string());
        }
    }
    let url = args
        .iter()
        .filter(|arg| arg.starts_with("postgres://") || arg.starts_with("postgresql://"))
        .find_map(|arg| url_authority(arg));
    url.or_else(|| {
        args.iter()
            .flat_map(|arg| arg.split_whitespace())
            .find_map(|word| word.strip_prefix("host="))
            .map(str::to_string)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn target(words: &[&str]) -> Target {
        let command: Vec<OsString> = words.iter().map(OsString::from).collect();
        Target::of(Preset::for_program(words[0]), &command)
    }

    fn host(words: &[&str]) -> String {
        match target(words) {
            Target::Host(host) => host,
            Target::Command(_) => panic!("no host found in {words:?}"),
        }
    }

    #[test]
    fn a_url_names_its_host_and_port_without_the_user() {
        assert_eq!(
            host(&["curl", "-fsS", "https://Example.com/health"]),
            "example.com"
        );
        assert_eq!(
            host(&["curl", "http://u:pw@127.0.0.1:8080/x?y"]),
            "127.0.0.1:8080"
        );
        assert_eq!(host(&["wget", "-q", "http://[::1]:80/"]), "[::1]:80");
        assert_eq!(
            host(&["curl", "-x", "http://proxy:3128", "https://api.example.com"]),
            "api.example.com",
            "a proxy is not the target"
        );
        assert_eq!(
            host(&["pip", "install", "-i", "https://pypi.example/simple", "x"]),
            "pypi.example"
        );
        assert_eq!(
            host(&["npm", "install", "--registry", "http://reg:4873/", "x"]),
            "reg:4873"
        );
    }

    #[test]
    fn ssh_and_rsync_keep_the_user_and_git_the_host() {
        assert_eq!(
            host(&["ssh", "-p", "2222", "-o", "A=b", "deploy@web1", "uptime"]),
            "deploy@web1"
        );
        assert_eq!(host(&["ssh", "-vp22", "web1"]), "web1");
        assert_eq!(host(&["ssh", "ssh://u@h:2222/"]), "u@h:2222");
        assert_eq!(host(&["rsync", "-a", "src/", "u@backup:/srv/"]), "u@backup");
        assert_eq!(host(&["rsync", "-a", "mirror::pub", "dst/"]), "mirror");
        assert_eq!(host(&["rsync", "rsync://m.example/pub/", "."]), "m.example");
        assert_eq!(
            host(&["git", "clone", "git@github.com:org/r.git"]),
            "github.com"
        );
        assert_eq!(
            host(&["git", "ls-remote", "https://git.example/r"]),
            "git.example"
        );
    }

    #[test]
    fn psql_names_its_server_by_option_url_or_connection_string() {
        assert_eq!(host(&["psql", "-h", "db1", "-c", "select 1"]), "db1");
        assert_eq!(host(&["pg_isready", "--host=db2"]), "db2");
        assert_eq!(host(&["psql", "-hdb3"]), "db3");
        assert_eq!(host(&["psql", "postgresql://u@db4:5433/app"]), "db4:5433");
        assert_eq!(host(&["psql", "-d", "host=db5 dbname=app"]), "db5");
    }

    #[test]
    fn without_a_host_the_command_line_is_the_target() {
        for words in [
            &["apt-get", "update"][..],
            &["git", "fetch", "origin"],
            &["rsync", "-a", "./src/", "/mnt/dst/"],
            &["psql", "-c", "select 1"],
            &["make", "deploy"],
        ] {
            assert!(matches!(target(words), Target::Command(_)), "{words:?}");
        }
        assert_eq!(target(&["make", "a"]), target(&["make", "a"]));
        assert_ne!(target(&["make", "a"]), target(&["make", "b"]));
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
