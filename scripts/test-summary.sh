#!/usr/bin/env bash
# Prints one line adding up the JUnit reports the last build wrote (surefire's and failsafe's, every module):
# tests, failures, errors and skipped, with the Java that ran them. Usage: scripts/test-summary.sh LABEL
set -euo pipefail
cd "$(dirname "$0")/.."
python3 - "$1" <<'PY'
import glob, sys, xml.etree.ElementTree as ET
totals = dict(tests=0, failures=0, errors=0, skipped=0)
javas = set()
for report in glob.glob("*/target/*-reports/TEST-*.xml"):
    suite = ET.parse(report).getroot()
    for key in totals:
        totals[key] += int(suite.get(key, 0))
    for prop in suite.iter("property"):
        if prop.get("name") == "java.version":
            javas.add(prop.get("value"))
print(f"{sys.argv[1]}: Java {', '.join(sorted(javas)) or '?'}: {totals['tests']} tests, {totals['failures']} failures, "
      f"{totals['errors']} errors, {totals['skipped']} skipped")
PY
