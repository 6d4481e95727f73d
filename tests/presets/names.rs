//! A name that does not exist (the C library's "Name or service not known") stops, and a
//! resolver that failed for now ("Temporary failure in name resolution") is retried, for every
//! program whose words tell the two apart; where they do not (curl, git over HTTP, wget -q,
//! pg_isready), both are retried, as docs/presets.md says. Nothing is looked up for real: see
//! `Names` in the table's tools.

use super::apt::{apt_get, make_mirror};
use super::{NO_SUCH_HOST, Retried, Row, Stopped, assert_table, needed, row};
use crate::support::harness::Scratch;

/// The row for a name that does not exist, and the row for a resolver down for now, of
/// `command`, which names [`NO_SUCH_HOST`] and ends with `status` either way; `tells` whether
/// the program's words tell the two apart (else both are retried).
fn both(scenario: &'static str, command: &[String], status: u8, tells: bool) -> [Row; 2] {
    let missing = match tells {
        true => Stopped,
        false => Retried,
    };
    [
        row(scenario, command, status, missing).where_names_do_not_exist(),
        row(scenario, command, status, Retried).where_the_resolver_is_down(),
    ]
}

/// `words` as a command.
fn command(words: &[&str]) -> Vec<String> {
    words.iter().map(|word| word.to_string()).collect()
}

#[test]
fn a_name_that_does_not_exist_stops_and_a_resolver_down_for_now_is_retried() {
    for program in ["curl", "wget", "git", "ssh", "rsync", "psql", "pg_isready"] {
        needed(program);
    }
    let http = format!("http://{NO_SUCH_HOST}/");
    let git = format!("git://{NO_SUCH_HOST}/repo.git");
    let git_http = format!("http://{NO_SUCH_HOST}/repo.git");
    let rsync = format!("rsync://{NO_SUCH_HOST}/module/");
    let ssh = ["ssh", "-o", "BatchMode=yes", NO_SUCH_HOST, "true"];
    let psql = ["psql", "-w", "-h", NO_SUCH_HOST, "-c", "select 1"];
    let rows = [
        both("wget", &command(&["wget", "-t", "1", &http]), 4, true),
        both(
            "wget -q",
            &command(&["wget", "-q", "-t", "1", &http]),
            4,
            false,
        ),
        both("curl", &command(&["curl", "-fsS", &http]), 6, false),
        both(
            "git daemon",
            &command(&["git", "ls-remote", &git]),
            128,
            true,
        ),
        both(
            "git over HTTP",
            &command(&["git", "ls-remote", &git_http]),
            128,
            false,
        ),
        both("ssh", &command(&ssh), 255, true),
        both("rsync daemon", &command(&["rsync", &rsync]), 10, true),
        both("psql", &command(&psql), 2, true),
        both(
            "pg_isready",
            &command(&["pg_isready", "-h", NO_SUCH_HOST]),
            2,
            false,
        ),
    ];
    assert_table(&rows.into_iter().flatten().collect::<Vec<_>>());
}

#[test]
fn apt_pip_and_npm_tell_a_name_that_does_not_exist_too() {
    for program in ["apt-get", "pip", "npm"] {
        needed(program);
    }
    let scratch = Scratch::new();
    let dir = scratch.path(".");
    make_mirror(&dir);
    let mirror = format!("deb [trusted=yes] http://{NO_SUCH_HOST}/repo ./\n");
    std::fs::write(dir.join("sources.list"), mirror).unwrap();
    let index = format!("http://{NO_SUCH_HOST}/simple/");
    let downloads = dir.join("downloads").display().to_string();
    // pip says which failure it met only when it retries itself (one retry here).
    let pip = [
        "pip",
        "download",
        "--isolated",
        "--no-cache-dir",
        "--retries",
        "1",
        "--trusted-host",
        NO_SUCH_HOST,
        "--index-url",
        &index,
        "-d",
        &downloads,
        "demo",
    ];
    let registry = format!("http://{NO_SUCH_HOST}/");
    let npm = [
        "npm",
        "view",
        "demo",
        "--registry",
        &registry,
        "--fetch-retries",
        "0",
    ];
    // apt-get update ends with 0 when it could not fetch an index, as the preset knows.
    let rows = [
        both(
            "apt-get update",
            &apt_get(&dir, "sources.list", &["update"]),
            0,
            true,
        ),
        both("pip", &command(&pip), 1, true),
        both("npm", &command(&npm), 1, true),
    ];
    assert_table(&rows.into_iter().flatten().collect::<Vec<_>>());
}
