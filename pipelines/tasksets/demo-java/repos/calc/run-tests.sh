#!/bin/sh
# Compile the sources and tests outside the repo, run them with JUnit 5's console launcher: its
# JUnit XML goes to $REPORT_DIR (the verifier's; build/test-reports when run by hand).
set -e
JUNIT="${JUNIT_CONSOLE:-/usr/share/java/junit-platform-console-standalone.jar}"
CLASSES="${TMPDIR:-/tmp}/calc-classes"
rm -rf "$CLASSES" && mkdir -p "$CLASSES"
javac -nowarn -encoding UTF-8 -d "$CLASSES" -cp "$JUNIT" $(find src -name '*.java' | sort)
exec java -jar "$JUNIT" --disable-banner --details=none --disable-ansi-colors \
  --class-path "$CLASSES" --scan-class-path --reports-dir "${REPORT_DIR:-build/test-reports}"
