//! The code keeps the layers the map (docs/development.md) gives: each top-level part of `src/` (a folder, or
//! a file directly in it) imports only parts of its own layer or below, and no parts import each
//! other in a circle.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Parts that are not layers: the crate's root and the binary, at the very top, and the
/// test-only and fuzz-only modules.
const OUTSIDE: [&str; 4] = ["lib", "main", "reference", "fuzzing"];

/// The top-level parts of `src/`, each with the files it holds.
fn parts(src: &Path) -> BTreeMap<String, Vec<PathBuf>> {
    let mut parts = BTreeMap::new();
    for entry in std::fs::read_dir(src).expect("read src/") {
        let path = entry.expect("an entry of src/").path();
        let name = path.file_stem().unwrap().to_string_lossy().into_owned();
        let files = match path.is_dir() {
            true => rust_files(&path),
            false if path.extension().is_some_and(|ext| ext == "rs") => vec![path],
            false => continue,
        };
        parts.insert(name, files);
    }
    parts
}

fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).expect("read a folder of src/") {
        let path = entry.expect("an entry").path();
        match path.is_dir() {
            true => files.extend(rust_files(&path)),
            false if path.extension().is_some_and(|ext| ext == "rs") => files.push(path),
            false => {}
        }
    }
    files
}

/// The parts the code of `files` names as `crate::PART`, but for its tests (which may reach
/// anything to set a case up), in a `mod tests` of a file or a `tests.rs` of its own.
fn imports(files: &[PathBuf], parts: &BTreeMap<String, Vec<PathBuf>>) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    for file in files.iter().filter(|file| !file.ends_with("tests.rs")) {
        let text = std::fs::read_to_string(file).expect("read a source file");
        let code = text
            .split("\n#[cfg(test)]\nmod tests")
            .next()
            .unwrap_or_default();
        for (index, _) in code.match_indices("crate::") {
            let name: String = code[index + 7..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            if parts.contains_key(&name) {
                found.insert(name);
            }
        }
    }
    found
}

/// The layers of the map (docs/development.md), bottom first: the part names in each numbered item.
fn layers(parts: &BTreeMap<String, Vec<PathBuf>>) -> Vec<Vec<String>> {
    let guide =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/development.md"))
            .expect("read docs/development.md");
    let map = guide
        .split("### The map")
        .nth(1)
        .expect("the map in docs/development.md");
    let mut layers: Vec<Vec<String>> = Vec::new();
    let mut item = String::new();
    let flush = |item: &mut String, layers: &mut Vec<Vec<String>>| {
        let names: Vec<String> = item
            .split('`')
            .skip(1)
            .step_by(2)
            .map(|name| name.trim_end_matches('/').to_string())
            .filter(|name| parts.contains_key(name))
            .collect();
        if !names.is_empty() {
            layers.push(names);
        }
        item.clear();
    };
    for line in map.lines() {
        let numbered = line
            .split_once(". ")
            .is_some_and(|(number, _)| number.parse::<u32>().is_ok());
        if numbered || line.starts_with('#') {
            flush(&mut item, &mut layers);
        }
        if line.starts_with('#') {
            break;
        }
        if numbered || (!item.is_empty() && line.starts_with("   ")) {
            item.push_str(line);
            item.push(' ');
        }
    }
    flush(&mut item, &mut layers);
    layers
}

#[test]
fn every_part_imports_only_its_own_layer_or_below_and_never_in_a_circle() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let parts = parts(&src);
    let layers = layers(&parts);
    let layer_of = |part: &str| {
        layers
            .iter()
            .position(|layer| layer.iter().any(|p| p == part))
    };
    let mut unplaced = Vec::new();
    let mut graph: BTreeMap<&str, BTreeSet<String>> = BTreeMap::new();
    for (part, files) in &parts {
        if OUTSIDE.contains(&part.as_str()) {
            continue;
        }
        let Some(layer) = layer_of(part) else {
            unplaced.push(part.clone());
            continue;
        };
        let mut imported = imports(files, &parts);
        imported.remove(part);
        for other in &imported {
            let other_layer = layer_of(other).unwrap_or(usize::MAX);
            assert!(
                other_layer <= layer,
                "{part} (layer {}) imports {other} (layer {}), which the map (docs/development.md) puts above it",
                layer + 1,
                other_layer.saturating_add(1)
            );
        }
        graph.insert(part, imported);
    }
    assert!(
        unplaced.is_empty(),
        "the map (docs/development.md) places no layer for {unplaced:?}"
    );
    // Within a layer, parts may use each other, but never in a circle.
    fn visit<'a>(
        part: &'a str,
        graph: &'a BTreeMap<&str, BTreeSet<String>>,
        path: &mut Vec<&'a str>,
        done: &mut BTreeSet<&'a str>,
    ) {
        if done.contains(part) {
            return;
        }
        assert!(
            !path.contains(&part),
            "parts import each other in a circle: {path:?} -> {part}"
        );
        path.push(part);
        for next in graph.get(part).into_iter().flatten() {
            visit(next, graph, path, done);
        }
        path.pop();
        done.insert(part);
    }
    let mut done = BTreeSet::new();
    for part in graph.keys() {
        visit(part, &graph, &mut Vec::new(), &mut done);
    }
}
