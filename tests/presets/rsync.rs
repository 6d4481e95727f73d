//! rsync against an `rsync --daemon` of the tests' own on a loopback port: a refused connection,
//! one cut mid-transfer and a daemon at its connection limit are retried; a missing module, a
//! host the module denies and a wrong password stop.

use std::io::{BufRead, BufReader, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::Command;

use super::{Retried, Server, Stopped, assert_table, cutting_proxy, needed, refusing_port, row};
use crate::support::harness::Scratch;
use crate::support::harness::server_port;

/// An rsync daemon serving `dir/data` as module `data`, and as `private` (denied to
/// 127.0.0.1), `secret` (alice, password `right`) and `busy` (one connection at a time).
fn rsync_daemon(dir: &Path) -> (Server, u16) {
    std::fs::create_dir(dir.join("data")).unwrap();
    let bytes: Vec<u8> = (0..300_000u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    std::fs::write(dir.join("data/blob"), bytes).unwrap();
    let data = dir.join("data");
    let config = format!(
        "use chroot = false\npid file = {dir}/rsyncd.pid\nlock file = {dir}/rsyncd.lock\n\
         [data]\n  path = {data}\n  read only = true\n\
         [private]\n  path = {data}\n  hosts deny = 127.0.0.1\n\
         [secret]\n  path = {data}\n  auth users = alice\n  secrets file = {dir}/secrets\n\
         [busy]\n  path = {data}\n  max connections = 1\n",
        dir = dir.display(),
        data = data.display()
    );
    std::fs::write(dir.join("rsyncd.conf"), config).unwrap();
    std::fs::write(dir.join("secrets"), "alice:right\n").unwrap();
    std::fs::set_permissions(
        dir.join("secrets"),
        std::os::unix::fs::PermissionsExt::from_mode(0o600),
    )
    .unwrap();
    let port = server_port();
    let mut daemon = Command::new("rsync");
    daemon
        .args(["--daemon", "--no-detach", "--address=127.0.0.1"])
        .arg(format!("--port={port}"))
        .arg(format!("--config={}", dir.join("rsyncd.conf").display()));
    (Server::listening(daemon, port, "rsync --daemon"), port)
}

/// A session with module `module` that holds its place at the daemon until dropped.
fn hold_a_session(port: u16, module: &str) -> TcpStream {
    let stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut greeting = String::new();
    reader.read_line(&mut greeting).unwrap();
    let mut writer = stream.try_clone().unwrap();
    writer.write_all(b"@RSYNCD: 31.0\n").unwrap();
    writer.write_all(format!("{module}\n").as_bytes()).unwrap();
    let mut answer = String::new();
    reader.read_line(&mut answer).unwrap();
    assert!(answer.starts_with("@RSYNCD: OK"), "{greeting}{answer}");
    stream
}

#[test]
fn rsync_retries_a_refused_or_cut_connection_and_stops_at_a_missing_module_or_a_denial() {
    needed("rsync");
    let scratch = Scratch::new();
    let (_daemon, daemon) = rsync_daemon(&scratch.path("."));
    let cut = cutting_proxy(daemon);
    let _held = hold_a_session(daemon, "busy");
    let url = |port: u16, module: &str| format!("rsync://127.0.0.1:{port}/{module}/");
    let rsync = |source: String| ["rsync".to_string(), "-a".into(), source, "copy/".into()];
    let refused = refusing_port();
    let wrong = scratch.path("wrong-password");
    std::fs::write(&wrong, "wrong\n").unwrap();
    std::fs::set_permissions(&wrong, std::os::unix::fs::PermissionsExt::from_mode(0o600)).unwrap();
    let rows = [
        row(
            "a refused connection",
            &rsync(url(refused, "data")),
            10,
            Retried,
        ),
        row(
            "a connection cut mid-transfer",
            &rsync(url(cut, "data")),
            12,
            Retried,
        ),
        row(
            "a daemon at its connection limit",
            &rsync(url(daemon, "busy")),
            5,
            Retried,
        ),
        row(
            "a missing module",
            &rsync(url(daemon, "missing")),
            5,
            Stopped,
        ),
        row(
            "a module that denies this host",
            &rsync(url(daemon, "private")),
            5,
            Stopped,
        ),
        row(
            "a wrong password",
            &[
                "rsync",
                "-a",
                &format!("--password-file={}", wrong.display()),
                &url(daemon, "secret").replace("rsync://", "rsync://alice@"),
                "copy/",
            ],
            5,
            Stopped,
        ),
    ];
    assert_table(&rows);
}
