//! psql and pg_isready, the classic "wait for the database" step of a CI job, against a real
//! PostgreSQL of the tests' own on a loopback port (a wrong password, a missing database), a
//! refused port, and a stand-in that answers as a server still starting up does.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::Command;

use super::{Retried, Server, Stopped, assert_table, needed, refusing_port, row, works};
use crate::support::harness::server_port;
use crate::support::harness::{Scratch, is_root, wait_for};

/// The directory of PostgreSQL's server programs, the newest Debian installed.
fn server_programs() -> PathBuf {
    let versions = std::fs::read_dir("/usr/lib/postgresql").unwrap_or_else(|_| {
        panic!("the psql preset's test runs a PostgreSQL server: apt-get install -y postgresql")
    });
    let mut bins: Vec<PathBuf> = versions
        .flatten()
        .map(|entry| entry.path().join("bin"))
        .filter(|bin| bin.join("postgres").exists())
        .collect();
    bins.sort();
    bins.pop()
        .expect("a PostgreSQL server under /usr/lib/postgresql: apt-get install -y postgresql")
}

/// `program` from `bin`, run as the postgres user when the tests run as root (PostgreSQL will
/// not run as root).
fn as_postgres(bin: &Path, program: &str) -> Command {
    match is_root() {
        true => {
            let mut command = Command::new("setpriv");
            command
                .args(["--reuid=postgres", "--regid=postgres", "--init-groups"])
                .arg(bin.join(program));
            command
        }
        false => Command::new(bin.join(program)),
    }
}

/// A PostgreSQL server in `dir` on a loopback port, its superuser `postgres` with the password
/// `right`, password authentication over TCP.
fn postgres(dir: &Path) -> (Server, u16) {
    let bin = server_programs();
    std::fs::set_permissions(dir, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    std::fs::write(dir.join("password"), "right\n").unwrap();
    if is_root() {
        let user = nix::unistd::User::from_name("postgres").unwrap().unwrap();
        for path in [dir.join("password"), dir.to_path_buf()] {
            nix::unistd::chown(&path, Some(user.uid), Some(user.gid)).unwrap();
        }
    }
    let initdb = as_postgres(&bin, "initdb")
        .args(["-D", "data", "-U", "postgres", "--auth-local=trust"])
        .args(["--auth-host=scram-sha-256", "--pwfile=password"])
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(initdb.status.success(), "initdb: {initdb:?}");
    let port = server_port();
    let mut postgres = as_postgres(&bin, "postgres");
    postgres
        .args(["-D", "data", "-p", &port.to_string(), "-k"])
        .arg(dir)
        .args(["-c", "listen_addresses=127.0.0.1"])
        .current_dir(dir);
    let server = Server::listening(postgres, port, "PostgreSQL");
    wait_for("PostgreSQL to accept connections", || {
        Command::new("pg_isready")
            .args(["-q", "-h", "127.0.0.1", "-p", &port.to_string()])
            .status()
            .is_ok_and(|status| status.success())
    });
    (server, port)
}

/// A stand-in for a PostgreSQL server that is still starting up: it declines SSL and GSS
/// encryption, reads the startup message, and answers with the error a starting server sends
/// (SQLSTATE 57P03).
fn starting_up() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            std::thread::spawn(move || answer_starting_up(stream));
        }
    });
    port
}

fn answer_starting_up(mut stream: TcpStream) {
    // SSLRequest and GSSENCRequest codes: the client asks first, then sends its startup.
    const ENCRYPTION_REQUESTS: [u32; 2] = [80_877_103, 80_877_104];
    loop {
        let mut length = [0; 4];
        if stream.read_exact(&mut length).is_err() {
            return;
        }
        let length = u32::from_be_bytes(length) as usize;
        let mut message = vec![0; length.saturating_sub(4)];
        if stream.read_exact(&mut message).is_err() {
            return;
        }
        let code = message
            .get(..4)
            .map_or(0, |code| u32::from_be_bytes(code.try_into().unwrap()));
        if !ENCRYPTION_REQUESTS.contains(&code) {
            break;
        }
        if stream.write_all(b"N").is_err() {
            return;
        }
    }
    let mut fields = Vec::new();
    for (kind, text) in [
        (b'S', "FATAL"),
        (b'V', "FATAL"),
        (b'C', "57P03"),
        (b'M', "the database system is starting up"),
    ] {
        fields.push(kind);
        fields.extend_from_slice(text.as_bytes());
        fields.push(0);
    }
    fields.push(0);
    let mut error = vec![b'E'];
    error.extend_from_slice(&(fields.len() as u32 + 4).to_be_bytes());
    error.extend_from_slice(&fields);
    let _ = stream.write_all(&error);
}

#[test]
fn psql_retries_a_server_not_yet_there_and_stops_at_a_wrong_password_or_database() {
    needed("psql");
    let scratch = Scratch::new();
    let (_postgres, port) = postgres(&scratch.path("."));
    let url = |port: u16, password: &str, database: &str| {
        format!("postgresql://postgres:{password}@127.0.0.1:{port}/{database}")
    };
    let psql = |url: String| ["psql".to_string(), url, "-c".into(), "select 1".into()];
    works(&psql(url(port, "right", "postgres")));
    let rows = [
        row(
            "a refused connection",
            &psql(url(refusing_port(), "right", "postgres")),
            2,
            Retried,
        ),
        row(
            "a server starting up",
            &psql(url(starting_up(), "right", "postgres")),
            2,
            Retried,
        ),
        row(
            "a wrong password",
            &psql(url(port, "wrong", "postgres")),
            2,
            Stopped,
        ),
        row(
            "a missing database",
            &psql(url(port, "right", "missing")),
            2,
            Stopped,
        ),
        row(
            "an SQL error",
            &[
                "psql",
                &url(port, "right", "postgres"),
                "-c",
                "select nothing",
            ],
            1,
            Stopped,
        ),
    ];
    assert_table(&rows);
}

#[test]
fn pg_isready_waits_for_a_server_that_is_not_ready_yet() {
    needed("pg_isready");
    let pg_isready = |port: String| {
        [
            "pg_isready".to_string(),
            "-h".into(),
            "127.0.0.1".into(),
            "-p".into(),
            port,
        ]
    };
    let rows = [
        row(
            "a refused connection",
            &pg_isready(refusing_port().to_string()),
            2,
            Retried,
        ),
        row(
            "a server starting up",
            &pg_isready(starting_up().to_string()),
            1,
            Retried,
        ),
        row(
            "a connection option that is not one",
            &["pg_isready", "-d", "host=127.0.0.1 nonsense=1"],
            3,
            Stopped,
        ),
    ];
    assert_table(&rows);
}
