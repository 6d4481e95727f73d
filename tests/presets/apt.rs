//! apt-get against a local mirror the test makes (one `.deb` it builds, and a `Packages` index
//! it writes) behind a Python static server, with its own state and cache directories so that
//! nothing of the machine's apt is touched: a 503 from the mirror (which `apt-get update` ends
//! with status 0) and a held dpkg lock are retried; an unknown package stops.

use std::path::Path;
use std::process::Command;

use super::{
    Retried, Server, Stopped, UntrustedTls, assert_table, needed, row, static_files, works,
};
use crate::faulty_http::FaultyHttp;
use crate::support::harness::server_port;
use crate::support::harness::{Scratch, wait_for};

/// A mirror in `dir/repo`: the package `retry-demo` 1.0, and its `Packages` index.
pub(super) fn make_mirror(dir: &Path) {
    let package = dir.join("pkg/DEBIAN");
    std::fs::create_dir_all(&package).unwrap();
    std::fs::create_dir(dir.join("repo")).unwrap();
    let control = "Package: retry-demo\nVersion: 1.0\nArchitecture: all\nMaintainer: t <t@t>\n\
                   Description: a package of the tests' own\n";
    std::fs::write(package.join("control"), control).unwrap();
    let deb = dir.join("repo/retry-demo_1.0_all.deb");
    let built = Command::new("dpkg-deb")
        .args(["--build", "--root-owner-group"])
        .arg(dir.join("pkg"))
        .arg(&deb)
        .output()
        .unwrap();
    assert!(built.status.success(), "dpkg-deb: {built:?}");
    let sum = Command::new("sha256sum").arg(&deb).output().unwrap();
    let sum = String::from_utf8(sum.stdout).unwrap();
    let size = std::fs::metadata(&deb).unwrap().len();
    let index = format!(
        "{control}Filename: ./retry-demo_1.0_all.deb\nSize: {size}\nSHA256: {}\n\n",
        sum.split_whitespace().next().unwrap()
    );
    std::fs::write(dir.join("repo/Packages"), index).unwrap();
}

/// The options that give apt-get this test's sources (`sources` in `dir`), state, cache and
/// dpkg status and lock, instead of the machine's; and no retries of its own.
fn own_apt(dir: &Path, sources: &str) -> Vec<String> {
    for sub in ["state/lists/partial", "cache/archives/partial", "parts"] {
        std::fs::create_dir_all(dir.join(sub)).unwrap();
    }
    if !dir.join("status").exists() {
        std::fs::write(dir.join("status"), "").unwrap();
    }
    let dir = dir.display();
    [
        format!("Dir::Etc::SourceList={dir}/{sources}"),
        format!("Dir::Etc::SourceParts={dir}/parts"),
        format!("Dir::State={dir}/state"),
        format!("Dir::State::status={dir}/status"),
        format!("Dir::Cache={dir}/cache"),
        "APT::Sandbox::User=root".to_string(),
        // apt retries a failed fetch itself, with waits; none leaves it to the tool.
        "Acquire::Retries=0".to_string(),
    ]
    .into_iter()
    .flat_map(|option| ["-o".to_string(), option])
    .collect()
}

/// `apt-get` with this test's directories, then `args`.
pub(super) fn apt_get(dir: &Path, sources: &str, args: &[&str]) -> Vec<String> {
    let mut words = vec!["apt-get".to_string()];
    words.extend(own_apt(dir, sources));
    words.extend(args.iter().map(|arg| arg.to_string()));
    words
}

/// A process that holds the dpkg frontend lock in `dir` (as a running apt or dpkg would: a
/// POSIX lock), until dropped.
fn hold_dpkg_lock(dir: &Path) -> Server {
    let lock = dir.join("lock-frontend");
    let script = format!(
        "import fcntl, time\nf = open({:?}, 'w')\nfcntl.lockf(f, fcntl.LOCK_EX)\n\
         open({:?}, 'w').close()\ntime.sleep(600)\n",
        lock.display().to_string(),
        dir.join("locked").display().to_string()
    );
    let mut holder = Command::new("python3");
    holder.args(["-c", &script]);
    let server = Server::start(holder);
    wait_for("the dpkg lock to be held", || dir.join("locked").exists());
    server
}

#[test]
fn apt_get_retries_a_5xx_mirror_and_a_held_lock_and_stops_at_an_unknown_package() {
    needed("apt-get");
    needed("dpkg-deb");
    let scratch = Scratch::new();
    let dir = scratch.path(".");
    make_mirror(&dir);
    let port = server_port();
    let _mirror = static_files(&dir.join("repo"), port, "the mirror");
    let http = FaultyHttp::start();
    let line = |url: String| format!("deb [trusted=yes] {url} ./\n");
    std::fs::write(
        dir.join("good.list"),
        line(format!("http://127.0.0.1:{port}/")),
    )
    .unwrap();
    std::fs::write(dir.join("503.list"), line(http.url("/status/503/"))).unwrap();
    std::fs::write(dir.join("404.list"), line(http.url("/status/404/"))).unwrap();
    let tls = UntrustedTls::start();
    std::fs::write(dir.join("tls.list"), line(tls.url())).unwrap();
    works(&apt_get(&dir, "good.list", &["-q", "update"]));
    let rows = [
        row(
            "a mirror that answers 503, update",
            &apt_get(&dir, "503.list", &["update"]),
            0,
            Retried,
        ),
        row(
            "a mirror that answers 404, update",
            &apt_get(&dir, "404.list", &["update"]),
            100,
            Stopped,
        ),
        row(
            "a mirror whose certificate does not verify, update",
            &apt_get(&dir, "tls.list", &["update"]),
            0,
            Stopped,
        ),
        row(
            "an unknown package",
            &apt_get(&dir, "good.list", &["install", "-y", "nosuch"]),
            100,
            Stopped,
        ),
    ];
    assert_table(&rows);
    let _lock = hold_dpkg_lock(&dir);
    let held = apt_get(&dir, "good.list", &["install", "-y", "retry-demo"]);
    assert_table(&[row("a held dpkg lock", &held, 100, Retried)]);
}
