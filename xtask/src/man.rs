//! The man pages, written from the clap definition and from the tables and examples `--help`
//! prints, so that the three never disagree. The roff is written here rather than by a generic
//! generator so that it passes `mandoc -T lint` and `groff -ww` cleanly: every backslash and dash
//! escaped, no input line past 80 bytes, no hyphenated file names, and the sections a reader
//! expects (SYNOPSIS with the command's own words, EXAMPLES, SEE ALSO).

use clap::{Arg, Command};
use retry_exec::docs;

/// The date on both pages: when their content last changed meaningfully.
const DATE: &str = "2026-11-22";

/// The longest input line written, in bytes.
const WIDTH: usize = 78;

/// `retry(1)`.
pub(crate) fn retry_page(command: &Command) -> String {
    let mut page = Roff::new("RETRY", command);
    page.section("NAME");
    page.line("retry \\- run a command again when it fails, waiting longer each time");
    page.section("SYNOPSIS");
    page.line(".B retry");
    page.line("[\\fIOPTIONS\\fR] [\\fB\\-\\-\\fR] \\fICOMMAND\\fR [\\fIARG\\fR]...");
    page.line(".br");
    page.line(".B retry simulate");
    page.line("[\\fBcontention\\fR] [\\fIOPTIONS\\fR]");
    page.line(".br");
    page.line(".B retry simulate load");
    page.line("[\\fIOPTIONS\\fR]");
    page.line(".br");
    page.line(".B retry simulate metastable");
    page.line("[\\fIOPTIONS\\fR]");
    page.line(".br");
    page.line(".B retry budget show");
    page.line("\\fINAME\\fR [\\fIOPTIONS\\fR]");
    page.section("DESCRIPTION");
    page.paragraphs(&command.get_long_about().expect("a long about").to_string());
    page.line(".PP");
    page.text(
        "Instead of a COMMAND, the word simulate runs the built-in contention simulator; see \
         retry-simulate(1). The words budget show print a retry budget's state; see \
         retry-budget(1).",
    );
    page.options(command, "OPTIONS");
    page.section("EXIT STATUS");
    page.rows(&docs::exit_statuses());
    page.section("SIGNALS");
    page.rows(&docs::signals());
    let [of_command, of_hook, read] = docs::environment();
    page.section("ENVIRONMENT");
    page.text("Every attempt of COMMAND finds these in its environment:");
    page.rows(&of_command);
    page.line(".PP");
    page.text("A hook (--on-retry, --on-give-up) finds COMMAND's, and:");
    page.rows(&of_hook);
    page.line(".PP");
    page.text("retry itself reads:");
    page.rows(&read);
    page.examples(docs::examples()[0]);
    page.section("SEE ALSO");
    page.line("\\fBretry\\-simulate\\fR(1), \\fBretry\\-budget\\fR(1), \\fBtimeout\\fR(1)");
    page.out
}

/// `retry-budget(1)`, the page of `retry budget show`.
pub(crate) fn budget_page(command: &Command) -> String {
    let show = command
        .find_subcommand("budget")
        .and_then(|budget| budget.find_subcommand("show"))
        .expect("the budget show subcommand");
    let mut page = Roff::new("RETRY\\-BUDGET", command);
    page.section("NAME");
    page.line("retry budget \\- show the state of a retry budget of retry(1)");
    page.section("SYNOPSIS");
    page.line(".B retry budget show");
    page.line("\\fINAME\\fR [\\fIOPTIONS\\fR]");
    page.section("DESCRIPTION");
    page.paragraphs(&show.get_long_about().expect("a long about").to_string());
    page.options(show, "OPTIONS");
    page.section("ENVIRONMENT");
    // Of the variables a run reads, only the store's concerns `budget show`: the others tell a
    // run about the retries around its COMMAND, which `budget show` does not have.
    let store: Vec<_> = docs::environment()[2]
        .iter()
        .filter(|(name, _)| *name == "RETRY_BUDGET_STORE")
        .cloned()
        .collect();
    page.rows(&store);
    page.section("SEE ALSO");
    page.line("\\fBretry\\fR(1)");
    page.out
}

/// `retry-simulate(1)`, the page of `retry simulate`.
pub(crate) fn simulate_page(command: &Command) -> String {
    let simulate = command
        .find_subcommand("simulate")
        .expect("the simulate subcommand");
    let load = simulate
        .find_subcommand("load")
        .expect("the simulate load subcommand");
    let metastable = simulate
        .find_subcommand("metastable")
        .expect("the simulate metastable subcommand");
    let mut page = Roff::new("RETRY\\-SIMULATE", command);
    page.section("NAME");
    page.line("retry simulate \\- rerun the experiments behind retry(1)'s defaults with its own");
    page.line("backoff and budget");
    page.section("SYNOPSIS");
    page.line(".B retry simulate");
    page.line("[\\fBcontention\\fR] [\\fIOPTIONS\\fR]");
    page.line(".br");
    page.line(".B retry simulate load");
    page.line("[\\fIOPTIONS\\fR]");
    page.line(".br");
    page.line(".B retry simulate metastable");
    page.line("[\\fIOPTIONS\\fR]");
    page.section("DESCRIPTION");
    page.paragraphs(&simulate.get_long_about().expect("a long about").to_string());
    page.options(simulate, "OPTIONS");
    page.examples(docs::examples()[1]);
    page.section("LOAD");
    page.paragraphs(&load.get_long_about().expect("a long about").to_string());
    page.options(load, "LOAD OPTIONS");
    page.examples_titled("LOAD EXAMPLES", docs::examples()[2]);
    page.section("METASTABLE");
    page.paragraphs(
        &metastable
            .get_long_about()
            .expect("a long about")
            .to_string(),
    );
    page.options(metastable, "METASTABLE OPTIONS");
    page.examples_titled("METASTABLE EXAMPLES", docs::examples()[3]);
    page.section("SEE ALSO");
    page.line("\\fBretry\\fR(1)");
    page.out
}

/// A man page being written.
struct Roff {
    out: String,
}

impl Roff {
    fn new(title: &str, command: &Command) -> Roff {
        let version = command.get_version().expect("a version");
        let mut page = Roff { out: String::new() };
        page.line(&format!(
            ".TH {title} 1 {DATE} \"retry {version}\" \"User Commands\""
        ));
        // File names and flags read better whole than hyphenated at line ends.
        page.line(".nh");
        page
    }

    fn line(&mut self, line: &str) {
        self.out.push_str(line);
        self.out.push('\n');
    }

    fn section(&mut self, title: &str) {
        self.line(&format!(".SH {title}"));
    }

    /// Running text, escaped and wrapped.
    fn text(&mut self, text: &str) {
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
    fn paragraphs(&mut self, text: &str) {
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
    fn options(&mut self, command: &Command, title: &str) {
        self.section(title);
        let mut heading = None;
        let arguments = command
            .get_arguments()
            .filter(|arg| !arg.is_positional() && !arg.is_hide_set());
        for arg in arguments {
            if arg.get_help_heading() != heading {
                heading = arg.get_help_heading();
                if let Some(heading) = heading {
                    self.line(&format!(".SS {heading}"));
                }
            }
            self.line(".TP");
            self.line(&tag(arg));
            let help = arg
                .get_long_help()
                .or(arg.get_help())
                .map(ToString::to_string)
                .unwrap_or_default();
            let defaults: Vec<String> = arg
                .get_default_values()
                .iter()
                .map(|value| value.to_string_lossy().into_owned())
                .collect();
            // A switch's default (false) says nothing its description does not.
            match defaults.is_empty() || !arg.get_action().takes_values() {
                true => self.option_paragraphs(&help),
                false => {
                    self.option_paragraphs(&format!("{help} [default: {}]", defaults.join(",")))
                }
            }
        }
    }

    /// `(term, meaning)` rows, each a tagged paragraph.
    fn rows(&mut self, rows: &[(&str, impl AsRef<str>)]) {
        for (term, meaning) in rows {
            self.line(".TP");
            self.line(&format!("\\fB{}\\fR", escape(term)));
            self.text(meaning.as_ref());
        }
    }

    /// The EXAMPLES section: a word on each, then the command line, wrapped as a shell would
    /// continue it.
    fn examples(&mut self, examples: &[(&str, &str)]) {
        self.examples_titled("EXAMPLES", examples);
    }

    fn examples_titled(&mut self, title: &str, examples: &[(&str, &str)]) {
        self.section(title);
        for (index, (what, command)) in examples.iter().enumerate() {
            if index > 0 {
                self.line(".PP");
            }
            self.text(what);
            self.line(".RS 4");
            self.line(".EX");
            // Broken where a shell goes on with the next line, never inside quotes.
            for line in docs::continued_lines(command, WIDTH - 8) {
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
