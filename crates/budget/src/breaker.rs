//! A breaker across runs, pure, with time passed in: kept beside a named budget's state by the
//! same store (the Redis one as a Lua copy of it, which a test holds to it), and set with the
//! budget's terms (`retry budget set NAME --breaker N/WINDOW`).
//!
//! Runs count their ends in a sliding window, as rate limiters count: the current window's count,
//! and the last one's weighted by how much of it is still inside. The breaker **opens** when at
//! least [`BreakerTerms::give_ups`] runs gave up within the window and they are at least
//! [`BreakerTerms::share`] of the runs that ended; on a shared store, only when they came from at
//! least [`BreakerTerms::hosts`] hosts, so that one broken host cannot stop the fleet. While it
//! is open, a run makes no attempt. After the cool-down (which doubles with each re-opening, up
//! to [`LONGEST_COOL_DOWN`] times the first), exactly one run wins the **probe**: it makes one
//! attempt, and its success closes the breaker, its failure opens it again; a probe that ends
//! without an answer (its command not found, a signal) gives its lease back at once, so that
//! another run may probe. Only a probe that never reports (its run was killed) holds the lease
//! to its end.

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use retry_policy::duration::format_duration;
use retry_policy::outcome::Ended;
use retry_policy::run::Admission;

use crate::error::Error;
use crate::microseconds::{LONGEST_TERM, delay_of, micros};
use crate::per_duration::count_per_duration;

/// A cool-down doubles with each re-opening up to this many times the first.
pub const LONGEST_COOL_DOWN: u32 = 32;

/// The most hosts whose give-ups the state remembers: enough for any `--breaker-hosts`.
pub const MAX_HOSTS: usize = 16;

/// How long a probe may run before another run may probe instead, unless `--max-time` leaves
/// less: its run may have been killed, and never reports.
pub const PROBE_LEASE: Duration = Duration::from_secs(600);

/// When a budget's breaker opens, and for how long.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BreakerTerms {
    /// Open after at least this many runs gave up within the window.
    pub give_ups: u32,
    /// The window the runs are counted in.
    pub window: Duration,
    /// ... and only if they are at least this share of the runs that ended (0 to 1).
    pub share: f64,
    /// ... and, on a shared store, came from at least this many hosts.
    pub hosts: u32,
    /// How long it stays open the first time.
    pub cool_down: Duration,
}

/// A breaker's state as stored.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct BreakerState {
    /// When the current window started (microseconds since the Unix epoch).
    pub started: u64,
    /// Runs that ended in the current window.
    pub runs: u32,
    /// Runs that gave up in the current window.
    pub give_ups: u32,
    /// Runs that ended in the window before.
    pub earlier_runs: u32,
    /// Runs that gave up in the window before.
    pub earlier_give_ups: u32,
    /// Open until then; 0 when closed.
    pub open_until: u64,
    /// How many times it opened since it last closed.
    pub openings: u32,
    /// A probe runs until then; 0 when none does.
    pub probe_until: u64,
    /// The hosts whose runs gave up, by a hash of their names, with the last time each did.
    pub hosts: Vec<(u64, u64)>,
}

impl BreakerTerms {
    /// Why these terms cannot be a breaker's, naming the option; none when they can be.
    pub fn check(&self) -> Result<(), Error> {
        if self.give_ups == 0 {
            return Err(Error::BreakerGiveUps);
        }
        if self.window.is_zero() || self.window > LONGEST_TERM {
            return Err(Error::BreakerWindow);
        }
        if !(self.share > 0.0 && self.share <= 1.0) {
            return Err(Error::BreakerShare(self.share.to_string()));
        }
        if self.hosts == 0 || self.hosts as usize > MAX_HOSTS {
            return Err(Error::BreakerHosts {
                hosts: self.hosts,
                most: MAX_HOSTS,
            });
        }
        if self.cool_down.is_zero() || self.cool_down > LONGEST_TERM {
            return Err(Error::CoolDown);
        }
        Ok(())
    }

    /// The terms in words: `5 give-ups in 1m, half the runs, from 2 hosts; 30s cool-down`.
    pub fn describe(&self) -> String {
        format!(
            "open after {} give-ups in {} that are {} of the runs, from {} host{}; cool-down {}, \
             doubling",
            self.give_ups,
            format_duration(self.window),
            self.share,
            self.hosts,
            if self.hosts == 1 { "" } else { "s" },
            format_duration(self.cool_down)
        )
    }

    /// The terms as a store holds them: `N WINDOW SHARE HOSTS COOL_DOWN`, times in microseconds.
    pub fn stored(&self) -> String {
        format!(
            "{} {:e} {:e} {} {:e}",
            self.give_ups,
            micros(self.window),
            self.share,
            self.hosts,
            micros(self.cool_down)
        )
    }

    /// Terms as a store holds them, if `retry budget set` could have stored them.
    pub fn from_stored(text: &str) -> Option<BreakerTerms> {
        let words: Vec<&str> = text.split_whitespace().collect();
        let [give_ups, window, share, hosts, cool_down] = words[..] else {
            return None;
        };
        let span = |text: &str| {
            text.parse::<f64>()
                .ok()
                .filter(|micros| micros.is_finite() && *micros > 0.0)
                .map(delay_of)
        };
        let terms = BreakerTerms {
            give_ups: give_ups.parse().ok()?,
            window: span(window)?,
            share: share.parse().ok()?,
            hosts: hosts.parse().ok()?,
            cool_down: span(cool_down)?,
        };
        terms.check().ok().map(|()| terms)
    }

    /// Whether a run may start at `now`: at once while the breaker is closed; not while it is
    /// open or another run's probe is out; as the probe, for `lease`, once the cool-down is over.
    pub fn admit(
        &self,
        state: BreakerState,
        now: u64,
        lease: Duration,
    ) -> (Admission, BreakerState) {
        if state.open_until == 0 {
            return (Admission::Closed, state);
        }
        if now < state.open_until {
            return (
                Admission::Open(delay_of((state.open_until - now) as f64)),
                state,
            );
        }
        if now < state.probe_until {
            return (
                Admission::Probing(delay_of((state.probe_until - now) as f64)),
                state,
            );
        }
        let probe_until = now.saturating_add(micros(lease) as u64).max(now + 1);
        (
            Admission::Probe,
            BreakerState {
                probe_until,
                ..state
            },
        )
    }

    /// Count a run that ended at `now` on `host` (a hash of its name), as the probe or not; on a
    /// store `shared` by hosts, the give-ups must come from enough of them.
    pub fn record(
        &self,
        state: BreakerState,
        now: u64,
        host: u64,
        ended: Ended,
        probe: bool,
        shared: bool,
    ) -> BreakerState {
        if probe && state.probe_until != 0 {
            return match ended {
                Ended::Succeeded => BreakerState::default(),
                // The probe found nothing out: another run may probe at once.
                Ended::Unjudged => BreakerState {
                    probe_until: 0,
                    ..state
                },
                Ended::GaveUp => {
                    let openings = state.openings.saturating_add(1);
                    BreakerState {
                        open_until: now.saturating_add(self.cool_down_after(openings)),
                        openings,
                        probe_until: 0,
                        ..state
                    }
                }
            };
        }
        if ended == Ended::Unjudged {
            return state;
        }
        let mut state = self.slide(state, now);
        state.runs = state.runs.saturating_add(1);
        if ended == Ended::GaveUp {
            state.give_ups = state.give_ups.saturating_add(1);
            remember(&mut state.hosts, host, now);
        }
        if state.open_until == 0 && self.trips(&state, now, shared) {
            state.open_until = now.saturating_add(self.cool_down_after(0));
            state.openings = 0;
        }
        state
    }

    /// `state` with its window moved on to hold `now`.
    fn slide(&self, state: BreakerState, now: u64) -> BreakerState {
        let window = micros(self.window) as u64;
        let elapsed = now.saturating_sub(state.started);
        if state.started == 0 || elapsed >= 2 * window {
            return BreakerState {
                started: now,
                runs: 0,
                give_ups: 0,
                earlier_runs: 0,
                earlier_give_ups: 0,
                ..state
            };
        }
        if elapsed < window {
            return state;
        }
        BreakerState {
            started: state.started + window,
            runs: 0,
            give_ups: 0,
            earlier_runs: state.runs,
            earlier_give_ups: state.give_ups,
            ..state
        }
    }

    /// Whether `state`'s counts (in a window that holds `now`) open the breaker.
    fn trips(&self, state: &BreakerState, now: u64, shared: bool) -> bool {
        let window = micros(self.window);
        let inside = 1.0 - (now.saturating_sub(state.started) as f64 / window).min(1.0);
        let runs = f64::from(state.runs) + f64::from(state.earlier_runs) * inside;
        let give_ups = f64::from(state.give_ups) + f64::from(state.earlier_give_ups) * inside;
        let since = now.saturating_sub(window as u64);
        let hosts = state.hosts.iter().filter(|(_, at)| *at >= since).count();
        let enough_hosts = !shared || hosts >= self.hosts as usize;
        give_ups >= f64::from(self.give_ups) && give_ups >= self.share * runs && enough_hosts
    }

    /// The cool-down after `openings` re-openings, in microseconds.
    fn cool_down_after(&self, openings: u32) -> u64 {
        let factor = 2u32.saturating_pow(openings).min(LONGEST_COOL_DOWN);
        (micros(self.cool_down) * f64::from(factor)) as u64
    }
}

/// Remember that `host` gave up at `now`, forgetting the oldest beyond [`MAX_HOSTS`] (the first
/// of the oldest, as the Lua copy does).
fn remember(hosts: &mut Vec<(u64, u64)>, host: u64, now: u64) {
    hosts.retain(|(known, _)| *known != host);
    hosts.push((host, now));
    if hosts.len() > MAX_HOSTS {
        let oldest =
            (1..hosts.len()).fold(0, |oldest, index| match hosts[index].1 < hosts[oldest].1 {
                true => index,
                false => oldest,
            });
        hosts.remove(oldest);
    }
}

impl BreakerState {
    /// The state as a store holds it: `STARTED RUNS GIVE_UPS EARLIER_RUNS EARLIER_GIVE_UPS
    /// OPEN_UNTIL OPENINGS PROBE_UNTIL HOSTS`, the hosts as `HASH:AT,...` (or `-`).
    pub fn stored(&self) -> String {
        let hosts: Vec<String> = self
            .hosts
            .iter()
            .map(|(host, at)| format!("{host:x}:{at}"))
            .collect();
        format!(
            "{} {} {} {} {} {} {} {} {}",
            self.started,
            self.runs,
            self.give_ups,
            self.earlier_runs,
            self.earlier_give_ups,
            self.open_until,
            self.openings,
            self.probe_until,
            match hosts.is_empty() {
                true => "-".to_string(),
                false => hosts.join(","),
            }
        )
    }

    /// A state as a store holds it, if one could have been stored.
    pub fn from_stored(text: &str) -> Option<BreakerState> {
        let words: Vec<&str> = text.split_whitespace().collect();
        let [
            started,
            runs,
            give_ups,
            earlier_runs,
            earlier_give_ups,
            open,
            openings,
            probe,
            hosts,
        ] = words[..]
        else {
            return None;
        };
        let hosts = match hosts {
            "-" => Vec::new(),
            hosts => hosts
                .split(',')
                .map(|entry| {
                    let (host, at) = entry.split_once(':')?;
                    Some((u64::from_str_radix(host, 16).ok()?, at.parse().ok()?))
                })
                .collect::<Option<Vec<_>>>()?,
        };
        (hosts.len() <= MAX_HOSTS).then_some(())?;
        Some(BreakerState {
            started: started.parse().ok()?,
            runs: runs.parse().ok()?,
            give_ups: give_ups.parse().ok()?,
            earlier_runs: earlier_runs.parse().ok()?,
            earlier_give_ups: earlier_give_ups.parse().ok()?,
            open_until: open.parse().ok()?,
            openings: openings.parse().ok()?,
            probe_until: probe.parse().ok()?,
            hosts,
        })
    }

    /// Whether the breaker is open (or probing) at `now`, and until when.
    pub fn open_for(&self, now: u64) -> Option<Duration> {
        let until = self.open_until.max(self.probe_until);
        (self.open_until != 0 && until > now).then(|| delay_of((until - now) as f64))
    }
}

/// `--breaker N/WINDOW`: open after N give-ups within WINDOW.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GiveUps {
    /// N.
    pub count: u32,
    /// WINDOW.
    pub window: Duration,
}

impl FromStr for GiveUps {
    type Err = Error;

    fn from_str(text: &str) -> Result<Self, Error> {
        let (count, window) = count_per_duration(text, "the window", "5/1m")?;
        Ok(GiveUps { count, window })
    }
}

impl fmt::Display for BreakerTerms {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.describe())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SECOND: u64 = 1_000_000;
    const NOW: u64 = 1_700_000_000 * SECOND;

    fn terms(give_ups: u32, share: f64, hosts: u32) -> BreakerTerms {
        BreakerTerms {
            give_ups,
            window: Duration::from_secs(60),
            share,
            hosts,
            cool_down: Duration::from_secs(30),
        }
    }

    /// `ends` recorded one a second from NOW, each `(host, ended)`.
    fn after(terms: &BreakerTerms, ends: &[(u64, Ended)], shared: bool) -> BreakerState {
        ends.iter()
            .enumerate()
            .fold(BreakerState::default(), |state, (i, &(host, ended))| {
                terms.record(state, NOW + i as u64 * SECOND, host, ended, false, shared)
            })
    }

    #[test]
    fn it_opens_at_the_mth_give_up_if_they_are_the_share_of_the_runs() {
        let terms = terms(5, 0.5, 1);
        let four = after(&terms, &[(1, Ended::GaveUp); 4], false);
        assert_eq!(four.open_until, 0);
        let five = after(&terms, &[(1, Ended::GaveUp); 5], false);
        assert_eq!(five.open_until, NOW + 4 * SECOND + 30 * SECOND);
        let mut mostly_fine = vec![(1, Ended::Succeeded); 6];
        mostly_fine.extend([(1, Ended::GaveUp); 5]);
        assert_eq!(
            after(&terms, &mostly_fine, false).open_until,
            0,
            "5 of 11 runs"
        );
    }

    #[test]
    fn on_a_shared_store_one_host_alone_never_opens_it() {
        let terms = terms(3, 0.5, 2);
        let one_host = after(&terms, &[(7, Ended::GaveUp); 20], true);
        assert_eq!(one_host.open_until, 0);
        let two = after(
            &terms,
            &[(7, Ended::GaveUp), (7, Ended::GaveUp), (8, Ended::GaveUp)],
            true,
        );
        assert_ne!(two.open_until, 0);
        assert_ne!(
            after(&terms, &[(7, Ended::GaveUp); 3], false).open_until,
            0,
            "a file store"
        );
    }

    #[test]
    fn give_ups_outside_the_window_fade() {
        let terms = terms(3, 0.5, 1);
        let state = after(&terms, &[(1, Ended::GaveUp); 2], false);
        let later = terms.record(
            state.clone(),
            NOW + 200 * SECOND,
            1,
            Ended::GaveUp,
            false,
            false,
        );
        assert_eq!(later.open_until, 0, "two give-ups long ago and one now");
        let half = terms.record(state, NOW + 90 * SECOND, 1, Ended::GaveUp, false, false);
        assert_eq!(half.open_until, 0, "the last window's two count for half");
    }

    #[test]
    fn exactly_one_run_probes_after_the_cool_down_and_decides() {
        let terms = terms(1, 0.5, 1);
        let open = after(&terms, &[(1, Ended::GaveUp)], false);
        let lease = Duration::from_secs(10);
        let (early, _) = terms.admit(open.clone(), NOW + 29 * SECOND, lease);
        assert_eq!(early, Admission::Open(Duration::from_secs(1)));
        let (first, probing) = terms.admit(open.clone(), NOW + 30 * SECOND, lease);
        assert_eq!(first, Admission::Probe);
        let (second, _) = terms.admit(probing.clone(), NOW + 31 * SECOND, lease);
        assert_eq!(
            second,
            Admission::Probing(Duration::from_secs(9)),
            "the probe's lease"
        );
        let unanswered = terms.record(
            probing.clone(),
            NOW + 32 * SECOND,
            1,
            Ended::Unjudged,
            true,
            false,
        );
        assert_eq!(
            (unanswered.probe_until, unanswered.open_until),
            (0, probing.open_until),
            "a probe that learned nothing gives its lease back, and the breaker stays as it was"
        );
        assert_eq!(
            terms.admit(unanswered, NOW + 33 * SECOND, lease).0,
            Admission::Probe,
            "so the next run probes at once"
        );
        let closed = terms.record(
            probing.clone(),
            NOW + 32 * SECOND,
            1,
            Ended::Succeeded,
            true,
            false,
        );
        assert_eq!(
            terms.admit(closed, NOW + 33 * SECOND, lease).0,
            Admission::Closed
        );
        let again = terms.record(probing, NOW + 32 * SECOND, 1, Ended::GaveUp, true, false);
        assert_eq!(
            again.open_until,
            NOW + 32 * SECOND + 60 * SECOND,
            "the cool-down doubles"
        );
        // A probe that never reports gives way when its lease ends.
        let (abandoned, _) = terms.admit(
            terms.admit(open, NOW + 30 * SECOND, lease).1,
            NOW + 41 * SECOND,
            lease,
        );
        assert_eq!(abandoned, Admission::Probe);
    }

    #[test]
    fn the_cool_down_stops_doubling_at_its_longest() {
        let terms = terms(1, 0.5, 1);
        assert_eq!(terms.cool_down_after(3), 8 * 30 * SECOND);
        assert_eq!(
            terms.cool_down_after(40),
            u64::from(LONGEST_COOL_DOWN) * 30 * SECOND
        );
    }

    #[test]
    fn terms_and_states_round_trip_through_the_store_and_damage_is_none() {
        let terms = terms(5, 0.25, 2);
        assert_eq!(BreakerTerms::from_stored(&terms.stored()), Some(terms));
        let state = after(&terms, &[(1, Ended::GaveUp), (2, Ended::Succeeded)], true);
        assert_eq!(BreakerState::from_stored(&state.stored()), Some(state));
        for damaged in ["", "1 2 3", "0 0 0 0 0 0 0 0 x:1", "0 1e400 0 0 0 0 0 0 -"] {
            assert_eq!(BreakerState::from_stored(damaged), None, "{damaged}");
        }
        for damaged in [
            "0 6e7 0.5 1 3e7",
            "5 6e7 1.5 1 3e7",
            "5 6e7 0.5 99 3e7",
            "5 0 0.5 1 3e7",
        ] {
            assert_eq!(BreakerTerms::from_stored(damaged), None, "{damaged}");
        }
    }
}
