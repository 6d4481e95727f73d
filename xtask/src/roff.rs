//! The roff a man page is written in, by hand rather than by a generic generator, so that it
//! passes `mandoc -T lint` and `groff -ww` cleanly: every backslash and dash escaped, no input
//! line past 80 bytes, no hyphenated file names, and the sections a reader expects (SYNOPSIS
//! with the command's own words, EXAMPLES, SEE ALSO).

use clap::{Arg, Command};
use retry_policy::examples::continued_lines;

use super::options;

/// The date on the pages: when their content last changed meaningfully.
const DATE: &str = "2026-11-26";

/// The longest input line written, in bytes.
const WIDTH: usize = 78;

/// A man page being written.
pub(crate) struct Roff {
    out: String,
}

impl Roff {
    /// The page as written.
    pub(crate) fn finish(self) -> String {
        self.out
    }
}

impl Roff {
    pub(crate) fn new(title: &str, command: &Command) -> Roff {
        let version = command.get_version().expect("a version");
        let mut page = Roff { out: String::new() };
        page.line(&format!(
            ".TH {title} 1 {DATE} \"retry {version}\" \"User Commands\""
        ));
        // File names and flags read better whole than hyphenated at line ends.
        page.line(".nh");
        page
    }

    pub(crate) fn line(&mut self, line: &str) {
        self.out.push_str(line);
        self.out.push('\n');
    }

    pub(crate) fn section(&mut self, title: &str) {
        self.line(&format!(".SH {title}"));
    }

    /// Running text, escaped and wrapped.
    pub(crate) fn text(&mut self, text: &str) {
        let mut line = String::new();
        for word in escape(text).split_whitespace() {
            if !line.is_empty() && line.len() + 1 + word.len() > WIDTH {
                self.text_line(&line);
                line.clear();
            }
            if !line.is_empty() {
                line.push(' ');
            }
            line.push_str(word);
        }
        if !line.is_empty() {
            self.text_line(&line);
        }
    }

    /// One line of escaped text; a leading dot or quote would read as a request.
    fn text_line(&mut self, line: &str) {
        match line.starts_with(['.', '\'']) {
            true => self.line(&format!("\\&{line}")),
            false => self.line(line),
        }
    }

    /// Text in paragraphs, as clap's long texts are written (separated by a blank line).
    pub(crate) fn paragraphs(&mut self, text: &str) {
        self.paragraphs_after(text, ".PP");
    }

    /// `text`'s paragraphs under an option's tag, each indented as the first (`.IP`, where
    /// `.PP` would go back to the margin).
    fn option_paragraphs(&mut self, text: &str) {
        self.paragraphs_after(text, ".IP");
    }

    fn paragraphs_after(&mut self, text: &str, break_macro: &str) {
        for (index, paragraph) in text.split("\n\n").enumerate() {
            if index > 0 {
                self.line(break_macro);
            }
            self.text(paragraph);
        }
    }

    /// The OPTIONS section: each option under its heading, with its long help.
    pub(crate) fn options(&mut self, command: &Command, title: &str) {
        self.section(title);
        self.option_list(command);
    }

    /// The options of `command` in a subsection titled `title` of the current section.
    pub(crate) fn options_under(&mut self, command: &Command, title: &str) {
        self.line(&format!(".SS {title}"));
        self.option_list(command);
    }

    /// Each option of `command` under its heading, with its long help.
    fn option_list(&mut self, command: &Command) {
        let mut heading = None;
        for arg in options::listed(command) {
            if arg.get_help_heading() != heading {
                heading = arg.get_help_heading();
                if let Some(heading) = heading {
                    self.line(&format!(".SS {heading}"));
                }
            }
            self.line(".TP");
            self.line(&tag(arg));
            let help = options::help(arg);
            let defaults = options::defaults(arg);
            match defaults.is_empty() {
                true => self.option_paragraphs(&help),
                false => {
                    self.option_paragraphs(&format!("{help} [default: {}]", defaults.join(",")))
                }
            }
        }
    }

    /// `(term, meaning)` rows, each a tagged paragraph.
    pub(crate) fn rows(&mut self, rows: &[(&str, impl AsRef<str>)]) {
        for (term, meaning) in rows {
            self.line(".TP");
            self.line(&format!("\\fB{}\\fR", escape(term)));
            self.text(meaning.as_ref());
        }
    }

    /// The EXAMPLES section: a word on each, then the command line, wrapped as a shell would
    /// continue it.
    pub(crate) fn examples(&mut self, examples: &[(&str, &str)]) {
        self.examples_titled("EXAMPLES", examples);
    }

    pub(crate) fn examples_titled(&mut self, title: &str, examples: &[(&str, &str)]) {
        self.section(title);
        for (index, (what, command)) in examples.iter().enumerate() {
            if index > 0 {
                self.line(".PP");
            }
            self.text(what);
            self.line(".RS 4");
            self.line(".EX");
            // Broken where a shell goes on with the next line, never inside quotes.
            for line in continued_lines(command, WIDTH - 8) {
                self.line(&escape(&line));
            }
            self.line(".EE");
            self.line(".RE");
        }
    }
}

/// An option's tag line: its names in bold, its value in italics.
fn tag(arg: &Arg) -> String {
    let mut names = Vec::new();
    if let Some(short) = arg.get_short() {
        names.push(format!("\\fB\\-{short}\\fR"));
    }
    if let Some(long) = arg.get_long() {
        names.push(format!("\\fB\\-\\-{}\\fR", escape(long)));
    }
    let mut tag = names.join(", ");
    // clap's derive names a value even for a switch, which takes none.
    if arg.get_action().takes_values() {
        for value in arg.get_value_names().unwrap_or_default() {
            tag += &format!(" \\fI{}\\fR", escape(value));
        }
    }
    tag
}

/// `text` with the characters roff would take for its own escaped: a backslash, and a dash
/// (which roff would print as a hyphen, and may break a line at).
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\\' => out.push_str("\\e"),
            '-' => out.push_str("\\-"),
            c => out.push(c),
        }
    }
    out
}
