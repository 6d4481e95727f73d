//! `--preset NAME`: what the failures of a program people wrap mean, taken from that program's
//! manual: which exit statuses and which of its messages say "try again" (a dropped connection,
//! a 503) and which say "this will never work" (a 404, a wrong password). Each preset is an
//! ordered list of rules, a status set and, where the status alone cannot tell, a pattern its
//! message matches; the first rule that holds decides, and a status no rule names is the
//! preset's `otherwise`. An attempt cut by `--timeout` (124) is always retried.
//!
//! Pure data and one lookup; `rules` puts a preset's rules after the user's own and the tool's
//! guards, and its `otherwise` last.

use std::path::Path;

use crate::choice::Choice;
#[cfg(test)]
use crate::codes::StatusSet;
use crate::matching::OutputStream;
use crate::verdict::Verdict;

/// One rule of a preset.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rule {
    /// The exit statuses it concerns, as `--retry-on` takes them.
    pub statuses: &'static str,
    /// A pattern the program's message must match for the rule to hold, if the status alone
    /// does not tell.
    pub output: Option<&'static str>,
    /// What the rule makes of an attempt it holds for.
    pub verdict: Verdict,
    /// What such a failure is, in words.
    pub meaning: &'static str,
}

/// A program's preset.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Preset {
    /// The name `--preset` takes.
    pub name: &'static str,
    /// The program names `--preset auto` knows it by.
    pub programs: &'static [&'static str],
    /// The stream the program writes its messages on.
    pub stream: OutputStream,
    /// The rules, the first that holds deciding.
    pub rules: &'static [Rule],
    /// What a status no rule names means.
    pub otherwise: Verdict,
    /// Where the program's words come from.
    pub sources: &'static str,
    /// A pattern that reads a `Retry-After` header where the program shows it (on the stream it
    /// writes its messages on), as `--retry-after-output` takes it.
    pub retry_after: Option<&'static str>,
    /// How the program's arguments name the service it talks to.
    pub finds: Finder,
}

/// How a preset's program names the service it talks to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Finder {
    /// A URL among the arguments (curl, wget, pip's `--index-url`, npm's `--registry`).
    Url,
    /// A URL, or `[user@]host:path` as scp writes it (git).
    GitRemote,
    /// `rsync://[user@]host`, `[user@]host::module` or `[user@]host:path`.
    Rsync,
    /// ssh's destination: the first argument that is not an option or an option's value.
    SshDestination,
    /// `-h HOST` or `--host=HOST`, a `postgresql://` URL, or `host=` in a connection string.
    Postgres,
    /// Nothing in the arguments names it (apt-get reads its mirrors from its own files).
    Nothing,
}

/// A `Retry-After` header as curl shows it (`-v`: `< Retry-After: 2`) and wget (`-S`).
const RETRY_AFTER_SHOWN: &str = r"(?i)^[<\s]*retry-after:\s*(.+?)\s*$";

/// An HTTP status that another request cannot mend, as a pattern: every 4xx but 408 (timeout)
/// and 429 (too many requests), and 501 and 505, as curl's `--retry` sees them.
macro_rules! http_permanent {
    () => {
        "(40[0-7]|409|41[0-9]|42[0-8]|4[3-9][0-9]|501|505)"
    };
}

/// A name that does not exist, in the C library's words (`EAI_NONAME`, `EAI_NODATA`), as
/// against a resolver that failed for now (`EAI_AGAIN`: "Temporary failure in name resolution").
macro_rules! no_such_name {
    () => {
        "(Name or service not known|No address associated with hostname)"
    };
}

/// A certificate the client could not verify, in the words of OpenSSL, GnuTLS and Python.
macro_rules! unverified_certificate {
    () => {
        "SSL certificate problem|server certificate verification failed|certificate verify \
         failed|CERTIFICATE_VERIFY_FAILED|Certificate verification failed"
    };
}

const fn rule(
    statuses: &'static str,
    output: Option<&'static str>,
    verdict: Verdict,
    meaning: &'static str,
) -> Rule {
    Rule {
        statuses,
        output,
        verdict,
        meaning,
    }
}

use Verdict::{Retry, Stop};

/// Every preset, in the order `--help` and the guide list them.
pub const PRESETS: [Preset; 10] = [
    Preset {
        name: "curl",
        programs: &["curl"],
        stream: OutputStream::Stderr,
        rules: &[
            rule(
                "22",
                Some(concat!(
                    "The requested URL returned error: ",
                    http_permanent!()
                )),
                Stop,
                "an HTTP error answer another request cannot mend (4xx but 408 and 429; 501, 505)",
            ),
            rule(
                "22",
                None,
                Retry,
                "an HTTP error answer curl's --retry calls transient (408, 429, 500, 502-504), \
                 or one curl did not show (-f without -S)",
            ),
            rule(
                "5-7,16,18,28,35,52,55,56,92,95",
                None,
                Retry,
                "a name that did not resolve, a refused connection, a time-out, a failed TLS \
                 handshake, an empty reply, a connection reset or cut, an HTTP/2 or /3 error",
            ),
        ],
        otherwise: Stop,
        sources: "curl(1) EXIT CODES and --retry; libcurl-errors(3)",
        retry_after: Some(RETRY_AFTER_SHOWN),
        finds: Finder::Url,
    },
    Preset {
        name: "wget",
        programs: &["wget"],
        stream: OutputStream::Stderr,
        rules: &[
            rule(
                "8",
                Some(concat!("ERROR ", http_permanent!())),
                Stop,
                "an HTTP error answer another request cannot mend (4xx but 408 and 429; 501, 505)",
            ),
            rule(
                "8",
                None,
                Retry,
                "any other error answer (408, 429, 5xx), or one wget did not show (-q)",
            ),
            rule(
                "4",
                Some(concat!("failed: ", no_such_name!())),
                Stop,
                "a name that does not exist (wget -nv and -q do not say which it was)",
            ),
            rule(
                "4",
                None,
                Retry,
                "a network failure: a name that did not resolve for now, a refused or reset \
                 connection, a time-out",
            ),
        ],
        otherwise: Stop,
        sources: "wget(1) EXIT STATUS",
        retry_after: Some(RETRY_AFTER_SHOWN),
        finds: Finder::Url,
    },
    Preset {
        name: "git",
        programs: &["git"],
        stream: OutputStream::Stderr,
        rules: &[
            rule(
                "128",
                Some(concat!(
                    "Authentication failed|could not read (Username|Password)|",
                    "terminal prompts disabled|[Rr]epository (.*)?not found|",
                    "does not appear to be a git repository|",
                    "access denied or repository not exported|Permission denied|",
                    "Host key verification failed|returned error: ",
                    http_permanent!(),
                    "|",
                    no_such_name!(),
                    "|",
                    unverified_certificate!()
                )),
                Stop,
                "a repository that is not there, a login or key it refused, a name that does not \
                 exist, or a certificate that cannot be verified",
            ),
            rule(
                "128",
                Some(concat!(
                    "early EOF|hung up unexpectedly|RPC failed|unable to access|",
                    "unable to connect|Could not resolve host|Temporary failure in name resolution|",
                    "Connection (refused|reset|timed out)|",
                    "[Tt]imed out|index-pack failed|unexpected disconnect|transfer closed|",
                    "SSL_ERROR|gnutls_handshake|HTTP/2 stream|remote error: .*(busy|temporar)"
                )),
                Retry,
                "a connection that failed or was cut, or an HTTP answer that another request \
                 may mend (408, 429, 5xx)",
            ),
        ],
        otherwise: Stop,
        sources: "git(1) and git-clone(1), git-fetch(1): status 128 and the messages of its \
                  transports (http, git://, ssh)",
        retry_after: None,
        finds: Finder::GitRemote,
    },
    Preset {
        name: "rsync",
        programs: &["rsync"],
        stream: OutputStream::Stderr,
        rules: &[
            rule(
                "5",
                Some(r"@ERROR: max connections \([0-9]+\) reached"),
                Retry,
                "a daemon at its connection limit, which says to try again later",
            ),
            rule(
                "10",
                Some(concat!("getaddrinfo: .*", no_such_name!())),
                Stop,
                "a name that does not exist",
            ),
            rule(
                "10,12,24,30,35",
                None,
                Retry,
                "a socket error (a refused connection), a data stream cut short, files that \
                 vanished while they were sent, a time-out",
            ),
        ],
        otherwise: Stop,
        sources: "rsync(1) EXIT VALUES, rsyncd.conf(5) max connections",
        retry_after: None,
        finds: Finder::Rsync,
    },
    Preset {
        name: "ssh",
        programs: &["ssh"],
        stream: OutputStream::Stderr,
        rules: &[
            rule(
                "255",
                Some(concat!(
                    "Permission denied|Host key verification failed|",
                    "REMOTE HOST IDENTIFICATION HAS CHANGED|Too many authentication failures|",
                    "no matching (host key type|key exchange method|cipher|MAC) found|",
                    "Bad configuration option|Could not resolve hostname .*: ",
                    no_such_name!()
                )),
                Stop,
                "a key or password the server refused, a host key that does not match, a name \
                 that does not exist, or a configuration no attempt can mend",
            ),
            rule(
                "255",
                Some(concat!(
                    "Connection (refused|reset|timed out|closed)|kex_exchange_identification|",
                    "ssh_exchange_identification|banner exchange|Broken pipe|No route to host|",
                    "Network is unreachable|Could not resolve hostname|",
                    "Temporary failure in name resolution|closed by remote host"
                )),
                Retry,
                "a connection that failed or was cut, or a name that did not resolve for now",
            ),
        ],
        otherwise: Stop,
        sources: "ssh(1) EXIT STATUS (255 for its own errors, else the remote command's) and \
                  its messages",
        retry_after: None,
        finds: Finder::SshDestination,
    },
    Preset {
        name: "psql",
        programs: &["psql"],
        stream: OutputStream::Stderr,
        rules: &[
            rule(
                "2",
                Some(concat!(
                    "authentication failed|database \".*\" does not exist|",
                    "role \".*\" does not exist|no pg_hba.conf entry|invalid (port|connection option)|",
                    "invalid URI|certificate verify failed|could not translate host name .* to \
                     address: ",
                    no_such_name!()
                )),
                Stop,
                "a login the server refused, a database, role or name that is not there, or a \
                 connection string no attempt can mend",
            ),
            rule(
                "2",
                None,
                Retry,
                "a connection that failed or went bad: refused, a server starting up or \
                 shutting down, too many clients, a connection closed unexpectedly",
            ),
        ],
        otherwise: Stop,
        sources: "psql(1) EXIT STATUS, and PostgreSQL's connection messages",
        retry_after: None,
        finds: Finder::Postgres,
    },
    Preset {
        name: "pg_isready",
        programs: &["pg_isready"],
        stream: OutputStream::Stderr,
        rules: &[rule(
            "1,2",
            None,
            Retry,
            "a server rejecting connections (starting up) or not answering",
        )],
        otherwise: Stop,
        sources: "pg_isready(1) EXIT STATUS",
        retry_after: None,
        finds: Finder::Postgres,
    },
    Preset {
        name: "apt-get",
        programs: &["apt-get", "apt"],
        stream: OutputStream::Stderr,
        rules: &[
            rule(
                "0,100",
                Some(concat!(
                    r"Could not resolve '|^[EW]: Failed to fetch \S+\s+",
                    http_permanent!(),
                    r"\s|",
                    unverified_certificate!()
                )),
                Stop,
                "a mirror whose name does not exist, that answers 404 (or another answer a \
                 request cannot mend), or whose certificate cannot be verified",
            ),
            rule(
                "0",
                Some(r"^W: (Failed to fetch|Some index files failed to download)"),
                Retry,
                "an index it could not fetch, which apt-get update ends with status 0",
            ),
            rule(
                "100",
                Some(concat!(
                    r"^E: (Unable to locate package|Package '.*' has no installation candidate|",
                    r"Version '.*' for '.*' was not found|Invalid operation|",
                    r"Couldn't find any package|Command line option)"
                )),
                Stop,
                "a package or version the archive does not have, or a command it refuses",
            ),
            rule(
                "100",
                Some(concat!(
                    r"^E: (Could not get lock|Unable to acquire the dpkg frontend lock|",
                    r"Unable to lock|Failed to fetch|Some index files failed to download|",
                    r"Unable to fetch some archives|.*Hash Sum mismatch)|^W: Failed to fetch"
                )),
                Retry,
                "a lock another apt or dpkg holds, or an archive or index it could not fetch",
            ),
        ],
        otherwise: Stop,
        sources: "apt-get(8) DIAGNOSTICS (100 for an error) and apt's messages; apt-get \
                  update's status 0 after a failed fetch",
        retry_after: None,
        finds: Finder::Nothing,
    },
    Preset {
        name: "pip",
        programs: &["pip", "pip3"],
        // pip says it could not fetch an index page (a certificate, say) on stdout.
        stream: OutputStream::Both,
        rules: &[
            rule(
                "1,2",
                Some(concat!(
                    r"\[Errno -[25]\] ",
                    no_such_name!(),
                    r"|problem confirming the ssl certificate|",
                    unverified_certificate!()
                )),
                Stop,
                "an index whose name does not exist, or whose certificate cannot be verified",
            ),
            rule(
                "1,2",
                Some(concat!(
                    r"Retrying \(Retry\(|Server Error|Connection (refused|reset|aborted)|",
                    r"Read timed out|NewConnectionError|ProtocolError|IncompleteRead|",
                    r"RemoteDisconnected|Temporary failure in name resolution|",
                    r"Max retries exceeded|HTTP error 5[0-9][0-9]"
                )),
                Retry,
                "a connection that failed or was cut, or an index that answered 5xx (pip \
                 download and pip wheel end with 2 when it still did after pip's own retries)",
            ),
            rule(
                "1,2",
                Some(concat!(
                    r"\(from versions: [0-9]|Invalid requirement|is not a supported wheel|",
                    r"ResolutionImpossible|Could not open requirements file"
                )),
                Stop,
                "a version the index does not have, or a requirement pip cannot read",
            ),
            rule(
                "1,2",
                Some(r"No matching distribution found"),
                Retry,
                "no version at all: a package the index does not have, or an index that \
                 answered 5xx or 404, which pip reports alike",
            ),
        ],
        otherwise: Stop,
        sources: "pip's messages (pip ends an error with 1, and with 2 when an exception escapes \
                  it): pip install, download and wheel, their index and network errors",
        retry_after: None,
        finds: Finder::Url,
    },
    Preset {
        name: "npm",
        programs: &["npm"],
        stream: OutputStream::Stderr,
        rules: &[rule(
            "1",
            Some(concat!(
                r"^npm (ERR!|error) code (E5[0-9][0-9]|E408|E429|ECONNRESET|ECONNREFUSED|",
                r"ETIMEDOUT|ESOCKETTIMEDOUT|EAI_AGAIN|EPIPE|ECONNABORTED|",
                r"EHOSTUNREACH|ENETUNREACH)$"
            )),
            Retry,
            "an answer another request may mend (408, 429, 5xx), a connection that failed or \
             was cut, or a name that did not resolve for now (EAI_AGAIN)",
        )],
        otherwise: Stop,
        sources: "npm's error codes (npm ends every error with 1): E404, ETARGET, E401, a name \
                  that does not exist (ENOTFOUND), a certificate it cannot verify, and the other \
                  codes of npm-registry-fetch",
        retry_after: None,
        finds: Finder::Url,
    },
];

impl Preset {
    /// The preset for the program `program` runs (a path or a bare name), for `--preset auto`.
    pub fn for_program(program: &str) -> Option<&'static Preset> {
        let name = Path::new(program).file_name()?.to_str()?;
        PRESETS
            .iter()
            .find(|preset| preset.programs.contains(&name))
    }

    /// What a status no rule names means, in words.
    pub fn otherwise_meaning(&self) -> &'static str {
        match self.otherwise {
            Verdict::Stop => "a failure the preset does not call transient",
            _ => "a failure the preset names no rule for",
        }
    }
}

/// `--preset`: a preset by name, or `auto`, by the command's program.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PresetChoice {
    /// The preset of the command's program, if it has one.
    Auto,
    /// The preset at this place in [`PRESETS`].
    Named(usize),
}

/// Every choice, `auto` first.
const CHOICES: [PresetChoice; PRESETS.len() + 1] = {
    let mut choices = [PresetChoice::Auto; PRESETS.len() + 1];
    let mut index = 0;
    while index < PRESETS.len() {
        choices[index + 1] = PresetChoice::Named(index);
        index += 1;
    }
    choices
};

impl Choice for PresetChoice {
    const ALL: &'static [PresetChoice] = &CHOICES;

    fn name(self) -> &'static str {
        match self {
            PresetChoice::Auto => "auto",
            PresetChoice::Named(index) => PRESETS[index].name,
        }
    }

    fn about(self) -> &'static str {
        match self {
            PresetChoice::Auto => "The preset of the command's program, if it has one",
            PresetChoice::Named(index) => PRESETS[index].sources,
        }
    }
}

impl PresetChoice {
    /// The preset this choice gives for a command whose program is `program`; none for `auto`
    /// and a program no preset knows.
    pub fn resolve(self, program: Option<&str>) -> Option<&'static Preset> {
        match self {
            PresetChoice::Auto => program.and_then(Preset::for_program),
            PresetChoice::Named(index) => PRESETS.get(index),
        }
    }
}

#[cfg(test)]
impl Preset {
    /// The preset named `name`.
    pub(crate) fn named(name: &str) -> Option<&'static Preset> {
        PRESETS.iter().find(|preset| preset.name == name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_rule_parses_and_every_pattern_compiles() {
        for preset in &PRESETS {
            for rule in preset.rules {
                assert!(
                    rule.statuses.parse::<StatusSet>().is_ok(),
                    "{}",
                    rule.statuses
                );
                if let Some(pattern) = rule.output {
                    assert!(regex::Regex::new(pattern).is_ok(), "{pattern}");
                }
            }
            assert!(!preset.sources.is_empty());
        }
    }

    #[test]
    fn the_http_presets_share_one_idea_of_a_permanent_answer() {
        let permanent = regex::Regex::new(concat!("^", http_permanent!(), "$")).unwrap();
        for code in 100..600 {
            let expected = (400..500).contains(&code) && code != 408 && code != 429
                || code == 501
                || code == 505;
            assert_eq!(permanent.is_match(&code.to_string()), expected, "{code}");
        }
        for preset in ["curl", "wget"] {
            let rules = Preset::named(preset).unwrap().rules;
            let pattern = rules.iter().find_map(|rule| rule.output).unwrap();
            assert!(pattern.ends_with(http_permanent!()), "{preset}: {pattern}");
        }
    }

    #[test]
    fn a_rule_naming_a_success_status_reads_the_output() {
        // A status a program ends with when all went well fails only by what it says.
        for preset in &PRESETS {
            for rule in preset.rules {
                let statuses = rule.statuses.parse::<StatusSet>().unwrap();
                if statuses.contains(0) {
                    assert!(rule.output.is_some(), "{}: {}", preset.name, rule.meaning);
                }
            }
        }
    }

    #[test]
    fn every_preset_is_a_choice_by_its_name() {
        let names: Vec<String> = PresetChoice::ALL
            .iter()
            .map(|choice| choice.name().to_string())
            .collect();
        let mut expected = vec!["auto".to_string()];
        expected.extend(PRESETS.iter().map(|preset| preset.name.to_string()));
        assert_eq!(names, expected);
        assert_eq!(
            PresetChoice::Auto
                .resolve(Some("/usr/bin/wget"))
                .map(|p| p.name),
            Some("wget")
        );
        assert!(PresetChoice::Auto.resolve(None).is_none());
    }

    #[test]
    fn auto_knows_a_program_by_its_name() {
        assert_eq!(
            Preset::for_program("/usr/bin/curl").map(|p| p.name),
            Some("curl")
        );
        assert_eq!(Preset::for_program("wget").map(|p| p.name), Some("wget"));
        assert!(Preset::for_program("make").is_none());
    }
}
