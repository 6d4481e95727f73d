//! Examples of use as help shows them: a word on what each does, then its command line, broken
//! where a shell goes on with the next line, so that it pastes as it is shown on a terminal of
//! 80 columns. The examples themselves belong to the programs whose help shows them.

/// How wide an example's command line may be in `--help`, its continuation marks included: it
/// is indented by 4, and so pastes as it is shown on a terminal of 80 columns.
pub const HELP_WIDTH: usize = 72;

/// An "Examples:" block of help text.
pub fn examples_text(examples: &[(&str, &str)]) -> String {
    let mut text = String::from("Examples:\n");
    for (what, command) in examples {
        text += &format!("  {what}\n");
        for line in continued_lines(command, HELP_WIDTH) {
            text += &format!("    {line}\n");
        }
    }
    text
}

/// `command` in lines of at most `width` columns where it can be, broken where a shell goes on
/// with the next line: at a space outside single quotes (inside them a backslash and a line
/// break would become part of the word), each line but the last ending in ` \` and the next
/// indented by two spaces. A word longer than a line stays whole.
pub fn continued_lines(command: &str, width: usize) -> Vec<String> {
    let mut lines = Vec::new();
    let mut line = String::new();
    for word in shell_words(command) {
        if line.is_empty() {
            line = word.to_string();
        } else if line.len() + 1 + word.len() + 2 > width {
            lines.push(format!("{line} \\"));
            line = format!("  {word}");
        } else {
            line = format!("{line} {word}");
        }
    }
    lines.push(line);
    lines
}

/// The words of `command` as a shell splits them at spaces: none is split inside quotes.
fn shell_words(command: &str) -> Vec<&str> {
    let (mut words, mut start) = (Vec::new(), 0);
    let (mut single, mut double) = (false, false);
    for (at, c) in command.char_indices() {
        match c {
            '\'' if !double => single = !single,
            '"' if !single => double = !double,
            ' ' if !single && !double => {
                if at > start {
                    words.push(&command[start..at]);
                }
                start = at + 1;
            }
            _ => {}
        }
    }
    if start < command.len() {
        words.push(&command[start..]);
    }
    words
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_command_goes_on_where_a_shell_goes_on() {
        let command = "retry --retry-on 6,7,22 --stop-on 'stderr:error: 4(0[0-8]|1[0-7])' -- curl -fsS https://example.com/api";
        let lines = continued_lines(command, 40);
        assert!(lines.iter().all(|line| line.len() <= 40), "{lines:#?}");
        assert!(
            lines
                .iter()
                .any(|line| line.contains("'stderr:error: 4(0[0-8]|1[0-7])'"))
        );
        let joined = lines.join("\n").replace(" \\\n  ", " ");
        assert_eq!(joined, command);
    }
}
