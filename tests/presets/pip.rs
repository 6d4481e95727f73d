//! pip against a simple index of the tests' own (one wheel it builds, served by a Python static
//! server) and the faulty HTTP server: a 5xx index and a reset or refused connection are
//! retried; a version the index does not have stops. pip prints the same for a package the
//! index does not have as for an index that answered 5xx, so that one is retried, and the table
//! says so.

use std::path::Path;
use std::process::Command;

use super::{
    Retried, Stopped, UntrustedTls, assert_table, needed, refusing_port, row, static_files, works,
};
use crate::faulty_http::FaultyHttp;
use crate::support::harness::Scratch;
use crate::support::harness::server_port;

/// A simple index in `dir/index` with the package `demo` 1.0, as a wheel the test builds; and
/// one in `dir/faulty` whose `demo` 1.0 is at `wheel`, a URL of the faulty server.
fn make_index(dir: &Path, wheel: &str) {
    let script = r#"
import os, sys, zipfile
root = sys.argv[1]
os.makedirs(os.path.join(root, "simple", "demo"))
os.makedirs(os.path.join(root, "files"))
wheel = "demo-1.0-py3-none-any.whl"
with zipfile.ZipFile(os.path.join(root, "files", wheel), "w") as z:
    z.writestr("demo/__init__.py", "")
    z.writestr("demo-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: demo\nVersion: 1.0\n")
    z.writestr("demo-1.0.dist-info/WHEEL",
               "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
    z.writestr("demo-1.0.dist-info/RECORD", "")
with open(os.path.join(root, "simple", "demo", "index.html"), "w") as page:
    page.write('<a href="/files/%s">%s</a>\n' % (wheel, wheel))
faulty = os.path.join(sys.argv[2], "simple", "demo")
os.makedirs(faulty)
with open(os.path.join(faulty, "index.html"), "w") as page:
    page.write('<a href="%s/%s">%s</a>\n' % (sys.argv[3], wheel, wheel))
"#;
    let made = Command::new("python3")
        .args(["-c", script])
        .arg(dir.join("index"))
        .arg(dir.join("faulty"))
        .arg(wheel)
        .output()
        .unwrap();
    assert!(made.status.success(), "the index: {made:?}");
}

/// `pip install` of `requirement` from the index at `index`, into a directory of its own, with
/// `retries` of pip's own; --isolated leaves out the machine's pip configuration.
fn pip(index: &str, retries: &str, requirement: &str, target: &Path) -> Vec<String> {
    pip_doing("install", index, retries, requirement, target)
}

/// `pip download` of `requirement`, as [`pip`] installs it, into `target`.
fn pip_download(index: &str, retries: &str, requirement: &str, target: &Path) -> Vec<String> {
    pip_doing("download", index, retries, requirement, target)
}

/// `pip SUBCOMMAND`, as [`pip`] says.
fn pip_doing(
    subcommand: &str,
    index: &str,
    retries: &str,
    requirement: &str,
    target: &Path,
) -> Vec<String> {
    let into = match subcommand {
        "install" => "--target",
        _ => "--dest",
    };
    [
        "pip",
        subcommand,
        "--isolated",
        "--no-cache-dir",
        "--retries",
        retries,
        "--index-url",
        index,
        into,
        &target.display().to_string(),
        requirement,
    ]
    .map(String::from)
    .to_vec()
}

#[test]
fn pip_retries_a_5xx_index_and_a_cut_connection_and_stops_at_a_missing_version() {
    needed("pip");
    let scratch = Scratch::new();
    let dir = scratch.path(".");
    let http = FaultyHttp::start();
    make_index(&dir, &http.url("/status/503"));
    let port = server_port();
    let _index = static_files(&dir.join("index"), port, "the index");
    let good = format!("http://127.0.0.1:{port}/simple/");
    let target = dir.join("site");
    works(&pip(&good, "0", "demo", &target));
    let faulty_port = server_port();
    let _faulty = static_files(&dir.join("faulty"), faulty_port, "the faulty index");
    let faulty = format!("http://127.0.0.1:{faulty_port}/simple/");
    let tls = UntrustedTls::start();
    let refused = format!("http://127.0.0.1:{}/simple/", refusing_port());
    // pip retries a failed request 5 times itself, over seconds; --retries 0 and 1 leave it to
    // the tool (1 for the resets, so that pip says what it met).
    let rows = [
        row(
            "an index that answers 503",
            &pip(&http.url("/status/503/simple/"), "0", "demo", &target),
            1,
            Retried,
        ),
        row(
            "a reset connection",
            &pip(&http.url("/reset/simple/"), "1", "demo", &target),
            1,
            Retried,
        ),
        row(
            "a refused connection",
            &pip(&refused, "1", "demo", &target),
            1,
            Retried,
        ),
        row(
            "a version the index does not have",
            &pip(&good, "0", "demo==2.0", &target),
            1,
            Stopped,
        ),
        row(
            "a requirement pip cannot read",
            &pip(&good, "0", "demo[", &target),
            1,
            Stopped,
        ),
        // pip download and pip wheel end with 2 when the exception escapes pip.
        row(
            "a package file that answers 503, pip download",
            &pip_download(&faulty, "0", "demo", &target),
            2,
            Retried,
        ),
        row(
            "a package file that answers 503, pip install",
            &pip(&faulty, "0", "demo", &target),
            1,
            Retried,
        ),
        row(
            "an index whose certificate does not verify",
            &pip(&format!("{}simple/", tls.url()), "0", "demo", &target),
            1,
            Stopped,
        ),
        // "(from versions: none)", as for the 503 above: pip does not say which it was.
        row(
            "a package the index does not have",
            &pip(&good, "0", "nosuch", &target),
            1,
            Retried,
        ),
    ];
    assert_table(&rows);
}
