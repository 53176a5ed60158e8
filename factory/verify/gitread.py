"""How git reads a patch, asked next to the start state: the input of the diff policy.

One script lists every section as `git apply` will apply it: `--numstat -z` gives, per
section, the name `--exclude` matches (the new path, or the old one of a deletion) and
whether it is binary; the same list reversed gives the other name of a rename or copy (git
lists reversed patches in reverse order). It also lists the files of the start commit
(HEAD) with their modes and the symlinks in the work tree. Git is the factory's own
(`factory.sandbox.git`: its git dir, its configuration, no system or global file, no home),
so nothing in the image or the repo changes how it reads. The same script runs on the host
in tests, against a checkout of a start state.

A second probe asks the image's test interpreter (in the task's test environment) which
top-level names it imports and what its sys.path is.
"""

from __future__ import annotations

import base64
import json
import re
import shlex
from collections.abc import Iterable
from dataclasses import dataclass, field

from factory.protocols import Sandbox
from factory.sandbox.git import GIT
from factory.verify import sections
from factory.verify.policy import Change

PATCH = "/tmp/factory-policy/agent.patch"
OUT = "/tmp/factory-policy"
PARTS = ("status", "forward", "reverse", "error", "tree", "links", "strip")
LINK_MODES = (b"120000", b"160000")
PROBE = r"""
import contextlib, io, json, os, pkgutil, sys, tempfile
names = set(sys.builtin_module_names) | set(getattr(sys, 'stdlib_module_names', ()))
names.update(m[1] for m in pkgutil.iter_modules())
path = list(sys.path)


class Asked(object):
    # every top-level name pytest looks for as it starts, found or not (copy.py asks for org.python.core)
    def find_spec(self, fullname, path=None, target=None):
        names.add(fullname.partition('.')[0])


sys.meta_path.insert(0, Asked())
os.environ['PYTEST_DISABLE_PLUGIN_AUTOLOAD'] = '1'
empty = tempfile.mkdtemp()
with open(os.path.join(empty, 'pytest.ini'), 'w') as fh:
    fh.write('[pytest]\n')
try:
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        import pytest
        pytest.main(['--co', '-q', '-p', 'no:cacheprovider', '-c', os.path.join(empty, 'pytest.ini'), empty])
except BaseException:
    pass
names.discard('')
print('factory-interpreter ' + json.dumps({'names': sorted(names), 'path': path}))
"""
"""What the test interpreter imports (built-in and standard-library names, every top-level name
on its path) and what pytest asks for as it starts, found or not: a new module under any of
those names would be run. Python 3.6+: the conda environments of older SWE-bench images run it."""


@dataclass
class Listing:
    changes: list[Change] = field(default_factory=list)
    error: str | None = None
    """Why git cannot read the patch (it would not apply it either), or None."""
    files: frozenset[str] = frozenset()
    links: frozenset[str] = frozenset()
    strip: str = "-p1"
    """git apply's -p for this patch (`-p0` for one made with --no-prefix)."""
    records: list[tuple[bytes, bytes]] = field(default_factory=list)
    """git's numstat record of each change, listed forward and reversed: what the cut patch
    that leaves some out must list again (`apply_files`)."""
    zero_context: bool = False
    """The patch has hunks without context (`git diff -U0`): applied with `--unidiff-zero`."""


@dataclass(frozen=True)
class Interpreter:
    importable: frozenset[str]
    sys_path: tuple[str, ...]


def listing_script(patch: str, out: str = OUT, git: str = GIT, unprefixed: bool = False, zero_context: bool = False) -> str:
    """Shell, run at the repo root: the listing of the patch file `patch`, framed in `out`/all.

    `git` is the prefix of a factory git call whose index holds the start state. The leading
    path part git strips is one (a/, i/, w/ ...), as git does by default; for a patch that may
    have been made with --no-prefix (`unprefixed`), none where only that applies. Either way the
    listing and the apply strip alike (`Listing.strip`)."""
    p, o = shlex.quote(patch), shlex.quote(out)
    check = f"{git} apply --check" + (" --unidiff-zero" if zero_context else "")
    fallback = f" || {{ {check} -p0 {p} 2>/dev/null && s=-p0; }}" if unprefixed else ""
    strip = f"s=-p1; {{ {check} -p1 {p} 2>/dev/null{fallback}; }}; printf %s $s > {o}/strip; "
    return (
        f"mkdir -p {o} && for f in {' '.join(PARTS)}; do : > {o}/$f; done && {strip}"
        f"{{ {git} apply --numstat -z $s {p} > {o}/forward && "
        f"{git} apply --numstat -z -R $s {p} > {o}/reverse; }} 2> {o}/error; echo $? > {o}/status; "
        f"{git} ls-tree -r -z --full-tree HEAD > {o}/tree 2>> {o}/error; "
        f"find . -path ./.git -prune -o -type l -print0 > {o}/links 2>/dev/null; "
        # framed by two processes, not two per part: every size first (one `wc` line each, then its
        # total line), then the parts back to back
        f"(cd {o} && wc -c {' '.join(PARTS)} && cat {' '.join(PARTS)}) > {o}/all"
    )


def parse_listing(blob: bytes) -> Listing:
    *counts, _total, blob = blob.split(b"\n", len(PARTS) + 1)
    parts: dict[str, bytes] = {}
    for name, count in zip(PARTS, counts, strict=True):
        size, counted = count.split()
        if counted.decode() != name:
            raise ValueError(f"the listing's sizes are out of order: {count!r}")
        parts[name], blob = blob[: int(size)], blob[int(size):]
    files: set[str] = set()
    links = {_decode(p).removeprefix("./") for p in _records(parts["links"])}
    for record in _records(parts["tree"]):
        meta, _, path = record.partition(b"\t")
        files.add(_decode(path))
        if meta.split(b" ")[0] in LINK_MODES:
            links.add(_decode(path))
    strip = parts["strip"].decode(errors="replace")
    listing = Listing(files=frozenset(files), links=frozenset(links), strip=strip if strip in ("-p0", "-p1") else "-p1")
    if parts["status"].strip() != b"0":
        listing.error = parts["error"].decode(errors="replace").strip()[-1000:] or "git apply failed"
        return listing
    forward_records, reverse_records = _records(parts["forward"]), _records(parts["reverse"])[::-1]
    forward, reverse = [_numstat(r) for r in forward_records], [_numstat(r) for r in reverse_records]
    if len(forward) != len(reverse) or any(f[1] != r[1] for f, r in zip(forward, reverse, strict=False)):
        listing.error = "git lists the patch differently when reversed"
        return listing
    listing.changes = [Change(path, None if old == path else old, binary) for (path, binary), (old, _) in zip(forward, reverse, strict=True)]
    listing.records = list(zip(forward_records, reverse_records, strict=True))
    return listing


def _records(data: bytes) -> list[bytes]:
    return [r for r in data.split(b"\0") if r]


def _numstat(record: bytes) -> tuple[str, bool]:
    added, _, rest = record.partition(b"\t")
    _deleted, _, name = rest.partition(b"\t")
    return _decode(name), added == b"-"


def _decode(raw: bytes) -> str:
    return raw.decode("utf-8", "surrogateescape")


def apply_files(patch: str, listing: Listing, excluded: Iterable[str], out: str = OUT) -> dict[str, bytes]:
    """What `apply_script` reads when the policy leaves sections out, as files: never on a command
    line, whatever their number. The patch cut without them (`sections.split`) with the numstat
    git must list for it (the kept sections' own records), when the cut has as many sections as
    git listed; and the names left out, NUL-separated, for `--exclude` should the cut not be git's."""
    excluded = set(excluded)
    if not excluded:
        return {}
    files = {f"{out}/excludes": b"".join(_literal(p).encode("utf-8", "surrogateescape") + b"\0" for p in sorted(excluded))}
    pieces = sections.split(patch)
    if len(pieces) == len(listing.changes) == len(listing.records):
        kept = [i for i, change in enumerate(listing.changes) if change.path not in excluded]
        files[f"{out}/kept.patch"] = "".join(pieces[i] for i in kept).encode()
        files[f"{out}/kept.forward"] = b"".join(listing.records[i][0] + b"\0" for i in kept)
        files[f"{out}/kept.reverse"] = b"".join(listing.records[i][1] + b"\0" for i in reversed(kept))
    return files


def apply_script(patch: str, errors: str, failed: int, *, files: Iterable[str] = (), out: str = OUT, git: str = GIT,
                 strip: str = "-p1", zero_context: bool = False, misplaced: int = 0) -> str:
    """Shell (bash) applying exactly the sections of `patch` the policy kept, or exiting `failed`
    with git's errors printed. With `files` (`apply_files`) sections are left out: by the cut
    patch when git lists it as the kept sections alone, else by `--exclude`. A patch with hunks
    without context is applied with `--unidiff-zero`, and exits `misplaced` if a hunk did not
    apply at the line it names (git would search for its lines elsewhere: context-less, they
    may be found in another function)."""
    files = set(files)
    p, e, k = shlex.quote(patch), shlex.quote(errors), shlex.quote(f"{out}/kept")
    lines = [f"target={p}; ex=()"]
    if f"{out}/excludes" in files:
        read = f'while IFS= read -r -d "" x; do ex+=("--exclude=$x"); done < {shlex.quote(out + "/excludes")}'
        if f"{out}/kept.patch" in files:
            listed = [f"{git} apply --numstat -z {flag}{strip} {k}.patch 2>/dev/null | cmp -s - {k}.{name}"
                      for flag, name in (("", "forward"), ("-R ", "reverse"))]
            read = f"if {' && '.join(listed)}; then target={k}.patch; else {read}; fi"
        lines.append(read)
    options = f"--whitespace=nowarn {strip}" + (" --unidiff-zero -v" if zero_context else "")
    lines.append(f'{git} apply {options} "${{ex[@]}}" "$target" 2> {e} || {{ cat {e}; exit {failed}; }}')
    if zero_context:
        lines.append(f"if grep -q '^Hunk #[0-9]* succeeded at [0-9]* (offset' {e}; then cat {e}; exit {misplaced}; fi")
    return "\n".join(lines)


def _literal(path: str) -> str:
    """A wildmatch pattern that matches `path` alone."""
    return re.sub(r"([\\*?\[])", r"\\\1", path)


def probe_command(test_cmd: str | None) -> str:
    prefix = f"{test_cmd}; " if test_cmd else ""
    return f"{prefix}exec python3 -I -c {shlex.quote(PROBE)}"


def parse_probe(output: str) -> Interpreter | None:
    for line in reversed(output.splitlines()):
        if line.startswith("factory-interpreter "):
            data = json.loads(line.split(" ", 1)[1])
            return Interpreter(frozenset(data["names"]), tuple(data["path"]))
    return None


def printed_listing_script(patch: str = PATCH, unprefixed: bool = False, zero_context: bool = False) -> str:
    """Shell, run at the repo root at the start state: the listing of `patch`, printed base64."""
    return f"{listing_script(patch, unprefixed=unprefixed, zero_context=zero_context)}; base64 {OUT}/all"


def may_lack_prefixes(text: str) -> bool:
    """Whether a patch may have been made with --no-prefix: every file it changes in place has the
    same name on its `---` and `+++` lines (with prefixes they differ: a/ and b/, i/ and w/)."""
    pairs, old = [], None
    for line in text.split("\n"):
        if line.startswith("--- "):
            old = line[4:].split("\t")[0]
        elif line.startswith("+++ ") and old is not None:
            pairs.append((old, line[4:].split("\t")[0]))
            old = None
    changed = [(a, b) for a, b in pairs if "/dev/null" not in (a, b)]
    return bool(changed) and all(a == b for a, b in changed)


def read_printed_listing(printed: str) -> Listing:
    return parse_listing(base64.b64decode("".join(printed.split())))


async def probe_interpreter(sandbox: Sandbox, test_cmd: str | None) -> Interpreter | None:
    result = await sandbox.exec(probe_command(test_cmd), timeout=120, user="root")
    try:
        return parse_probe(result.output) if result.exit_code == 0 else None
    except (ValueError, KeyError):
        return None
