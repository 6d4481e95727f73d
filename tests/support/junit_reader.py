"""Read a JUnit XML file as CI systems do, and hold it to Maven Surefire's report schema.

The reading is junitparser's (Debian's python3-junitparser), the library test-report tools are
built on; the schema's rules (surefire-test-report-3.0.xsd: which elements a testcase holds, in
which order, their required attributes, and the form of a time) are written out below, as this
repository does not carry the schema itself. Prints what was read as JSON; exits 1, saying
why, if the file breaks a rule.

    /usr/bin/python3 junit_reader.py FILE
"""

import json
import re
import sys
import xml.etree.ElementTree as ElementTree

from junitparser import Error, Failure, JUnitXml, Skipped

# The order of a testcase's children, each with its required attributes and children.
CASE_CHILDREN = [
    ("failure", {"type"}, []),
    ("rerunFailure", {"type"}, ["stackTrace"]),
    ("flakyFailure", {"type"}, ["stackTrace"]),
    ("skipped", set(), []),
    ("error", {"type"}, []),
    ("rerunError", {"type"}, ["stackTrace"]),
    ("flakyError", {"type"}, ["stackTrace"]),
    ("system-out", set(), []),
    ("system-err", set(), []),
]
AT_MOST_ONCE = {"skipped", "error", "system-out", "system-err"}
RERUN_CHILDREN = ["stackTrace", "system-out", "system-err"]
SUREFIRE_TIME = re.compile(r"(([0-9]{0,3},)*[0-9]{3}|[0-9]{0,3})*(\.[0-9]{0,3})?")
SUITE_REQUIRED = {"name", "tests", "errors", "skipped", "failures"}


def broken(why):
    print(f"junit_reader: {why}", file=sys.stderr)
    sys.exit(1)


def check_time(element):
    time = element.get("time")
    if time is not None and not SUREFIRE_TIME.fullmatch(time):
        broken(f"<{element.tag}> time {time!r} is not a Surefire time")


def check_case(case):
    if "name" not in case.attrib or "time" not in case.attrib:
        broken("a <testcase> lacks its name or time")
    check_time(case)
    order = [name for name, _, _ in CASE_CHILDREN]
    position, seen = 0, set()
    for child in case:
        if child.tag not in order:
            broken(f"<testcase> holds a <{child.tag}>, which the schema has no place for")
        index = order.index(child.tag)
        if index < position:
            broken(f"<{child.tag}> comes after <{order[position]}>, against the schema's order")
        if child.tag in AT_MOST_ONCE and child.tag in seen:
            broken(f"<testcase> holds more than one <{child.tag}>")
        position = index
        seen.add(child.tag)
        _, required, children = CASE_CHILDREN[index]
        if not required <= set(child.attrib):
            broken(f"<{child.tag}> lacks {sorted(required - set(child.attrib))}")
        if children:
            names = [grandchild.tag for grandchild in child]
            if names[:1] != ["stackTrace"] or any(n not in RERUN_CHILDREN for n in names):
                broken(f"<{child.tag}> holds {names}, not a stackTrace then output")
        elif len(child):
            broken(f"<{child.tag}> holds elements; the schema gives it text only")


def main():
    path = sys.argv[1]
    root = ElementTree.parse(path).getroot()
    if root.tag != "testsuite":
        broken(f"the root is <{root.tag}>, not <testsuite>")
    if not SUITE_REQUIRED <= set(root.attrib):
        broken(f"<testsuite> lacks {sorted(SUITE_REQUIRED - set(root.attrib))}")
    check_time(root)
    for case in root.findall("testcase"):
        check_case(case)
    suite = JUnitXml.fromfile(path)
    cases = []
    for case in suite:
        kinds = {Failure: "failure", Error: "error", Skipped: "skipped"}
        results = [kinds.get(type(result), "other") for result in case.result]
        raw = next(c for c in root.findall("testcase") if c.get("name") == case.name)
        cases.append({
            "name": case.name,
            "time": case.time,
            "results": results,
            "message": case.result[0].message if case.result else None,
            "flaky": [element.get("message") for element in raw.findall("flakyFailure")],
            "reruns": [element.get("message") for element in raw.findall("rerunFailure")],
            "rerun_output": [element.findtext("system-out") for element in raw.findall("rerunFailure")],
            "flaky_output": [element.findtext("system-out") for element in raw.findall("flakyFailure")],
            "system_out": case.system_out,
            "system_err": case.system_err,
        })
    print(json.dumps({"tests": suite.tests, "failures": suite.failures, "errors": suite.errors,
                      "skipped": suite.skipped, "cases": cases}))


main()
