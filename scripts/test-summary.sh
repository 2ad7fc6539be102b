#!/usr/bin/env bash
# Prints one line adding up the JUnit reports the last build wrote (surefire's and failsafe's, every module):
# tests, failures, errors and skipped, with the Java that ran them. Usage: scripts/test-summary.sh LABEL
#
# It then fails the run (exit 1, each reason on a line of its own) where the reports show a check that CI relies on
# did not happen:
# - A test CI requires was skipped, or its class did not run at all: with GPUMEM_STUB_DRIVER=required, the classes
#   tagged stub-driver (@Tag(StubDriver.TAG) or @Tag("stub-driver")); with GPUMEM_BROWSER_TESTS=required, the classes
#   that read that variable (ViewerBrowserTest). The classes are found in */src/test/java, so a new one is covered
#   as soon as it carries the tag or reads the variable. A test disabled on the Java that runs it (JUnit's
#   "Disabled on JRE version", as @EnabledForJreRange says it) may skip: .ci/run runs the suite on each Java.
# - Fewer tests ran than scripts/test-count-baseline holds for the Java that ran them: one line per Java feature
#   version, "VERSION TESTS", the count of the reports' tests (skipped ones included, so that a machine without a
#   GPU or Chromium counts the same). A count above it passes with a line asking to raise it; a commit that removes
#   tests on purpose lowers it. A Java without a line fails, with the line to add.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 - "$1" <<'PY'
import glob, os, re, sys, xml.etree.ElementTree as ET

BASELINE = "scripts/test-count-baseline"
# Each variable CI sets to "required", and how a test class it governs says so in its source.
REQUIRED = {
    "GPUMEM_STUB_DRIVER": re.compile(r'@Tag\(\s*(StubDriver\.TAG|"stub-driver")\s*\)'),
    "GPUMEM_BROWSER_TESTS": re.compile(r'getenv\(\s*"GPUMEM_BROWSER_TESTS"\s*\)'),
}
# The skip of a test that is for other Java versions, which the required tests may have.
OTHER_JAVA = re.compile(r"^Disabled on JRE version: ")

totals = dict(tests=0, failures=0, errors=0, skipped=0)
javas = set()
cases = []
for report in sorted(glob.glob("*/target/*-reports/TEST-*.xml")):
    suite = ET.parse(report).getroot()
    for key in totals:
        totals[key] += int(suite.get(key, 0))
    for prop in suite.iter("property"):
        if prop.get("name") == "java.version":
            javas.add(prop.get("value"))
    for case in suite.iter("testcase"):
        skipped = case.find("skipped")
        reason = None if skipped is None else (skipped.get("message") or "no reason given")
        cases.append((case.get("classname", ""), case.get("name", ""), reason))
print(f"{sys.argv[1]}: Java {', '.join(sorted(javas)) or '?'}: {totals['tests']} tests, {totals['failures']} failures, "
      f"{totals['errors']} errors, {totals['skipped']} skipped")

problems = []
for variable, marker in REQUIRED.items():
    if os.environ.get(variable) != "required":
        continue
    classes = set()
    for source in glob.glob("*/src/test/java/**/*.java", recursive=True):
        with open(source, encoding="utf-8") as text:
            if marker.search(text.read()):
                classes.add(source.split("/src/test/java/", 1)[1][:-len(".java")].replace("/", "."))
    if not classes:
        problems.append(f"{variable}=required, but no test class in */src/test/java is marked for it")
    for name in sorted(classes):
        ran = [case for case in cases if case[0] == name or case[0].startswith(name + "$")]
        if not ran:
            problems.append(f"{variable}=required, but {name} did not run: no report names it")
        problems.extend(f"{variable}=required, but {case[0]}.{case[1]} was skipped: {case[2]}"
                        for case in ran if case[2] is not None and not OTHER_JAVA.match(case[2]))

features = sorted({version.split(".")[0] for version in javas})
if len(features) != 1:
    problems.append(f"the reports name {len(features)} Java versions ({', '.join(sorted(javas)) or 'none'}), not one: "
                    "remove */target/*-reports and run the build again")
else:
    baseline = {}
    with open(BASELINE, encoding="utf-8") as text:
        for line in text:
            fields = line.split("#", 1)[0].split()
            if fields:
                baseline[fields[0]] = int(fields[1])
    java, tests = features[0], totals["tests"]
    if java not in baseline:
        problems.append(f"{BASELINE} holds no count for Java {java}: add the line '{java} {tests}'")
    elif tests < baseline[java]:
        problems.append(f"{tests} tests ran on Java {java}, fewer than the {baseline[java]} of {BASELINE}: find the "
                        "tests that no longer run, or lower the count in the commit that removes them")
    elif tests > baseline[java]:
        print(f"{tests} tests ran on Java {java}, more than the {baseline[java]} of {BASELINE}: raise it to {tests}")

for problem in problems:
    print(f"FAILED: {problem}", file=sys.stderr)
sys.exit(1 if problems else 0)
PY
