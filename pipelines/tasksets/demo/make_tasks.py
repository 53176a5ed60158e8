"""Generate (or check) ``tasks.jsonl`` for the embedded demo task set.

Every task is one bug put into one of the clean libraries under ``repos/``. A bug is
written down here as text edits (file, old snippet, new snippet) plus the issue a user
would file about it. For each bug this script:

1. copies the clean repo to a temporary folder, applies the edits and takes the bug
   ``patch`` with ``git diff`` (so it is exactly what ``git apply`` expects);
2. checks that the patch applies with strict ``git apply`` to another clean copy;
3. runs the repo's pytest suite on the clean and on the bugged copy, and derives
   FAIL_TO_PASS (passes clean, fails bugged) and PASS_TO_PASS (passes in both);
4. refuses the task if the clean suite has any failure or if FAIL_TO_PASS is empty or
   larger than 5 tests;
5. takes each of the bug's other correct fixes (``ALT_FIXES``: edits of the bugged code) as a
   diff from the bugged copy and refuses it unless the whole suite passes with it (FAIL_TO_PASS
   and PASS_TO_PASS, as the gold fix) and it differs from the gold fix.

Rows are written in SWE-smith's schema (plus ``bug_kind`` and ``alt_fixes`` keys), in the order of
``BUGS``, so that a rerun on unchanged sources writes the same bytes.

    python pipelines/tasksets/demo/make_tasks.py            # write tasks.jsonl
    python pipelines/tasksets/demo/make_tasks.py --check    # fail if it is out of date
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPOS = HERE / "repos"
TASKS_FILE = HERE / "tasks.jsonl"

CREATED_AT = "2025-06-01T00:00:00"
MAX_FAIL_TO_PASS = 5
BUG_KINDS = (
    "boundary",
    "off-by-one",
    "wrong-operator",
    "missing-case",
    "wrong-exception",
    "state",
    "caching",
    "parsing",
    "logic",
)
SCHEMA_KEYS = (
    "instance_id",
    "repo",
    "patch",
    "FAIL_TO_PASS",
    "PASS_TO_PASS",
    "image_name",
    "problem_statement",
    "created_at",
    "base_commit",
    "bug_kind",
    "alt_fixes",
)
_IGNORED = shutil.ignore_patterns("__pycache__", ".pytest_cache", "*.pyc", ".git")


@dataclass(frozen=True)
class Edit:
    """Replace the one occurrence of ``old`` in ``path`` (relative to the repo root) with ``new``."""

    path: str
    old: str
    new: str


@dataclass(frozen=True)
class Bug:
    repo: str
    slug: str
    kind: str
    edits: tuple[Edit, ...]
    problem_statement: str

    @property
    def instance_id(self) -> str:
        return f"factory-demo__{self.repo}.{self.slug}"


class TaskError(Exception):
    """A bug definition that does not make a valid task."""


def _bug(repo: str, slug: str, kind: str, edits: list[Edit], statement: str) -> Bug:
    return Bug(repo, slug, kind, tuple(edits), statement.strip() + "\n")


BUGS: list[Bug] = [
    # ------------------------------------------------------------------ semverkit
    _bug(
        "semverkit",
        "caret-zero-minor",
        "missing-case",
        [
            Edit(
                "semverkit/ranges.py",
                "    if p.major > 0 or p.minor is None:\n"
                "        upper = Version(p.major + 1, 0, 0, _FLOOR)\n"
                "    elif p.minor > 0 or p.patch is None:\n"
                "        upper = Version(0, p.minor + 1, 0, _FLOOR)\n"
                "    else:\n"
                "        upper = Version(0, 0, p.patch + 1, _FLOOR)\n",
                "    if p.major > 0 or p.minor is None:\n"
                "        upper = Version(p.major + 1, 0, 0, _FLOOR)\n"
                "    else:\n"
                "        upper = Version(0, p.minor + 1, 0, _FLOOR)\n",
            )
        ],
        """
# Caret range `^0.0.3` accepts `0.0.4` and later patch releases

For versions below 0.1.0 a caret range is supposed to pin the exact patch release
(that is how npm and the README describe it: `^0.0.3` means `>=0.0.3 <0.0.4-0`).
semverkit lets any later `0.0.x` through, so our resolver happily picked up an
incompatible `0.0.9` of an experimental dependency.

```python
from semverkit import Range

r = Range("^0.0.3")
print(str(r))
print(r.contains("0.0.4"), r.contains("0.0.9"))
```

Actual output:

```
>=0.0.3 <0.1.0-0
True True
```

Expected output:

```
>=0.0.3 <0.0.4-0
False False
```

`^0.2.3` and `^1.2.3` behave as expected. semverkit 1.0.0, Python 3.11.
""",
    ),
    _bug(
        "semverkit",
        "hyphen-partial-upper",
        "boundary",
        [
            Edit(
                "semverkit/ranges.py",
                '    elif high.patch is None:\n        upper = Comparator("<", high.next_up())\n',
                '    elif high.patch is None:\n        upper = Comparator("<=", high.floor())\n',
            )
        ],
        """
# Hyphen range with a partial upper version excludes releases it should include

A hyphen range whose upper end leaves out the patch number should cover that whole
minor line: `1.2.3 - 2.3` is documented as `>=1.2.3 <2.4.0-0`. In semverkit it stops
at `2.3.0`, so `2.3.7` is rejected.

```python
from semverkit import Range

r = Range("1.2.3 - 2.3")
print(str(r))
print(r.contains("2.3.0"), r.contains("2.3.7"))
```

Actual output:

```
>=1.2.3 <=2.3.0
True False
```

Expected output:

```
>=1.2.3 <2.4.0-0
True True
```

With a full upper version (`1.2.3 - 2.3.4`) the result is correct.
""",
    ),
    _bug(
        "semverkit",
        "wildcard-error-type",
        "wrong-exception",
        [
            Edit(
                "semverkit/ranges.py",
                '            raise InvalidRange(f"{text!r} has a number after a wildcard in range {source!r}")\n',
                '            raise ValueError(f"{text!r} has a number after a wildcard in range {source!r}")\n',
            )
        ],
        """
# `Range("1.x.3")` raises a bare ValueError instead of InvalidRange

Our CLI validates user-supplied constraints with

```python
import semverkit

def check(text):
    try:
        semverkit.Range(text)
    except semverkit.InvalidRange as exc:
        return f"bad range: {exc}"
    return "ok"

print(check("1.2.3.4"))
print(check("1.x.3"))
```

The first call reports the problem as expected, the second one crashes:

```
bad range: '1.2.3.4' has more than three parts in range '1.2.3.4'
Traceback (most recent call last):
  ...
ValueError: '1.x.3' has a number after a wildcard in range '1.x.3'
```

The README says every range syntax error is a `semverkit.InvalidRange`; `*.1` fails
the same way. Expected: `bad range: '1.x.3' has a number after a wildcard ...`.
""",
    ),
    _bug(
        "semverkit",
        "prerelease-leak",
        "wrong-operator",
        [
            Edit(
                "semverkit/ranges.py",
                "    return any(c.version.prerelease and c.version.release == version.release for c in comparators)\n",
                "    return any(c.version.prerelease or c.version.release == version.release for c in comparators)\n",
            )
        ],
        """
# `^1.2.0` matches pre-releases of later versions such as `1.3.0-beta`

Pre-releases should only satisfy a range that mentions a pre-release of the same
`major.minor.patch` (unless `include_prerelease=True` is passed). Caret and tilde
ranges now let every pre-release through, so `max_satisfying` picks release
candidates we never asked for:

```python
from semverkit import Range, max_satisfying

print(Range("^1.2.0").contains("1.3.0-beta"))
print(Range("~1.2.0").contains("1.2.5-rc.1"))
print(max_satisfying(["1.2.0", "1.4.2", "1.5.0-rc.1"], "^1.2.0"))
```

Actual:

```
True
True
1.5.0-rc.1
```

Expected:

```
False
False
1.4.2
```

Plain `>=1.0.0` correctly rejects `1.4.0-rc.1`.
""",
    ),
    _bug(
        "semverkit",
        "prerelease-range-parse",
        "parsing",
        [
            Edit(
                "semverkit/ranges.py",
                '_HYPHEN_RE = re.compile(r"^(?P<low>\\S+)\\s+-\\s+(?P<high>\\S+)$")\n',
                '_HYPHEN_RE = re.compile(r"^(?P<low>\\S+)\\s*-\\s*(?P<high>\\S+)$")\n',
            )
        ],
        """
# Ranges that pin a pre-release cannot be parsed

Any range made of a single pre-release version is rejected:

```python
from semverkit import Range

Range("^1.2.3-beta.2")
```

```
semverkit.errors.InvalidRange: '^1.2.3' is not a version in range '^1.2.3-beta.2'
```

`Range("=1.2.3-rc.1")` and `Range("1.2.3-rc.1")` fail the same way (`'=1.2.3' is not a
version`, `'rc.1' is not a version`). Expected: `Range("^1.2.3-beta.2")` is `>=1.2.3-beta.2 <2.0.0-0` and contains
`1.2.3-beta.4`; `Range("=1.2.3-rc.1")` matches exactly `1.2.3-rc.1`. Ranges with a
pre-release next to another comparator (`>=1.0.0-rc.1 <2`) still work.
""",
    ),
    _bug(
        "semverkit",
        "bump-minor-prerelease",
        "logic",
        [
            Edit(
                "semverkit/version.py",
                '        if part == "minor":\n            if self.prerelease and self.patch == 0:\n',
                '        if part == "minor":\n            if self.prerelease:\n',
            )
        ],
        """
# `bump("minor")` on a patch pre-release does not move to the next minor

```python
from semverkit import Version

print(Version.parse("1.2.3-rc.1").bump("minor"))
print(Version.parse("1.3.0-rc.1").bump("minor"))
```

Actual:

```
1.2.3
1.3.0
```

Expected:

```
1.3.0
1.3.0
```

`1.2.3-rc.1` is a pre-release of a patch release, so the next minor is `1.3.0`
(that is what `npm version minor` does). Only a pre-release of the minor release
itself (`1.3.0-rc.1`) should simply lose its tag. Our release script uses this to
compute the next version and tagged the wrong one.
""",
    ),
    # ------------------------------------------------------------------ iniconf
    _bug(
        "iniconf",
        "error-line-last-value",
        "off-by-one",
        [
            Edit(
                "iniconf/parser.py",
                "                raise ParseError(str(exc), entry.lineno, lines[entry.lineno - 1], source) from None\n",
                "                raise ParseError(str(exc), entry.lineno, lines[entry.lineno], source) from None\n",
            )
        ],
        """
# Malformed value on the last line crashes `loads` with IndexError

When a value is malformed, `iniconf.loads` is supposed to raise `ParseError` with the
line number and the offending line. If the bad value is on the last line of the file,
it crashes instead:

```python
import iniconf

iniconf.loads('[a]\\nok = 1\\n\\nname = "unterminated\\n')
```

```
Traceback (most recent call last):
  ...
IndexError: list index out of range
```

Expected:

```
iniconf.errors.ParseError: <string>, line 4: unterminated string: "unterminated: 'name = "unterminated'
```

When the bad value is not on the last line the exception is raised, but the line
it quotes is wrong:

```python
try:
    iniconf.loads("[a]\\nxs = [1, 2\\nafter = 3\\n")
except iniconf.ParseError as exc:
    print(exc.lineno, repr(exc.line))
```

prints `2 'after = 3'`, expected `2 'xs = [1, 2'`.
""",
    ),
    _bug(
        "iniconf",
        "literal-string-comment",
        "parsing",
        [
            Edit(
                "iniconf/values.py",
                '        elif char in "\\"\'":\n            quote = char\n        elif char in "#;" and index > 0',
                '        elif char == \'"\':\n            quote = char\n        elif char in "#;" and index > 0',
            )
        ],
        """
# Comment marker inside a single-quoted value cuts the value off

Single-quoted (literal) strings should be taken verbatim, including ` #` and ` ;`.
Since we moved our paths to literal strings, loading fails:

```python
import iniconf

text = "[paths]\\nlogs = '/var/log/app ;old'   ; rotated weekly\\n"
print(iniconf.loads(text).get("paths", "logs"))
```

Actual:

```
iniconf.errors.ParseError: <string>, line 2: badly quoted string: '/var/log/app: "logs = '/var/log/app ;old'   ; rotated weekly"
```

Expected output:

```
/var/log/app ;old
```

The same value in double quotes (`"/var/log/app ;old"`) works.
""",
    ),
    _bug(
        "iniconf",
        "get-int-bool",
        "missing-case",
        [
            Edit(
                "iniconf/config.py",
                "            if isinstance(value, bool) or not isinstance(value, int):\n"
                "                return None\n"
                "            return value\n",
                "            if not isinstance(value, int):\n                return None\n            return value\n",
            )
        ],
        """
# `get_int` returns a boolean for `yes`/`on` values instead of raising ConversionError

```python
import iniconf

config = iniconf.loads("[app]\\nworkers = yes\\n")
print(repr(config.get_int("app", "workers")))
```

Actual output: `True` (and our pool then started a single worker).

Expected: `iniconf.ConversionError: [app] workers = True is not an integer`, the same
way `get_float` refuses booleans and `get_int` refuses `2.5` or `shop`.
""",
    ),
    _bug(
        "iniconf",
        "stale-interpolation",
        "state",
        [
            Edit(
                "iniconf/config.py",
                "        self._sections[section][key.lower()] = Entry(text)\n        self._cache.clear()\n",
                "        self._sections[section][key.lower()] = Entry(text)\n"
                "        self._cache.pop((section, key.lower()), None)\n",
            )
        ],
        """
# Values that reference a key keep the old value after `Config.set`

```python
import iniconf

config = iniconf.loads("[app]\\nname = shop\\n[urls]\\nhost = ${app:name}.example.org\\n")
print(config.get("urls", "host"))
config.set("app", "name", "store")
print(config.get("app", "name"))
print(config.get("urls", "host"))
```

Actual output:

```
shop.example.org
store
shop.example.org
```

Expected output:

```
shop.example.org
store
store.example.org
```

If `urls.host` is not read before the `set`, the new value shows up correctly.
`Config.remove` does not seem to have the problem.
""",
    ),
    _bug(
        "iniconf",
        "duration-suffix",
        "wrong-operator",
        [
            Edit(
                "iniconf/values.py",
                '    if not parts or "".join(number + unit for number, unit in parts) != compact:\n',
                '    if not parts and "".join(number + unit for number, unit in parts) != compact:\n',
            )
        ],
        """
# `get_duration` silently ignores a number without unit

A duration with a trailing number that has no unit is accepted and the number is
dropped, so a typo turned our 90 minute job timeout into one hour:

```python
import iniconf

config = iniconf.loads("[job]\\ntimeout = 1h30\\n")
print(config.get_duration("job", "timeout"))
print(iniconf.parse_duration("90s!"))
print(iniconf.parse_duration(""))
```

Actual output:

```
3600.0
90.0
0
```

Expected: `ConversionError: [job] timeout = '1h30' is not a duration`, and
`ValueError: not a duration: ...` for `"90s!"` and `""`, as for `"soon"`.
""",
    ),
    _bug(
        "iniconf",
        "shared-list",
        "state",
        [
            Edit(
                "iniconf/config.py",
                "        return list(value) if isinstance(value, list) else value\n",
                "        return value\n",
            )
        ],
        """
# Changing a list returned by `get_list` changes the configuration

```python
import iniconf

config = iniconf.loads('[app]\\ntags = [web, "blue green"]\\n')
tags = config.get_list("app", "tags")
tags.append("canary")
print(config.get("app", "tags"))
```

Actual output:

```
['web', 'blue green', 'canary']
```

Expected output:

```
['web', 'blue green']
```

The same happens with lists taken from `config.to_dict()` or `config["app"]["tags"]`:
a caller that adds to its own copy changes what every later caller reads.
""",
    ),
    # ------------------------------------------------------------------ cachebox
    _bug(
        "cachebox",
        "ttl-boundary",
        "boundary",
        [
            Edit(
                "cachebox/cache.py",
                "    return entry.expires_at is not None and now >= entry.expires_at\n",
                "    return entry.expires_at is not None and now > entry.expires_at\n",
            )
        ],
        """
# Entries are still served at the exact moment their TTL runs out

The docs say an entry is gone once `ttl` seconds have passed since it was set, but
a read exactly at that instant still returns the value:

```python
from cachebox import Cache, ManualClock

clock = ManualClock()
cache = Cache(ttl=60, clock=clock)
cache["token"] = "abc"
clock.advance(60)
print(cache.get("token"), "token" in cache)
```

Actual output: `abc True`

Expected output: `None False`

We hand out short-lived tokens with a TTL equal to their validity and occasionally
serve one that the upstream service already considers expired. `ttl_remaining`
reports `0.0` for such an entry instead of raising `KeyError`.
""",
    ),
    _bug(
        "cachebox",
        "stats-snapshot",
        "state",
        [
            Edit(
                "cachebox/cache.py",
                "        return dataclasses.replace(self._stats)\n",
                "        return self._stats\n",
            )
        ],
        """
# `Cache.stats()` snapshots keep changing after they are taken

We export cache statistics periodically and compute the difference to the previous
export, but the previous snapshot always equals the current one:

```python
from cachebox import Cache

cache = Cache()
cache["a"] = 1
before = cache.stats()
cache.get("a")
cache.get("b")
print(before.hits, before.misses)
```

Actual output: `1 1`

Expected output: `0 0` (the counters as they were when `stats()` was called; the
docstring says the snapshot does not change as the cache is used).
""",
    ),
    _bug(
        "cachebox",
        "peek-refreshes",
        "state",
        [
            Edit(
                "cachebox/cache.py",
                '        """The value for ``key`` without counting a lookup or refreshing its recency."""\n'
                "        entry = self._live_entry(key)\n",
                '        """The value for ``key`` without counting a lookup or refreshing its recency."""\n'
                "        entry = self._live_entry(key, touch=True)\n",
            )
        ],
        """
# `peek()` changes which entry gets evicted

`peek` is documented as a read that neither counts as a lookup nor refreshes the
entry's recency, but after peeking an entry the LRU order changes:

```python
from cachebox import Cache

cache = Cache(maxsize=2)
cache["a"] = 1
cache["b"] = 2
cache.peek("a")
cache["c"] = 3
print(cache.keys())
```

Actual output: `['a', 'c']`

Expected output: `['b', 'c']` (`a` is still the least recently used entry and should
be evicted). We use `peek` in a monitoring endpoint, and it keeps stale entries alive.
""",
    ),
    _bug(
        "cachebox",
        "memo-keyword-order",
        "caching",
        [
            Edit(
                "cachebox/memo.py",
                "        key += (_KEYWORDS, *sorted(kwargs.items()))\n",
                "        key += (_KEYWORDS, *kwargs.items())\n",
            )
        ],
        """
# memoize: same keyword arguments in another order miss the cache

```python
from cachebox import memoize

calls = []

@memoize
def price(item, currency):
    calls.append((item, currency))
    return 10

price(item="book", currency="EUR")
price(currency="EUR", item="book")
print(len(calls))
```

Actual output: `2`

Expected output: `1` — the README says keyword arguments are matched by name, and
`make_key((), {"a": 1, "b": 2}) == make_key((), {"b": 2, "a": 1})` should be true (it is
false now). Our callers build kwargs from dicts whose order varies, so the hit rate
is much lower than it should be.
""",
    ),
    _bug(
        "cachebox",
        "memo-none-result",
        "missing-case",
        [
            Edit(
                "cachebox/memo.py",
                "            value = store.get(entry_key, _MISSING)\n            if value is _MISSING:\n",
                "            value = store.get(entry_key)\n            if value is None:\n",
            )
        ],
        """
# memoize calls the function again every time it returned None

```python
from cachebox import memoize

calls = []

@memoize
def find_user(name):
    calls.append(name)
    return None  # not found

find_user("ghost")
find_user("ghost")
find_user("ghost")
print(len(calls), find_user.cache_stats().hits)
```

Actual output: `3 2`

Expected output: `1 2` — the docstring says results are cached even when they are
`None`. Lookups of unknown users hit our database on every request. Results such as
`0` or `""` are cached correctly.
""",
    ),
    _bug(
        "cachebox",
        "evicts-live-entry",
        "logic",
        [
            Edit(
                "cachebox/cache.py",
                "        # Expired entries go first, so that a live entry is never evicted to make room\n"
                "        # that an expired one could have given.\n"
                "        self.expire()\n",
                "",
            )
        ],
        """
# A full cache evicts a live entry while an expired one is still stored

```python
from cachebox import Cache, ManualClock

clock = ManualClock()
cache = Cache(maxsize=2, clock=clock, on_evict=lambda k, v, why: print("evicted", k, why))
cache["config"] = {"debug": False}          # no TTL
cache.set("session", "s3cr3t", ttl=5)
clock.advance(6)                             # "session" has expired
cache["user"] = "ada"
print(cache.keys())
```

Actual output:

```
evicted config capacity
evicted session expired
['user']
```

Expected output:

```
evicted session expired
['config', 'user']
```

The expired entry should make room before any live entry is evicted; the cache ends up
with fewer entries than `maxsize` allows and `stats().evictions` counts an eviction
that was not needed.
""",
    ),
]


# ---------------------------------------------------------------------- running pytest


def _clean_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "GIT_"))}
    env.update(
        PYTHONDONTWRITEBYTECODE="1",
        PYTHONHASHSEED="0",
        GIT_CONFIG_NOSYSTEM="1",
        HOME=tempfile.gettempdir(),
    )
    env.pop("PYTHONPATH", None)
    return env


def _run(cmd: list[str], cwd: Path, check: bool = True) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(
        cmd, cwd=cwd, env=_clean_env(), capture_output=True, text=True, timeout=300
    )
    if check and result.returncode != 0:
        raise TaskError(f"{' '.join(cmd)} failed in {cwd}:\n{result.stdout}\n{result.stderr}")
    return result


def junit_key(node_id: str) -> tuple[str, str]:
    """The (classname, name) pair under which pytest's junitxml reports ``node_id``."""
    path, bracket, params = node_id.partition("[")
    names = path.split("::")
    names[0] = names[0].replace("/", ".").removesuffix(".py")
    names[-1] += bracket + params
    return ".".join(names[:-1]), names[-1]


def collect(python: str, repo: Path) -> list[str]:
    """The node ids of the repo's suite, in collection order."""
    result = _run(
        [python, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", "tests"], repo
    )
    ids = [
        line.strip()
        for line in result.stdout.splitlines()
        if "::" in line and not line.startswith(" ")
    ]
    if len({junit_key(i) for i in ids}) != len(ids):
        raise TaskError(f"{repo.name}: two tests share a junit name; rename them")
    return ids


def run_suite(python: str, repo: Path, node_ids: list[str]) -> dict[str, str]:
    """Outcome (passed, failed, error, skipped, missing) of every id in ``node_ids``."""
    report = repo / ".junit.xml"
    _run(
        [python, "-m", "pytest", "-p", "no:cacheprovider", "-q", f"--junitxml={report}", "tests"],
        repo,
        check=False,
    )
    if not report.exists():
        raise TaskError(f"pytest wrote no report in {repo}")
    outcomes: dict[tuple[str, str], str] = {}
    for case in ET.parse(report).getroot().iter("testcase"):
        status = "passed"
        for child in case:
            if child.tag in ("failure", "error", "skipped"):
                status = {"failure": "failed"}.get(child.tag, child.tag)
        outcomes[(case.get("classname", ""), case.get("name", ""))] = status
    report.unlink()
    return {node_id: outcomes.get(junit_key(node_id), "missing") for node_id in node_ids}


# ---------------------------------------------------------------------- building tasks


def _alt(path: str, *pairs: tuple[str, str]) -> tuple[Edit, ...]:
    return tuple(Edit(path, old, new) for old, new in pairs)


# Other correct fixes, by slug: edits of the bugged code (``old`` is what the bug left). Each is
# checked like the gold fix; the scripted teacher solves with any of them, so runs of one task
# end in different patches.
ALT_FIXES: dict[str, list[tuple[Edit, ...]]] = {
    "ttl-boundary": [_alt("cachebox/cache.py", ("and now > entry.expires_at\n", "and not now < entry.expires_at\n"))],
    "peek-refreshes": [_alt("cachebox/cache.py", (
        '        """The value for ``key`` without counting a lookup or refreshing its recency."""\n'
        "        entry = self._live_entry(key, touch=True)\n",
        '        """The value for ``key`` without counting a lookup or refreshing its recency."""\n'
        "        entry = self._live_entry(key, touch=False)\n"))],
    "stats-snapshot": [_alt("cachebox/cache.py", (
        "        return self._stats\n", "        return CacheStats(**dataclasses.asdict(self._stats))\n"))],
    "memo-keyword-order": [
        _alt("cachebox/memo.py", ("*kwargs.items())", "*sorted(kwargs.items(), key=lambda item: item[0]))")),
        _alt("cachebox/memo.py", ("key += (_KEYWORDS, *kwargs.items())", "key += (_KEYWORDS, tuple(sorted(kwargs.items())))")),
    ],
    "shared-list": [
        _alt("iniconf/config.py", ("        value = self._resolve(section, key.lower(), ())\n        return value\n",
                                   "        value = self._resolve(section, key.lower(), ())\n"
                                   "        return value[:] if isinstance(value, list) else value\n")),
        _alt("iniconf/config.py", ("        value = self._resolve(section, key.lower(), ())\n        return value\n",
                                   "        value = self._resolve(section, key.lower(), ())\n"
                                   "        if isinstance(value, list):\n            return [*value]\n        return value\n")),
    ],
    "get-int-bool": [_alt("iniconf/config.py", ("            if not isinstance(value, int):\n",
                                                "            if type(value) is not int:\n"))],
    "duration-suffix": [_alt("iniconf/values.py", (
        '    if not parts and "".join(number + unit for number, unit in parts) != compact:\n',
        '    if not (parts and "".join(number + unit for number, unit in parts) == compact):\n'))],
    "prerelease-leak": [_alt("semverkit/ranges.py", (
        "c.version.prerelease or c.version.release == version.release",
        "c.version.release == version.release and bool(c.version.prerelease)"))],
    "wildcard-error-type": [_alt("semverkit/ranges.py", (
        '            raise ValueError(f"{text!r} has a number after a wildcard in range {source!r}")\n',
        '            raise InvalidRange(f"{text!r} has a number after a wildcard in range {source!r}")  # not ValueError\n'))],
}


def copy_repo(name: str, dest: Path) -> Path:
    target = dest / name
    shutil.copytree(REPOS / name, target, ignore=_IGNORED)
    return target


def make_patch(bug: Bug, workdir: Path, edits: tuple[Edit, ...] | None = None, start: str = "") -> str:
    """Apply ``bug``'s edits (or ``edits``, on top of the ``start`` patch) to a fresh copy under
    ``workdir`` and return ``git diff``."""
    repo = copy_repo(bug.repo, workdir)
    if start:
        apply_patch(start, repo)
    _run(["git", "init", "-q"], repo)
    _run(["git", "add", "-A"], repo)
    for edit in bug.edits if edits is None else edits:
        path = repo / edit.path
        text = path.read_text(encoding="utf-8")
        count = text.count(edit.old)
        if count != 1:
            raise TaskError(
                f"{bug.instance_id}: snippet found {count} times in {edit.path}, expected once"
            )
        path.write_text(text.replace(edit.old, edit.new), encoding="utf-8")
    diff = _run(
        [
            "git",
            "-c",
            "diff.noprefix=false",
            "-c",
            "diff.mnemonicprefix=false",
            "diff",
            "--no-color",
            "--no-ext-diff",
        ],
        repo,
    ).stdout
    if not diff.endswith("\n") or not diff.startswith("diff --git a/"):
        raise TaskError(f"{bug.instance_id}: the edits produced no diff")
    shutil.rmtree(repo / ".git")
    return diff


def apply_patch(patch: str, repo: Path) -> None:
    """Apply ``patch`` to ``repo`` with strict ``git apply`` (no fuzz, no offsets on whitespace)."""
    subprocess.run(
        ["git", "apply", "--whitespace=nowarn", "-"],
        cwd=repo,
        input=patch,
        text=True,
        check=True,
        capture_output=True,
        env=_clean_env(),
    )


def build_task(bug: Bug, python: str, clean: dict[str, dict[str, str]]) -> dict:
    if bug.kind not in BUG_KINDS:
        raise TaskError(f"{bug.instance_id}: unknown bug kind {bug.kind!r}")
    if any(Path(e.path).parts[0] == "tests" for e in bug.edits):
        raise TaskError(f"{bug.instance_id}: a bug must not touch the tests")
    with tempfile.TemporaryDirectory(prefix="demo-task-") as tmp:
        workdir = Path(tmp)
        patch = make_patch(bug, workdir / "bugged")
        repo = copy_repo(bug.repo, workdir / "applied")
        apply_patch(patch, repo)
        node_ids = list(clean[bug.repo])
        bugged = run_suite(python, repo, node_ids)
        alt_fixes = [alt_fix(bug, i, edits, patch, python, node_ids, workdir)
                     for i, edits in enumerate(ALT_FIXES.get(bug.slug, ()))]
    before = clean[bug.repo]
    fail_to_pass = [i for i in node_ids if bugged[i] != "passed"]
    pass_to_pass = [i for i in node_ids if bugged[i] == "passed"]
    if not fail_to_pass:
        raise TaskError(f"{bug.instance_id}: the bug breaks no test")
    if len(fail_to_pass) > MAX_FAIL_TO_PASS:
        raise TaskError(
            f"{bug.instance_id}: the bug breaks {len(fail_to_pass)} tests, more than {MAX_FAIL_TO_PASS}"
        )
    assert all(before[i] == "passed" for i in node_ids)
    return {
        "instance_id": bug.instance_id,
        "repo": f"factory-demo/{bug.repo}",
        "patch": patch,
        "FAIL_TO_PASS": fail_to_pass,
        "PASS_TO_PASS": pass_to_pass,
        "image_name": f"factory/demo.{bug.repo}:v1",
        "problem_statement": bug.problem_statement,
        "created_at": CREATED_AT,
        "base_commit": None,
        "bug_kind": bug.kind,
        "alt_fixes": alt_fixes,
    }


def alt_fix(bug: Bug, i: int, edits: tuple[Edit, ...], patch: str, python: str, node_ids: list[str],
            workdir: Path) -> str:
    """Another correct fix of ``bug``: a diff from the bugged code under which the suite passes."""
    fix = make_patch(bug, workdir / f"alt{i}", edits, start=patch)
    repo = copy_repo(bug.repo, workdir / f"alt{i}-applied")
    apply_patch(patch, repo)
    apply_patch(fix, repo)
    if all((repo / e.path).read_bytes() == (REPOS / bug.repo / e.path).read_bytes() for e in edits):
        raise TaskError(f"{bug.instance_id}: alt fix {i} restores the clean code: it is the gold fix")
    failed = {t: s for t, s in run_suite(python, repo, node_ids).items() if s != "passed"}
    if failed:
        raise TaskError(f"{bug.instance_id}: alt fix {i} does not fix it: {failed}")
    return fix


def clean_outcomes(python: str, repos: list[str]) -> dict[str, dict[str, str]]:
    """Run each clean suite once; refuse any repo whose clean suite is not all green."""
    results = {}
    for name in repos:
        with tempfile.TemporaryDirectory(prefix="demo-clean-") as tmp:
            repo = copy_repo(name, Path(tmp))
            node_ids = collect(python, repo)
            outcomes = run_suite(python, repo, node_ids)
        bad = {i: s for i, s in outcomes.items() if s != "passed"}
        if bad:
            raise TaskError(f"{name}: the clean suite does not pass: {bad}")
        results[name] = outcomes
    return results


def build_all(python: str, only: set[str] | None = None) -> list[dict]:
    ids = [b.instance_id for b in BUGS]
    if len(set(ids)) != len(ids):
        raise TaskError("two bugs share an instance id")
    unknown = set(ALT_FIXES) - {b.slug for b in BUGS}
    if unknown:
        raise TaskError(f"ALT_FIXES names no bug: {sorted(unknown)}")
    bugs = [b for b in BUGS if not only or b.instance_id in only or b.slug in only]
    clean = clean_outcomes(python, sorted({b.repo for b in bugs}))
    rows = []
    for bug in bugs:
        row = build_task(bug, python, clean)
        print(
            f"{bug.instance_id:55} {bug.kind:16} F2P={len(row['FAIL_TO_PASS'])} P2P={len(row['PASS_TO_PASS'])}",
            file=sys.stderr,
        )
        rows.append(row)
    return rows


def render(rows: list[dict]) -> str:
    return "".join(json.dumps({k: row[k] for k in SCHEMA_KEYS}) + "\n" for row in rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--check", action="store_true", help="fail if tasks.jsonl is not what this script writes"
    )
    parser.add_argument(
        "--only", nargs="*", help="build only these instance ids or slugs (prints, never writes)"
    )
    parser.add_argument(
        "--python", default=sys.executable, help="interpreter whose pytest runs the suites"
    )
    args = parser.parse_args(argv)
    try:
        rows = build_all(args.python, set(args.only) if args.only else None)
    except TaskError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    text = render(rows)
    if args.only:
        sys.stdout.write(text)
        return 0
    if args.check:
        current = TASKS_FILE.read_text(encoding="utf-8") if TASKS_FILE.exists() else ""
        if current != text:
            print(f"{TASKS_FILE} is out of date: rerun {Path(__file__).name}", file=sys.stderr)
            return 1
        print(f"{TASKS_FILE.name} is up to date ({len(rows)} tasks)", file=sys.stderr)
        return 0
    TASKS_FILE.write_text(text, encoding="utf-8")
    print(f"wrote {len(rows)} tasks to {TASKS_FILE}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
