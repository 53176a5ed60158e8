"""What the test user must not read: the hidden test files as they were before the controls went in.

A forger that could read an original next to the file with its controls would tell the copies
apart by a diff. Copies of the originals lie in the repo (patches, bytecode, pytest's cache of
node ids, build folders, git objects) and may lie anywhere else in the image (site-packages, a
second checkout, another git store). The setup script, run as root before the tests, removes
or locks them all.

Outside the repo an image is the same in every container made from it (a patch changes only the
repo), so what lies there is listed once per image (`ImageFiles`, from `outside_command`) and
the script looks only at the names it needs; the repo itself is searched on every run.
"""

from __future__ import annotations

import shlex
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from factory.sandbox.git import GIT_DIR

OUTSIDE = "/tmp/factory-outside"


def outside_command(workdir: str) -> str:
    """Lists, NUL-separated into `OUTSIDE`, the Python files and `objects` folders outside the repo."""
    return (f"find / -xdev -path {shlex.quote(workdir)} -prune -o -type d -name objects -print0 -prune "
            f"-o -type f -name '*.py' -print0 > {OUTSIDE} 2>/dev/null; test -f {OUTSIDE}")


@dataclass(frozen=True)
class ImageFiles:
    objects: tuple[str, ...] = ()
    """Folders named `objects` (git stores among them)."""
    python: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    """Python files by file name."""

    @classmethod
    def parse(cls, listing: bytes) -> ImageFiles:
        objects: list[str] = []
        python: dict[str, list[str]] = {}
        for raw in listing.split(b"\0"):
            path = raw.decode("utf-8", "surrogateescape")
            if not path or "\n" in path:  # the script reads one path per line
                continue
            if path.endswith("/objects"):
                objects.append(path)
            else:
                python.setdefault(PurePosixPath(path).name, []).append(path)
        return cls(tuple(objects), {name: tuple(paths) for name, paths in python.items()})

    def named(self, names: Iterable[str]) -> list[str]:
        return [path for name in dict.fromkeys(names) for path in self.python.get(name, ())]


def hide_originals(workdir: str, planted: Iterable[str], private: str, outside: ImageFiles) -> list[str]:
    """Shell lines, run as root in `workdir` before the tests, for the test files `planted` (their
    controls in) whose originals are `private`/original-*: every copy of an original (and its
    bytecode) becomes root-only, and so does every git object store on the disk."""
    w, found = shlex.quote(workdir), shlex.quote(f"{private}/found")
    planted = [PurePosixPath(p) for p in planted]
    names = " -o ".join(f"-name {shlex.quote(p.name)}" for p in planted) or "-false"
    elsewhere = [*outside.objects, f"{GIT_DIR}/objects", *outside.named(p.name for p in planted)]
    return [
        "find /tmp -maxdepth 1 -name 'factory*' -exec rm -rf {} +",
        f"find {w} -name .pytest_cache -prune -exec rm -rf {{}} +",
        # one rm for all (a process each cost the container ~3 ms); a glob that matches nothing stays as
        # written, and rm -f ignores it
        *(["rm -f " + " ".join(f"{shlex.quote(str(p.parent / '__pycache__'))}/{shlex.quote(p.stem)}.*.pyc "
                               f"{shlex.quote(str(p.with_suffix('.pyc')))}" for p in planted)] if planted else []),
        f"{{ find {w} \\( -type d -name objects -prune -o -type f \\( {names} \\) \\) -print 2>/dev/null || true",
        f"  printf '%s\\n' {' '.join(map(shlex.quote, elsewhere))}; }} > {found}",
        "while IFS= read -r f; do",
        '  case "$f" in',
        '    */objects) if [ -f "$f/../HEAD" ]; then chmod -R go-rwx "$f/.."; fi ;;',
        f'    *) for o in {shlex.quote(private)}/original-*; do',
        '         if cmp -s "$f" "$o"; then',
        '           chmod go-rwx "$f"; b="${f%.py}"',
        '           for c in "${b}.pyc" "$(dirname "$f")/__pycache__/$(basename "$b")".*.pyc; do',
        '             if [ -e "$c" ]; then chmod go-rwx "$c"; fi; done; fi; done ;;',
        "  esac",
        f"done < {found}",
        f"rm -f {found}",
    ]
