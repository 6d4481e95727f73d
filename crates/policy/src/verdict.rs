//! What a rule makes of an attempt's end: success, another attempt, or the end of the run. Its
//! own module because the presets, the rules and the run loop all speak of it, and the rules
//! build on the presets.

/// What a rule makes of an attempt.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// The attempt succeeded: the run ends with status 0.
    Success,
    /// Another attempt could help.
    Retry,
    /// No attempt would end otherwise.
    Stop,
}

impl Verdict {
    /// Its name, as `--plan` and the JSON events write it.
    pub fn name(self) -> &'static str {
        match self {
            Verdict::Success => "success",
            Verdict::Retry => "retry",
            Verdict::Stop => "stop",
        }
    }
}
