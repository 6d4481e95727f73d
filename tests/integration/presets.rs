//! `--preset`: each preset against the real program it is for, called as scripts call it, and
//! real faulty servers of the tests' own on loopback. Each preset has a table: the scenario, the
//! status the real program ended with, and whether the run must retry it or stop at once; the
//! suite asserts every row, in both directions.

use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};

use crate::support::faulty_http::FaultyHttp;
use crate::support::harness::{Run, Scratch, cannot_run, retry, wait_for};
use crate::support::redis_server::make_certificates;

/// What the run must make of a scenario's failure.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Decision {
    /// Another attempt: the failure is transient.
    Retried,
    /// No other attempt: the failure is permanent.
    Stopped,
}

use Decision::{Retried, Stopped};

/// One row of a preset's table.
struct Row {
    scenario: &'static str,
    /// The command, as a script calls it.
    command: Vec<String>,
    /// The status the real program ends with.
    status: u8,
    decision: Decision,
}

fn row(scenario: &'static str, command: &[&str], status: u8, decision: Decision) -> Row {
    Row {
        scenario,
        command: command.iter().map(|word| word.to_string()).collect(),
        status,
        decision,
    }
}

/// A program the table needs, or a failure that says how to install it (never a skip).
fn needed(program: &str) {
    if let Err(err) = Command::new(program).arg("--version").output() {
        panic!("{}", cannot_run(program, &err));
    }
}

/// Run every row under `--preset auto`, two attempts at most, in a directory of its own (for
/// what the program saves), and assert it.
fn assert_table(rows: &[Row]) {
    let scratch = Scratch::new();
    for row in rows {
        let run = retry([
            "--preset",
            "auto",
            "-n",
            "2",
            "--base",
            "0s",
            "--timeout",
            "3s",
            "--log-format",
            "json",
            "--",
        ])
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

/// A port on loopback that refuses connections.
fn refusing_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// An HTTPS server (`openssl s_server`) whose certificate no client trusts, stopped when
/// dropped.
struct UntrustedTls {
    child: Child,
    port: u16,
    _scratch: Scratch,
}

impl UntrustedTls {
    fn start() -> UntrustedTls {
        needed("openssl");
        let scratch = Scratch::new();
        make_certificates(&scratch.path("."));
        let port = refusing_port();
        let child = Command::new("openssl")
            .args(["s_server", "-quiet", "-www", "-accept"])
            .arg(format!("127.0.0.1:{port}"))
            .args(["-cert", "server.crt", "-key", "server.key"])
            .current_dir(scratch.path("."))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        wait_for("openssl s_server to listen", || {
            TcpStream::connect(("127.0.0.1", port)).is_ok()
        });
        UntrustedTls {
            child,
            port,
            _scratch: scratch,
        }
    }

    fn url(&self) -> String {
        format!("https://127.0.0.1:{}/", self.port)
    }
}

impl Drop for UntrustedTls {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn curl_retries_what_is_transient_and_stops_at_what_is_not() {
    needed("curl");
    let http = FaultyHttp::start();
    let tls = UntrustedTls::start();
    let refused = format!("http://127.0.0.1:{}/", refusing_port());
    let url = |path: &str| http.url(path);
    let curl = |url: &str| ["curl", "-fsS", url].map(String::from);
    let rows = [
        ("503", url("/status/503"), 22, Retried),
        (
            "429 with Retry-After",
            url("/status/429/after/0"),
            22,
            Retried,
        ),
        ("429 without", url("/status/429"), 22, Retried),
        ("500", url("/status/500"), 22, Retried),
        ("502", url("/status/502"), 22, Retried),
        ("504", url("/status/504"), 22, Retried),
        ("404", url("/status/404"), 22, Stopped),
        ("401", url("/status/401"), 22, Stopped),
        ("403", url("/status/403"), 22, Stopped),
        ("a reset connection", url("/reset"), 56, Retried),
        ("a server that never answers", url("/silent"), 124, Retried),
        ("a refused connection", refused.clone(), 7, Retried),
        (
            "a name that does not resolve",
            "http://no-such-host.invalid/".into(),
            6,
            Retried,
        ),
        ("a certificate that does not verify", tls.url(), 60, Stopped),
    ];
    let table: Vec<Row> = rows
        .iter()
        .map(|(scenario, url, status, decision)| Row {
            scenario,
            command: curl(url).to_vec(),
            status: *status,
            decision: *decision,
        })
        .collect();
    assert_table(&table);
}

#[test]
fn curl_waits_as_long_as_retry_after_asks_where_curl_shows_it() {
    let http = FaultyHttp::start();
    let run = retry([
        "--preset",
        "curl",
        "-n",
        "2",
        "--base",
        "0s",
        "--log-format",
        "json",
    ])
    .args([
        "curl",
        "-fsS",
        "-v",
        "-o",
        "/dev/null",
        &http.url("/status/503/after/1"),
    ])
    .run();
    run.expect_code(22);
    let wait = run.event("wait");
    assert_eq!(wait["cause"], "requested", "{run}");
    assert_eq!(wait["wait_ms"], 1000.0, "{run}");
    assert_eq!(http.requests("/status/503/after/1"), 2);
}

#[test]
fn wget_retries_what_is_transient_and_stops_at_what_is_not() {
    needed("wget");
    let http = FaultyHttp::start();
    let tls = UntrustedTls::start();
    let refused = format!("http://127.0.0.1:{}/", refusing_port());
    let url = |path: &str| http.url(path);
    // wget tries a reset or refused connection, and a 504, 20 times itself over minutes; one
    // try each shows what the preset makes of the failure it gives up on.
    let rows = [
        row("503", &["wget", "-q", &url("/status/503")], 8, Retried),
        row(
            "429 with Retry-After",
            &["wget", "-q", &url("/status/429/after/0")],
            8,
            Retried,
        ),
        row("500", &["wget", "-nv", &url("/status/500")], 8, Retried),
        row("502", &["wget", "-nv", &url("/status/502")], 8, Retried),
        row(
            "504",
            &["wget", "-nv", "-t", "1", &url("/status/504")],
            4,
            Retried,
        ),
        row("404", &["wget", "-nv", &url("/status/404")], 8, Stopped),
        row("403", &["wget", "-nv", &url("/status/403")], 8, Stopped),
        row("401", &["wget", "-q", &url("/status/401")], 6, Stopped),
        row(
            "a reset connection",
            &["wget", "-q", "-t", "1", &url("/reset")],
            4,
            Retried,
        ),
        row(
            "a server that never answers",
            &["wget", "-q", &url("/silent")],
            124,
            Retried,
        ),
        row(
            "a refused connection",
            &["wget", "-q", "-t", "1", &refused],
            4,
            Retried,
        ),
        row(
            "a name that does not resolve",
            &["wget", "-q", "http://no-such-host.invalid/"],
            4,
            Retried,
        ),
        row(
            "a certificate that does not verify",
            &["wget", "-q", &tls.url()],
            5,
            Stopped,
        ),
        // wget -q prints nothing, and exits 8 for every error answer: a 404 cannot be told
        // from a 503, and is retried.
        row(
            "404, with -q",
            &["wget", "-q", &url("/status/404")],
            8,
            Retried,
        ),
    ];
    assert_table(&rows);
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
        .expect_stderr("exit status 22 is in --stop-on");
    let said = retry(["--preset", "curl", "-n", "2"]).args(curl).run();
    said.expect_code(22).expect_stderr(
        "exit status 22 is not retried: --preset curl calls it an HTTP error answer another \
         request cannot mend",
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
        .expect_stdout_contains("--preset curl (from curl(1) EXIT CODES")
        .expect_stdout_contains("  status 124: retry: an attempt cut by --timeout\n")
        .expect_stdout_contains("  status 22, a line matching 'The requested URL returned error: ")
        .expect_stdout_contains("  status any other: stop: ");
    let json = retry(["--plan", "--preset", "wget", "--log-format", "json"]).run();
    let preset = json
        .stdout()
        .lines()
        .map(|line| serde_json::from_str::<serde_json::Value>(line).unwrap())
        .find(|line| line["event"] == "plan_preset")
        .expect("a plan_preset line");
    assert_eq!(preset["name"], "wget");
    assert_eq!(preset["stream"], "stderr");
    assert_eq!(preset["rules"][1]["statuses"], "8");
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
            .find(|line| line["event"] == "plan_preset")
            .unwrap();
        let expected: Vec<String> = preset["rules"]
            .as_array()
            .unwrap()
            .iter()
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
        assert!(
            section.contains(&format!(
                "From {}; the patterns read its {}.",
                preset["sources"].as_str().unwrap(),
                preset["stream"].as_str().unwrap()
            )),
            "{name}'s sources"
        );
    }
}
