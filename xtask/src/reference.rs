//! The reference's tables (docs/reference.md) that restate a definition: the variables an
//! attempt and a hook get and the ones the tool reads (src/environment.rs), and the JSON events
//! (src/report/json.rs), each written between two markers, so that the reference never says what
//! the definitions do not.

use retry_exec::docs;

/// A generated table: its marker's name, its header and its rows.
type Table<'a> = (&'a str, &'a [&'a str], Vec<Vec<String>>);

/// `reference` with every generated table written anew.
pub(crate) fn with_tables(reference: &str) -> String {
    let [attempt, hook, read] = docs::environment();
    let events: Vec<(String, String)> = docs::events()
        .iter()
        .map(|(name, keys)| (format!("`{name}`"), keys.to_string()))
        .collect();
    let variables = |rows: Vec<(&str, &str)>| -> Vec<Vec<String>> {
        rows.into_iter()
            .map(|(name, meaning)| vec![format!("`{name}`"), meaning.to_string()])
            .collect()
    };
    let events = events
        .into_iter()
        .map(|(name, keys)| vec![name, keys])
        .collect();
    let precedence = docs::precedence()
        .into_iter()
        .enumerate()
        .map(|(place, row)| {
            let cells = [row.obstacle, row.status, row.reason, row.failure_of_the_job];
            let mut cells: Vec<String> = cells.map(str::to_string).to_vec();
            cells[2] = format!("`{}`", cells[2]);
            cells.insert(0, (place + 1).to_string());
            cells
        })
        .collect();
    let exit_statuses = docs::exit_statuses()
        .into_iter()
        .map(|(status, meaning)| vec![status.to_string(), meaning])
        .collect();
    let tables: [Table; 6] = [
        (
            "environment of an attempt",
            &["variable", "value"],
            variables(attempt),
        ),
        (
            "environment of a hook",
            &["variable", "value"],
            variables(hook),
        ),
        (
            "variables retry reads",
            &["variable", "what retry makes of it"],
            variables(read),
        ),
        ("JSON events", &["event", "keys"], events),
        ("exit status", &["status", "meaning"], exit_statuses),
        (
            "precedence of a run's ends",
            &[
                "",
                "what keeps the run from starting or going on",
                "status",
                "reason",
                "a failure of its job (monitor, `--alert-after`, history)",
            ],
            precedence,
        ),
    ];
    tables
        .into_iter()
        .fold(reference.to_string(), |text, (name, header, rows)| {
            between_markers(&text, name, &table(header, &rows))
        })
}

/// The table of `rows` under `header`.
fn table(header: &[&str], rows: &[Vec<String>]) -> String {
    let line = |cells: Vec<String>| format!("| {} |\n", cells.join(" | "));
    let mut table = line(header.iter().map(|cell| cell.to_string()).collect());
    table += &format!("|{}\n", "---|".repeat(header.len()));
    for row in rows {
        table += &line(row.iter().map(|cell| cell.replace('|', "\\|")).collect());
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
