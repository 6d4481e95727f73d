//! Whether repeating a curl or wget command could carry its request out twice. A request that is
//! not idempotent (POST, PATCH, and a method the program does not know) and carries no
//! `Idempotency-Key` header may have been carried out when it failed after reaching the server:
//! repeating it could charge a card twice, as urllib3's `allowed_methods` and axios-retry's
//! idempotent methods refuse to. This module reads the method and the headers from the command
//! line as the program reads its options, and gives the rules that stop such a request at a
//! failure that may have come after the request was sent (a timeout once connected, an empty or
//! broken reply, a 500, 502 or 504), while a failure before anything was sent (a name not
//! resolved, a refused connection, a failed TLS handshake) and a 429 or 503 (the server says it
//! did not act) stay retried. Pure: `rules` puts these rules before the preset's own.
//!
//! Hand-written rather than a general option parser: only the few options that set the method,
//! send data or add a header matter, and a value-taking option's value must never be read as an
//! option of its own.

use crate::presets::Rule;
use crate::verdict::Verdict;

/// The header that makes a repeated request safe (the IETF draft, Stripe).
const IDEMPOTENCY_KEY: &str = "idempotency-key";

/// The methods a repeat cannot change the outcome of (RFC 9110, 9.2.2).
const IDEMPOTENT: [&str; 6] = ["GET", "HEAD", "PUT", "DELETE", "OPTIONS", "TRACE"];

/// What a command line asks of the server, as far as repeating it goes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Request {
    /// The method, in capitals.
    pub method: String,
    /// Whether it sends an `Idempotency-Key` header.
    pub keyed: bool,
    /// Whether the program says what went wrong (curl without `-s`, or with `-S`; wget without
    /// `-q`): without its words, an error answer and a broken connection cannot be told apart.
    pub shows_errors: bool,
}

impl Request {
    /// Whether a repeat of it could carry it out twice.
    pub fn unsafe_to_repeat(&self) -> bool {
        !self.keyed && !IDEMPOTENT.contains(&self.method.as_str())
    }

    /// The request the command line `args` (the program's name first) of a curl or wget sends;
    /// none for another program.
    pub fn of<S: AsRef<str>>(args: &[S]) -> Option<Request> {
        let (program, options) = args.split_first()?;
        let name = program.as_ref().rsplit('/').next()?;
        let options = options.iter().map(AsRef::as_ref);
        match name {
            "curl" => Some(curl(options)),
            "wget" => Some(wget(options)),
            _ => None,
        }
    }

    /// The rules that stop this request, when it is unsafe to repeat, at a failure that may have
    /// come after it reached the server, for `program`'s preset (`curl` or `wget`); a failure
    /// before anything was sent, and an answer that says the server did not act, are retried.
    pub fn stop_rules(&self, program: &str) -> Vec<Rule> {
        if !self.unsafe_to_repeat() {
            return Vec::new();
        }
        let mut rules = vec![stop("124", None, TIMED_OUT)];
        match (program, self.shows_errors) {
            ("curl", true) => rules.extend([
                retry("28", "(Connection|Resolving) timed out", NOTHING_SENT),
                stop("28", None, TIMED_OUT),
                stop("16,18,52,55,56,92,95", None, BROKEN),
                retry(
                    "22",
                    "The requested URL returned error: (408|429|503)",
                    NOT_ACTED,
                ),
                stop(
                    "22",
                    Some("The requested URL returned error: 50[024]"),
                    SERVER_ERROR,
                ),
            ]),
            ("curl", false) => rules.extend([
                stop("16,18,28,52,55,56,92,95", None, BROKEN_UNSEEN),
                stop("22", None, UNSEEN),
            ]),
            (_, true) => rules.extend([
                retry(
                    "4",
                    "failed: (Connection refused|No route to host|Network is unreachable|Connection \
                     timed out)|Temporary failure in name resolution|unable to resolve host \
                     address|Unable to establish SSL",
                    NOTHING_SENT_WGET,
                ),
                stop("4", None, BROKEN_WGET),
                stop("8", Some("ERROR 50[02]"), SERVER_ERROR),
            ]),
            (_, false) => rules.extend([stop("4", None, BROKEN_UNSEEN), stop("8", None, UNSEEN)]),
        }
        rules
    }
}

/// A rule that stops an unsafe request.
fn stop(statuses: &'static str, output: Option<&'static str>, meaning: &'static str) -> Rule {
    Rule {
        statuses,
        output,
        verdict: Verdict::Stop,
        meaning,
    }
}

/// A rule that keeps retrying an unsafe request at a failure its output shows came before
/// anything was acted on.
fn retry(statuses: &'static str, output: &'static str, meaning: &'static str) -> Rule {
    Rule {
        statuses,
        output: Some(output),
        verdict: Verdict::Retry,
        meaning,
    }
}

/// How to make a request safe to repeat, said with each rule that stops one.
macro_rules! make_it_safe {
    () => {
        ", so it may have been carried out and a repeat could carry it out twice; to retry it, \
         give it an Idempotency-Key header the server honours, one key for the whole run (-H \
         \"Idempotency-Key: $RETRY_RUN_ID\" in a --shell line, which every attempt shares)"
    };
}

const TIMED_OUT: &str = concat!(
    "a request that is not idempotent (POST, PATCH) timed out after it was sent",
    make_it_safe!()
);
const BROKEN: &str = concat!(
    "a request that is not idempotent (POST, PATCH) got an empty, cut or broken reply",
    make_it_safe!()
);
const SERVER_ERROR: &str = concat!(
    "a request that is not idempotent (POST, PATCH) got a 500, 502 or 504",
    make_it_safe!()
);
const BROKEN_UNSEEN: &str = concat!(
    "a request that is not idempotent (POST, PATCH) failed on the network, and the program was \
     told to hide where (-s without -S, -q)",
    make_it_safe!()
);
const UNSEEN: &str = concat!(
    "a request that is not idempotent (POST, PATCH) got an error answer the program was told to \
     hide (-s without -S, -q), which may be a 500",
    make_it_safe!()
);
const NOTHING_SENT: &str = "a time-out before the connection was made: nothing was sent";
const NOTHING_SENT_WGET: &str = "a connection that was never made (refused, unreachable, timed out, no TLS), or a name that \
     did not resolve for now: nothing was sent";
const BROKEN_WGET: &str = concat!(
    "a request that is not idempotent (POST, PATCH) failed on the network where wget does not \
     show it was before sending (a reset, a cut or empty reply, a read time-out, a 504)",
    make_it_safe!()
);
const NOT_ACTED: &str = "an answer that says the server did not act (408, 429, 503)";

/// curl's short options that take a value, as `curl --help all` lists them.
const CURL_VALUED: &str = "AbcCdDeEFHKmoPQrtTuUwxXyYz";

/// curl's long options that take a value and matter here, or whose value could look like one
/// that matters (every `--data*` option takes one too).
const CURL_LONG_VALUED: [&str; 18] = [
    "--request",
    "--header",
    "--upload-file",
    "--json",
    "--form",
    "--form-string",
    "--url",
    "--output",
    "--user",
    "--user-agent",
    "--referer",
    "--cookie",
    "--max-time",
    "--connect-timeout",
    "--retry",
    "--proxy",
    "--config",
    "--write-out",
];

/// What curl's options say, as they are read.
#[derive(Default)]
struct CurlOptions {
    method: Option<String>,
    data: bool,
    upload: bool,
    head: bool,
    get: bool,
    keyed: bool,
    silent: bool,
    show_error: bool,
}

impl CurlOptions {
    /// Take the option `name` (`-X`, `--request`) with its value, if it takes one.
    fn take(&mut self, name: &str, value: Option<&str>) {
        match name {
            "-X" | "--request" => self.method = value.map(str::to_ascii_uppercase),
            "-d" | "-F" | "--json" | "--form" | "--form-string" => self.data = true,
            name if name.starts_with("--data") => self.data = true,
            "-T" | "--upload-file" => self.upload = true,
            "-I" | "--head" => self.head = true,
            "-G" | "--get" => self.get = true,
            "-s" | "--silent" => self.silent = true,
            "-S" | "--show-error" => self.show_error = true,
            "-H" | "--header" => self.keyed |= value.is_some_and(names_the_key),
            _ => {}
        }
    }
}

/// The request of curl's `options`.
fn curl<'a>(mut options: impl Iterator<Item = &'a str>) -> Request {
    let mut read = CurlOptions::default();
    while let Some(option) = options.next() {
        if option == "--" {
            break;
        }
        if let Some(long) = option.strip_prefix("--") {
            let (name, attached) = match long.split_once('=') {
                Some((name, value)) => (format!("--{name}"), Some(value)),
                None => (option.to_string(), None),
            };
            let valued = CURL_LONG_VALUED.contains(&name.as_str()) || name.starts_with("--data");
            let value = attached.or_else(|| valued.then(|| options.next()).flatten());
            read.take(&name, value);
            continue;
        }
        let Some(letters) = option.strip_prefix('-').filter(|rest| !rest.is_empty()) else {
            continue;
        };
        // A cluster (`-sSfX POST`, `-XPOST`): flags, then perhaps one that takes a value.
        for (at, letter) in letters.char_indices() {
            let name = format!("-{letter}");
            if CURL_VALUED.contains(letter) {
                let rest = &letters[at + letter.len_utf8()..];
                let value = match rest.is_empty() {
                    true => options.next(),
                    false => Some(rest),
                };
                read.take(&name, value);
                break;
            }
            read.take(&name, None);
        }
    }
    let implied = match (read.head, read.get, read.upload, read.data) {
        (true, ..) => "HEAD",
        (_, true, ..) => "GET",
        (_, _, true, _) => "PUT",
        (_, _, _, true) => "POST",
        _ => "GET",
    };
    Request {
        method: read.method.unwrap_or_else(|| implied.to_string()),
        keyed: read.keyed,
        shows_errors: !read.silent || read.show_error,
    }
}

/// The request of wget's `options`.
fn wget<'a>(mut options: impl Iterator<Item = &'a str>) -> Request {
    let (mut method, mut posts, mut keyed, mut quiet) = (None, false, false, false);
    while let Some(option) = options.next() {
        if option == "-q" || option == "--quiet" {
            quiet = true;
        }
        let Some(long) = option.strip_prefix("--") else {
            continue;
        };
        let (name, attached) = match long.split_once('=') {
            Some((name, value)) => (name, Some(value)),
            None => (long, None),
        };
        let valued = matches!(
            name,
            "method" | "header" | "post-data" | "post-file" | "body-data" | "body-file"
        );
        let value = attached.or_else(|| valued.then(|| options.next()).flatten());
        match name {
            "method" => method = value.map(str::to_ascii_uppercase),
            "post-data" | "post-file" => posts = true,
            "header" => keyed |= value.is_some_and(names_the_key),
            _ => {}
        }
    }
    let implied = if posts { "POST" } else { "GET" };
    Request {
        method: method.unwrap_or_else(|| implied.to_string()),
        keyed,
        shows_errors: !quiet,
    }
}

/// Whether a header, `Name: value`, is an `Idempotency-Key` with a value.
fn names_the_key(header: &str) -> bool {
    header.split_once(':').is_some_and(|(name, value)| {
        name.trim().eq_ignore_ascii_case(IDEMPOTENCY_KEY) && !value.trim().is_empty()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(line: &str) -> Request {
        let args: Vec<&str> = line.split(' ').collect();
        Request::of(&args).unwrap()
    }

    #[test]
    fn curl_sends_what_its_options_say() {
        for (line, method) in [
            ("curl https://x", "GET"),
            ("curl -d a=1 https://x", "POST"),
            ("curl --data-urlencode a=1 https://x", "POST"),
            ("curl --json {} https://x", "POST"),
            ("curl -F f=@file https://x", "POST"),
            ("curl -G -d q=1 https://x", "GET"),
            ("curl -T file https://x", "PUT"),
            ("curl -I https://x", "HEAD"),
            ("curl -X patch https://x", "PATCH"),
            ("curl -XPOST https://x", "POST"),
            ("curl -sSfX POST https://x", "POST"),
            ("curl --request=DELETE https://x", "DELETE"),
            ("curl -d a -X PUT https://x", "PUT"),
            ("curl -o -X https://x", "GET"),
            ("curl -H X-Data:-d https://x", "GET"),
        ] {
            assert_eq!(request(line).method, method, "{line}");
        }
    }

    #[test]
    fn wget_sends_what_its_options_say() {
        for (line, method) in [
            ("wget https://x", "GET"),
            ("wget --post-data=a=1 https://x", "POST"),
            ("wget --post-file f https://x", "POST"),
            ("wget --method=patch --body-data=x https://x", "PATCH"),
            ("wget --method DELETE https://x", "DELETE"),
        ] {
            assert_eq!(request(line).method, method, "{line}");
        }
    }

    #[test]
    fn an_idempotency_key_makes_any_request_safe_to_repeat() {
        assert!(request("curl -d a https://x").unsafe_to_repeat());
        assert!(request("curl -X PATCH https://x").unsafe_to_repeat());
        assert!(!request("curl -X PUT -d a https://x").unsafe_to_repeat());
        for keyed in [
            "curl -d a -H Idempotency-Key:abc https://x",
            "curl -d a --header=idempotency-key:abc https://x",
            "wget --post-data=a --header=Idempotency-Key:1 https://x",
        ] {
            assert!(!request(keyed).unsafe_to_repeat(), "{keyed}");
        }
        assert!(request("curl -d a -H Idempotency-Key: https://x").unsafe_to_repeat());
        assert_eq!(Request::of(&["git", "push"]), None);
    }

    #[test]
    fn only_an_unsafe_request_gets_rules_and_they_stop_after_sending_only() {
        assert!(request("curl https://x").stop_rules("curl").is_empty());
        let rules = request("curl -d a https://x").stop_rules("curl");
        let retried: Vec<&str> = rules
            .iter()
            .filter(|rule| rule.verdict == Verdict::Retry)
            .map(|rule| rule.statuses)
            .collect();
        assert_eq!(
            retried,
            ["28", "22"],
            "a connect time-out sent nothing; a 503 did nothing"
        );
        for rule in &rules {
            assert!(
                !rule
                    .statuses
                    .split(',')
                    .any(|s| ["6", "7", "35"].contains(&s))
            );
            if let Some(pattern) = rule.output {
                assert!(regex::Regex::new(pattern).is_ok(), "{pattern}");
            }
        }
        assert!(
            rules.iter().all(
                |rule| rule.verdict == Verdict::Retry || rule.meaning.contains("$RETRY_RUN_ID")
            )
        );
        assert!(
            !request("wget --post-data=a https://x")
                .stop_rules("wget")
                .is_empty()
        );
    }

    #[test]
    fn a_request_whose_errors_are_hidden_stops_at_every_failure_after_connecting() {
        let hidden = request("curl -fs -d a https://x").stop_rules("curl");
        assert!(hidden.iter().all(|rule| rule.verdict == Verdict::Stop));
        assert!(
            hidden
                .iter()
                .any(|rule| rule.statuses == "22" && rule.output.is_none())
        );
        let quiet = request("wget -q --post-data=a https://x").stop_rules("wget");
        assert!(quiet.iter().all(|rule| rule.output.is_none()));
    }

    #[test]
    fn the_program_shows_its_errors_unless_told_to_hide_them() {
        for (line, shows) in [
            ("curl -d a https://x", true),
            ("curl -fsS -d a https://x", true),
            ("curl -s -d a https://x", false),
            ("curl --silent -d a https://x", false),
            ("curl -s --show-error -d a https://x", true),
            ("wget --post-data=a https://x", true),
            ("wget -q --post-data=a https://x", false),
        ] {
            assert_eq!(request(line).shows_errors, shows, "{line}");
        }
    }
}
