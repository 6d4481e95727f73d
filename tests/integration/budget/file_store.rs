//! The budget in a file (`--budget NAME`, no store): runs on one host share it; damaged, foreign,
//! linked or locked state never stops the command and is never trusted.

use crate::support::harness::{
    Scratch, fault_injector, file_store, program, retry, set_budget, sharing_budget, shown_budget,
    wait_for,
};
use std::os::unix::fs::PermissionsExt;

#[test]
fn a_shared_budget_caps_the_retries_of_concurrent_runs() {
    let scratch = Scratch::new();
    let budgets = scratch.path("budgets");
    set_budget(
        "api.example.com",
        &file_store(&budgets),
        &["--rate", "5/1h"],
    );
    let runs: Vec<_> = (0..20)
        .map(|_| {
            sharing_budget("api.example.com", None, &budgets)
                .args(["-n", "3", "--base", "10ms", "--max-time", "3s"])
                .args(["--", "sh", "-c", "echo x >> \"$COUNTER\"; exit 1"])
                .env("COUNTER", scratch.path("count"))
                .spawn()
        })
        .collect();
    let mut reasons = Vec::new();
    for running in runs {
        let run = running.finish();
        let done = run.event("done");
        assert!(
            done["elapsed_ms"].as_f64().unwrap() < 3000.0,
            "a run waited for a token\n{run}"
        );
        let attempts = done["attempts"].as_u64().unwrap();
        reasons.push((attempts, done["reason"].as_str().unwrap().to_string()));
    }
    assert_eq!(
        scratch.lines("count"),
        20 + 5,
        "20 first attempts and 5 retries"
    );
    let retries: u64 = reasons.iter().map(|(attempts, _)| attempts - 1).sum();
    assert_eq!(retries, 5, "{reasons:?}");
    // A run whose next token is past its --max-time ends at once, by its deadline; one that got
    // tokens may use up its -n 3 instead.
    for (attempts, reason) in &reasons {
        let expected = if *attempts < 3 {
            "deadline"
        } else {
            "exhausted"
        };
        assert_eq!(reason, expected, "{reasons:?}");
    }
}

#[test]
fn a_damaged_budget_state_is_recovered_with_one_warning() {
    let scratch = Scratch::new();
    let dir = scratch.path("budgets");
    std::fs::create_dir(&dir).unwrap();
    // A record with these tokens, at this time, on the default terms.
    let record = |tokens: &str, at: u64| {
        format!("retry-budget-v4 {tokens} 0e0 {at} 0 0 0 0 10 6e7 - 6e7 | - | 0 0 0 0 0 0 0 0 -\n")
    };
    for damaged in [
        "retry-budget-v4 garbage\n".to_string(),
        record("-1e308", 1),
        record("0e0", u64::MAX),
    ] {
        std::fs::write(dir.join("api"), damaged).unwrap();
        let run = retry(["--budget", "api", "--budget-store", &file_store(&dir)])
            .args(["-n", "2", "--base", "0s"])
            .args(["sh", "-c", "[ $RETRY_ATTEMPT = 2 ]"])
            .run();
        run.expect_code(0)
            .expect_stderr("starting again from a full bucket");
        assert_eq!(run.stderr().matches("warning").count(), 1, "{run}");
        let state = std::fs::read_to_string(dir.join("api")).unwrap();
        let tokens: f64 = state.split_whitespace().nth(1).unwrap().parse().unwrap();
        assert_eq!(tokens, 9.0, "one token of 10 spent: {state}");
    }
}

#[test]
fn a_file_that_is_not_a_budget_state_is_left_alone_and_the_command_runs() {
    let scratch = Scratch::new();
    let makefile = "all:\n\tcc -o app app.c\n";
    std::fs::write(scratch.path("Makefile"), makefile).unwrap();
    let run = retry(["--budget", "Makefile", "--budget-store"])
        .args([file_store(&scratch.path(""))])
        .args(["-n", "2", "--base", "1ms"])
        .args(["sh", "-c", "echo ran >> \"$MARKER\"; exit 1"])
        .env("MARKER", scratch.path("marker"))
        .run();
    run.expect_code(1).expect_stderr(
        "not a retry budget state, so it is left alone; going on without the budget",
    );
    assert_eq!(scratch.read("Makefile"), makefile, "{run}");
    assert_eq!(scratch.lines("marker"), 2, "both attempts ran\n{run}");
    let closed = retry(["--budget", "Makefile", "--budget-store"])
        .args([format!("{}?fail=closed", file_store(&scratch.path("")))])
        .args(["-n", "3", "--base", "1ms", "false"])
        .run();
    closed
        .expect_code(1)
        .expect_stderr("giving up after 1 attempt: the retry budget cannot be used");
    assert_eq!(scratch.read("Makefile"), makefile, "{closed}");
}

#[test]
fn a_garbled_state_is_moved_aside_and_started_over_and_zeros_are_not_its_own() {
    let scratch = Scratch::new();
    let dir = scratch.path("budgets");
    sharing_budget("api", Some("1/1h"), &dir)
        .args(["true"])
        .run()
        .expect_code(0);
    let state = dir.join("api");
    let garbled = b"retry-budget-v4 1.0 0".to_vec();
    std::fs::write(&state, &garbled).unwrap();
    let run = sharing_budget("api", None, &dir)
        .args(["-n", "13", "--base", "1ms", "--max-time", "3s", "false"])
        .run();
    // Started over on the default terms (the damage took the terms with it): the ten tokens
    // are spent on ten retries, and the next is six seconds away, past the deadline.
    run.expect_code(1);
    assert_eq!(run.event("done")["reason"], "deadline", "{run}");
    assert_eq!(run.event("done")["attempts"], 11, "{run}");
    assert!(run.warning().contains("its content was damaged"), "{run}");
    assert_eq!(std::fs::read(dir.join("api.damaged")).unwrap(), garbled);

    // What a crash may leave (zeros, or other bytes of a record's size) carries no signature:
    // whoever wrote it, it is not the store's to overwrite.
    let length = std::fs::metadata(&state).unwrap().len() as usize;
    for foreign in [vec![0u8; length], vec![0xa5; length]] {
        std::fs::write(&state, &foreign).unwrap();
        let run = sharing_budget("api", None, &dir)
            .args(["-n", "3", "--base", "1ms", "false"])
            .run();
        run.expect_code(1);
        assert_eq!(run.event("done")["attempts"], 3, "{run}");
        assert!(run.warning().contains("so it is left alone"), "{run}");
        assert!(std::fs::read(&state).unwrap() == foreign, "changed\n{run}");
    }
}

#[test]
fn budget_names_that_could_leave_the_directory_are_refused() {
    for name in ["../escape", "a/b", "..", ".hidden"] {
        retry(["--budget", name, "true"])
            .run()
            .expect_code(125)
            .expect_stderr("--budget");
    }
}

#[test]
fn budget_places_any_user_could_change_are_refused() {
    let scratch = Scratch::new();
    let open = scratch.path("open");
    std::fs::create_dir(&open).unwrap();
    std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o777)).unwrap();
    std::os::unix::fs::symlink(scratch.path("real"), scratch.path("link")).unwrap();
    std::fs::create_dir(scratch.path("real")).unwrap();
    let cases = [
        (open.clone(), "has mode 0777"),
        (scratch.path("link"), "is a symbolic link"),
    ];
    for (dir, why) in cases {
        retry(["--budget", "api", "--budget-store", &file_store(&dir)])
            .args(["true"])
            .run()
            .expect_code(0)
            .expect_stderr(why)
            .expect_stderr(&dir.display().to_string())
            .expect_stderr("going on without the budget");
    }
    let shared = scratch.path("shared");
    std::fs::create_dir(&shared).unwrap();
    std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o770)).unwrap();
    retry(["--budget", "api", "--budget-store", &file_store(&shared)])
        .args(["-n", "2", "--base", "0s", "false"])
        .run()
        .expect_code(1);
    let mode = std::fs::metadata(shared.join("api"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o660, "a group's budget is the group's");
}

#[test]
fn another_users_budget_is_never_trusted_not_even_by_root() {
    if !crate::support::harness::is_root() {
        eprintln!("skipped: making files of another user needs root (CI runs as root)");
        return;
    }
    let scratch = Scratch::new();
    let theirs = scratch.path("theirs");
    std::fs::create_dir(&theirs).unwrap();
    std::os::unix::fs::chown(&theirs, Some(65534), Some(65534)).unwrap();
    let mine = scratch.path("mine");
    sharing_budget("api", Some("1/1h"), &mine)
        .args(["true"])
        .run()
        .expect_code(0);
    std::os::unix::fs::chown(mine.join("api"), Some(65534), Some(65534)).unwrap();
    for (dir, why) in [
        (&theirs, "the budget directory"),
        (&mine, "api belongs to another user"),
    ] {
        let run = sharing_budget("api", None, dir)
            .args(["-n", "3", "--base", "1ms", "false"])
            .run();
        run.expect_code(1);
        let warning = run.warning();
        assert!(
            warning.contains(why) && warning.contains("(uid 65534)"),
            "{run}"
        );
        assert_eq!(
            run.event("done")["attempts"],
            3,
            "no budget, so all retries\n{run}"
        );
    }
}

#[test]
fn a_run_killed_in_the_middle_of_an_update_leaves_a_whole_state() {
    let scratch = Scratch::new();
    let dir = scratch.path("budgets");
    // The first update goes through (it counts the first attempt); the run kills itself at the
    // second, its first retry's, as SIGKILL would.
    let run = retry(["--budget", "api", "--budget-store", &file_store(&dir)])
        .args(["-n", "5", "--base", "0s", "false"])
        .env("LD_PRELOAD", fault_injector())
        .env("FAULT_PATH", dir.join("api"))
        .env("FAULT", "kill-second")
        .run();
    run.expect_signal(libc::SIGKILL);
    let state = std::fs::read_to_string(dir.join("api")).unwrap();
    let tokens: f64 = state
        .split_whitespace()
        .nth(1)
        .and_then(|tokens| tokens.parse().ok())
        .unwrap_or_else(|| panic!("not a whole state: {state:?}\n{run}"));
    // The first update counted the first attempt; the second took a token, or never happened.
    assert!(tokens == 9.0 || tokens == 10.0, "{state:?}");
}

#[test]
fn a_fifo_at_the_budget_path_is_not_waited_for_and_the_command_runs() {
    let scratch = Scratch::new();
    nix::unistd::mkfifo(
        &scratch.path("api"),
        nix::sys::stat::Mode::from_bits_truncate(0o600),
    )
    .unwrap();
    retry([
        "--budget",
        "api",
        "--budget-store",
        &file_store(&scratch.path("")),
    ])
    .args(["-n", "2", "--base", "1ms", "false"])
    .run()
    .expect_code(1)
    .expect_stderr("is not a regular file")
    .expect_stderr("going on without the budget")
    .expect_stderr("giving up after 2 attempts");
}

/// Hold the lock of the budget `api` in `dir` from another process (one, which leaves nothing
/// behind when killed) until the test ends.
fn hold_budget_lock(scratch: &Scratch, dir: &std::path::Path) -> crate::support::harness::Running {
    retry([
        "--budget",
        "api",
        "--budget-store",
        &file_store(dir),
        "true",
    ])
    .run()
    .expect_code(0);
    let hold = "import fcntl, os, sys, time\n\
                fcntl.flock(os.open(sys.argv[1], os.O_RDWR), fcntl.LOCK_EX)\n\
                open(sys.argv[2], 'w').close()\n\
                time.sleep(60)\n";
    let holder = program("python3")
        .args(["-c", hold])
        .args([dir.join("api"), scratch.path("locked")])
        .spawn();
    wait_for("the lock to be taken", || scratch.path("locked").exists());
    holder
}

#[test]
fn a_lock_held_too_long_means_retrying_without_the_budget() {
    let scratch = Scratch::new();
    let dir = scratch.path("budgets");
    let holder = hold_budget_lock(&scratch, &dir);
    let run = sharing_budget("api", None, &dir)
        .args(["-n", "2", "--base", "0s", "--max-time", "5s", "false"])
        .run();
    holder.signal(libc::SIGKILL);
    run.expect_code(1);
    assert_eq!(run.event("done")["attempts"], 2, "{run}");
    let warning = run.event("warning");
    assert!(
        warning["message"]
            .as_str()
            .unwrap()
            .contains("another process held its lock"),
        "{run}"
    );
}

#[test]
fn a_signal_ends_a_wait_for_the_budget_lock() {
    let scratch = Scratch::new();
    let dir = scratch.path("budgets");
    let holder = hold_budget_lock(&scratch, &dir);
    let running = sharing_budget("api", None, &dir)
        .args(["-n", "2", "--base", "0s", "false"])
        .spawn();
    // A blocked request for the lock shows in /proc/locks as "-> FLOCK ... MAJ:MIN:INODE".
    let inode = std::os::unix::fs::MetadataExt::ino(&std::fs::metadata(dir.join("api")).unwrap());
    wait_for("the tool to wait for the lock", || {
        std::fs::read_to_string("/proc/locks").is_ok_and(|locks| {
            locks
                .lines()
                .any(|line| line.contains("->") && line.contains(&format!(":{inode} ")))
        })
    });
    running.signal(libc::SIGTERM);
    let run = running.finish();
    holder.signal(libc::SIGKILL);
    run.expect_signal(libc::SIGTERM);
    assert_eq!(
        run.event("done")["attempts"],
        0,
        "the budget is asked before the first attempt\n{run}"
    );
}

#[test]
fn a_budget_regaining_a_token_in_centuries_saturates() {
    let scratch = Scratch::new();
    // A bucket already a token in debt: the next token is two periods away.
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    // A period of a century, the longest terms may give; the state a token in debt on them.
    let century = 100 * 31_557_600_000_000_u64;
    let record = format!(
        "retry-budget-v4 -1e0 0e0 {} 0 0 0 0 1 {century}e0 - 6e7 | - | 0 0 0 0 0 0 0 0 -\n",
        now / 1000
    );
    std::fs::write(scratch.path("api"), record).unwrap();
    let run = sharing_budget("api", None, &scratch.path(""))
        .args(["--max-time", "2s", "-n", "4", "--base", "0s", "false"])
        .run();
    run.expect_code(1);
    assert_eq!(run.event("done")["reason"], "deadline", "{run}");
    let done = run.event("done");
    assert_eq!(
        (&done["deadline"], &done["wait_cause"]),
        (&serde_json::json!("max_time"), &serde_json::json!("budget")),
        "{run}"
    );
}

#[test]
fn a_budget_directory_that_cannot_be_made_names_the_flag_and_the_fix() {
    let scratch = Scratch::new();
    std::fs::write(scratch.path("a-file"), "").unwrap();
    let dir = scratch.path("a-file/budgets");
    retry([
        "--budget",
        "api",
        "--budget-store",
        &file_store(&dir),
        "-n",
        "1",
        "true",
    ])
    .run()
    .expect_code(0)
    .expect_stderr(&format!(
        "cannot use the budget directory {} (give --budget-store file:DIR a directory this user \
         can create and write): {}: Not a directory",
        dir.display(),
        dir.display()
    ));
    retry([
        "budget",
        "set",
        "api",
        "--rate",
        "1/1m",
        "--budget-store",
        &file_store(&dir),
    ])
    .run()
    .expect_code(125)
    .expect_stderr("cannot use the budget directory");
}

#[test]
fn every_run_spends_on_the_terms_budget_set_keeps() {
    let scratch = Scratch::new();
    let dir = scratch.path("budgets");
    let store = file_store(&dir);
    set_budget(
        "api",
        &store,
        &["--rate", "2/1h", "--ratio", "0.6", "--window", "10m"],
    );
    let shown = shown_budget("api", &store);
    assert_eq!(shown["terms"]["capacity"], 2);
    assert_eq!(shown["terms"]["ratio"], 0.6);
    assert_eq!(shown["terms"]["set"], true);
    // Two tokens, then 0.6 of a token earned per first attempt: the first run's two retries
    // take the rate's tokens, the second run's one retry the 1.2 earned.
    for expected in [2, 1] {
        let run = sharing_budget("api", None, &dir)
            .args(["-n", "5", "--base", "0s", "--max-time", "2s", "false"])
            .run();
        assert_eq!(run.event("done")["attempts"], expected + 1, "{run}");
    }
    retry([
        "budget",
        "set",
        "api",
        "--rate",
        "0/1m",
        "--budget-store",
        &store,
    ])
    .run()
    .expect_code(125)
    .expect_stderr("--rate");
}

#[test]
fn a_named_budget_refuses_a_retry_it_has_no_token_for_within_cap() {
    let scratch = Scratch::new();
    let budgets = scratch.path("budgets");
    set_budget("api", &file_store(&budgets), &["--rate", "1/1h"]);
    let run = |max_time: &[&str]| {
        let run = sharing_budget("api", None, &budgets)
            .args(["-n", "5", "--base", "0s", "--cap", "1s"])
            .args(max_time)
            .args(["--", "sh", "-c", "exit 3"])
            .run();
        run.expect_code(3);
        let done = run.event("done");
        let reason = done["reason"].as_str().unwrap().to_string();
        (done["attempts"].as_u64(), reason, run)
    };
    // The bucket's one token goes to the first run's first retry; its next is an hour ahead.
    let (attempts, reason, first) = run(&[]);
    assert_eq!((attempts, reason.as_str()), (Some(2), "budget"), "{first}");
    retry(["--budget", "api", "--budget-store", &file_store(&budgets)])
        .args([
            "-n", "5", "--base", "0s", "--cap", "1s", "--", "sh", "-c", "exit 3",
        ])
        .run()
        .expect_code(3)
        .expect_stderr(
            "giving up after 1 attempt: the retry budget api has no token for another within \
             --cap (1s)",
        );
    // A --max-time longer than --cap changes nothing: the budget refused, at once.
    let (attempts, reason, run_) = run(&["--max-time", "10m"]);
    assert_eq!((attempts, reason.as_str()), (Some(1), "budget"), "{run_}");
    // A deadline sooner than --cap is what ends the run, as the precedence says.
    let (attempts, reason, run_) = run(&["--max-time", "500ms"]);
    assert_eq!((attempts, reason.as_str()), (Some(1), "deadline"), "{run_}");
}

#[test]
fn budget_set_keeps_the_terms_it_is_not_given_and_clears_by_name() {
    let scratch = Scratch::new();
    let store = file_store(&scratch.path("budgets"));
    let show = || shown_budget("api", &store);
    // A budget's first terms need a rate.
    retry([
        "budget",
        "set",
        "api",
        "--ratio",
        "0.1",
        "--budget-store",
        &store,
    ])
    .run()
    .expect_code(125)
    .expect_stderr("a budget's first terms need --rate");
    set_budget(
        "api",
        &store,
        &["--rate", "5/1m", "--ratio", "0.1", "--window", "10m"],
    );
    // The docs' breaker example, after the ratio's: the ratio and its window stay.
    set_budget("api", &store, &["--breaker", "3/1m", "--cool-down", "2m"]);
    let terms = &show()["terms"];
    assert_eq!(
        (&terms["ratio"], &terms["window_ms"], &terms["capacity"]),
        (
            &serde_json::json!(0.1),
            &serde_json::json!(600000.0),
            &serde_json::json!(5)
        ),
        "{terms}"
    );
    assert_eq!(terms["breaker"]["cool_down_ms"], 120000.0, "{terms}");
    set_budget("api", &store, &["--clear", "breaker", "--clear", "ratio"]);
    let terms = &show()["terms"];
    assert!(
        terms["breaker"].is_null() && terms["ratio"].is_null(),
        "{terms}"
    );
    assert_eq!(terms["capacity"], 5, "{terms}");
}
