//! `--preset`: each preset against the real program it is for (curl, wget, git and its daemon,
//! apt-get, pip, npm, psql and a PostgreSQL server, rsync, ssh and sshd), called as scripts call
//! it, and real faulty servers of the tests' own on loopback: a test target of its own, since it
//! needs those programs installed (`scripts/test` installs them) and the other targets do not.
//! Each preset has a table: the scenario, the status the real program ended with, and whether the
//! run must retry it or stop at once; the suite asserts every row, in both directions. Here are
//! the table's tools and what holds for every preset; each program's table is in a file of its
//! own.

#![forbid(unsafe_code)]

/// apt-get against a local mirror, with a held dpkg lock.
mod apt;
/// An HTTP server whose faults the path chooses.
mod faulty_http;
/// git over git daemon and over HTTP, with connections cut mid-pack.
mod git;
/// curl and wget against an HTTP server of the tests' own.
mod http;
/// A POST is not repeated after it may have been carried out, unless a key makes it safe.
mod idempotency;
/// A name that does not exist, as against a resolver that failed for now, for every program.
mod names;
/// npm against a registry of the tests' own.
mod npm;
/// pip against a simple index of the tests' own.
mod pip;
/// psql and pg_isready against a real PostgreSQL and a server still starting up.
mod postgres;
/// rsync against an rsync daemon.
mod rsync;
/// ssh against an sshd.
mod ssh;
/// The harness and the servers this target shares with the integration tests, of which it uses
/// a part.
#[path = "../support/mod.rs"]
#[allow(dead_code)]
mod support;

use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;

use crate::faulty_http::FaultyHttp;
use crate::support::harness::{
    Invocation, Run, Scratch, binary, cannot_run, is_root, program, retry, server_port, wait_for,
};
use crate::support::redis_server::make_certificates;

/// What the run must make of a scenario's failure.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Decision {
    /// Another attempt: the failure is transient.
    Retried,
    /// No other attempt: the failure is permanent.
    Stopped,
}

pub(crate) use Decision::{Retried, Stopped};

/// One row of a preset's table.
pub(crate) struct Row {
    scenario: &'static str,
    /// The command, as a script calls it.
    command: Vec<String>,
    /// The status the real program ends with.
    status: u8,
    decision: Decision,
    /// Each attempt's `--timeout`.
    timeout: &'static str,
    /// How the row's names are looked up.
    names: Names,
}

/// How a row's host names are looked up. Neither way sends anything off the machine.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Names {
    /// As the machine looks them up.
    System,
    /// [`NO_SUCH_HOST`] does not exist: the C library's `HOSTALIASES` makes it a name whose
    /// first label is longer than DNS allows, which it refuses before asking any server
    /// ("Name or service not known", `EAI_NONAME`), as for a name a DNS server does not know.
    NoneExist,
    /// The resolver cannot be reached: the run is in a network namespace of its own with no
    /// interface up, so every lookup fails for now ("Temporary failure in name resolution",
    /// `EAI_AGAIN`), as when a DNS server is down.
    ResolverDown,
}

/// A host name for the rows about names: a single label, as `HOSTALIASES` needs.
pub(crate) const NO_SUCH_HOST: &str = "no-such-host";

pub(crate) fn row(
    scenario: &'static str,
    command: &[impl AsRef<str>],
    status: u8,
    decision: Decision,
) -> Row {
    Row {
        scenario,
        command: command
            .iter()
            .map(|word| word.as_ref().to_string())
            .collect(),
        status,
        decision,
        timeout: "10s",
        names: Names::System,
    }
}

impl Row {
    /// The row, each attempt cut at `timeout`: for a server that never answers.
    pub(crate) fn cut_at(self, timeout: &'static str) -> Row {
        Row { timeout, ..self }
    }

    /// The row, where [`NO_SUCH_HOST`] is a name that does not exist.
    pub(crate) fn where_names_do_not_exist(self) -> Row {
        Row {
            names: Names::NoneExist,
            ..self
        }
    }

    /// The row, where no name can be looked up for now.
    pub(crate) fn where_the_resolver_is_down(self) -> Row {
        Row {
            names: Names::ResolverDown,
            ..self
        }
    }
}

/// A `HOSTALIASES` file that makes [`NO_SUCH_HOST`] a name the C library refuses to look up.
fn host_aliases() -> PathBuf {
    static WRITTEN: OnceLock<PathBuf> = OnceLock::new();
    WRITTEN
        .get_or_init(|| {
            let path = Path::new(env!("CARGO_TARGET_TMPDIR")).join("retry-host-aliases");
            std::fs::write(
                &path,
                format!("{NO_SUCH_HOST} {}.invalid\n", "x".repeat(64)),
            )
            .expect("write the host aliases");
            path
        })
        .clone()
}

/// A program the table needs, or a failure that says how to install it (never a skip).
pub(crate) fn needed(program: &str) {
    if let Err(err) = Command::new(program).arg("--version").output() {
        panic!("{}", cannot_run(program, &err));
    }
}

/// Run `command` (the program, then its arguments) under the harness's time limit, and assert
/// that it succeeds: a server a table is run against serves what it should.
pub(crate) fn works(command: &[impl AsRef<str>]) {
    let (program, args) = command.split_first().expect("a program");
    crate::support::harness::program(program.as_ref())
        .args(args.iter().map(AsRef::as_ref))
        .run()
        .expect_code(0);
}

/// The options of a run under `--preset auto`: two attempts at most with no wait between them,
/// its events in JSON.
const UNDER_PRESET: [&str; 8] = [
    "--preset",
    "auto",
    "-n",
    "2",
    "--base",
    "0s",
    "--log-format",
    "json",
];

/// A run under `--preset auto`, then `args`.
pub(crate) fn under_preset(args: &[&str]) -> Invocation {
    retry(UNDER_PRESET).args(args)
}

/// Run every row under `--preset auto`, two attempts at most, in a directory of its own (for
/// what the program saves), its names looked up as the row says, and assert it.
pub(crate) fn assert_table(rows: &[Row]) {
    let scratch = Scratch::new();
    for row in rows {
        let invocation = match row.names {
            Names::System => retry(UNDER_PRESET),
            Names::NoneExist => retry(UNDER_PRESET).env("HOSTALIASES", host_aliases()),
            Names::ResolverDown => {
                needed("unshare");
                let unshare = program("unshare").args(["--net"]);
                let unshare = match is_root() {
                    true => unshare,
                    false => unshare.args(["--map-root-user"]),
                };
                unshare.args([binary()]).args(UNDER_PRESET)
            }
        };
        let run = invocation
            .args(["--timeout", row.timeout, "--"])
            .args(&row.command)
            .current_dir(scratch.path("."))
            .run();
        assert_row(row, &run);
    }
}

#[track_caller]
fn assert_row(row: &Row, run: &Run) {
    let ends = run.events_named("attempt_end");
    let statuses: Vec<u64> = ends
        .iter()
        .map(|end| end["status"].as_u64().unwrap())
        .collect();
    let expected = match row.decision {
        Retried => vec![u64::from(row.status); 2],
        Stopped => vec![u64::from(row.status)],
    };
    assert_eq!(
        statuses, expected,
        "{}: {:?} should be {:?} with status {}\n{run}",
        row.scenario, row.command, row.decision, row.status
    );
    let reason = run.event("done")["reason"].clone();
    let expected_reason = match row.decision {
        Retried => "exhausted",
        Stopped => "not_retryable",
    };
    assert_eq!(reason, expected_reason, "{}\n{run}", row.scenario);
}

/// Bytes a proxy passes on from the server before it cuts the connection: past a git server's
/// refs or an rsync daemon's file list, well inside 300 kB of random bytes.
const CUT_AFTER: usize = 40_000;

/// A server process of a test's own, in a process group of its own, which is stopped when
/// dropped: the server and whatever it started (`git daemon` runs `git-daemon`, which forks a
/// child per connection), so that no test leaves a process behind.
pub(crate) struct Server(Child);

impl Server {
    /// Start `command` in a process group of its own, to stop when dropped.
    pub(crate) fn start(mut command: Command) -> Server {
        let child = command
            .process_group(0)
            .spawn()
            .unwrap_or_else(|err| panic!("cannot start {command:?}: {err}"));
        Server(child)
    }

    /// Start `command`, its output thrown away, and wait until it listens on `port` of
    /// loopback; `what` names it for a wait that times out.
    pub(crate) fn listening(mut command: Command, port: u16, what: &str) -> Server {
        command
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        let server = Server::start(command);
        wait_for(&format!("{what} to listen on port {port}"), || {
            TcpStream::connect(("127.0.0.1", port)).is_ok()
        });
        server
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        // The group is the server's own, led by a child not yet reaped.
        let group = nix::unistd::Pid::from_raw(self.0.id() as i32);
        let _ = nix::sys::signal::killpg(group, nix::sys::signal::Signal::SIGKILL);
        let _ = self.0.wait();
    }
}

/// An HTTPS server (`openssl s_server`) whose certificate no client trusts, stopped when
/// dropped.
pub(crate) struct UntrustedTls {
    _server: Server,
    port: u16,
    _scratch: Scratch,
}

impl UntrustedTls {
    pub(crate) fn start() -> UntrustedTls {
        needed("openssl");
        let scratch = Scratch::new();
        make_certificates(&scratch.path("."));
        let port = server_port();
        let mut server = Command::new("openssl");
        server
            .args(["s_server", "-quiet", "-www", "-accept"])
            .arg(format!("127.0.0.1:{port}"))
            .args(["-cert", "server.crt", "-key", "server.key"])
            .current_dir(scratch.path("."));
        let server = Server::listening(server, port, "openssl s_server");
        UntrustedTls {
            _server: server,
            port,
            _scratch: scratch,
        }
    }

    /// The server's root URL.
    pub(crate) fn url(&self) -> String {
        format!("https://127.0.0.1:{}/", self.port)
    }
}

/// A proxy on a loopback port to `target`, which passes on at most [`CUT_AFTER`] bytes of each
/// of the server's answers, then cuts both connections; returns its port.
pub(crate) fn cutting_proxy(target: u16) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for client in listener.incoming().flatten() {
            let Ok(server) = TcpStream::connect(("127.0.0.1", target)) else {
                continue;
            };
            let (mut client_in, mut server_out) =
                (client.try_clone().unwrap(), server.try_clone().unwrap());
            std::thread::spawn(move || std::io::copy(&mut client_in, &mut server_out));
            std::thread::spawn(move || cut_after(server, client));
        }
    });
    port
}

fn cut_after(mut server: TcpStream, mut client: TcpStream) {
    let mut passed = 0;
    let mut chunk = [0; 4096];
    while passed < CUT_AFTER {
        let count = match server.read(&mut chunk) {
            Ok(0) | Err(_) => break,
            Ok(count) => count.min(CUT_AFTER - passed),
        };
        if client.write_all(&chunk[..count]).is_err() {
            break;
        }
        passed += count;
    }
    let _ = client.shutdown(Shutdown::Both);
    let _ = server.shutdown(Shutdown::Both);
}

/// A static file server (Python's) for `dir` on `port` of loopback.
pub(crate) fn static_files(dir: &std::path::Path, port: u16, what: &str) -> Server {
    let mut server = Command::new("python3");
    server
        .args([
            "-m",
            "http.server",
            "--bind",
            "127.0.0.1",
            &port.to_string(),
        ])
        .arg("--directory")
        .arg(dir);
    Server::listening(server, port, what)
}

/// A port on loopback that refuses connections (and that no other test's server takes).
pub(crate) fn refusing_port() -> u16 {
    server_port()
}

/// A URL whose host name cannot resolve, found so without a query: its first label is longer
/// than DNS allows (63 bytes), so the C library refuses it before asking any server, and the
/// tests send nothing off the machine.
pub(crate) fn unresolvable_url() -> String {
    format!("http://{}.invalid/", "x".repeat(64))
}

#[test]
fn a_preset_leaves_to_the_users_sets_the_statuses_they_name() {
    let http = FaultyHttp::start();
    let curl = ["curl", "-fsS", &http.url("/status/404")];
    let retried = retry([
        "--preset",
        "curl",
        "--retry-on",
        "22",
        "-n",
        "2",
        "--base",
        "0s",
    ])
    .args(curl)
    .run();
    retried.expect_code(22).expect_stderr("retrying in");
    let stopped = retry(["--preset", "curl", "--stop-on", "22", "-n", "2"])
        .args(["curl", "-fsS", &http.url("/status/503")])
        .run();
    stopped
        .expect_code(22)
        .expect_stderr("exit status 22 is not retried: --stop-on 22");
    let said = retry(["--preset", "curl", "-n", "2"]).args(curl).run();
    said.expect_code(22).expect_stderr(
        "exit status 22 is not retried: --preset curl: an HTTP error answer another request \
         cannot mend",
    );
}

#[test]
fn auto_without_a_preset_for_the_program_says_so_and_decides_as_without() {
    let run = retry(["--preset", "auto", "-n", "2", "--base", "0s", "false"]).run();
    run.expect_code(1)
        .expect_stderr("--preset auto: no preset knows 'false'")
        .expect_stderr("retrying in");
}

#[test]
fn the_plan_shows_what_a_preset_decides() {
    let plan = retry([
        "--plan", "--preset", "auto", "-n", "2", "--", "curl", "-fsS", "x",
    ])
    .run();
    plan.expect_code(0)
        .expect_stdout_contains("the --preset curl rules come from curl(1) EXIT CODES")
        .expect_stdout_contains("  status 124: retry: --preset curl: an attempt cut by --timeout\n")
        .expect_stdout_contains(
            "  status 22, a line of stderr matching 'The requested URL returned error: ",
        )
        .expect_stdout_contains("  any: stop: the default: a failure the preset does not call");
    let json = retry(["--plan", "--preset", "wget", "--log-format", "json"]).run();
    let plan = json
        .stdout()
        .lines()
        .map(|line| serde_json::from_str::<serde_json::Value>(line).unwrap())
        .find(|line| line["event"] == "plan_rules")
        .expect("a plan_rules line");
    assert_eq!(plan["preset"]["name"], "wget");
    assert_eq!(plan["preset"]["stream"], "stderr");
    let wget: Vec<&serde_json::Value> = plan["rules"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|rule| rule["origin"] == "preset")
        .collect();
    assert_eq!(wget[1]["statuses"], "8");
}

#[test]
fn an_unknown_preset_is_refused_with_the_names_there_are() {
    retry(["--preset", "curlx", "true"])
        .run()
        .expect_code(125)
        .expect_stderr("--preset")
        .expect_stderr("curl");
}

/// The presets `--preset` takes, from the definition (without `auto`).
fn preset_names() -> Vec<String> {
    let command = retry_exec::full_command();
    let preset = command
        .get_arguments()
        .find(|arg| arg.get_long() == Some("preset"))
        .expect("--preset");
    preset
        .get_possible_values()
        .iter()
        .map(|value| value.get_name().to_string())
        .filter(|name| name != "auto")
        .collect()
}

#[test]
fn the_guide_shows_every_presets_rules_as_the_plan_gives_them() {
    let guide = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/presets.md"))
        .expect("docs/presets.md");
    let sections: Vec<&str> = guide.split("\n### ").skip(1).collect();
    let names: Vec<String> = sections
        .iter()
        .map(|section| section.lines().next().unwrap().to_string())
        .collect();
    assert_eq!(names, preset_names(), "one section per preset, in order");
    for (name, section) in names.iter().zip(&sections) {
        let plan = retry(["--plan", "--preset", name, "--log-format", "json"]).run();
        let preset: serde_json::Value = plan
            .stdout()
            .lines()
            .map(|line| serde_json::from_str::<serde_json::Value>(line).unwrap())
            .find(|line| line["event"] == "plan_rules")
            .unwrap();
        let rules = preset["rules"].as_array().unwrap();
        // The preset's own rules, then what any other end means.
        let expected: Vec<String> = rules
            .iter()
            .filter(|rule| rule["origin"] == "preset")
            .chain(rules.last())
            .map(|rule| {
                let output = rule["output"].as_str().map_or(String::new(), |pattern| {
                    format!("`{}`", pattern.replace('|', "\\|"))
                });
                format!(
                    "| {} | {output} | {} | {} |",
                    rule["statuses"].as_str().unwrap(),
                    rule["verdict"].as_str().unwrap(),
                    rule["meaning"].as_str().unwrap()
                )
            })
            .collect();
        let rows: Vec<String> = section
            .lines()
            .filter(|line| line.starts_with("| ") && !line.starts_with("| Status"))
            .map(str::to_string)
            .collect();
        assert_eq!(rows, expected, "the table of {name} in docs/presets.md");
        let stream = match preset["preset"]["stream"].as_str().unwrap() {
            "both" => "stdout and stderr",
            stream => stream,
        };
        assert!(
            section.contains(&format!(
                "From {}; the patterns read its {stream}.",
                preset["preset"]["sources"].as_str().unwrap(),
            )),
            "{name}'s sources"
        );
    }
}
