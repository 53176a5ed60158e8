"""The run store: one folder per run, the source of truth for resume.

    <output.dir>/<run id>/
        pipeline.yaml          the exact pipeline text the run started with
        run.json               run id, command, times, status
        attempts/<task>/<teacher>/<index>.json        finished attempts (written atomically)
        attempts/<task>/<teacher>/<index>.turns.jsonl teacher turns of an unfinished attempt
        warehouse.duckdb       every attempt, verdict and filter decision (derived, re-synced)
        dataset/               the built dataset and its card
        run.lock               held (flock) by the one process that runs or builds the run

A run folder has one writer at a time: `locked()` takes an exclusive `flock` on run.lock for
as long as the process works on the run, and the kernel lets go of it when the process ends,
however it ends, so a lock is never stale. A second `factory run` (or `factory build`/`push`)
on a held run exits 2 naming the holder, before it touches anything.

An attempt exists only once its JSON file does: a kill -9 at any moment leaves either the
whole file or none, so a resumed run redoes exactly the attempts that were in flight.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import re
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import quote

from factory.atomic import TEMP_SUFFIX, write_atomic
from factory.errors import StorageError, UsageError
from factory.records import Attempt, AttemptKey


def _safe(name: str) -> str:
    """A run id made safe as a folder name (new runs only)."""
    return re.sub(r"[^A-Za-z0-9._-]", "_", name)


def _path_part(name: str) -> str:
    """A task id or teacher label as one path part, one-to-one: `a/b` and `a_b` stay apart."""
    return quote(name, safe="") if name not in (".", "..") else quote(name.replace(".", "%2E"), safe="%")


def identity(settings: dict[str, Any], selection: list[str]) -> dict[str, str]:
    """What a run is: each resolved setting (dotted path -> a digest of its value, so run.json
    keeps no value that came from the environment) and the selected task ids."""
    flat: dict[str, str] = {}

    def walk(path: str, value: Any) -> None:
        if isinstance(value, dict) and value:
            for key, item in value.items():
                walk(f"{path}.{key}" if path else str(key), item)
        elif isinstance(value, list) and value:
            for i, item in enumerate(value):
                walk(f"{path}[{i}]", item)
        else:
            flat[path] = _digest(json.dumps(value, sort_keys=True))

    walk("", settings)
    flat["the task selection"] = _digest("\n".join(selection))
    return flat


def differences(before: dict[str, str], now: dict[str, str]) -> list[str]:
    return sorted(key for key in before.keys() | now.keys() if before.get(key) != now.get(key))


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def new_run_id(pipeline_name: str) -> str:
    return f"{_safe(pipeline_name)}-{datetime.now(UTC).strftime('%Y%m%d-%H%M%S')}"


class RunStore:
    def __init__(self, folder: Path):
        self.folder = folder
        self.run_id = folder.name
        """The id the run started with (its attempts carry it), which a renamed or copied folder keeps."""
        if (folder / "run.json").exists():
            self.run_id = json.loads((folder / "run.json").read_text()).get("run_id", folder.name)

    @classmethod
    def find(cls, run: str, output_dirs: list[Path] | None = None) -> RunStore:
        """A run by folder path, or by id under ./runs (and any other output folders given)."""
        candidates = [Path(run)] + [d / run for d in (output_dirs or [])] + [Path("runs") / run]
        for folder in candidates:
            if (folder / "run.json").exists():
                return cls(folder.resolve())
        raise UsageError(f"no run {run!r}: give a run folder (holding run.json) or a run id under ./runs")

    @contextmanager
    def locked(self) -> Iterator[None]:
        """Hold the run folder (made if missing) for this process; UsageError when another holds it."""
        path = self.folder / "run.lock"
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as exc:
            raise StorageError.writing(path, exc, then="run again (or choose another output.dir)") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 4096, 0).decode(errors="replace").strip() or "another process"
            os.close(fd)
            raise UsageError(f"run {self.run_id} is in use by {holder}; wait for it to end, "
                             "or give another --run-id") from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"pid {os.getpid()} on {socket.gethostname()} since {datetime.now(UTC):%Y-%m-%d %H:%M:%S} UTC"
                  .encode(), 0)
        try:
            yield
        finally:
            os.close(fd)  # the lock goes with the descriptor

    @property
    def attempts_dir(self) -> Path:
        return self.folder / "attempts"

    @property
    def warehouse_path(self) -> Path:
        return self.folder / "warehouse.duckdb"

    @property
    def dataset_dir(self) -> Path:
        return self.folder / "dataset"

    def attempt_path(self, key: AttemptKey) -> Path:
        return self.attempts_dir / _path_part(key.instance_id) / _path_part(key.teacher) / f"{key.index}.json"

    def journal_path(self, key: AttemptKey) -> Path:
        return self.attempt_path(key).with_suffix(".turns.jsonl")

    # ------------------------------------------------------------------ run metadata

    def start(self, pipeline_text: str, command: str, pipeline_path: str, identity: dict[str, str] | None = None,
              allow_changes: bool = False, at_default: set[str] = frozenset()) -> dict[str, Any]:
        """Create the run, or load it when resuming. A resume must match what the run started with:
        the pipeline's text and its `identity` (`identity()`: every resolved setting and the task
        selection); with `allow_changes` a difference is taken on and recorded in run.json.

        A setting the run's identity does not name, and that is `at_default` now, came with a
        newer factory: the run ran as if it had its default, so it is no difference."""
        meta_path = self.folder / "run.json"
        identity = identity or {}
        if meta_path.exists():
            meta = json.loads(meta_path.read_text())
            before = meta.get("identity", identity)
            differs = [key for key in differences(before, identity) if key in before or key not in at_default]
            if (self.folder / "pipeline.yaml").read_text() != pipeline_text:
                differs.insert(0, "the pipeline's text")
            if differs and not allow_changes:
                raise UsageError(
                    f"run {self.run_id} was started with other settings ({', '.join(differs[:8])}"
                    f"{', ...' if len(differs) > 8 else ''} differ); resume it with the same pipeline, environment "
                    "and options, start a new run id, or give --allow-changes (recorded in run.json)"
                )
            if differs:
                meta.setdefault("changes", []).append(
                    {"at": datetime.now(UTC).isoformat(), "command": command, "changed": differs})
                self._write(self.folder / "pipeline.yaml", pipeline_text)
            meta["resumed"] = meta.get("resumed", 0) + 1
        else:
            self._write(self.folder / "pipeline.yaml", pipeline_text)
            meta = {"run_id": self.run_id, "pipeline": pipeline_path, "command": command,
                    "started_at": datetime.now(UTC).isoformat(), "resumed": 0}
        meta["identity"] = identity
        meta["status"] = "running"
        meta.pop("error", None)
        self.save_meta(meta)
        for stale in self.folder.rglob(f".*{TEMP_SUFFIX}"):  # a write that a kill cut short
            stale.unlink(missing_ok=True)
        return meta

    def meta(self) -> dict[str, Any]:
        return json.loads((self.folder / "run.json").read_text())

    def save_meta(self, meta: dict[str, Any]) -> None:
        """Write run.json; on a full disk, over the old one in place, whose blocks are already
        there (not atomic, but the status of a failed run must get out)."""
        path, text = self.folder / "run.json", json.dumps(meta, indent=1, sort_keys=True)
        try:
            self._write(path, text)
        except StorageError as exc:
            if not path.exists():
                raise
            try:
                with path.open("r+") as fh:
                    fh.write(text)
                    fh.truncate()
            except OSError:
                raise exc from None

    def _write(self, path: Path, text: str) -> None:
        try:
            write_atomic(path, text)
        except OSError as exc:
            raise StorageError.writing(path, exc, then=f"resume with --run-id {self.run_id}") from None

    def pipeline_text(self) -> str:
        return (self.folder / "pipeline.yaml").read_text()

    # ------------------------------------------------------------------ attempts

    def save(self, attempt: Attempt, *, keep_journal: bool = False) -> None:
        """Write the attempt's file; its journal goes, unless the attempt is to be sampled again."""
        self._write(self.attempt_path(attempt.key), attempt.model_dump_json())
        if not keep_journal:
            self.journal_path(attempt.key).unlink(missing_ok=True)

    def attempts(self) -> list[Attempt]:
        """Every finished attempt, in a stable order."""
        if not self.attempts_dir.exists():
            return []
        paths = sorted(self.attempts_dir.glob("*/*/*.json"), key=lambda p: (p.parent.parent.name, p.parent.name, int(p.stem)))
        return [Attempt.model_validate_json(p.read_text()) for p in paths]

    def load(self, instance_id: str, teacher: str, index: int) -> Attempt:
        key = AttemptKey(run_id=self.run_id, instance_id=instance_id, teacher=teacher, index=index)
        path = self.attempt_path(key)
        if not path.exists():
            raise UsageError(f"run {self.run_id} has no finished attempt {instance_id}/{teacher}/{index}")
        return Attempt.model_validate_json(path.read_text())

    def find_attempt(self, spec: str) -> Attempt:
        """An attempt by `INSTANCE/TEACHER/INDEX`, `INSTANCE/INDEX` or `INSTANCE` (its first attempt)."""
        parts = spec.split("/")
        matches = [
            a for a in self.attempts()
            if a.key.instance_id == parts[0]
            and (len(parts) < 3 or a.key.teacher == parts[1])
            and (len(parts) < 2 or str(a.key.index) == parts[-1])
        ]
        if not matches:
            raise UsageError(f"run {self.run_id} has no finished attempt {spec!r} (INSTANCE[/TEACHER]/INDEX)")
        return matches[0]
