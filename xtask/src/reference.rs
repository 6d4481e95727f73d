//! The reference's tables (docs/reference.md) that restate a definition: the variables an
//! attempt and a hook get and the ones the tool reads (src/environment.rs), and the JSON events
//! (src/report/json.rs), each written between two markers, so that the reference never says what
//! the definitions do not.

use retry_exec::docs;

/// `reference` with every generated table written anew.
pub(crate) fn with_tables(reference: &str) -> String {
    let [attempt, hook, read] = docs::environment();
    let events: Vec<(String, String)> = docs::events()
        .iter()
        .map(|(name, keys)| (format!("`{name}`"), keys.to_string()))
        .collect();
    let variables = |rows: Vec<(&str, &str)>| -> Vec<(String, String)> {
        rows.into_iter()
            .map(|(name, meaning)| (format!("`{name}`"), meaning.to_string()))
            .collect()
    };
    let tables = [
        (
            "environment of an attempt",
            ("variable", "value"),
            variables(attempt),
        ),
        (
            "environment of a hook",
            ("variable", "value"),
            variables(hook),
        ),
        (
            "variables retry reads",
            ("variable", "what retry makes of it"),
            variables(read),
        ),
        ("JSON events", ("event", "keys"), events),
    ];
    tables
        .into_iter()
        .fold(reference.to_string(), |text, (name, header, rows)| {
            between_markers(&text, name, &table(header, &rows))
        })
}

/// The table of `rows` under `header`.
fn table((first, second): (&str, &str), rows: &[(String, String)]) -> String {
    let mut table = format!("| {first} | {second} |\n|---|---|\n");
    for (label, text) in rows {
        table += &format!("| {label} | {} |\n", text.replace('|', "\\|"));
    }
    table
}

/// `text` with what stands between the markers of `name` replaced by `table`.
fn between_markers(text: &str, name: &str, table: &str) -> String {
    let start_marker = format!("<!-- {name}: written by cargo xtask generate -->");
    let end_marker = format!("<!-- end of {name} -->");
    let start = text
        .find(&start_marker)
        .unwrap_or_else(|| panic!("docs/reference.md has no marker {start_marker}"))
        + start_marker.len();
    let end = text[start..]
        .find(&end_marker)
        .unwrap_or_else(|| panic!("docs/reference.md has no marker {end_marker}"))
        + start;
    format!("{}\n{table}{}", &text[..start], &text[end..])
}
