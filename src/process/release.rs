//! Held output, once its attempt is judged. With `--hold stdout`, an attempt's stdout is released
//! to the tool's own stdout for a success and to its stderr otherwise, awake to the signals that
//! end a run while a slow reader holds the release up. With `--hold all`, both streams
//! go into the run's transcript under a header, and the transcript is written out only if the
//! run does not succeed, with the same bounds.

use retry_process::signals::signal::Platform;
use std::io;
use std::time::Instant;

use crate::output::copy::{HeldOutput, Outlet};
use crate::output::transcript::Transcript;
use crate::report::outlet::GRACE;
use crate::report::text;
use crate::spill::HoldError;
use retry_policy::matching::Stream;
use retry_policy::outcome::{AttemptOutcome, Next, Reason};
use retry_policy::printable::printable;
use retry_policy::run::{Release, Released};
use retry_process::signals::{SignalWatch, Waited, Waiter};

/// Releases held output to the tool's own stdout and stderr, awake to signals meanwhile.
pub(crate) struct StdRelease<'a> {
    watch: &'a SignalWatch,
}

impl<'a> StdRelease<'a> {
    /// Release with `watch` taking the signals that end the run.
    pub(crate) fn new(watch: &'a SignalWatch) -> Self {
        StdRelease { watch }
    }
}

impl Release<HeldOutput> for StdRelease<'_> {
    fn release(
        &mut self,
        held: HeldOutput,
        outcome: &AttemptOutcome,
        deadline: Option<Instant>,
    ) -> Released {
        let Some(buffer) = held.stdout else {
            return Released::Done;
        };
        let mut out = match &outcome.next {
            Next::Stop(Reason::Success) => Outlet::stdout(),
            _ => Outlet::stderr(),
        };
        let name = out.name();
        let until = deadline.map(|deadline| deadline.max(Instant::now()) + GRACE);
        let written = match self
            .watch
            .run_job(until, move || buffer.drain_into(&mut out))
        {
            Ok(Waited::Done(written)) => written,
            Ok(Waited::Stopped(signal)) => return Released::Interrupted(signal),
            Ok(Waited::TimedOut) => {
                return Released::Failed(format!(
                    "the reader of {name} did not take the held output before the --max-time \
                     deadline"
                ));
            }
            Err(err) => return Released::Failed(format!("cannot start a thread: {err}")),
        };
        match written {
            Ok(()) => Released::Done,
            Err(HoldError::Transfer(err)) if err.kind() == io::ErrorKind::BrokenPipe => {
                Released::Done
            }
            Err(HoldError::Transfer(err)) => {
                Released::Failed(format!("cannot write the held output to {name}: {err}"))
            }
            Err(HoldError::Spill(err)) => {
                Released::Failed(format!("cannot read back the held output: {err}"))
            }
        }
    }
}

/// Keeps each attempt's output in the run's transcript, under a header saying how it ended.
pub(crate) struct TranscriptRelease {
    transcript: Transcript,
}

impl TranscriptRelease {
    /// Keep the output in `transcript`.
    pub(crate) fn new(transcript: Transcript) -> Self {
        TranscriptRelease { transcript }
    }
}

impl Release<HeldOutput> for TranscriptRelease {
    fn release(
        &mut self,
        held: HeldOutput,
        outcome: &AttemptOutcome,
        _deadline: Option<Instant>,
    ) -> Released {
        let header = format!("retry: {}", text::describe(outcome));
        match self.transcript.keep_attempt(&printable(&header), held) {
            Ok(()) => Released::Done,
            Err(message) => Released::Failed(message),
        }
    }
}

/// Write out the run's `transcript`, as a run that did not succeed does, to the tool's stdout and
/// stderr: its reader's pace allowing until `deadline` (or, after a signal ended the run, for
/// [`GRACE`] only), and awake to the signals that end a run. A stream that cannot take its part
/// (a closed pipe, a full disk) costs the other nothing; whatever went wrong is said once, in the
/// message returned.
pub(crate) fn write_transcript(
    transcript: Transcript,
    watch: &SignalWatch,
    deadline: Option<Instant>,
    interrupted: bool,
) -> Result<(), String> {
    // A stream the tool cannot write to (closed, or no descriptor left) fails its part, and
    // the other still gets its own.
    let (mut stdout, mut stderr) = (Outlet::stdout(), Outlet::stderr());
    let until = match interrupted {
        true => Some(Instant::now() + GRACE),
        false => deadline.map(|deadline| deadline.max(Instant::now()) + GRACE),
    };
    let story = transcript.take();
    let write = move || story.write_out(&mut stdout, &mut stderr);
    let failed = |why: String| format!("cannot write the held output of the run: {why}");
    let written = match watch.run_job(until, write) {
        Ok(Waited::Done(written)) => written,
        Ok(Waited::Stopped(signal)) => {
            return Err(failed(format!("stopped by {}", signal.name())));
        }
        Ok(Waited::TimedOut) => return Err(failed("its reader did not take it in time".into())),
        Err(err) => return Err(failed(format!("cannot start a thread: {err}"))),
    };
    let broken = [Stream::Stdout, Stream::Stderr]
        .into_iter()
        .zip(written.broken)
        .filter_map(|(stream, broken)| Some(format!("to {}: {}", stream.name(), broken?)));
    let problems: Vec<String> = broken.chain(written.lost).collect();
    match problems.is_empty() {
        true => Ok(()),
        false => Err(failed(problems.join("; "))),
    }
}
