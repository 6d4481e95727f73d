//! The reference's schema tables (`docs/reference.md`), for the tests that hold them to the
//! types that write the JSON.
//!
//! A row lists its keys in backticks (`attempt`); values are quoted (`"success"`), and flags,
//! numbers and literals are neither, so the keys of a row are its backticked words that start
//! with a lower-case letter.

const REFERENCE: &str = include_str!("../docs/reference.md");

/// The keys listed in the row whose first cell is `label`, sorted.
pub(crate) fn row_keys(label: &str) -> Vec<String> {
    let start = format!("| `{label}` |");
    let row = REFERENCE
        .lines()
        .find(|line| line.starts_with(&start))
        .unwrap_or_else(|| panic!("docs/reference.md has no row for {label}"));
    keys_in(&row[start.len()..])
}

/// The first cells of the table that follows `heading`, sorted.
pub(crate) fn table_labels(heading: &str) -> Vec<String> {
    let after = &REFERENCE[REFERENCE.find(heading).expect("the heading")..];
    let rows = after
        .lines()
        .skip_while(|line| !line.starts_with('|'))
        .take_while(|line| line.starts_with('|'))
        .skip(2);
    let mut labels: Vec<String> = rows
        .filter_map(|row| row.split('|').nth(1))
        .flat_map(keys_in)
        .collect();
    labels.sort();
    labels
}

fn keys_in(text: &str) -> Vec<String> {
    let mut keys: Vec<String> = text
        .split('`')
        .skip(1)
        .step_by(2)
        .filter(|word| {
            word.starts_with(|c: char| c.is_ascii_lowercase())
                && word
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
                && !matches!(*word, "null" | "true" | "false")
        })
        .map(String::from)
        .collect();
    keys.sort();
    keys.dedup();
    keys
}

/// The keys of `value`, an object, sorted; `nested` names members whose own keys count too.
pub(crate) fn object_keys(value: &serde_json::Value, nested: &[&str]) -> Vec<String> {
    let object = value.as_object().expect("an object");
    let mut keys: Vec<String> = object
        .keys()
        .filter(|key| *key != "event")
        .cloned()
        .collect();
    for member in nested {
        keys.extend(object_keys(&object[*member], &[]));
    }
    keys.sort();
    keys
}
