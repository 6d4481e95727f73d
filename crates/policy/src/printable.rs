//! The tool's own messages as single printable lines.
//!
//! Messages quote what the user gave (a flag's value, a path, a command name), and that may hold
//! a newline, a carriage return or an escape sequence: printed raw, it would split the message
//! over lines or drive the terminal. Control characters are shown escaped instead (`\n`, `\r`,
//! `\u{1b}`), as Rust's `escape_debug` writes them.

/// `text` with every control character escaped, so that it prints as one line.
pub fn printable(text: &str) -> String {
    let mut line = String::with_capacity(text.len());
    for c in text.chars() {
        match c.is_control() {
            true => line.extend(c.escape_debug()),
            false => line.push(c),
        }
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_control_characters_only() {
        assert_eq!(
            printable("a\nb\r\t\u{1b}[31m é"),
            "a\\nb\\r\\t\\u{1b}[31m é"
        );
        assert_eq!(printable("plain 'quoted' text"), "plain 'quoted' text");
    }
}
