//! Every recipe of the README and its guides (`docs/`), run as written against local
//! stand-ins: a small HTTP server on
//! 127.0.0.1 that fails as told before it answers, and programs of the recipes' names (npm,
//! kubectl, ssh...) that fail as the real ones do, with their messages and statuses, a number of
//! times before they succeed. A recipe's text must be in the README or a guide word for word.

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::os::unix::fs::PermissionsExt;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::support::harness::{Run, Scratch, shell};
use crate::support::pty::Session;

/// The README and the guides in `docs/`, with every shell line continuation joined, as a shell
/// reads them.
pub(crate) fn readme_commands() -> String {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut readme = std::fs::read_to_string(root.join("README.md")).expect("read the README");
    let mut guides: Vec<_> = std::fs::read_dir(root.join("docs"))
        .expect("the docs folder")
        .flatten()
        .map(|entry| entry.path())
        .filter(|path| path.extension().is_some_and(|extension| extension == "md"))
        .collect();
    guides.sort();
    for guide in guides {
        readme += &std::fs::read_to_string(guide).expect("read a guide");
    }
    let mut joined = String::new();
    let mut lines = readme.lines();
    while let Some(line) = lines.next() {
        let mut line = line.to_string();
        while let Some(start) = line.strip_suffix('\\') {
            let next = lines.next().unwrap_or_default().trim_start();
            line = format!("{start}{next}");
        }
        joined += &line;
        joined.push('\n');
    }
    joined
}

/// What the HTTP stand-in answers a request with.
#[derive(Clone, Copy)]
enum Answer {
    /// This status, with a line of text.
    Status(u16),
    /// Nothing: the connection is closed at once (curl: "empty reply", 52).
    Hang,
    /// 503 with `Retry-After:` this many seconds.
    RetryAfter(u16),
}

/// An HTTP server on 127.0.0.1 that answers the first requests as scripted, then 200.
struct HttpStandIn {
    port: u16,
    requests: Arc<AtomicUsize>,
}

impl HttpStandIn {
    fn start(script: &[Answer]) -> HttpStandIn {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind a loopback port");
        let port = listener.local_addr().unwrap().port();
        let requests = Arc::new(AtomicUsize::new(0));
        let (script, counted) = (script.to_vec(), Arc::clone(&requests));
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let index = counted.fetch_add(1, Ordering::SeqCst);
                let answer = script.get(index).copied().unwrap_or(Answer::Status(200));
                let mut reader = BufReader::new(stream);
                let mut line = String::new();
                while reader.read_line(&mut line).is_ok_and(|read| read > 2) {
                    line.clear();
                }
                let (status, header) = match answer {
                    Answer::Hang => continue,
                    Answer::Status(status) => (status, String::new()),
                    Answer::RetryAfter(seconds) => (503, format!("Retry-After: {seconds}\r\n")),
                };
                let body = format!("status {status}\n");
                let _ = write!(
                    reader.get_mut(),
                    "HTTP/1.1 {status} Stand-in\r\n{header}Content-Length: {}\r\n\
                     Connection: close\r\n\r\n{body}",
                    body.len()
                );
            }
        });
        HttpStandIn { port, requests }
    }

    /// `text` with the README's example hosts pointing here.
    fn serve(&self, text: &str) -> String {
        let here = format!("http://127.0.0.1:{}", self.port);
        text.replace("https://inventory.example.com", &here)
            .replace("https://example.com", &here)
    }

    fn requests(&self) -> usize {
        self.requests.load(Ordering::SeqCst)
    }
}

/// A directory of stand-in programs, first on the recipes' PATH.
struct StandIns {
    scratch: Scratch,
}

impl StandIns {
    fn new() -> StandIns {
        let scratch = Scratch::new();
        std::fs::create_dir(scratch.path("bin")).unwrap();
        StandIns { scratch }
    }

    /// A program `name` that fails `failures` times, printing `message` on stderr and exiting
    /// `status`, then prints `answer` and exits 0.
    fn fails(self, name: &str, failures: usize, message: &str, status: u8, answer: &str) -> Self {
        let script = format!(
            "#!/bin/sh\n\
             count=\"$0.count\"\n\
             n=$(( $(cat \"$count\" 2>/dev/null || echo 0) + 1 ))\n\
             echo $n > \"$count\"\n\
             if [ $n -le {failures} ]; then echo '{message}' >&2; exit {status}; fi\n\
             echo '{answer}'\n"
        );
        let path = self.scratch.path(&format!("bin/{name}"));
        std::fs::write(&path, script).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        self
    }

    /// How many times `name` ran.
    fn runs(&self, name: &str) -> usize {
        self.scratch
            .read(&format!("bin/{name}.count"))
            .trim()
            .parse()
            .unwrap_or(0)
    }

    /// Run `recipe` (after checking that the README has it) with `sh`, in the stand-ins'
    /// directory, with `retry` and the stand-ins first on the PATH.
    #[track_caller]
    fn run(&self, recipe: &str, server: Option<&HttpStandIn>) -> Run {
        assert!(
            readme_commands().contains(recipe),
            "the README lacks the recipe {recipe:?}"
        );
        let recipe = server.map_or(recipe.to_string(), |server| server.serve(recipe));
        shell(&recipe)
            .env("PATH", self.path())
            .current_dir(self.scratch.path(""))
            .run()
    }

    fn path(&self) -> String {
        let tool = std::path::Path::new(&crate::support::harness::binary())
            .parent()
            .unwrap()
            .display()
            .to_string();
        let system = std::env::var("PATH").unwrap_or_default();
        format!("{}:{tool}:{system}", self.scratch.path("bin").display())
    }
}

#[test]
fn curl_recipes_retry_what_may_pass_and_keep_no_error_page() {
    let transient =
        "retry --retry-on 6,7,28,35,52,55,56 -- curl -fsS -o file https://example.com/file";
    let server = HttpStandIn::start(&[Answer::Hang, Answer::Hang]);
    let stand_ins = StandIns::new();
    stand_ins.run(transient, Some(&server)).expect_code(0);
    assert_eq!(server.requests(), 3);
    assert_eq!(stand_ins.scratch.read("file"), "status 200\n");

    let server = HttpStandIn::start(&[Answer::Status(503)]);
    let stand_ins = StandIns::new();
    stand_ins.run(transient, Some(&server)).expect_code(22);
    assert!(
        !stand_ins.scratch.path("file").exists(),
        "the error page was saved"
    );

    let api = "retry --retry-on 6,7,22,28,35,52,55,56 --stop-on 'stderr:error: 4(0[0-8]|1[0-7])' \
               -- curl -fsS https://example.com/api";
    let server = HttpStandIn::start(&[Answer::Status(503), Answer::Status(429)]);
    StandIns::new()
        .run(api, Some(&server))
        .expect_code(0)
        .expect_stdout("status 200\n");
    let server = HttpStandIn::start(&[Answer::Status(404)]);
    StandIns::new().run(api, Some(&server)).expect_code(22);
    assert_eq!(server.requests(), 1, "a 404 is not retried");

    let by_output =
        "retry --retry-on 'stderr:\\b(503|429)\\b' -- curl -fsS https://example.com/api";
    let server = HttpStandIn::start(&[Answer::Status(503)]);
    StandIns::new().run(by_output, Some(&server)).expect_code(0);
    assert_eq!(server.requests(), 2);
}

#[test]
fn the_retry_after_recipe_waits_as_the_server_asks() {
    let recipe = r"retry --retry-on 22 --retry-after-output '(?i)^retry-after:\s*(.+)$' -- curl -fsS -D /dev/stderr https://example.com/api";
    let server = HttpStandIn::start(&[Answer::RetryAfter(3)]);
    let run = StandIns::new().run(recipe, Some(&server));
    run.expect_code(0)
        .expect_stdout("status 200\n")
        .expect_stderr("retrying in 3s, as the command asked");
    assert_eq!(server.requests(), 2);
}

#[test]
fn the_readiness_recipe_waits_for_the_rollout() {
    let recipe = "retry --success-on 'stdout:successfully rolled out' -n 30 --base 2s -- kubectl rollout status deployment/web --watch=false";
    let waiting = "Waiting for deployment \"web\" rollout to finish: 1 of 2 updated replicas are available...";
    let stand_ins = StandIns::new().fails(
        "kubectl",
        1,
        waiting,
        0,
        "deployment \"web\" successfully rolled out",
    );
    stand_ins
        .run(recipe, None)
        .expect_code(0)
        .expect_stdout("deployment \"web\" successfully rolled out\n");
    assert_eq!(stand_ins.runs("kubectl"), 2);
}

#[test]
fn the_quick_start_recipes_work() {
    for (recipe, script) in [
        (
            "retry -- curl -fsS https://example.com/health",
            Answer::Status(503),
        ),
        (
            "retry --retry-on 6,7,28,35,52,55,56 -- curl -fsS https://example.com/health",
            Answer::Hang,
        ),
    ] {
        let server = HttpStandIn::start(&[script]);
        StandIns::new()
            .run(recipe, Some(&server))
            .expect_code(0)
            .expect_stdout("status 200\n");
        assert_eq!(server.requests(), 2, "{recipe}");
    }
}

#[test]
fn ci_recipes_keep_a_report() {
    for recipe in [
        "retry --max-time 10m --timeout 4m --report retry-report.json -- npm ci",
        "retry --max-time 10m --timeout 3m --report retry-report.json -- npm ci",
    ] {
        let stand_ins =
            StandIns::new().fails("npm", 1, "npm ERR! code ECONNRESET", 1, "added 1 package");
        stand_ins.run(recipe, None).expect_code(0);
        let report: serde_json::Value =
            serde_json::from_str(&stand_ins.scratch.read("retry-report.json")).unwrap();
        assert_eq!(report["attempts"].as_array().unwrap().len(), 2, "{recipe}");
    }
}

#[test]
fn tool_recipes_retry_transient_failures_and_not_the_others() {
    // (recipe, program, transient failure and its status, permanent failure and its status)
    let cases = [
        (
            "retry --retry-on 255 --timeout 2m -- ssh deploy@host ./release.sh",
            "ssh",
            ("ssh: connect to host host port 22: Connection refused", 255),
            ("release.sh: build 42 failed", 1),
        ),
        (
            "retry --retry-on 'output:connection refused|was refused|i/o timeout' --retry-on \
             'output:TLS handshake timeout|etcdserver: request timed out' --retry-on \
             'output:the server is currently unable' -- kubectl apply -f deploy.yaml",
            "kubectl",
            (
                "The connection to the server 10.0.0.1:6443 was refused - did you specify the \
                 right host or port?",
                1,
            ),
            (
                "error: error validating \"deploy.yaml\": unknown field \"spec.replica\"",
                1,
            ),
        ),
        (
            "retry --retry-on 'output:Could not get lock|Temporary failure resolving|Failed to \
             fetch' -- apt-get install -y jq",
            "apt-get",
            (
                "E: Could not get lock /var/lib/dpkg/lock-frontend. It is held by process 4242 (apt)",
                100,
            ),
            ("E: Unable to locate package jq", 100),
        ),
        (
            "retry --retry-on 'output:ECONNRESET|ETIMEDOUT|EAI_AGAIN|socket hang up' -- npm ci",
            "npm",
            ("npm ERR! code ECONNRESET", 1),
            ("npm ERR! code EUSAGE", 1),
        ),
        (
            "retry --retry-on 'output:ReadTimeoutError|Connection (reset|aborted)' -- pip install \
             -r requirements.txt",
            "pip",
            (
                "pip._vendor.urllib3.exceptions.ReadTimeoutError: HTTPSConnectionPool(host='pypi.org', \
                 port=443): Read timed out.",
                2,
            ),
            (
                "ERROR: Could not find a version that satisfies the requirement nosuchpkg",
                1,
            ),
        ),
    ];
    for (recipe, program, (transient, status), (permanent, permanent_status)) in cases {
        let stand_ins =
            StandIns::new().fails(program, 2, &transient.replace('\'', ""), status, "ok");
        stand_ins
            .run(recipe, None)
            .expect_code(0)
            .expect_stdout("ok\n");
        assert_eq!(stand_ins.runs(program), 3, "{recipe}");
        let stand_ins = StandIns::new().fails(program, 2, permanent, permanent_status, "ok");
        let run = stand_ins.run(recipe, None);
        run.expect_code(i32::from(permanent_status));
        assert_eq!(stand_ins.runs(program), 1, "{recipe}\n{run}");
    }
}

#[test]
fn the_deploy_recipe_stops_on_a_bad_manifest() {
    let recipe = "retry --stop-on 'output:^error: invalid manifest' -- ./deploy.sh";
    let stand_ins = StandIns::new();
    let script = stand_ins.scratch.path("deploy.sh");
    std::fs::write(
        &script,
        "#!/bin/sh\necho x >> runs; echo 'error: invalid manifest: replicas' >&2; exit 1\n",
    )
    .unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    stand_ins.run(recipe, None).expect_code(1);
    assert_eq!(stand_ins.scratch.lines("runs"), 1);
}

#[test]
fn the_hold_output_recipe_captures_one_clean_answer() {
    let recipe = "token=$(retry --hold stdout -- vault read -field=token secret/ci)";
    let stand_ins = StandIns::new();
    let vault = stand_ins.scratch.path("bin/vault");
    std::fs::write(
        &vault,
        "#!/bin/sh\nif [ \"$RETRY_ATTEMPT\" = 1 ]; then echo 'partial junk'; exit 2; fi\n\
         echo s.token42\n",
    )
    .unwrap();
    std::fs::set_permissions(&vault, std::fs::Permissions::from_mode(0o755)).unwrap();
    let recipe = format!("{recipe}; echo \"token=$token\"");
    assert!(readme_commands().contains(recipe.split(';').next().unwrap()));
    shell(&recipe)
        .env("PATH", stand_ins.path())
        .run()
        .expect_code(0)
        .expect_stdout("token=s.token42\n")
        .expect_stderr("partial junk");
}

#[test]
fn the_password_prompt_recipe_gets_the_terminal() {
    let recipe = "retry -n 3 -- ssh-add ~/.ssh/deploy_key";
    assert!(readme_commands().contains(recipe));
    let stand_ins = StandIns::new();
    let ssh_add = stand_ins.scratch.path("bin/ssh-add");
    std::fs::write(
        &ssh_add,
        "#!/bin/sh\nprintf 'Enter passphrase for %s: ' \"$1\"; read -r pass\n\
         if [ \"$pass\" = secret ]; then echo 'Identity added'; else echo 'Bad passphrase'; exit 1; fi\n",
    )
    .unwrap();
    std::fs::set_permissions(&ssh_add, std::fs::Permissions::from_mode(0o755)).unwrap();
    let mut terminal = Session::shell();
    terminal.write(
        format!(
            "PATH={}; {}\n",
            stand_ins.path(),
            recipe.replace("retry", "\"$RETRY\"")
        )
        .as_bytes(),
    );
    terminal.expect("Enter passphrase");
    terminal.write(b"wrong\n");
    terminal.expect("Bad passphrase");
    terminal.expect_times("Enter passphrase", 2);
    terminal.write(b"secret\n");
    terminal.expect("Identity added");
    terminal.write(b"exit\n");
    terminal.wait();
}

#[test]
fn the_fleet_recipes_plan_as_described() {
    for recipe in [
        "retry --seed host --splay 10m --budget inventory-api -- curl -fsS https://inventory.example.com/sync",
        "retry --seed host --splay 10m --max-time 50m --budget inventory-api --jitter decorrelated \
         --base 2s --cap 5m -n 8 -- curl -fsS https://inventory.example.com/sync",
    ] {
        assert!(
            readme_commands().contains(recipe),
            "the README lacks {recipe:?}"
        );
        // The splay would hold a test for up to ten minutes: the plan shows what the run does.
        let planned = recipe.replacen("retry ", "\"$RETRY\" --plan ", 1);
        let run = shell(&planned).run();
        run.expect_code(0)
            .expect_stdout_contains("retry budget: inventory-api, on the terms its store keeps")
            .expect_stdout_contains("0s to 10m");
    }
}
