//! Supervising one running attempt: wait for its end, enforce its time limit, pass on signals,
//! escalate from SIGTERM to SIGKILL, and clear its process group afterwards.
//!
//! Every wait is one [`SignalWatch::wait_until`] call with the next moment something must
//! happen (a time limit, or the end of `--kill-after`), so nothing polls, and every wait has a
//! bound: clearing the group ends `--kill-after` after SIGKILL at the latest (a zombie whose
//! parent left the group can never be reaped by the tool), and at once on a signal.

use crate::signals::signal::Platform;
use std::time::{Duration, Instant};

use nix::sys::signal::{kill, killpg};
use nix::sys::wait::WaitStatus;
use nix::unistd::Pid;

use crate::signals::reaper;
use crate::signals::{Signal, SignalWatch, Wake, signal};
use crate::terminal::Terminal;
use retry_policy::run::{AttemptOutput, AttemptReport};
use retry_policy::termination::{Termination, TimeLimit};

/// How far the tool has gone in ending the attempt.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Escalation {
    /// Nothing sent yet.
    Calm,
    /// The timeout signal (or a forwarded one) sent at this moment; SIGKILL follows after
    /// `kill_after`.
    Terminating(Instant),
    /// SIGKILL sent at this moment.
    Killed(Instant),
}

/// The state of one attempt under supervision.
pub struct Supervision<'a> {
    watch: &'a SignalWatch,
    leader: Pid,
    /// Whether the leader leads a process group of its own, to be signalled and cleared whole.
    group: bool,
    /// The terminal the attempt's group holds, to pass back and forth when it is stopped.
    terminal: Option<&'a Terminal>,
    kill_after: Duration,
    /// `--timeout-signal`: sent at the time limit.
    timeout_signal: Signal,
    escalation: Escalation,
    timed_out: Option<TimeLimit>,
    interrupted_by: Option<Signal>,
    /// The attempt died of a signal typed at the terminal it held.
    from_keyboard: bool,
    /// Members of the group outlived SIGKILL by `kill_after`, and were left.
    lingering: bool,
}

impl<'a> Supervision<'a> {
    /// The supervision of the attempt led by `leader` (the whole of its process group when
    /// `group`), which holds `terminal` if any, waiting with `watch`; `ending` says what is sent
    /// at its time limit, and how long after it SIGKILL follows.
    pub fn new(
        watch: &'a SignalWatch,
        leader: Pid,
        group: bool,
        terminal: Option<&'a Terminal>,
        ending: (Signal, Duration),
    ) -> Self {
        let (timeout_signal, kill_after) = ending;
        Supervision {
            watch,
            leader,
            group,
            terminal,
            kill_after,
            timeout_signal,
            escalation: Escalation::Calm,
            timed_out: None,
            interrupted_by: None,
            from_keyboard: false,
            lingering: false,
        }
    }

    /// Wait for the attempt's main process to end, cutting it at `limit`; returns how it ended.
    pub fn await_leader(&mut self, limit: Option<(Instant, TimeLimit)>) -> WaitStatus {
        loop {
            let next = match self.escalation {
                Escalation::Calm => limit.map(|(at, _)| at),
                _ => self.kill_due(),
            };
            match self.watch.wait_until(next) {
                Wake::Changed => {
                    match reaper::reap_ended(Some(self.leader), self.terminal.is_some()) {
                        Some(WaitStatus::Stopped(_, stop)) => self.stop_along(stop),
                        Some(status) => return status,
                        None => {}
                    }
                }
                Wake::Stop(signal) => self.pass_on_ending(signal),
                Wake::PassOn(signal) => self.send(signal),
                Wake::Timeout => match self.escalation {
                    Escalation::Calm => {
                        self.timed_out = limit.map(|(_, kind)| kind);
                        self.terminate(self.timeout_signal);
                    }
                    _ => self.kill(),
                },
            }
        }
    }

    /// The attempt's main process ended with `status`, holding the terminal or not. If it died
    /// of Ctrl-C or Ctrl-\ typed there, do what a shell does for a job killed from the keyboard:
    /// the same signal goes to the tool's own job (the rest of a pipeline), and the run ends.
    pub fn keyboard_interrupt(&mut self, status: WaitStatus, held_terminal: bool) {
        let (WaitStatus::Signaled(_, signal, _), true, Some(terminal)) =
            (status, held_terminal, self.terminal)
        else {
            return;
        };
        let signal = Signal::from_number(signal as i32);
        if matches!(signal, Signal::INT | Signal::QUIT) && self.interrupted_by.is_none() {
            terminal.signal_own_job(signal);
            self.interrupted_by = Some(signal);
            self.from_keyboard = true;
        }
    }

    /// After the main process ended: end whatever else is still running in its group, SIGTERM
    /// first and SIGKILL `kill_after` later, and reap it all; wait `kill_after` after SIGKILL at
    /// most, and stop waiting at once when a signal that ends the run arrives.
    pub fn clear_group(&mut self) {
        if !self.group {
            return;
        }
        reaper::reap_ended(None, false);
        while killpg(self.leader, None).is_ok() {
            if self.escalation == Escalation::Calm {
                self.terminate(Signal::TERM);
            }
            let until = match self.escalation {
                Escalation::Killed(at) => at.checked_add(self.kill_after),
                _ => self.kill_due(),
            };
            match self.watch.wait_until(until) {
                Wake::Changed => {
                    reaper::reap_ended(None, false);
                }
                Wake::Stop(signal) => {
                    self.interrupted_by.get_or_insert(signal);
                    self.kill();
                    return;
                }
                Wake::PassOn(signal) => self.send(signal),
                Wake::Timeout if matches!(self.escalation, Escalation::Killed(_)) => {
                    self.lingering = true;
                    return;
                }
                Wake::Timeout => self.kill(),
            }
        }
    }

    /// How the process whose main process ended with `status` ended, its time limit counted.
    pub fn termination(&self, status: WaitStatus) -> Termination {
        let signal = match status {
            WaitStatus::Signaled(_, signal, _) => Some(Signal::from_number(signal as i32)),
            _ => None,
        };
        match (self.timed_out, status) {
            (Some(limit), _) => Termination::TimedOut { limit, signal },
            (None, WaitStatus::Exited(_, code)) => {
                Termination::Exited(u8::try_from(code & 0xff).unwrap_or(u8::MAX))
            }
            (None, _) => Termination::Signaled(signal.unwrap_or(Signal::KILL)),
        }
    }

    /// The report of the attempt whose main process ended with `status`.
    pub fn report<Held>(
        &self,
        status: WaitStatus,
        output: AttemptOutput<Held>,
    ) -> AttemptReport<Held> {
        AttemptReport {
            termination: self.termination(status),
            interrupted_by: self.interrupted_by,
            from_keyboard: self.from_keyboard,
            lingering: self.lingering,
            output,
            requested: None,
            request_problems: Vec::new(),
        }
    }

    /// The signal that ends the run, if one arrived.
    pub fn interrupted_by(&self) -> Option<Signal> {
        self.interrupted_by
    }

    /// Note a signal that ends the run, received while the attempt's output was being read.
    pub fn interrupt(&mut self, signal: Signal) {
        self.interrupted_by.get_or_insert(signal);
    }

    /// When SIGKILL is due: `kill_after` after SIGTERM went out, if it did and SIGKILL has not.
    fn kill_due(&self) -> Option<Instant> {
        match self.escalation {
            Escalation::Terminating(since) => since.checked_add(self.kill_after),
            _ => None,
        }
    }

    /// The attempt was stopped at the terminal (Ctrl-Z, or `stop`, a read or a write there while
    /// in the background): take the terminal back and stop too, so that the user's shell sees
    /// the job stopped. When the shell continues the tool, continue the attempt, and give it the
    /// terminal only if the tool was continued in the foreground (`fg`, not `bg`). A read or a
    /// write of a moment the tool has left behind (it holds the terminal again: `fg` came before
    /// the stop was seen) stops nothing: the attempt takes the terminal and goes on.
    fn stop_along(&self, stop: nix::sys::signal::Signal) {
        use nix::sys::signal::Signal::{SIGTTIN, SIGTTOU};
        let Some(terminal) = self.terminal else {
            return;
        };
        if matches!(stop, SIGTTIN | SIGTTOU) && terminal.is_in_foreground() {
            terminal.give_to(self.leader);
            self.send(signal::CONT);
            return;
        }
        terminal.take_back_from(self.leader);
        let _ = nix::sys::signal::raise(nix::sys::signal::Signal::SIGSTOP);
        terminal.give_to(self.leader);
        self.send(signal::CONT);
    }

    /// A signal that ends the run arrived: the first is passed on and starts the grace period; a
    /// second SIGINT kills at once; others are passed on too.
    fn pass_on_ending(&mut self, signal: Signal) {
        let first = self.interrupted_by.is_none();
        self.interrupted_by.get_or_insert(signal);
        match signal {
            Signal::INT if !first => self.kill(),
            signal => self.terminate(signal),
        }
    }

    /// Send `signal`, and SIGCONT so that a stopped attempt can act on it (as coreutils
    /// `timeout` does); start the grace period unless it is already running or over.
    fn terminate(&mut self, signal: Signal) {
        self.send(signal);
        self.send(signal::CONT);
        if self.escalation == Escalation::Calm {
            self.escalation = Escalation::Terminating(Instant::now());
        }
    }

    fn kill(&mut self) {
        self.send(Signal::KILL);
        self.escalation = Escalation::Killed(Instant::now());
    }

    /// Send `signal` to the attempt's group, or to its main process alone with `--foreground`.
    fn send(&self, signal: Signal) {
        let Some(signal) = signal.known() else {
            return;
        };
        // ESRCH (already gone) is the only likely error, and means there is nothing to do.
        let _ = match self.group {
            true => killpg(self.leader, signal),
            false => kill(self.leader, signal),
        };
    }
}
