"""A SWE-smith-layout image built from the base image, and a task set that runs on it.

Real SWE-smith images (`swebench/swesmith.x86_64.<owner>_1776_<repo>.<commit8>`) differ from
the images of local task sets in ways the sandbox and the verifier must survive:

- root is the only user: no `agent`, nothing left with uid or gid 1000;
- bytecode writing is on (the base image's `PYTHONDONTWRITEBYTECODE=1` is emptied, which
  Python treats as unset), and `/testbed` already holds `__pycache__/`, `.pytest_cache/` and
  an `*.egg-info/` as untracked files, with no `.gitignore` to hide them;
- the test environment is a conda env: `source /opt/miniconda3/bin/activate && conda
  activate testbed` puts `/opt/miniconda3/envs/testbed/bin` (python, python3 and pytest
  linked to the system ones) first on PATH. Here that script is a small shim defining a
  `conda` shell function, which is what tasks' default `test_cmd` sources
  (`factory.tasks.rows.SWESMITH_TEST_ENV`).

`ensure_image()` builds it without any registry from `factory/python:3.11` and one repo of
the demo task set (imported through a `.pth` file, like local task-set images), tagged
`factory-test/swesmith-layout:<hash>` where the hash covers this file, the repo sources and
the base image id; an existing tag is reused. `write_taskset()` writes `tasks.jsonl` in
SWE-smith's row format (bug `patch`, FAIL_TO_PASS, PASS_TO_PASS, `image_name` = that image)
from the demo tasks of that repo, in a folder without `repos/`, so `factory run` uses the
image as given. Used by tests/test_load.py and bench/swesmith_loss_bench.py; images carry the
label `factory.fixture=swesmith-layout` (`docker images -f label=factory.fixture=swesmith-layout`).
"""

from __future__ import annotations

import hashlib
import io
import json
import tarfile
import tomllib
from pathlib import Path

from factory.errors import SandboxError
from factory.sandbox.docker import engine
from factory.sandbox.docker.images import image_exists
from factory.sandbox.images import BASE_IMAGE, INSTALL, _tar_of

DEMO = Path(__file__).parent.parent / "pipelines/tasksets/demo"
REPO = "semverkit"
IMAGE_REPOSITORY = "factory-test/swesmith-layout"
FIXTURE_LABEL = "factory.fixture"
SWESMITH_KEYS = ("instance_id", "repo", "patch", "FAIL_TO_PASS", "PASS_TO_PASS", "created_at",
                 "image_name", "base_commit", "problem_statement")

# Sourced by SWESMITH_TEST_ENV; only `conda activate ENV` and `conda deactivate` are needed.
ACTIVATE = r"""# conda activation shim of a SWE-smith-layout test image (not conda)
conda() {
    case "$1" in
        activate)
            _env="${2:-base}"
            if [ "$_env" = base ]; then _bin=/opt/miniconda3/bin; else _bin="/opt/miniconda3/envs/$_env/bin"; fi
            if [ ! -d "$_bin" ]; then echo "EnvironmentNameNotFound: $_env" >&2; return 1; fi
            export PATH="$_bin:$PATH" CONDA_DEFAULT_ENV="$_env" CONDA_PREFIX="${_bin%/bin}"
            ;;
        deactivate)
            [ -n "${CONDA_PREFIX:-}" ] && export PATH="$(printf %s "$PATH" | sed "s#$CONDA_PREFIX/bin:##")"
            unset CONDA_DEFAULT_ENV CONDA_PREFIX
            ;;
        *) echo "conda (shim): only 'activate ENV' and 'deactivate'" >&2; return 1 ;;
    esac
}
"""

# Runs as root after INSTALL (repo committed, .pth written); fails loudly when a property is missing.
LAYOUT = r"""
set -eu
userdel -r agent 2>/dev/null || userdel agent
if getent group agent >/dev/null; then groupdel agent; fi
left=$(find / -xdev \( -uid 1000 -o -gid 1000 \) -print 2>/dev/null | head -n 5)
[ -z "$left" ] || { echo "still owned by uid/gid 1000: $left"; exit 1; }
if getent passwd 1000 || getent group 1000; then echo "uid/gid 1000 still exists"; exit 1; fi
users=$(awk -F: '$3 >= 1000 && $3 != 65534 {print $1}' /etc/passwd)
[ -z "$users" ] || { echo "users besides root: $users"; exit 1; }
rm -f /testbed/.gitignore

mkdir -p /opt/miniconda3/bin /opt/miniconda3/envs/testbed/bin
cp /tmp/activate /opt/miniconda3/bin/activate && rm /tmp/activate
ln -sf /usr/bin/python3 /opt/miniconda3/envs/testbed/bin/python
ln -sf /usr/bin/python3 /opt/miniconda3/envs/testbed/bin/python3
ln -sf /usr/bin/pytest-3 /opt/miniconda3/envs/testbed/bin/pytest

# the artifacts of SWE-smith's own build: an editable install's egg-info, bytecode of a test run
cd /testbed
info="$PKG.egg-info"
mkdir -p "$info"
printf 'Metadata-Version: 2.1\nName: %s\nVersion: 0.0.0\n' "$PKG" > "$info/PKG-INFO"
git ls-files > "$info/SOURCES.txt"
printf '%s\n' "$PKG" > "$info/top_level.txt"
printf '\n' > "$info/dependency_links.txt"
bash -c 'source /opt/miniconda3/bin/activate && conda activate testbed \
  && [ "$(command -v python)" = /opt/miniconda3/envs/testbed/bin/python ] \
  && cd / && python -c "import $PKG" && cd /testbed && python -m pytest -q tests | tail -n 1'
[ -n "$(find /testbed -name '*.pyc' -path '*/__pycache__/*' -print -quit)" ] || { echo "no bytecode written"; exit 1; }
git status --porcelain --untracked-files=all | grep -q '__pycache__/' || { echo "bytecode not untracked"; exit 1; }
"""


def image_tag(repo: str = REPO) -> str:
    """`factory-test/swesmith-layout:<hash>` of this builder, the repo's sources and the base image."""
    digest = hashlib.sha256(Path(__file__).read_bytes())
    digest.update(INSTALL.encode())
    digest.update(engine.client().images.get(BASE_IMAGE).id.encode())
    folder = DEMO / "repos" / repo
    for path in sorted(folder.rglob("*")):
        rel = path.relative_to(folder)
        if path.is_file() and not any(p in ("__pycache__", ".pytest_cache") for p in rel.parts):
            digest.update(str(rel).encode() + b"\0" + path.read_bytes() + b"\0")
    return f"{IMAGE_REPOSITORY}:{repo}-{digest.hexdigest()[:12]}"


def _package(repo: str) -> str:
    meta = tomllib.loads((DEMO / "repos" / repo / "pyproject.toml").read_text())
    return meta["project"]["name"]


def _tar_one(name: str, data: bytes) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        info = tarfile.TarInfo(name)
        info.size, info.mode = len(data), 0o644
        tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def _run(container, script: str, what: str, env: dict[str, str]) -> None:
    code, out = container.exec_run(["bash", "-c", script], environment=env)
    if code != 0:
        raise SandboxError(f"swesmith-layout image: {what} failed: {out.decode(errors='replace')[-2000:]}")


def build_image(tag: str, repo: str = REPO) -> None:
    """Base image + repo at /testbed (committed, .pth) + the SWE-smith layout, committed as `tag`."""
    client = engine.client()
    labels = engine.labels("swesmith-layout", tag)
    container = client.containers.create(BASE_IMAGE, ["sleep", "900"], network_mode="none", labels=labels)
    try:
        container.start()
        container.exec_run(["mkdir", "-p", "/testbed"])
        container.put_archive("/", _tar_of(DEMO / "repos" / repo))
        _run(container, INSTALL, "install step", {})
        container.put_archive("/", _tar_one("tmp/activate", ACTIVATE.encode()))
        # bytecode on for the test run that leaves __pycache__ behind, as in the committed image
        _run(container, LAYOUT, "layout step", {"PKG": _package(repo), "PYTHONDONTWRITEBYTECODE": ""})
        repository, _, name = tag.rpartition(":")
        container.commit(repository=repository, tag=name, changes=[
            "WORKDIR /testbed",
            'CMD ["/bin/bash"]',
            "ENV PYTHONDONTWRITEBYTECODE=",
            f"LABEL {FIXTURE_LABEL}=swesmith-layout",
            engine.blank_labels(labels),
        ])
    finally:
        container.remove(force=True)


def ensure_image(repo: str = REPO) -> str:
    """The image's tag, built first when missing."""
    tag = image_tag(repo)
    if not image_exists(tag):
        build_image(tag, repo)
    return tag


def write_taskset(folder: Path, image: str, repo: str = REPO) -> Path:
    """`folder/tasks.jsonl`: the demo tasks of `repo` as SWE-smith rows on `image` (no `repos/`)."""
    folder.mkdir(parents=True, exist_ok=True)
    lines = []
    for line in (DEMO / "tasks.jsonl").read_text().splitlines():
        row = json.loads(line)
        if row["repo"].split("/")[-1] != repo:
            continue
        row["image_name"] = image
        lines.append(json.dumps({k: row.get(k) for k in SWESMITH_KEYS}))
    (folder / "tasks.jsonl").write_text("\n".join(lines) + "\n")
    return folder


def scripted_solver(latency: float) -> str:
    """A teacher entry: the scripted teacher that always fixes the task, `latency` s per turn."""
    return f"""\
  - kind: scripted
    model: scripted-solver
    name: scripted
    seed: 5
    profile: {{solve: 1.0, wrong_fix: 0, loop: 0, format_error: 0, give_up: 0, latency_seconds: {latency}}}
"""


def write_pipeline(folder: Path, taskset: Path, teacher: str, *, attempts: int, in_flight: int,
                   stop: int | None = None, limit: int | None = None) -> Path:
    """`folder/pipeline.yaml` over the task set with one `teacher` entry; with `stop` unset,
    every attempt runs (early stop is past reach)."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "pipeline.yaml"
    path.write_text(f"""\
name: swesmith-layout
tasks:
  source: {taskset}
{f"  limit: {limit}" if limit else ""}
teachers:
{teacher}
agent:
  max_turns: 30
  command_timeout: 120
sandbox:
  memory: 768m
  max_live: {in_flight + 4}
  warm: 2
sampling:
  attempts_per_task: {attempts}
  max_in_flight: {in_flight}
filters:
  cap: {{per_task: {stop or attempts + 10}}}
verifier:
  timeout: 180
  memory: 1g
output:
  dir: {folder / "runs"}
""")
    return path
