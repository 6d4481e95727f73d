//! The budget a run spends from when it names none: one on this machine for each target, that a
//! person never notices, that costs nothing while nothing fails, that never stops a run for a
//! state it cannot keep, and that says how to turn it off when it refuses a retry.

use std::ffi::{OsStr, OsString};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use retry_policy::target::Target;

use crate::support::harness::{Invocation, Run, Scratch, binary, program, retry, shell};

/// A run of `false` with `-n N`, no wait and `flags`, keeping its default budgets in `state`.
fn failing(state: &Path, attempts: &str, flags: &[&str]) -> Invocation {
    retry_false(attempts, &[&["--cap", "1s"], flags].concat()).env("XDG_STATE_HOME", state)
}

/// A run of `false` with `-n N`, no wait, JSON events and `flags`.
fn retry_false(attempts: &str, flags: &[&str]) -> Invocation {
    retry(["--log-format", "json", "-n", attempts, "--base", "0s"])
        .args(flags)
        .args(["--", "false"])
}

/// How many attempts the run made, and why it ended.
fn ending(run: &Run) -> (u64, String) {
    let done = run.event("done");
    let reason = done["reason"].as_str().unwrap().to_string();
    (done["attempts"].as_u64().unwrap(), reason)
}

#[test]
fn a_run_that_fails_four_times_and_then_succeeds_makes_all_five_attempts() {
    let scratch = Scratch::new();
    let script = "echo x >> \"$COUNTER\"; [ \"$(wc -l < \"$COUNTER\")\" -ge 5 ]";
    let run = retry(["--log-format", "json", "--base", "1ms", "--cap", "10ms"])
        .env("COUNTER", scratch.path("count"))
        .args(["--", "sh", "-c", script])
        .run();
    run.expect_code(0);
    assert_eq!(ending(&run), (5, "success".into()), "{run}");
}

#[test]
fn five_runs_that_fail_together_each_make_all_their_attempts() {
    let scratch = Scratch::new();
    let script = "for run in 1 2 3 4 5; do \
                    \"$RETRY\" --log-format json -n 5 --base 10ms --cap 100ms -- false \
                      2> \"$OUT/$run\" & \
                  done; wait";
    shell(script)
        .env("OUT", scratch.path(""))
        .env("XDG_STATE_HOME", scratch.path("state"))
        .run()
        .expect_code(0);
    for run in 1..=5 {
        let log = scratch.read(&run.to_string());
        let done = log.lines().last().unwrap_or_default();
        assert!(
            done.contains("\"attempts\":5") && done.contains("\"reason\":\"exhausted\""),
            "run {run} did not make its five attempts:\n{log}"
        );
    }
}

#[test]
fn a_run_whose_first_attempt_succeeds_touches_no_state() {
    let scratch = Scratch::new();
    let state = scratch.path("state");
    // strace logs every call that names a file or takes a lock, in the tool's own process and
    // its children's; the budget's would name the state directory.
    let traced = |command: &str| {
        let trace = scratch.path(&format!("{command}.trace"));
        let traced = [&binary(), "-q", "-n", "3", "--base", "0s", "--", command];
        program("strace")
            .args(["-f", "-e", "trace=%file,flock", "-o"])
            .args([&trace])
            .args(traced)
            .env("XDG_STATE_HOME", &state)
            .run();
        std::fs::read_to_string(&trace).expect("strace's log")
    };
    let succeeded = traced("true");
    assert!(!succeeded.contains("retry/default-budgets"), "{succeeded}");
    assert!(!succeeded.contains("flock("), "{succeeded}");
    assert!(!state.exists(), "the state directory was made");
    // The same trace sees the budget when a retry needs it: one update under the lock each.
    let failed = traced("false");
    assert!(failed.contains("retry/default-budgets"), "{failed}");
    assert_eq!(
        failed.matches("LOCK_EX").count(),
        2,
        "two retries\n{failed}"
    );
}

#[test]
fn a_state_it_cannot_keep_never_denies_a_retry_and_is_said_once() {
    let scratch = Scratch::new();
    let not_a_directory = scratch.path("file");
    std::fs::write(&not_a_directory, "").unwrap();
    let open_to_all = scratch.path("open");
    std::fs::create_dir_all(open_to_all.join("retry/default-budgets")).unwrap();
    let mode = std::fs::Permissions::from_mode(0o777);
    std::fs::set_permissions(open_to_all.join("retry/default-budgets"), mode).unwrap();
    // The file `false`'s retries spend from, as the tool names it.
    let name = Target::of(None, &[OsString::from("false")], &|_, _| None).file_name();
    let (damaged, foreign) = (scratch.path("damaged"), scratch.path("foreign"));
    for (dir, content) in [
        (&damaged, "retry-budget-v4 garbage\n"),
        (&foreign, "#!/bin/sh\n"),
    ] {
        std::fs::create_dir_all(dir.join("retry/default-budgets")).unwrap();
        std::fs::write(dir.join("retry/default-budgets").join(&name), content).unwrap();
    }
    let cases = [
        ("no home", None, "neither XDG_STATE_HOME nor HOME"),
        (
            "a file where the directory goes",
            Some(&not_a_directory),
            "cannot be kept",
        ),
        (
            "a directory every user may write",
            Some(&open_to_all),
            "any user could",
        ),
        ("a damaged state", Some(&damaged), "damaged"),
        (
            "a file that is not a budget's",
            Some(&foreign),
            "not a retry budget state",
        ),
    ];
    for (case, state, said) in cases {
        let run = retry_false("3", &[]);
        let run = match state {
            Some(state) => run.env("XDG_STATE_HOME", state),
            None => run.env_remove("XDG_STATE_HOME").env_remove("HOME"),
        }
        .run();
        run.expect_code(1);
        assert_eq!(ending(&run), (3, "exhausted".into()), "{case}\n{run}");
        let warnings = run.events_named("warning");
        assert_eq!(warnings.len(), 1, "{case}: said once\n{run}");
        let message = warnings[0]["message"].as_str().unwrap();
        assert!(message.contains(said), "{case}: {message}");
    }
}

/// Give the default budget of `false`'s command line in `state` the rate `rate`, as a test's
/// quicker stand-in for its 20/5m.
fn set_default_rate(state: &Path, rate: &str) {
    let name = Target::of(None, &[OsString::from("false")], &|_, _| None).file_name();
    let store = format!("file:{}", state.join("retry/default-budgets").display());
    retry([
        "budget",
        "set",
        &name,
        "--budget-store",
        &store,
        "--rate",
        rate,
    ])
    .env("XDG_STATE_HOME", state)
    .run()
    .expect_code(0);
}

#[test]
fn a_long_poll_waits_for_its_tokens_and_ends_only_by_its_own_limits() {
    // `retry -n 60 --base 1s --cap 1s -- pg_isready -h db`, waiting for a database, at a rate
    // a test can wait for: every retry past the bucket waits for its token, none is refused.
    let scratch = Scratch::new();
    let state = scratch.path("state");
    set_default_rate(&state, "2/2s");
    let run = failing(&state, "6", &["--cap", "10ms"]).run();
    run.expect_code(1);
    assert_eq!(ending(&run), (6, "exhausted".into()), "{run}");
    let spaced = run
        .events_named("wait")
        .iter()
        .filter(|wait| wait["cause"] == "budget")
        .count();
    assert!(
        spaced >= 1,
        "the retries past the bucket waited for tokens\n{run}"
    );
    let text = retry(["-n", "4", "--base", "0s", "--cap", "10ms", "--", "false"])
        .env("XDG_STATE_HOME", &state)
        .run();
    text.expect_code(1)
        .expect_stderr(", when the retry budget has a token")
        .expect_stderr("giving up after 4 attempts, all failed");

    // Its own --max-time ends it, and says which limit the wait for the token would pass.
    set_default_rate(&state, "1/1h");
    let report = scratch.path("report.json");
    let flags = ["--max-time", "30s", "--report", report.to_str().unwrap()];
    let bounded = failing(&state, "60", &flags).run();
    bounded.expect_code(1);
    let (attempts, reason) = ending(&bounded);
    assert_eq!(reason, "deadline", "{bounded}");
    assert!(attempts <= 2, "{bounded}");
    let text = retry([
        "-n",
        "60",
        "--base",
        "0s",
        "--max-time",
        "30s",
        "--",
        "false",
    ])
    .env("XDG_STATE_HOME", &state)
    .run();
    text.expect_code(1)
        .expect_stderr("giving up after 1 attempt: the wait for a budget token, ");
    text.expect_stderr("would end past the --max-time deadline");
    let recorded: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    assert_eq!(recorded["reason"], "deadline");
    let budget = &recorded["options"]["in_force"]["budget"];
    assert_eq!(budget["kind"], "default", "{recorded}");

    let off = failing(&state, "30", &["--budget", "off"]).run();
    assert_eq!(ending(&off), (30, "exhausted".into()), "{off}");
    let off = failing(&state, "30", &[]).env("RETRY_BUDGET", "off").run();
    assert_eq!(ending(&off), (30, "exhausted".into()), "{off}");
}

#[test]
fn each_target_has_a_budget_of_its_own() {
    let scratch = Scratch::new();
    let state = scratch.path("state");
    // Nothing listens on port 1: curl fails at once (7), and the preset's finder names the host.
    // Twenty retries are there at once; the next waits 15s for its token, past --max-time.
    let curl = |url: &str| {
        retry([
            "--log-format",
            "json",
            "-n",
            "30",
            "--base",
            "0s",
            "--max-time",
            "10s",
        ])
        .env("XDG_STATE_HOME", &state)
        .args(["--", "curl", "-s", url])
        .run()
    };
    let spent = |run: &Run| {
        let done = run.event("done");
        let waited = run
            .events_named("wait")
            .iter()
            .any(|wait| wait["cause"] == "budget");
        (
            done["attempts"].as_u64().unwrap(),
            done["reason"].clone(),
            waited,
        )
    };
    let deadline = serde_json::json!("deadline");
    assert_eq!(
        spent(&curl("http://127.0.0.1:1/a")),
        (21, deadline.clone(), false)
    );
    let again = curl("http://127.0.0.1:1/b?c");
    assert_eq!(
        (ending(&again).0, &again.event("done")["reason"]),
        (1, &deadline),
        "another path on the same host:port spends from the same budget\n{again}"
    );
    assert_eq!(
        spent(&curl("http://localhost:1/")),
        (21, deadline, false),
        "another host has a budget of its own"
    );
    let mut names: Vec<String> = std::fs::read_dir(state.join("retry/default-budgets"))
        .unwrap()
        .flatten()
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names.len(), 2, "{names:?}");
    assert!(names[0].starts_with("host-127.0.0.1_1-"), "{names:?}");
    assert!(names[1].starts_with("host-localhost_1-"), "{names:?}");
}

#[test]
fn the_plan_names_the_default_budget_its_target_and_its_terms() {
    retry([
        "--plan",
        "--",
        "curl",
        "-fsS",
        "https://api.example.com/health",
    ])
    .run()
    .expect_code(0)
    .expect_stdout_contains(
        "retry budget: this machine's default one for api.example.com: 20/5m; a retry waits \
         for its token, spacing retries out to that rate (--budget off, or RETRY_BUDGET=off, \
         turns it off)",
    );
    retry(["--plan", "--budget", "off", "--", "true"])
        .run()
        .expect_code(0)
        .expect_stdout_contains("retry budget: none (--budget off)");
}

#[test]
fn a_file_the_store_did_not_write_is_left_as_it_is() {
    let scratch = Scratch::new();
    let name = Target::of(None, &[OsString::from("false")], &|_, _| None).file_name();
    let disk_image: Vec<u8> = std::iter::repeat_n(0, 1 << 20).collect();
    let makefile = b"all:\n\tcc -o app app.c\n".to_vec();
    for (case, content) in [
        ("a disk image that begins with zeros", disk_image),
        ("512 zeros", vec![0; 512]),
        ("256 spaces", vec![b' '; 256]),
        ("512 bytes of text", vec![b'a'; 512]),
        ("a Makefile", makefile),
    ] {
        let state = scratch.path(&format!("{}", content.len() + case.len()));
        let dir = state.join("retry/default-budgets");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(&name), &content).unwrap();
        let run = failing(&state, "3", &[]).run();
        run.expect_code(1);
        assert_eq!(ending(&run), (3, "exhausted".into()), "{case}\n{run}");
        let warnings = run.events_named("warning");
        assert_eq!(warnings.len(), 1, "{case}: said once\n{run}");
        let message = warnings[0]["message"].as_str().unwrap();
        assert!(
            message.contains("not a retry budget state, so it is left alone"),
            "{case}: {message}"
        );
        assert!(
            std::fs::read(dir.join(&name)).unwrap() == content,
            "{case}: the file was changed"
        );
        let beside = std::fs::read_dir(&dir).unwrap().count();
        assert_eq!(beside, 1, "{case}: nothing was added beside it");
    }
}

/// A failing run of `-n 3` with `home` as its `HOME` (and `xdg` as its `XDG_STATE_HOME`, if
/// given), in `dir`; checked to end as it would without a budget, with one warning, which is
/// returned.
fn without_a_place_of_its_own(home: &OsStr, xdg: Option<&Path>, dir: &Path) -> String {
    let run = retry_false("3", &[]).env("HOME", home).current_dir(dir);
    let run = match xdg {
        Some(xdg) => run.env("XDG_STATE_HOME", xdg),
        None => run.env_remove("XDG_STATE_HOME"),
    }
    .run();
    run.expect_code(1);
    assert_eq!(ending(&run), (3, "exhausted".into()), "{run}");
    let warnings = run.events_named("warning");
    assert_eq!(warnings.len(), 1, "said once\n{run}");
    warnings[0]["message"].as_str().unwrap().to_string()
}

/// Every path under `dir`, sorted.
fn tree(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut paths = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(next) = pending.pop() {
        for entry in std::fs::read_dir(&next).unwrap().flatten() {
            paths.push(entry.path());
            if entry.file_type().unwrap().is_dir() {
                pending.push(entry.path());
            }
        }
    }
    paths.sort();
    paths
}

#[test]
fn no_state_is_made_in_the_current_directory_or_a_home_that_is_not_there() {
    let scratch = Scratch::new();
    let checkout = scratch.path("checkout");
    std::fs::create_dir(&checkout).unwrap();
    for home in ["", ".", "relative/home"] {
        let said = without_a_place_of_its_own(OsStr::new(home), None, &checkout);
        assert!(
            said.contains("is not an absolute path"),
            "HOME='{home}': {said}"
        );
        assert_eq!(
            tree(&checkout),
            Vec::<std::path::PathBuf>::new(),
            "HOME='{home}'"
        );
    }
    let nonexistent = scratch.path("nonexistent");
    let said = without_a_place_of_its_own(nonexistent.as_os_str(), None, &checkout);
    assert!(said.contains("does not exist"), "{said}");
    assert!(!nonexistent.exists(), "a home was made");
}

#[test]
fn root_with_a_users_home_leaves_nothing_in_it() {
    if !crate::support::harness::is_root() {
        eprintln!("skipped: a home of another user needs root to make (CI runs as root)");
        return;
    }
    // A home of nobody's (uid 65534), as root's runs see it after `sudo -E`: bare, with the
    // user's ~/.local, and with the user's whole state directory; and the user's
    // XDG_STATE_HOME, which sudo -E keeps too.
    let scratch = Scratch::new();
    let nobody = |path: &Path| std::os::unix::fs::chown(path, Some(65534), Some(65534)).unwrap();
    let homes: Vec<_> = ["bare", ".local", ".local/state/retry/default-budgets"]
        .iter()
        .map(|inside| {
            let home = scratch.path(&format!("home-{}", inside.len()));
            std::fs::create_dir_all(home.join(inside)).unwrap();
            for made in tree(&home).iter().chain([&home]) {
                nobody(made);
            }
            home
        })
        .collect();
    for home in &homes {
        let before = tree(home);
        let said = without_a_place_of_its_own(home.as_os_str(), None, home);
        assert!(said.contains("belongs to uid 65534"), "{said}");
        assert_eq!(tree(home), before, "{}", home.display());
        let xdg = home.join(".local/state");
        let said = without_a_place_of_its_own(OsStr::new("/root"), Some(&xdg), home);
        assert!(said.contains("uid 65534"), "{said}");
        assert_eq!(tree(home), before, "{}", home.display());
    }
}

#[test]
fn terms_a_default_budget_cannot_act_on_are_refused() {
    let scratch = Scratch::new();
    let state = scratch.path("state");
    let dir = state.join("retry/default-budgets");
    let store = format!("file:{}", dir.display());
    let set = |terms: &[&str]| {
        retry([
            "budget",
            "set",
            "host-example.com",
            "--budget-store",
            &store,
        ])
        .args(terms)
        .env("XDG_STATE_HOME", &state)
        .run()
    };
    for (terms, option) in [
        (&["--rate", "5/1m", "--breaker", "3/1m"][..], "--breaker"),
        (&["--rate", "5/1m", "--ratio", "0.5"], "--ratio"),
    ] {
        let refused = set(terms);
        refused
            .expect_code(125)
            .expect_stderr(&format!("retry: {option}: a default budget"));
        assert_eq!(refused.stderr().lines().count(), 1, "{refused}");
        assert!(!dir.join("host-example.com").exists(), "{refused}");
    }
    set(&["--rate", "5/1m"]).expect_code(0);
    // The same terms on a named budget act, and are kept.
    retry([
        "budget",
        "set",
        "api",
        "--rate",
        "5/1m",
        "--breaker",
        "3/1m",
    ])
    .env("XDG_STATE_HOME", &state)
    .run()
    .expect_code(0);
}

#[test]
fn a_git_push_spends_from_its_remotes_host_never_from_a_refspec() {
    let scratch = Scratch::new();
    let repository = scratch.path("repository");
    let git = |args: &[&str]| {
        program("git")
            .args(["-C", repository.to_str().unwrap()])
            .args(args)
            .run()
            .expect_code(0);
    };
    std::fs::create_dir(&repository).unwrap();
    git(&["init", "-q"]);
    git(&["remote", "add", "origin", "https://git.example/app.git"]);
    git(&["remote", "add", "upstream", "git@mirror.example:app.git"]);
    let target = |args: &[&str]| {
        planned_budget(
            retry(["--plan", "--"])
                .args(args)
                .current_dir(repository.join("")),
        )
    };
    let origin = target(&["git", "push", "origin", "HEAD:main"]);
    assert!(origin.contains("default one for git.example:"), "{origin}");
    let upstream = target(&["git", "push", "upstream", "HEAD:release"]);
    assert!(
        upstream.contains("default one for mirror.example:"),
        "{upstream}"
    );
    let message = target(&["git", "commit", "-m", "fix: the thing"]);
    assert!(message.contains("for this command line"), "{message}");
    let unknown = target(&["git", "push", "elsewhere", "HEAD:main"]);
    assert!(unknown.contains("for this command line"), "{unknown}");
}

#[test]
fn git_dir_names_the_repository_as_git_reads_it() {
    // A relative GIT_DIR is found from where git runs after its -C, and an empty one is no
    // repository: the target is the remote git itself would use, or none.
    let scratch = Scratch::new();
    let outer = scratch.path("outer");
    let inner = outer.join("inner");
    std::fs::create_dir_all(&inner).unwrap();
    for (dir, url) in [
        (&outer, "https://outer.example/app.git"),
        (&inner, "https://inner.example/app.git"),
    ] {
        for args in [&["init", "-q"][..], &["remote", "add", "origin", url]] {
            program("git")
                .args(["-C", dir.to_str().unwrap()])
                .args(args)
                .run()
                .expect_code(0);
        }
    }
    let git_says = program("git")
        .args(["-C", "inner", "remote", "get-url", "origin"])
        .env("GIT_DIR", ".git")
        .current_dir(&outer)
        .run();
    git_says.expect_code(0);
    assert_eq!(git_says.stdout().trim(), "https://inner.example/app.git");
    let target = |git_dir: &str| {
        planned_budget(
            retry([
                "--plan", "--", "git", "-C", "inner", "push", "origin", "HEAD",
            ])
            .env("GIT_DIR", git_dir)
            .current_dir(&outer),
        )
    };
    let relative = target(".git");
    assert!(
        relative.contains("default one for inner.example:"),
        "{relative}"
    );
    let empty = target("");
    assert!(empty.contains("for this command line"), "{empty}");
}

/// The budget line of the plan `plan` prints.
fn planned_budget(plan: Invocation) -> String {
    let plan = plan.run();
    plan.expect_code(0);
    plan.stdout()
        .lines()
        .find(|line| line.starts_with("retry budget:"))
        .unwrap_or_else(|| panic!("no budget in the plan\n{plan}"))
        .to_string()
}

#[test]
fn a_wait_asked_for_is_bounded_as_without_a_budget_and_never_refused() {
    // The docs' own `echo 2m > "$RETRY_AFTER_FILE"`, with a full bucket: the budget holds the
    // runs on its target for the wait, as far as each run's RETRY_MAX_REQUESTED_WAIT trusts a
    // request (as without a budget), and refuses none of them.
    let scratch = Scratch::new();
    let state = scratch.path("state");
    let script = "[ -n \"$ASK\" ] && echo 2m > \"$RETRY_AFTER_FILE\"; exit 1";
    let run = |flags: &[&str]| {
        retry([
            "--log-format",
            "json",
            "-n",
            "2",
            "--base",
            "0s",
            "--cap",
            "10ms",
        ])
        .args(flags)
        .env("XDG_STATE_HOME", &state)
        .args(["--", "sh", "-c", script])
    };
    let asking = run(&[]).env("ASK", "1").spawn();
    let wait = asking.await_event("wait");
    assert_eq!(
        (&wait["cause"], &wait["wait_ms"]),
        (
            &serde_json::json!("requested"),
            &serde_json::json!(120_000.0)
        ),
        "the run that asked waits its 2m"
    );
    // Another run on the same target that asked for nothing waits the stored wait out, as far
    // as its own RETRY_MAX_REQUESTED_WAIT trusts a request; never refused.
    let held = run(&[])
        .env_remove("ASK")
        .env("RETRY_MAX_REQUESTED_WAIT", "1s")
        .run();
    assert_eq!(ending(&held), (2, "exhausted".into()), "{held}");
    let causes: Vec<_> = held
        .events_named("wait")
        .iter()
        .map(|wait| wait["cause"].clone())
        .collect();
    assert_eq!(causes, ["shared"], "{held}");
    // A run whose --max-time cannot hold that wait ends by its deadline, and says whose wait.
    let bounded = run(&["--max-time", "800ms"])
        .env_remove("ASK")
        .env("RETRY_MAX_REQUESTED_WAIT", "1s")
        .run();
    assert_eq!(ending(&bounded), (1, "deadline".into()), "{bounded}");
    assert_eq!(bounded.event("done")["wait_cause"], "shared", "{bounded}");
    asking.signal(libc::SIGTERM);
    asking.finish().expect_signal(libc::SIGTERM);
}

#[test]
fn idle_states_are_pruned_when_a_new_one_is_made() {
    // A cron line with the day in its arguments leaves one state a failing day: a new one
    // prunes those no run has written for a day and more, full again and holding nothing.
    let scratch = Scratch::new();
    let state = scratch.path("state");
    let dir = state.join("retry/default-budgets");
    let line = |day: &str| ["sh", "-c", "exit 1", day].map(OsString::from);
    let name = |day: &str| Target::of(None, &line(day), &|_, _| None).file_name();
    let fail_on = |day: &str| {
        retry(["-q", "-n", "2", "--base", "0s", "--"])
            .args(line(day))
            .env("XDG_STATE_HOME", &state)
            .run()
            .expect_code(1);
    };
    for day in ["2026-11-01", "2026-11-02", "2026-11-03", "2026-11-04"] {
        fail_on(day);
    }
    // The fourth's terms were set by hand: they are kept, idle or not.
    let store = format!("file:{}", dir.display());
    retry([
        "budget",
        "set",
        &name("2026-11-04"),
        "--budget-store",
        &store,
    ])
    .args(["--rate", "5/1m"])
    .env("XDG_STATE_HOME", &state)
    .run()
    .expect_code(0);
    let foreign = dir.join("notes");
    std::fs::write(&foreign, "mine\n").unwrap();
    let age = |path: &Path, hours: u64| {
        let then = std::time::SystemTime::now() - std::time::Duration::from_secs(hours * 3600);
        let file = std::fs::OpenOptions::new().write(true).open(path).unwrap();
        file.set_modified(then).unwrap();
    };
    for (day, hours) in [
        ("2026-11-01", 49),
        ("2026-11-02", 25),
        ("2026-11-03", 1),
        ("2026-11-04", 49),
    ] {
        age(&dir.join(name(day)), hours);
    }
    age(&foreign, 49);
    fail_on("2026-11-05");
    let mut left: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .collect();
    left.sort();
    let mut expected = vec![
        name("2026-11-03"),
        name("2026-11-04"),
        name("2026-11-05"),
        "notes".to_string(),
    ];
    expected.sort();
    assert_eq!(left, expected);
}
