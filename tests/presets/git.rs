//! git, cloning and fetching a repository of the tests' own over `git daemon` and over HTTP
//! from `git http-backend` behind a CGI bridge of the tests' own; a proxy in front of each cuts
//! the connection mid-pack, and the faulty HTTP server answers 5xx, 401 and 404.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use super::{
    Retried, Server, Stopped, UntrustedTls, assert_table, cutting_proxy, needed, refusing_port,
    row, works,
};
use crate::faulty_http::FaultyHttp;
use crate::support::harness::Scratch;
use crate::support::harness::server_port;

/// A bare repository `repo.git` in `dir` with one commit, and its work tree `work`.
fn make_repository(dir: &Path) {
    let git = |args: &[&str], in_dir: &Path| {
        let output = Command::new("git")
            .args([
                "-c",
                "user.name=t",
                "-c",
                "user.email=t@t",
                "-c",
                "init.defaultBranch=main",
            ])
            .args(args)
            .current_dir(in_dir)
            .output()
            .unwrap();
        assert!(output.status.success(), "git {args:?}: {output:?}");
    };
    git(&["init", "-q", "--bare", "repo.git"], dir);
    git(&["init", "-q", "work"], dir);
    grow(dir, "one");
}

/// Commit 300 kB of random bytes as `name` in `dir`'s work tree and push it to `repo.git`.
fn grow(dir: &Path, name: &str) {
    let work = dir.join("work");
    let mut bytes = vec![0u8; 300_000];
    std::fs::File::open("/dev/urandom")
        .unwrap()
        .read_exact(&mut bytes)
        .unwrap();
    std::fs::write(work.join(name), bytes).unwrap();
    for args in [
        vec!["add", name],
        vec!["commit", "-q", "-m", name],
        vec!["push", "-q", "../repo.git", "HEAD:refs/heads/main"],
    ] {
        let output = Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@t"])
            .args(&args)
            .current_dir(&work)
            .output()
            .unwrap();
        assert!(output.status.success(), "git {args:?}: {output:?}");
    }
}

/// `git daemon` serving every repository in `dir` on a loopback port.
fn git_daemon(dir: &Path) -> (Server, u16) {
    let port = server_port();
    let mut daemon = Command::new("git");
    daemon
        .args([
            "daemon",
            "--reuseaddr",
            "--export-all",
            "--listen=127.0.0.1",
        ])
        .arg(format!("--port={port}"))
        .arg(format!("--base-path={}", dir.display()))
        .arg(dir);
    (Server::listening(daemon, port, "git daemon"), port)
}

/// An HTTP server that runs `git http-backend` as a CGI program for each request, serving the
/// repositories in `dir`; returns its port.
fn http_backend(dir: &Path) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let root = dir.to_path_buf();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let root = root.clone();
            std::thread::spawn(move || serve_cgi(stream, &root));
        }
    });
    port
}

/// Answer one request with `git http-backend`.
fn serve_cgi(stream: TcpStream, root: &PathBuf) {
    let mut reader = BufReader::new(stream);
    let mut request_line = String::new();
    if reader.read_line(&mut request_line).is_err() {
        return;
    }
    let mut words = request_line.split_whitespace();
    let (method, target) = (words.next().unwrap_or("GET"), words.next().unwrap_or("/"));
    let (path, query) = target.split_once('?').unwrap_or((target, ""));
    let mut headers = Vec::new();
    let mut line = String::new();
    while reader.read_line(&mut line).is_ok_and(|read| read > 2) {
        if let Some((name, value)) = line.trim_end().split_once(':') {
            headers.push((name.to_ascii_lowercase(), value.trim().to_string()));
        }
        line.clear();
    }
    let header = |name: &str| {
        headers
            .iter()
            .find(|(key, _)| key == name)
            .map(|(_, value)| value.clone())
    };
    let length: usize = header("content-length")
        .and_then(|n| n.parse().ok())
        .unwrap_or(0);
    let mut body = vec![0; length];
    if reader.read_exact(&mut body).is_err() {
        return;
    }
    let mut backend = Command::new("git");
    backend
        .arg("http-backend")
        .env("GIT_PROJECT_ROOT", root)
        .env("GIT_HTTP_EXPORT_ALL", "1")
        .env("REQUEST_METHOD", method)
        .env("PATH_INFO", path)
        .env("QUERY_STRING", query)
        .env("GATEWAY_INTERFACE", "CGI/1.1")
        .env("SERVER_PROTOCOL", "HTTP/1.1")
        .env("REMOTE_ADDR", "127.0.0.1")
        .env("CONTENT_LENGTH", length.to_string())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    for (name, variable) in [
        ("content-type", "CONTENT_TYPE"),
        ("content-encoding", "HTTP_CONTENT_ENCODING"),
        ("git-protocol", "HTTP_GIT_PROTOCOL"),
    ] {
        if let Some(value) = header(name) {
            backend.env(variable, value);
        }
    }
    let mut child = backend.spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    std::thread::spawn(move || stdin.write_all(&body));
    let mut output = Vec::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_end(&mut output)
        .unwrap();
    let _ = child.wait();
    let split = output
        .windows(4)
        .position(|window| window == b"\r\n\r\n")
        .map(|at| (at, 4))
        .or_else(|| {
            output
                .windows(2)
                .position(|w| w == b"\n\n")
                .map(|at| (at, 2))
        });
    let Some((at, gap)) = split else { return };
    let head = String::from_utf8_lossy(&output[..at]).to_string();
    let status = head
        .lines()
        .find_map(|line| line.strip_prefix("Status: "))
        .unwrap_or("200 OK")
        .to_string();
    let mut response = format!("HTTP/1.1 {status}\r\nConnection: close\r\n");
    for line in head.lines().filter(|line| !line.starts_with("Status:")) {
        response.push_str(line.trim_end());
        response.push_str("\r\n");
    }
    response.push_str("\r\n");
    let mut stream = reader.into_inner();
    let _ = stream.write_all(response.as_bytes());
    let _ = stream.write_all(&output[at + gap..]);
}

#[test]
fn git_retries_a_cut_connection_and_a_5xx_and_stops_at_a_missing_repository_or_login() {
    needed("git");
    let scratch = Scratch::new();
    let root = scratch.path(".");
    make_repository(&root);
    let (_daemon, daemon) = git_daemon(&root);
    let backend = http_backend(&root);
    let (cut_daemon, cut_http) = (cutting_proxy(daemon), cutting_proxy(backend));
    let http = FaultyHttp::start();
    let tls = UntrustedTls::start();
    let refused = refusing_port();
    let git = |url: String| ["git", "clone", "-q", &url, "clone"].map(String::from);
    let daemon_url = |port: u16, name: &str| format!("git://127.0.0.1:{port}/{name}");
    let rows = [
        row(
            "a connection cut mid-pack, git daemon",
            &git(daemon_url(cut_daemon, "repo.git")),
            128,
            Retried,
        ),
        row(
            "a connection cut mid-pack, HTTP",
            &git(format!("http://127.0.0.1:{cut_http}/repo.git")),
            128,
            Retried,
        ),
        row("503", &git(http.url("/status/503/repo.git")), 128, Retried),
        row("502", &git(http.url("/status/502/repo.git")), 128, Retried),
        row(
            "a refused connection",
            &git(daemon_url(refused, "repo.git")),
            128,
            Retried,
        ),
        row(
            "a missing repository, git daemon",
            &git(daemon_url(daemon, "missing.git")),
            128,
            Stopped,
        ),
        row(
            "a missing repository, HTTP",
            &git(format!("http://127.0.0.1:{backend}/missing.git")),
            128,
            Stopped,
        ),
        row("404", &git(http.url("/status/404/repo.git")), 128, Stopped),
        row(
            "a certificate that does not verify",
            &git(format!("{}repo.git", tls.url())),
            128,
            Stopped,
        ),
        row(
            "an authentication failure",
            &git(http
                .url("/status/401/repo.git")
                .replace("http://", "http://user:wrong@")),
            128,
            Stopped,
        ),
    ];
    assert_table(&rows);
}

#[test]
fn git_fetches_again_after_a_cut_and_a_whole_clone_works_through_the_servers() {
    needed("git");
    let scratch = Scratch::new();
    let root = scratch.path(".");
    make_repository(&root);
    let (_daemon, daemon) = git_daemon(&root);
    let backend = http_backend(&root);
    for url in [
        format!("git://127.0.0.1:{daemon}/repo.git"),
        format!("http://127.0.0.1:{backend}/repo.git"),
    ] {
        let dest = scratch.path(&format!("whole-{}", url.len()));
        works(&["git", "clone", "-q", &url, &dest.display().to_string()]);
    }
    grow(&root, "two");
    let cut = cutting_proxy(daemon);
    let fetch = [
        "git",
        "-C",
        scratch
            .path(&format!(
                "whole-{}",
                format!("git://127.0.0.1:{daemon}/repo.git").len()
            ))
            .to_str()
            .unwrap(),
        "fetch",
        "-q",
        &format!("git://127.0.0.1:{cut}/repo.git"),
    ]
    .map(String::from);
    assert_table(&[row("a fetch cut mid-pack", &fetch, 128, Retried)]);
}
