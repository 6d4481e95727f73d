//! `RETRY_RUN_ID`: one identity for a whole run, in every attempt's and hook's environment, its
//! events and its report; a run inside another's attempt keeps the outer one's, and an outer
//! value that is not one a run makes is not trusted.

use crate::support::harness::{Scratch, retry};

/// Whether `text` is a version 4 UUID in canonical lowercase text.
fn is_run_id(text: &str) -> bool {
    let groups: Vec<&str> = text.split('-').collect();
    let lengths: Vec<usize> = groups.iter().map(|group| group.len()).collect();
    lengths == [8, 4, 4, 4, 12]
        && text
            .bytes()
            .all(|b| b == b'-' || b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
        && groups[2].starts_with('4')
        && groups[3].starts_with(['8', '9', 'a', 'b'])
}

#[test]
fn every_attempt_hook_event_and_report_of_a_run_has_its_one_identity() {
    let scratch = Scratch::new();
    let report = scratch.path("report.json");
    let run = retry(["--log-format", "json", "-n", "3", "--base", "0s"])
        .args(["--report", &report.display().to_string()])
        .args(["--on-retry", "echo \"hook $RETRY_RUN_ID\" >> \"$SEEN\""])
        .args([
            "--",
            "sh",
            "-c",
            "echo \"attempt $RETRY_RUN_ID\" >> \"$SEEN\"; exit 1",
        ])
        .env("SEEN", scratch.path("seen"))
        .env_remove("RETRY_RUN_ID")
        .run();
    run.expect_code(1);
    let seen = scratch.read("seen");
    let ids: Vec<&str> = seen
        .lines()
        .map(|line| line.split(' ').nth(1).unwrap())
        .collect();
    assert_eq!(ids.len(), 5, "three attempts and two hooks: {seen}");
    let id = ids[0];
    assert!(is_run_id(id), "{id}");
    assert!(ids.iter().all(|seen| *seen == id), "{seen}");
    for event in run
        .events_named("attempt_start")
        .iter()
        .chain([&run.event("done")])
    {
        assert_eq!(event["run_id"], id, "{event}");
    }
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    assert_eq!(report["run_id"], id);
    // Another run is another identity.
    let again = retry(["--", "sh", "-c", "echo $RETRY_RUN_ID"])
        .env_remove("RETRY_RUN_ID")
        .run();
    again.expect_code(0);
    assert_ne!(again.stdout().trim(), id);
    assert!(is_run_id(again.stdout().trim()));
}

#[test]
fn a_nested_run_keeps_the_outer_identity_and_distrusts_one_no_run_made() {
    let outer = "6ba7b810-9dad-41d1-80b4-00c04fd430c8";
    let nested = retry(["--", "sh", "-c", "echo $RETRY_RUN_ID"])
        .env("RETRY_RUN_ID", outer)
        .run();
    nested.expect_code(0);
    assert_eq!(nested.stdout().trim(), outer);
    for untrusted in ["not-an-id", "6BA7B810-9DAD-41D1-80B4-00C04FD430C8", "x\ny"] {
        let fresh = retry(["--", "sh", "-c", "echo \"$RETRY_RUN_ID\""])
            .env("RETRY_RUN_ID", untrusted)
            .run();
        fresh.expect_code(0);
        let id = fresh.stdout().trim().to_string();
        assert!(is_run_id(&id) && id != untrusted.to_lowercase(), "{id}");
    }
}
