"""Generate (or check) tasks.jsonl of the Go demo task set: pipelines/tasksets/langtasks.py."""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from langtasks import Bug, Edit, TaskSet, main  # noqa: E402

BUGS = [
    Bug("caret-zero-minor", "missing-case", """
Caret constraint `^0.0.3` accepts `0.0.4` and `0.1.0`

For a 0.0.x version the caret should pin the exact patch (npm: `^0.0.3` is `>=0.0.3 <0.0.4`),
since every 0.0.x release may break. With semver `ParseConstraint("^0.0.3")`, `Check` returns
true for `0.0.4` and even `0.1.0`. `^0.2.3` behaves correctly (`<0.3.0`).
""", [Edit("constraint.go", """\tcase lo.Minor > 0 || len(p.parts) == 2:
\t\thi = Version{Minor: lo.Minor + 1}
\tdefault:
\t\thi = Version{Patch: lo.Patch + 1}
""", """\tdefault:
\t\thi = Version{Minor: lo.Minor + 1}
""")]),
    Bug("numeric-prerelease-order", "wrong-operator", """
Pre-release `alpha.10` sorts before `alpha.2`

SemVer 2.0.0 (§11.4.1) says identifiers made of digits compare numerically, but
`MustParse("1.0.0-alpha.2").Compare(MustParse("1.0.0-alpha.10"))` returns 1, so sorting the
spec's own example list puts `1.0.0-beta.11` before `1.0.0-beta.2`.
""", [Edit("version.go", """\t\t\txi, _ := strconv.ParseUint(x, 10, 64)
\t\t\tyi, _ := strconv.ParseUint(y, 10, 64)
\t\t\treturn cmp(xi, yi)
""", """\t\t\treturn strings.Compare(x, y)
""")]),
    Bug("bump-minor-prerelease", "logic", """
`Bump("minor")` on a patch pre-release stays on the same minor

`MustParse("1.2.4-rc.1").Bump("minor")` gives `1.2.4`, but a minor bump must move to the next
minor, `1.3.0`; only a pre-release of a minor (`1.3.0-rc.1`) is released in place by it.
""", [Edit("version.go", """\t\tif !pre || v.Patch != 0 {
\t\t\tn.Minor, n.Patch = v.Minor+1, 0""", """\t\tif !pre {
\t\t\tn.Minor, n.Patch = v.Minor+1, 0""")]),
    Bug("hyphen-partial-upper", "boundary", """
Hyphen range with a partial upper version excludes releases it should include

`ParseConstraint("1.2.3 - 2.3")` should allow every 2.3.x (npm: `>=1.2.3 <2.4.0`), but
`Check(MustParse("2.3.9"))` is false: only `2.3.0` itself is accepted at the top.
""", [Edit("constraint.go", """\treturn []comparator{{">=", a.floor()}, {"<", b.ceiling()}}, nil""",
           """\treturn []comparator{{">=", a.floor()}, {"<=", b.floor()}}, nil""")]),
    Bug("prerelease-leak", "missing-case", """
`^1.2.0` matches pre-releases such as `1.3.0-beta`

A constraint should only match a pre-release when one of its comparators names a pre-release
of the same version; otherwise `Max` picks release candidates nobody asked for. Since the last
change `ParseConstraint("^1.2.0").Check(MustParse("1.3.0-beta"))` is true, and `Max` over
`1.4.1, 1.5.0-rc.1` returns the release candidate.
""", [Edit("constraint.go", """\t\tif all(r, v) && preAllowed(r, v) {""", """\t\tif all(r, v) {""")]),
    Bug("leading-zero", "parsing", """
`Parse("01.2.3")` succeeds

SemVer forbids leading zeros in numeric parts ("1.02.3" is not a version), and the README says
Parse validates. `Parse("01.2.3")` returns 1.2.3 with no error, and `ParseConstraint("^01.2")`
is accepted as well.
""", [Edit("version.go", """\tif len(p) > 1 && p[0] == '0' {
\t\treturn 0, fmt.Errorf("leading zero in %q", p)
\t}
""", "")]),
]

TASKSET = TaskSet(
    folder=HERE,
    repo="semver",
    language="go",
    tests={"framework": "command", "command": "go test -json ./...", "results": "go-json", "report": ""},
    image="factory/demo-go.semver:v1",
    bugs=BUGS,
)

if __name__ == "__main__":
    main(TASKSET)
