//! ssh against a real sshd of the tests' own on a loopback port, with keys of their own: a
//! refused or reset connection is retried; a key the server refuses, a host key that does not
//! match and the remote command's own failure stop. ssh exits 255 for all of its own failures,
//! so the preset must read the message.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::Command;

use super::{Retried, Server, Stopped, assert_table, needed, refusing_port, row, works};
use crate::faulty_http::reset;
use crate::support::harness::Scratch;
use crate::support::harness::server_port;

/// The sshd program, where Debian's openssh-server puts it.
const SSHD: &str = "/usr/sbin/sshd";

/// Make an ed25519 key pair at `path` (and `path.pub`).
fn key(path: &Path) {
    let output = Command::new("ssh-keygen")
        .args(["-q", "-t", "ed25519", "-N", "", "-f"])
        .arg(path)
        .output()
        .unwrap();
    assert!(output.status.success(), "ssh-keygen: {output:?}");
}

/// An sshd on a loopback port with a host key of its own, letting in `client`'s key.
fn sshd(dir: &Path, client: &Path) -> (Server, u16) {
    if !Path::new(SSHD).exists() {
        panic!("the ssh preset's test runs {SSHD}: apt-get install -y openssh-server");
    }
    // sshd wants its privilege separation directory, which a service start would make.
    std::fs::create_dir_all("/run/sshd").unwrap();
    key(&dir.join("host_key"));
    std::fs::copy(client.with_extension("pub"), dir.join("authorized_keys")).unwrap();
    let port = server_port();
    let config = format!(
        "Port {port}\nListenAddress 127.0.0.1\nHostKey {dir}/host_key\n\
         AuthorizedKeysFile {dir}/authorized_keys\nPidFile {dir}/sshd.pid\nStrictModes no\n\
         UsePAM no\nPasswordAuthentication no\nKbdInteractiveAuthentication no\n\
         PermitRootLogin prohibit-password\n",
        dir = dir.display()
    );
    std::fs::write(dir.join("sshd_config"), config).unwrap();
    let mut sshd = Command::new(SSHD);
    sshd.args(["-D", "-f"]).arg(dir.join("sshd_config"));
    (Server::listening(sshd, port, "sshd"), port)
}

/// A port whose every connection is reset as soon as it is accepted.
fn resetting_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            reset(&stream);
        }
    });
    port
}

/// `ssh` as a script calls it, with this test's key and known hosts, to run `remote` on the
/// server at `port`.
fn ssh(identity: &Path, known_hosts: &Path, port: u16, remote: &str) -> Vec<String> {
    let option = |text: String| ["-o".to_string(), text];
    let mut words = vec![
        "ssh".to_string(),
        "-p".into(),
        port.to_string(),
        "-i".into(),
    ];
    words.push(identity.display().to_string());
    words.extend(option(format!(
        "UserKnownHostsFile={}",
        known_hosts.display()
    )));
    words.extend(option("BatchMode=yes".into()));
    words.extend(option("StrictHostKeyChecking=yes".into()));
    words.push("127.0.0.1".into());
    words.push(remote.into());
    words
}

/// A known_hosts file at `path` that gives the server at `port` the public key at `key`.
fn known_hosts(path: &Path, port: u16, key: &Path) -> PathBuf {
    let public = std::fs::read_to_string(key.with_extension("pub")).unwrap();
    let mut words = public.split_whitespace();
    let (kind, body) = (words.next().unwrap(), words.next().unwrap());
    std::fs::write(path, format!("[127.0.0.1]:{port} {kind} {body}\n")).unwrap();
    path.to_path_buf()
}

#[test]
fn ssh_retries_a_refused_or_reset_connection_and_stops_at_a_refused_key_or_host_key() {
    needed("ssh");
    let scratch = Scratch::new();
    let dir = scratch.path(".");
    let (client, stranger) = (dir.join("client_key"), dir.join("stranger_key"));
    key(&client);
    key(&stranger);
    let (_sshd, port) = sshd(&dir, &client);
    let trusted = known_hosts(&dir.join("known_hosts"), port, &dir.join("host_key"));
    let wrong_host = known_hosts(&dir.join("wrong_hosts"), port, &stranger);
    works(&ssh(&client, &trusted, port, "true"));
    let rows = [
        row(
            "a refused connection",
            &ssh(&client, &trusted, refusing_port(), "true"),
            255,
            Retried,
        ),
        row(
            "a reset connection",
            &ssh(&client, &trusted, resetting_port(), "true"),
            255,
            Retried,
        ),
        row(
            "a key the server refuses",
            &ssh(&stranger, &trusted, port, "true"),
            255,
            Stopped,
        ),
        row(
            "a host key that does not match",
            &ssh(&client, &wrong_host, port, "true"),
            255,
            Stopped,
        ),
        row(
            "the remote command's own failure",
            &ssh(&client, &trusted, port, "exit 3"),
            3,
            Stopped,
        ),
    ];
    assert_table(&rows);
}
