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
        assert_eq!(
            rules.decide(status, 0, &mut RuleUses::default()).verdict,
            verdict,
            "{status}"
        );
    }
    assert!(rules.decide(1, 0, &mut RuleUses::default()).rule.default);
}

#[test]
fn the_users_rules_come_first_stop_before_retry() {
    let rules = list(&["0,3"], &["2", "stderr:fatal"], &["4-5", "130"]);
    assert_eq!(
        rules.decide(3, 0, &mut RuleUses::default()).verdict,
        Success
    );
    let stopped = rules.decide(2, 0, &mut RuleUses::default());
    assert_eq!(stopped.verdict, Stop);
    assert_eq!(&*stopped.rule.described, "--stop-on 2");
    assert_eq!(
        rules.decide(4, 0b1, &mut RuleUses::default()).verdict,
        Stop,
        "a fatal line stops a failure"
    );
    assert_eq!(
        rules.decide(3, 0b1, &mut RuleUses::default()).verdict,
        Success,
        "but never a success"
    );
    assert_eq!(rules.decide(4, 0, &mut RuleUses::default()).verdict, Retry);
    assert_eq!(
        rules.decide(130, 0, &mut RuleUses::default()).verdict,
        Retry,
        "named, 130 is retried"
    );
    let other = rules.decide(9, 0, &mut RuleUses::default());
    assert_eq!(other.verdict, Stop, "--retry-on names what is retried");
    assert!(other.rule.default);
}

#[test]
fn a_success_pattern_makes_success_need_the_match() {
    let rules = list(&["stdout:^ready$"], &[], &[]);
    assert_eq!(
        rules.decide(0, 0b1, &mut RuleUses::default()).verdict,
        Success
    );
    let unready = rules.decide(0, 0, &mut RuleUses::default());
    assert_eq!((unready.verdict, unready.unready), (Retry, true));
    assert_eq!(
        rules.decide(1, 0b1, &mut RuleUses::default()).verdict,
        Retry,
        "only a success status succeeds"
    );
    let codes = list(&["3", "stdout:^ready$"], &[], &[]);
    assert_eq!(
        codes.decide(3, 0b1, &mut RuleUses::default()).verdict,
        Success
    );
    assert_eq!(
        codes.decide(0, 0b1, &mut RuleUses::default()).verdict,
        Retry,
        "3 alone is the success status"
    );
}

#[test]
fn a_success_status_fails_by_its_output_only_where_a_rule_names_it() {
    let rules = list(&[], &[], &["0,stdout:pending"]);
    let pending = rules.decide(0, 0b1, &mut RuleUses::default());
    assert_eq!((pending.verdict, pending.unready), (Retry, true));
    assert_eq!(
        rules.decide(0, 0, &mut RuleUses::default()).verdict,
        Success
    );
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
    assert_eq!(
        curl.decide(22, 0, &mut RuleUses::default()).verdict,
        Retry,
        "a 503"
    );
    let refused = curl.decide(22, permanent, &mut RuleUses::default());
    assert_eq!(refused.verdict, Stop, "a 404");
    assert!(
        refused.rule.described.starts_with("--preset curl: "),
        "{:?}",
        refused.rule
    );
    assert_eq!(
        curl.decide(7, 0, &mut RuleUses::default()).verdict,
        Retry,
        "refused"
    );
    assert_eq!(
        curl.decide(60, 0, &mut RuleUses::default()).verdict,
        Stop,
        "a certificate"
    );
    assert_eq!(
        curl.decide(124, 0, &mut RuleUses::default()).verdict,
        Retry,
        "--timeout"
    );
    assert_eq!(
        curl.decide(130, 0, &mut RuleUses::default()).verdict,
        Stop,
        "the guard comes first"
    );
    assert_eq!(curl.decide(0, 0, &mut RuleUses::default()).verdict, Success);
    let user = UserRules {
        stop: specs(&["7"]),
        retry: specs(&["3"]),
        ..UserRules::default()
    };
    let named = RuleList::new(&user, Preset::named("curl")).unwrap();
    assert_eq!(
        named.decide(3, 0, &mut RuleUses::default()).verdict,
        Retry,
        "--retry-on names it"
    );
    assert_eq!(named.decide(7, 0, &mut RuleUses::default()).verdict, Stop);
    assert_eq!(
        named.decide(22, 0, &mut RuleUses::default()).verdict,
        Retry,
        "the rest is the preset's"
    );
    assert_eq!(named.decide(60, 0, &mut RuleUses::default()).verdict, Stop);
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
    assert_eq!(
        apt.decide(0, 0, &mut RuleUses::default()).verdict,
        Success,
        "a clean update"
    );
    let mirror_down = apt.decide(0, failed, &mut RuleUses::default());
    assert_eq!((mirror_down.verdict, mirror_down.unready), (Retry, true));
    assert_eq!(
        apt.decide(0, failed | gone, &mut RuleUses::default())
            .verdict,
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

#[test]
fn a_limit_follows_the_statuses_and_never_joins_a_pattern() {
    let limited = spec("124:max=1");
    assert_eq!(
        (limited.statuses, limited.limit, limited.output),
        (Some("124".parse().unwrap()), Some(1), None)
    );
    let with_pattern = spec("1-255:max=3,stderr:reset:maximum");
    assert_eq!(with_pattern.limit, Some(3));
    assert_eq!(with_pattern.output.unwrap().regex, "reset:maximum");
    assert_eq!(spec("stderr:max[=]1").limit, None);
    for (bad, words) in [
        ("124:max=0", "not a whole number from 1 to 10000"),
        ("124:max=x", "max=x"),
        ("124:max=10001", "max=10001"),
        ("stderr:reset:max=2", "a limit follows the statuses"),
        ("124:max=1:max=2", "max=1:max=2"),
    ] {
        let err = bad.parse::<RuleSpec>().unwrap_err().to_string();
        assert!(err.contains(words), "{bad}: {err}");
    }
}

#[test]
fn only_a_retry_on_rule_may_have_a_limit() {
    for (success, stop) in [(&["0:max=1"][..], &[][..]), (&[], &["3:max=1"])] {
        let user = UserRules {
            success: specs(success),
            stop: specs(stop),
            retry: Vec::new(),
        };
        let err = RuleList::new(&user, None).unwrap_err().to_string();
        assert!(err.contains("only a --retry-on rule may have one"), "{err}");
    }
}

#[test]
fn a_spent_rule_lets_the_end_fall_through_to_the_rules_below_it() {
    let rules = list(&[], &[], &["124:max=1", "7"]);
    let mut uses = RuleUses::default();
    let first = rules.decide(124, 0, &mut uses);
    assert_eq!((first.verdict, first.rule.spent), (Retry, None));
    let second = rules.decide(124, 0, &mut uses);
    assert_eq!(second.verdict, Stop);
    assert_eq!(second.rule.spent.as_deref(), Some("--retry-on 124:max=1"));
    assert!(
        second.rule.refusal().starts_with(
            "is not retried: --retry-on 124:max=1 has given all its retries; below it,"
        ),
        "{}",
        second.rule.refusal()
    );
    assert_eq!(
        rules.decide(7, 0, &mut uses).verdict,
        Retry,
        "7 is not limited"
    );
    let fresh = rules.decide(124, 0, &mut RuleUses::default());
    assert_eq!(fresh.verdict, Retry, "each run counts its own");
}

#[test]
fn a_spent_rule_falls_through_to_a_later_rule_that_names_the_end() {
    let rules = list(&[], &[], &["124:max=2", "100-200:max=1"]);
    let mut uses = RuleUses::default();
    let verdicts: Vec<_> = (0..4)
        .map(|_| rules.decide(124, 0, &mut uses).verdict)
        .collect();
    assert_eq!(verdicts, [Retry, Retry, Retry, Stop]);
}

#[test]
fn the_limits_bound_the_attempts_only_when_every_retrying_rule_has_one() {
    assert_eq!(
        list(&[], &[], &["124:max=1", "7:max=2"]).attempt_bound(),
        Some(4)
    );
    assert_eq!(list(&[], &[], &["124:max=1", "7"]).attempt_bound(), None);
    assert_eq!(
        list(&[], &[], &[]).attempt_bound(),
        None,
        "the default retries"
    );
    let preset = RuleList::new(
        &UserRules {
            retry: specs(&["124:max=1"]),
            ..UserRules::default()
        },
        Preset::named("curl"),
    )
    .unwrap();
    assert_eq!(preset.attempt_bound(), None, "the preset's rules retry");
}
