#!/bin/sh
# Compile the sources and tests, run them with JUnit 5's console launcher; JUnit XML lands in build/test-reports.
set -e
JUNIT="${JUNIT_CONSOLE:-/usr/share/java/junit-platform-console-standalone.jar}"
rm -rf build && mkdir -p build/classes
javac -nowarn -encoding UTF-8 -d build/classes -cp "$JUNIT" $(find src -name '*.java' | sort)
exec java -jar "$JUNIT" --disable-banner --details=none --disable-ansi-colors \
  --class-path build/classes --scan-class-path --reports-dir build/test-reports
