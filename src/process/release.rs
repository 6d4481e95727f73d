//! `--hold-output`: an attempt's stdout, kept until the attempt is judged, released to the tool's
//! own stdout for a success and to its stderr otherwise, awake to the signals that end a run
//! while a slow reader holds the release up.

use std::io;
use std::time::Instant;

use crate::outcome::{Next, Reason};
use crate::output::copy::{Destination, HeldOutput};
use crate::report::outlet::GRACE;
use crate::retry_loop::{Release, Released};
use crate::signals::{SignalWatch, Waited};
use crate::spill::HoldError;

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

impl Release for StdRelease<'_> {
    fn release(&mut self, held: HeldOutput, next: &Next, deadline: Option<Instant>) -> Released {
        let Some(buffer) = held.0 else {
            return Released::Done;
        };
        let (destination, name) = match next {
            Next::Stop(Reason::Success) => (Destination::stdout(), "stdout"),
            _ => (Destination::stderr(), "stderr"),
        };
        let Destination::PassOn(mut out, _) = destination else {
            return Released::Done;
        };
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
