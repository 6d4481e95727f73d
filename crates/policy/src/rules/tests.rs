use super::*;

fn spec(text: &str) -> RuleSpec {
    text.parse().unwrap()
}

fn specs(texts: &[&str]) -> Vec<RuleSpec> {
    texts.iter().map(|text| spec(text)).collect()
}

fn list(success: &[&str], stop: &[&str], retry: &[&str]) -> RuleList {
    let user = UserRules {
        success: specs(success),
        stop: specs(stop),
        retry: specs(retry),
    };
    RuleList::new(&user, None).unwrap()
}

fn with_preset(name: &str) -> RuleList {
    RuleList::new(&UserRules::default(), Preset::named(name)).unwrap()
}

use Verdict::{Retry, Stop, Success};

#[test]
fn a_rule_is_statuses_a_pattern_or_both() {
    let both = spec("22,stderr:error: 4\\d\\d");
    assert_eq!(both.statuses, Some("22".parse().unwrap()));
    assert_eq!(
        both.output,
        Some(OutputPattern {
            stream: OutputStream::Stderr,
            regex: "error: 4\\d\\d".into()
        })
    );
    let codes = spec("6,7,75-78");
    assert_eq!((codes.statuses.is_some(), codes.output), (true, None));
    let output = spec("output:a,stdout:b");
    assert_eq!(output.statuses, None);
    assert_eq!(output.output.unwrap().regex, "a,stdout:b");
    for bad in ["", "x", "1,x:y", "stdout:", "1-", "78-75"] {
        assert!(bad.parse::<RuleSpec>().is_err(), "{bad}");
    }
    let err = "4xx".parse::<RuleSpec>().unwrap_err().to_string();
    assert!(err.contains("stdout:REGEX"), "{err}");
}

#[test]
fn by_default_success_is_0_and_any_other_end_is_retried_but_130_and_141() {
    let rules = list(&[], &[], &[]);
    for (status, verdict) in [
        (0, Success),
        (1, Retry),
        (124, Retry),
        (255, Retry),
        (130, Stop),
        (141, Stop),
    ] {
        assert_eq!(rules.decide(status, 0).verdict, verdict, "{status}");
    }
    assert!(rules.decide(1, 0).rule.default);
}

#[test]
fn the_users_rules_come_first_stop_before_retry() {
    let rules = list(&["0,3"], &["2", "stderr:fatal"], &["4-5", "130"]);
    assert_eq!(rules.decide(3, 0).verdict, Success);
    let stopped = rules.decide(2, 0);
    assert_eq!(stopped.verdict, Stop);
    assert_eq!(&*stopped.rule.described, "--stop-on 2");
    assert_eq!(
        rules.decide(4, 0b1).verdict,
        Stop,
        "a fatal line stops a failure"
    );
    assert_eq!(rules.decide(3, 0b1).verdict, Success, "but never a success");
    assert_eq!(rules.decide(4, 0).verdict, Retry);
    assert_eq!(rules.decide(130, 0).verdict, Retry, "named, 130 is retried");
    let other = rules.decide(9, 0);
    assert_eq!(other.verdict, Stop, "--retry-on names what is retried");
    assert!(other.rule.default);
}

#[test]
fn a_success_pattern_makes_success_need_the_match() {
    let rules = list(&["stdout:^ready$"], &[], &[]);
    assert_eq!(rules.decide(0, 0b1).verdict, Success);
    let unready = rules.decide(0, 0);
    assert_eq!((unready.verdict, unready.unready), (Retry, true));
    assert_eq!(
        rules.decide(1, 0b1).verdict,
        Retry,
        "only a success status succeeds"
    );
    let codes = list(&["3", "stdout:^ready$"], &[], &[]);
    assert_eq!(codes.decide(3, 0b1).verdict, Success);
    assert_eq!(
        codes.decide(0, 0b1).verdict,
        Retry,
        "3 alone is the success status"
    );
}

#[test]
fn a_success_status_fails_by_its_output_only_where_a_rule_names_it() {
    let rules = list(&[], &[], &["0,stdout:pending"]);
    let pending = rules.decide(0, 0b1);
    assert_eq!((pending.verdict, pending.unready), (Retry, true));
    assert_eq!(rules.decide(0, 0).verdict, Success);
    let err = RuleList::new(
        &UserRules {
            retry: specs(&["0-255"]),
            ..UserRules::default()
        },
        None,
    )
    .unwrap_err()
    .to_string();
    assert!(
        err.starts_with("--retry-on 0-255 names status 0, a success status"),
        "{err}"
    );
}

#[test]
fn a_preset_decides_after_the_user_and_the_guards() {
    let curl = with_preset("curl");
    let permanent = 1
        << curl
            .patterns()
            .iter()
            .position(|pattern| pattern.regex.contains("40[0-7]"))
            .unwrap();
    assert_eq!(curl.decide(22, 0).verdict, Retry, "a 503");
    let refused = curl.decide(22, permanent);
    assert_eq!(refused.verdict, Stop, "a 404");
    assert!(
        refused.rule.described.starts_with("--preset curl: "),
        "{:?}",
        refused.rule
    );
    assert_eq!(curl.decide(7, 0).verdict, Retry, "refused");
    assert_eq!(curl.decide(60, 0).verdict, Stop, "a certificate");
    assert_eq!(curl.decide(124, 0).verdict, Retry, "--timeout");
    assert_eq!(curl.decide(130, 0).verdict, Stop, "the guard comes first");
    assert_eq!(curl.decide(0, 0).verdict, Success);
    let user = UserRules {
        stop: specs(&["7"]),
        retry: specs(&["3"]),
        ..UserRules::default()
    };
    let named = RuleList::new(&user, Preset::named("curl")).unwrap();
    assert_eq!(named.decide(3, 0).verdict, Retry, "--retry-on names it");
    assert_eq!(named.decide(7, 0).verdict, Stop);
    assert_eq!(
        named.decide(22, 0).verdict,
        Retry,
        "the rest is the preset's"
    );
    assert_eq!(named.decide(60, 0).verdict, Stop);
}

#[test]
fn apt_get_update_that_ends_0_after_a_failed_fetch_is_a_failure() {
    let apt = with_preset("apt-get");
    let bit = |needle: &str| {
        1 << apt
            .patterns()
            .iter()
            .position(|pattern| pattern.regex.contains(needle))
            .unwrap()
    };
    let (failed, gone) = (bit("^W: (Failed"), bit("Could not resolve"));
    assert_eq!(apt.decide(0, 0).verdict, Success, "a clean update");
    let mirror_down = apt.decide(0, failed);
    assert_eq!((mirror_down.verdict, mirror_down.unready), (Retry, true));
    assert_eq!(
        apt.decide(0, failed | gone).verdict,
        Stop,
        "a mirror that does not exist"
    );
}

#[test]
fn the_plan_shows_every_rule_in_order() {
    let rows = list(&[], &["stderr:x"], &["1"]).rows();
    let shown: Vec<(String, Verdict)> = rows
        .iter()
        .map(|row| (row.statuses.clone(), row.verdict))
        .collect();
    assert_eq!(
        shown,
        [
            ("any failure".to_string(), Stop),
            ("1".into(), Retry),
            ("130".into(), Stop),
            ("141".into(), Stop),
            ("0".into(), Success),
            ("any".into(), Stop),
        ]
    );
    assert_eq!(
        rows[0].output.as_ref().unwrap().stream,
        OutputStream::Stderr
    );
}

#[test]
fn patterns_are_checked_and_bounded() {
    let bad = UserRules {
        stop: specs(&["stdout:a("]),
        ..UserRules::default()
    };
    let err = RuleList::new(&bad, None).unwrap_err();
    assert_eq!(
        err.to_string(),
        "--stop-on 'stdout:a(' is not a valid regex: unclosed group at character 2"
    );
    let many = UserRules {
        retry: (0..=MAX_PATTERNS)
            .map(|n| spec(&format!("output:{n}")))
            .collect(),
        ..UserRules::default()
    };
    assert!(
        RuleList::new(&many, None)
            .unwrap_err()
            .to_string()
            .contains("at most 64 output patterns")
    );
}
