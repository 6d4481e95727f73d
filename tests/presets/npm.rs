//! npm against a registry of the tests' own (a package document and a tarball the test makes,
//! served by a Python static server) and the faulty HTTP server: a 5xx and a reset or refused
//! connection are retried; a package or version the registry does not have stops.

use std::path::Path;
use std::process::Command;

use super::{Retried, Stopped, assert_table, needed, refusing_port, row, static_files, works};
use crate::faulty_http::FaultyHttp;
use crate::support::harness::Scratch;
use crate::support::harness::server_port;

/// A registry in `dir/registry`, served at `port`, with the package `demo` 1.0.0.
fn make_registry(dir: &Path, port: u16) {
    let registry = dir.join("registry");
    std::fs::create_dir_all(registry.join("tarballs")).unwrap();
    std::fs::create_dir_all(dir.join("package/package")).unwrap();
    std::fs::write(
        dir.join("package/package/package.json"),
        r#"{"name":"demo","version":"1.0.0"}"#,
    )
    .unwrap();
    let tarball = registry.join("tarballs/demo-1.0.0.tgz");
    let packed = Command::new("tar")
        .arg("-czf")
        .arg(&tarball)
        .arg("-C")
        .arg(dir.join("package"))
        .arg("package")
        .output()
        .unwrap();
    assert!(packed.status.success(), "tar: {packed:?}");
    let sum = Command::new("sha1sum").arg(&tarball).output().unwrap();
    let sum = String::from_utf8(sum.stdout).unwrap();
    let document = serde_json::json!({
        "name": "demo",
        "dist-tags": {"latest": "1.0.0"},
        "versions": {"1.0.0": {
            "name": "demo",
            "version": "1.0.0",
            "dist": {
                "tarball": format!("http://127.0.0.1:{port}/tarballs/demo-1.0.0.tgz"),
                "shasum": sum.split_whitespace().next().unwrap(),
            },
        }},
    });
    std::fs::write(registry.join("demo"), document.to_string()).unwrap();
}

/// `npm install` of `spec` from the registry at `registry`, into `dir`'s project, without npm's
/// own retries, audit, funding notice or update check (which would go to the internet).
fn npm(registry: &str, spec: &str, dir: &Path) -> Vec<String> {
    [
        "npm",
        "install",
        "--registry",
        registry,
        "--fetch-retries=0",
        "--no-audit",
        "--no-fund",
        "--no-update-notifier",
        "--cache",
        &dir.join("cache").display().to_string(),
        "--prefix",
        &dir.join("project").display().to_string(),
        spec,
    ]
    .map(String::from)
    .to_vec()
}

#[test]
fn npm_retries_a_5xx_and_a_cut_connection_and_stops_at_a_missing_package_or_version() {
    needed("npm");
    let scratch = Scratch::new();
    let dir = scratch.path(".");
    let port = server_port();
    make_registry(&dir, port);
    let _registry = static_files(&dir.join("registry"), port, "the registry");
    let good = format!("http://127.0.0.1:{port}/");
    works(&npm(&good, "demo", &dir));
    let http = FaultyHttp::start();
    let refused = format!("http://127.0.0.1:{}/", refusing_port());
    let rows = [
        row(
            "503",
            &npm(&http.url("/status/503/"), "demo", &dir),
            1,
            Retried,
        ),
        row(
            "502",
            &npm(&http.url("/status/502/"), "demo", &dir),
            1,
            Retried,
        ),
        row(
            "429",
            &npm(&http.url("/status/429/"), "demo", &dir),
            1,
            Retried,
        ),
        row(
            "a reset connection",
            &npm(&http.url("/reset/"), "demo", &dir),
            1,
            Retried,
        ),
        row(
            "a refused connection",
            &npm(&refused, "demo", &dir),
            1,
            Retried,
        ),
        row(
            "a package the registry does not have",
            &npm(&good, "nosuch", &dir),
            1,
            Stopped,
        ),
        row(
            "a version the registry does not have",
            &npm(&good, "demo@2.0.0", &dir),
            1,
            Stopped,
        ),
        row(
            "401",
            &npm(&http.url("/status/401/"), "demo", &dir),
            1,
            Stopped,
        ),
    ];
    assert_table(&rows);
}
