//! pip against a simple index of the tests' own (one wheel it builds, served by a Python static
//! server) and the faulty HTTP server: a 5xx index and a reset or refused connection are
//! retried; a version the index does not have stops. pip prints the same for a package the
//! index does not have as for an index that answered 5xx, so that one is retried, and the table
//! says so.

use std::path::Path;
use std::process::Command;

use super::{Retried, Stopped, assert_table, needed, refusing_port, row, static_files, works};
use crate::support::faulty_http::FaultyHttp;
use crate::support::harness::Scratch;
use crate::support::harness::server_port;

/// A simple index in `dir/index` with the package `demo` 1.0, as a wheel the test builds.
fn make_index(dir: &Path) {
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
"#;
    let made = Command::new("python3")
        .args(["-c", script])
        .arg(dir.join("index"))
        .output()
        .unwrap();
    assert!(made.status.success(), "the index: {made:?}");
}

/// `pip install` of `requirement` from the index at `index`, into a directory of its own, with
/// `retries` of pip's own; --isolated leaves out the machine's pip configuration.
fn pip(index: &str, retries: &str, requirement: &str, target: &Path) -> Vec<String> {
    [
        "pip",
        "install",
        "--isolated",
        "--no-cache-dir",
        "--retries",
        retries,
        "--index-url",
        index,
        "--target",
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
    make_index(&dir);
    let port = server_port();
    let _index = static_files(&dir.join("index"), port, "the index");
    let good = format!("http://127.0.0.1:{port}/simple/");
    let target = dir.join("site");
    works(&pip(&good, "0", "demo", &target));
    let http = FaultyHttp::start();
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
