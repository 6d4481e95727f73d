//! The lean default build: scripts/link-static links the optimized `retry` binary statically, and
//! dynamically where glibc's static archives are missing. Tried on a small program of the same
//! binary name, resolving a host name as the budget store does, built as cargo builds the tool.

use std::path::{Path, PathBuf};

use crate::harness::{is_dynamic, is_root, program, Scratch};

/// A program that resolves `localhost` and spawns `true`, as `retry` would.
const PROBE: &str = r#"
use std::net::ToSocketAddrs;
fn main() {
    let resolved = ("localhost", 6379).to_socket_addrs().expect("resolve localhost").count();
    let spawned = std::process::Command::new("true").status().expect("spawn true");
    println!("resolved {resolved}, {spawned}");
}
"#;

/// Build the probe in `scratch` as cargo builds the optimized tool, wrapped in `around` (such
/// as `unshare`, to change what the linker finds); returns the binary.
fn build_probe(scratch: &Scratch, around: &[&str]) -> PathBuf {
    let root = scratch.path("probe");
    std::fs::create_dir_all(root.join("src")).unwrap();
    std::fs::write(
        root.join("Cargo.toml"),
        "[package]\nname = \"probe\"\nversion = \"0.0.0\"\nedition = \"2021\"\n\n\
         [[bin]]\nname = \"retry\"\npath = \"src/main.rs\"\n",
    )
    .unwrap();
    std::fs::write(root.join("src/main.rs"), PROBE).unwrap();
    let linker = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/link-static");
    let cargo = [env!("CARGO"), "build", "--release", "--offline", "--quiet"];
    let words: Vec<&str> = around.iter().chain(&cargo).copied().collect();
    program(words[0])
        .args(&words[1..])
        .current_dir(&root)
        .env("CARGO_TARGET_DIR", root.join("target"))
        .env("RUSTFLAGS", format!("-C linker={}", linker.display()))
        .run()
        .expect_code(0);
    root.join("target/release/retry")
}

#[track_caller]
fn expect_runs(binary: &Path) {
    let run = program(binary.to_str().unwrap()).run();
    run.expect_code(0);
    let stdout = run.stdout();
    assert!(
        stdout.starts_with("resolved ") && !stdout.contains(" 0,"),
        "{run}"
    );
}

#[test]
fn the_optimized_binary_is_static_and_resolves_host_names() {
    let scratch = Scratch::new();
    let binary = build_probe(&scratch, &[]);
    assert!(
        !is_dynamic(&binary),
        "{} is linked dynamically",
        binary.display()
    );
    expect_runs(&binary);
}

#[test]
fn without_static_archives_the_binary_is_linked_dynamically() {
    if !is_root() {
        eprintln!("skipped: hiding libc.a in a mount namespace needs root (CI runs as root)");
        return;
    }
    // glibc's static archive, made an empty file for this build only: the static link fails.
    let archive = program("cc").args(["-print-file-name=libc.a"]).run();
    archive.expect_code(0);
    let archive = archive.stdout();
    let hide = format!("mount --bind /dev/null {} && exec \"$@\"", archive.trim());
    let scratch = Scratch::new();
    let binary = build_probe(&scratch, &["unshare", "--mount", "sh", "-c", &hide, "sh"]);
    assert!(
        is_dynamic(&binary),
        "{} is linked statically",
        binary.display()
    );
    expect_runs(&binary);
}
