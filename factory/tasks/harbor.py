"""The `harbor` task format: a folder of terminal tasks, each judged by the final state of its
machine (Harbor / Terminal-Bench 2, and Terminal-Bench 1's older layout).

    Harbor                                  Terminal-Bench 1
    task.toml      limits, image, network   task.yaml        instruction, limits
    instruction.md the agent's task         Dockerfile       the image
    environment/Dockerfile  the image       run-tests.sh     runs tests/ (pytest; exit 0 = solved)
    tests/test.sh  writes /logs/verifier/reward.txt|json
    solution/solve.sh  the reference        solution.sh      the reference

`rows` turns a folder of such tasks into rows (`harbor_task`: the task's folder), so they go
through the same registry, selection and reporting as every other format; `task` reads one. A
malformed task is a `BadRow` that names the file and the field.
"""

from __future__ import annotations

import hashlib
import re
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml

from factory.records import StartState, Task, TerminalSpec, TestSpec
from factory.tasks.fields import BadRow, Unsupported

HARBOR, TB1 = "task.toml", "task.yaml"
ROW_KEY = "harbor_task"
"""A row of this format names its task's folder here."""
DEFAULT_WORKDIR = "/app"
"""Where Harbor's images keep the task (their Dockerfiles' usual WORKDIR) when a Dockerfile names none."""
IMAGE_PREFIX = "factory-harbor"
_WORKDIR = re.compile(r"^\s*WORKDIR\s+(\S+)\s*$", re.I | re.M)


def is_task(folder: Path) -> bool:
    return (folder / HARBOR).is_file() or (folder / TB1).is_file()


def is_taskset(folder: Path) -> bool:
    """A folder of Harbor or Terminal-Bench tasks (or one such task)."""
    return folder.is_dir() and (is_task(folder) or any(is_task(sub) for sub in folder.iterdir() if sub.is_dir()))


def rows(folder: Path) -> Iterator[tuple[str, dict[str, Any]]]:
    """(where, row) for each task folder, in name order."""
    tasks = [folder] if is_task(folder) else sorted(sub for sub in folder.iterdir() if sub.is_dir() and is_task(sub))
    for path in tasks:
        yield str(path), {"instance_id": path.name, ROW_KEY: str(path)}


def task(row: dict[str, Any], source: str = "", test_cmd: str | None = None) -> Task:
    folder = Path(row[ROW_KEY])
    return _tb1(folder, source) if (folder / TB1).is_file() and not (folder / HARBOR).is_file() else _harbor(folder, source)


def _harbor(folder: Path, source: str) -> Task:
    iid, config_file = folder.name, folder / HARBOR
    try:
        config = tomllib.loads(config_file.read_text())
    except tomllib.TOMLDecodeError as exc:
        raise BadRow(iid, str(config_file), f"not valid TOML ({exc})") from None
    at = _Fields(iid, config_file, config)
    env = at.table("environment")
    image = at.text(env, "environment.docker_image", required=False)
    dockerfile = folder / "environment" / "Dockerfile"
    if not image and not dockerfile.is_file():
        raise BadRow(iid, str(config_file), "environment.docker_image: none, and no environment/Dockerfile to build one")
    _one_container(iid, folder / "environment" / "docker-compose.yaml", "main")
    memory = at.number(env, "environment.memory_mb") or _megabytes(at, env)
    allow = env.get("allow_internet", False)
    if not isinstance(allow, bool):
        raise BadRow(iid, str(config_file), "environment.allow_internet: must be true or false")
    tests = _files(iid, folder / "tests")
    if "test.sh" not in tests:
        raise BadRow(iid, str(folder / "tests" / "test.sh"), "tests/test.sh: missing (the verifier runs it)")
    verifier = at.table("verifier")
    spec = TerminalSpec(
        tests=tests, script="test.sh", solution=_files(iid, folder / "solution", required=False),
        verifier_seconds=at.number(verifier, "verifier.timeout_sec") or 600.0,
        agent_seconds=at.number(at.table("agent"), "agent.timeout_sec"),
        cpus=at.number(env, "environment.cpus"), memory_mb=int(memory) if memory else None, network=allow,
        verifier_env=at.strings(verifier, "verifier.env"),
        build="" if image else str(dockerfile.parent),
    )
    instruction = _instruction(iid, folder / "instruction.md")
    return _task(folder, source, instruction, spec, image or _built_name(folder, dockerfile.parent), dockerfile)


def _tb1(folder: Path, source: str) -> Task:
    iid, config_file = folder.name, folder / TB1
    try:
        config = yaml.safe_load(config_file.read_text())
    except yaml.YAMLError as exc:
        raise BadRow(iid, str(config_file), f"not valid YAML ({str(exc).splitlines()[0]})") from None
    at = _Fields(iid, config_file, config if isinstance(config, dict) else {})
    instruction = _tb1_instruction(at)
    dockerfile = folder / "Dockerfile"
    if not dockerfile.is_file():
        raise BadRow(iid, str(dockerfile), "Dockerfile: missing (Terminal-Bench 1 builds its image from it)")
    _one_container(iid, folder / "docker-compose.yaml", "client")
    run = folder / "run-tests.sh"
    if not run.is_file():
        raise BadRow(iid, str(run), "run-tests.sh: missing (the verifier runs it)")
    tests = {**_files(iid, folder / "tests", required=False), "run-tests.sh": run.read_text()}
    solution = {"solve.sh": (folder / "solution.sh").read_text()} if (folder / "solution.sh").is_file() else {}
    spec = TerminalSpec(
        tests=tests, script="run-tests.sh", reward_from_exit=True, solution=solution,
        verifier_seconds=at.number(at.config, "max_test_timeout_sec") or 600.0,
        agent_seconds=at.number(at.config, "max_agent_timeout_sec"),
        verifier_env={"TEST_DIR": "/tests"}, build=str(folder),
    )
    return _task(folder, source, instruction, spec, _built_name(folder, folder), dockerfile)


def _tb1_instruction(at: _Fields) -> str:
    """`instruction`, or in Terminal-Bench's older task.yaml the `description` of the `descriptions`
    entry whose `key` is `base`."""
    entries = at.config.get("descriptions")
    if "instruction" in at.config or entries is None:
        return at.text(at.config, "instruction")
    base = [e for e in entries if isinstance(e, dict) and e.get("key") == "base"] if isinstance(entries, list) else []
    if not base:
        raise at.bad("descriptions", "no entry with key: base (the task's instruction)")
    return at.text(base[0], "descriptions.description")


def _task(folder: Path, source: str, instruction: str, spec: TerminalSpec, image: str, dockerfile: Path) -> Task:
    workdir = DEFAULT_WORKDIR
    if dockerfile.is_file():
        found = _WORKDIR.findall(dockerfile.read_text())
        workdir = found[-1] if found and found[-1].startswith("/") else workdir
    return Task(instance_id=folder.name, repo=f"harbor/{folder.parent.name}", problem_statement=instruction,
                image=image, workdir=workdir, start=StartState(), language="shell",
                tests=TestSpec(framework="final-state"), source=f"harbor:{source}", terminal=spec)


def _one_container(iid: str, compose: Path, main: str) -> None:
    """A task whose docker-compose.yaml runs services beside its own container (`main` in Harbor,
    `client` in Terminal-Bench 1: a database, a web server) needs containers factory does not start:
    it is unsupported, named, rather than run without them."""
    if not compose.is_file():
        return
    try:
        config = yaml.safe_load(compose.read_text())
    except yaml.YAMLError as exc:
        raise BadRow(iid, str(compose), f"not valid YAML ({str(exc).splitlines()[0]})") from None
    services = config.get("services") if isinstance(config, dict) else None
    others = sorted(set(services) - {main}) if isinstance(services, dict) else []
    if others:
        raise Unsupported(iid, str(compose), f"services beside {main} ({', '.join(others)}) need containers of their "
                          "own; factory runs one container per task", language="shell")


def _built_name(task: Path, context: Path) -> str:
    """The image `factory images build` makes from the task's Dockerfile: named by the task and a
    digest of its build folder, so an edited Dockerfile or file is a new image, never a stale one."""
    digest = hashlib.sha256()
    for path in sorted(p for p in context.rglob("*") if p.is_file()):
        digest.update(str(path.relative_to(context)).encode() + b"\0" + path.read_bytes() + b"\0")
    name = re.sub(r"[^a-z0-9._-]+", "-", f"{task.parent.name}.{task.name}".lower()).strip(".-")
    return f"{IMAGE_PREFIX}/{name}:{digest.hexdigest()[:12]}"


def _instruction(iid: str, path: Path) -> str:
    if not path.is_file() or not path.read_text().strip():
        raise BadRow(iid, str(path), "instruction.md: missing or empty (it is the agent's task)")
    return path.read_text()


def _files(iid: str, folder: Path, *, required: bool = True) -> dict[str, str]:
    """Every file under `folder`, relative path -> text."""
    if not folder.is_dir():
        if required:
            raise BadRow(iid, str(folder), f"{folder.name}/: missing")
        return {}
    out = {}
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        try:
            out[str(path.relative_to(folder))] = path.read_text()
        except UnicodeDecodeError:
            raise BadRow(iid, str(path), "not UTF-8 text (binary test and solution files are not read yet)") from None
    return out


def _megabytes(at: _Fields, env: dict[str, Any]) -> float | None:
    """Harbor's older `memory = "2G"` spelling, in megabytes."""
    value = env.get("memory")
    if value is None:
        return None
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([kmgt]?)i?b?\s*", str(value), re.I)
    if not match:
        raise BadRow(at.iid, str(at.file), f"environment.memory: {value!r} is not a size such as 2G or 512M")
    scale = {"": 1 / 2**20, "k": 1 / 1024, "m": 1, "g": 1024, "t": 2**20}[match.group(2).lower()]
    return float(match.group(1)) * scale


class _Fields:
    """Typed reads of one config file; a wrong one is a BadRow naming the file and the field."""

    def __init__(self, iid: str, file: Path, config: dict[str, Any]):
        self.iid, self.file, self.config = iid, file, config

    def bad(self, field: str, why: str) -> BadRow:
        return BadRow(self.iid, str(self.file), f"{field}: {why}")

    def table(self, name: str) -> dict[str, Any]:
        value = self.config.get(name, {})
        if not isinstance(value, dict):
            raise self.bad(name, "must be a table")
        return value

    def number(self, table: dict[str, Any], field: str) -> float | None:
        value = table.get(field.rpartition(".")[2])
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
            raise self.bad(field, f"must be a positive number, got {value!r}")
        return float(value)

    def text(self, table: dict[str, Any], field: str, *, required: bool = True) -> str:
        value = table.get(field.rpartition(".")[2])
        if value is None or value == "":
            if required:
                raise self.bad(field, "field required")
            return ""
        if not isinstance(value, str):
            raise self.bad(field, f"must be a string, got {type(value).__name__}")
        return value

    def strings(self, table: dict[str, Any], field: str) -> dict[str, str]:
        value = table.get(field.rpartition(".")[2], {})
        if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
            raise self.bad(field, "must be a table of strings")
        return dict(value)
