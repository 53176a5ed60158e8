"""Files read back through a command's output: many files, one exec, amid other work.

Each read through the engine's archive endpoint is a round trip of its own; a script that
applies a patch and then prints the files it needs costs one. The files are printed base64
(bytes survive the text output) after a header line that names them by position and says
whether they exist, so a missing file and an empty one differ. Whatever else the script
prints before a header is no file's.

    script = f"git apply x.patch 2> err || exit 3; {print_files(['a.py', 'b.py'], 'after')}"
    files = printed_files(result.output, 'after', ['a.py', 'b.py'])   # {'a.py': b'...', 'b.py': None}
"""

from __future__ import annotations

import base64
import re
import shlex
from collections.abc import Sequence

HEADER = "factory-printed-file"


def print_files(paths: Sequence[str], tag: str) -> str:
    """Shell that prints each regular file of `paths` (not a link) under a header line."""
    lines = []
    for i, path in enumerate(paths):
        p = shlex.quote(path)
        lines.append(f"if [ -f {p} ] && [ ! -L {p} ]; then echo '{HEADER} {tag} {i} 1'; base64 < {p}; "
                     f"else echo '{HEADER} {tag} {i} 0'; fi")
    return "\n".join(lines) or ":"


def print_listed(listing: str, tag: str) -> str:
    """`print_files` of the paths in the file `listing` (NUL-separated): the script stays short
    however many there are (a command line has a size limit; a file does not). Bash."""
    return (f"i=0; while IFS= read -r -d '' p; do if [ -f \"$p\" ] && [ ! -L \"$p\" ]; then "
            f"echo \"{HEADER} {tag} $i 1\"; base64 < \"$p\"; else echo \"{HEADER} {tag} $i 0\"; fi; "
            f"i=$((i + 1)); done < {shlex.quote(listing)}")


def printed_files(output: str, tag: str, paths: Sequence[str]) -> dict[str, bytes | None]:
    """The files `print_files(paths, tag)` printed into `output` (None: absent, or not printed)."""
    found: dict[str, bytes | None] = dict.fromkeys(paths)
    header = re.compile(rf"^{HEADER} (\S+) (\d+) ([01])$", re.M)
    marks = list(header.finditer(output))
    for mark, following in zip(marks, [*marks[1:], None][:len(marks)], strict=True):
        if mark[1] != tag or int(mark[2]) >= len(paths) or mark[3] == "0":
            continue
        body = output[mark.end():following.start() if following else len(output)]
        found[paths[int(mark[2])]] = base64.b64decode("".join(body.split()))
    return found
