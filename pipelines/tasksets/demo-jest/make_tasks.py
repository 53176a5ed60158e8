"""Generate (or check) tasks.jsonl of the jest demo task set: pipelines/tasksets/langtasks.py."""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from langtasks import Bug, Edit, TaskSet, main  # noqa: E402

BUGS = [
    Bug("fractional-amounts", "parsing", """
`parse` drops the fraction of an amount

`tempo.parse('1.5h')` returns `3600000` (one hour) and `tempo.parse('.5s')` returns `NaN`.
The README says `1.5h` is an hour and a half, `5400000` ms.
""", [Edit("lib/parse.js", "total += Number.parseFloat(amount) * BY_NAME.get(unit);",
           "total += Number.parseInt(amount, 10) * BY_NAME.get(unit);")]),
    Bug("negative-format-sign", "missing-case", """
`format` loses the minus of a negative duration

`tempo.format(-120000)` gives `'2m'`; it should be `'-2m'`, so that `format(parse('-2m'))`
reads back as it was written.
""", [Edit("lib/format.js", "const sign = ms < 0 ? '-' : '';", "const sign = '';")]),
    Bug("largest-off-by-one", "off-by-one", """
`largest` keeps one unit too many

`tempo.format(90061001, { largest: 2 })` returns `'1d 1h 1m'`, three units. `largest: n` should
keep the n largest units that are not zero: `'1d 1h'`.
""", [Edit("lib/format.js", "parts.slice(0, options.largest)", "parts.slice(0, options.largest + 1)")]),
    Bug("week-length", "wrong-constant", """
A week is counted as 7 × 24 minutes

`tempo.format(604800000)` (seven days) gives `'60w'` instead of `'1w'`, and
`tempo.format(90061001)` starts with `8w`: the length of a week is off.
""", [Edit("lib/units.js", "['w', 7 * 24 * 60 * 60 * 1000],", "['w', 7 * 24 * 60 * 1000],")]),
]

TASKSET = TaskSet(
    folder=HERE,
    repo="tempo",
    language="javascript",
    tests={"framework": "command",
           "command": "jest --ci --watchman=false --json --outputFile=$REPORT_DIR/jest-report.json",
           "results": "jest-json", "report": "jest-report.json"},
    image="factory/demo-jest.tempo:v1",
    bugs=BUGS,
)

if __name__ == "__main__":
    main(TASKSET)
