"""`Warehouse`: the run's only writer, which never keeps the DuckDB file open.

Records are buffered in memory and written in one transaction per flush: connect, write,
commit, close. A flush happens `flush_seconds` after the first buffered record (a timer
thread), as soon as `flush_records` are buffered, and on `close()`; so the file lock is held
for milliseconds and `factory query` can read between flushes.

A reader that keeps the file open (a `duckdb` shell, a notebook) never stops the run: a flush
that cannot get in keeps its records, the timer tries again, and they are written once the
reader goes. If it is still there at `close()`, the records stay unwritten and `behind` counts
their attempts; the attempt files hold them all, and the next writer of the run (a resume, or
`factory build`, through `resync`) records them again.

Writing is idempotent by attempt key (run_id, instance_id, teacher, attempt_index): an attempt
written again replaces its row, turns and test results; a decision written again replaces that
attempt's drops. The per-attempt JSON files of the scheduler stay the source of truth on resume.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import duckdb

from factory.errors import StorageError, UsageError
from factory.records import Attempt, AttemptKey, Task
from factory.warehouse import rows as R
from factory.warehouse.connect import READ_TIMEOUT, WarehouseBusy, connect, schema_sql
from factory.warehouse.read import QueryResult, run_query
from factory.warehouse.write import Batch, RunDecision, write_batch

log = logging.getLogger(__name__)
SCHEMA_VERSION = "1"
TRY_SECONDS = 2.0
"""Longest a timed flush (or opening the warehouse) waits for a reader before it tries later."""


class Warehouse:
    def __init__(self, path: Path, *, flush_seconds: float = 1.0, flush_records: int = 200,
                 lock_timeout: float = 5.0):
        """`lock_timeout`: seconds `flush()` and `close()` wait for a reader to let go."""
        self.path = Path(path)
        self.flush_seconds, self.flush_records, self.lock_timeout = flush_seconds, flush_records, lock_timeout
        self._pending = Batch()
        self._flushing: Batch | None = None  # the batch a flush is writing now
        self._recorded: dict[str, set[R.KeyTuple]] = {}  # attempts recorded through this writer, by run
        self._lock = threading.Lock()  # guards the batches, _recorded, the timers and _closed
        self._write_lock = threading.RLock()  # one flush (or in-process read) at a time
        self._armed: threading.Timer | None = None  # the timer that has not fired yet
        self._timers: list[threading.Timer] = []  # every live timer; close() joins them
        self._closed = False
        self._ready = False  # the schema is in the file and its version checked
        self.why_behind: str | None = None
        """Why the last flush failed (a reader held the file, the disk is full), until one
        succeeds; meanwhile only the timer tries again."""
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            con = connect(self.path, read_only=False, timeout=min(lock_timeout, TRY_SECONDS))
        except WarehouseBusy:  # a file that exists, held by a reader: the first flush that gets in checks it
            self.why_behind = "a reader held the file"
            log.warning("warehouse %s is held by a reader; records wait in memory until it lets go", self.path)
            return
        except (duckdb.Error, OSError) as exc:
            raise StorageError(f"cannot write the warehouse {self.path}: {exc}; choose a writable "
                               "warehouse.path or fix the folder") from None
        try:
            self._prepare(con)
        finally:
            con.close()

    def _prepare(self, con: duckdb.DuckDBPyConnection) -> None:
        """Create the schema, or check the one in the file, once per writer."""
        if self._ready:
            return
        con.execute(schema_sql())
        found = con.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchall()
        if found and found[0][0] != SCHEMA_VERSION:
            raise UsageError(f"{self.path}: warehouse schema {found[0][0]}, this factory writes "
                             f"{SCHEMA_VERSION}; move the file away and the run writes a new one")
        con.execute("INSERT OR REPLACE INTO meta VALUES ('schema_version', ?)", [SCHEMA_VERSION])
        self._ready = True

    # ------------------------------------------------------------------ recording

    def start_run(self, run_id: str, pipeline_name: str, pipeline_yaml: str, command: str) -> None:
        self._add("runs", run_id, R.run_row(run_id, pipeline_name, pipeline_yaml, command, datetime.now(UTC)))

    def record_tasks(self, run_id: str, tasks: list[Task]) -> None:
        for task in tasks:
            self._add("tasks", (run_id, task.instance_id), R.task_row(run_id, task))

    def record_attempt(self, attempt: Attempt, *, started_at: datetime, finished_at: datetime,
                       kept: bool | None = None) -> None:
        """One finished attempt; `kept=None` leaves an earlier filter decision as it was."""
        row = R.attempt_row(attempt, started_at, finished_at, kept)
        self._add("attempts", R.key_of(row), (row, R.turn_rows(attempt), R.result_rows(attempt),
                                              R.tool_call_rows(attempt)))

    def resync(self, attempts: Iterable[Attempt]) -> None:
        """Record attempts again from their files, the truth: what a reader kept out of an earlier
        writer (or a lost warehouse file) comes back; rows already there are written the same."""
        now = datetime.now(UTC)
        for attempt in attempts:
            finished = attempt.finished_at or now
            self.record_attempt(attempt, started_at=attempt.started_at or finished, finished_at=finished)

    def record_drops(self, run_id: str, drops: list[dict[str, Any]], *,
                     kept: Iterable[AttemptKey] | None = None) -> None:
        """Filter decisions, as `Drop.to_row()` dicts.

        Without `kept`, this is a whole filter pass of the run (`factory build`): it replaces
        every earlier decision of the run, and each attempt recorded before it that it does not
        drop is kept. With `kept` (the keys that passed every filter), only the attempts named in
        `drops` or `kept` are decided, replacing their earlier decisions.
        """
        rows = [self._drop_row(run_id, drop) for drop in drops]
        if kept is None:
            self._add("run_decisions", run_id, RunDecision(rows))
            return
        decided: dict[R.KeyTuple, tuple[bool, list[R.Row]]] = {}
        for row in rows:
            decided.setdefault(R.key_of(row), (False, []))[1].append(row)
        for key in kept:
            decided.setdefault((key.run_id, key.instance_id, key.teacher, key.index), (True, []))
        for key, decision in decided.items():
            self._add("decisions", key, decision)

    def record_token_counts(self, run_id: str, rows: list[dict[str, Any]]) -> None:
        """A build's exact token counts of its kept rows (the dataset's `messages` rows; rows
        counted by estimate are left out), replacing the run's earlier ones."""
        self._add("token_counts", run_id, R.token_rows(run_id, rows))

    def record_build(self, run_id: str, filters: dict[str, Any], command: str | None) -> None:
        """The settings a build of the run used (its `filters:` with overrides), replacing the last."""
        self._add("builds", run_id, R.build_row(run_id, filters, command, datetime.now(UTC)))

    def record_task_decisions(self, run_id: str, rows: list[dict[str, Any]]) -> None:
        """The run's allocation decisions (`Allocator.rows`), replacing the ones written before."""
        self._add("task_decisions", run_id, rows)

    @staticmethod
    def _drop_row(run_id: str, drop: dict[str, Any]) -> R.Row:
        row = {"run_id": run_id, **drop}
        if "index" in row:
            row["attempt_index"] = row.pop("index")
        if row["run_id"] != run_id:
            raise ValueError(f"drop of run {row['run_id']!r} recorded under run {run_id!r}")
        return {c: row.get(c, "") for c in (*R.KEY_COLUMNS, "filter", "reason", "detail")}

    # ------------------------------------------------------------------ flushing

    @property
    def behind(self) -> int:
        """Attempts whose row or filter decision is not in the file yet, because a reader holds it.

        After `close()` they stay unwritten: the attempt files have them, and the next writer of
        the run records them (a resume re-syncs every attempt file; `factory build`, `resync`).
        """
        with self._lock:
            keys: set[R.KeyTuple] = set()
            for batch in (self._pending, self._flushing or Batch()):
                keys.update(batch.attempts, batch.decisions)
                for run_id, decision in batch.run_decisions.items():  # a whole pass decides every attempt
                    keys.update(self._recorded.get(run_id, ()))
                    keys.update(R.key_of(row) for row in decision.drops)
            return len(keys)

    def flush(self, timeout: float | None = None) -> None:
        """Write everything buffered in one transaction; on `WarehouseBusy` nothing is lost."""
        with self._write_lock:
            with self._lock:
                batch, self._pending = self._pending, Batch()
                self._flushing = batch
            try:
                if not batch:
                    return
                con = connect(self.path, read_only=False, timeout=self.lock_timeout if timeout is None else timeout)
                try:
                    self._prepare(con)
                    write_batch(con, batch)
                finally:
                    con.close()
            except BaseException as exc:
                with self._lock:
                    self._pending = batch.under(self._pending)
                if isinstance(exc, WarehouseBusy):
                    self.why_behind = "a reader held the file"
                elif isinstance(exc, duckdb.Error | OSError):  # disk full, read-only, ...
                    self.why_behind = f"it could not be written: {exc}"
                    raise StorageError(f"cannot write the warehouse {self.path}: {exc}") from exc
                raise
            else:
                if self.why_behind is not None:
                    log.info("warehouse %s: buffered records written (%s before)", self.path, self.why_behind)
                self.why_behind = None
            finally:
                with self._lock:
                    self._flushing = None

    def close(self) -> None:
        """Flush what is left, waiting up to `lock_timeout` for a reader; no timer outlives this.

        A reader that stays longer does not fail the caller: the records stay unwritten and
        `behind` counts their attempts.
        """
        with self._lock:
            self._closed, self._armed = True, None
            timers, self._timers = self._timers, []
        for timer in timers:
            timer.cancel()
        try:
            self.flush()
        except (WarehouseBusy, StorageError):
            log.warning("warehouse %s: %d attempt(s) not recorded yet, as %s (their files have them; a "
                        "resume or `factory build` records them)", self.path, self.behind, self.why_behind)
        finally:
            for timer in timers:  # one may be waiting for the flush above; it then finds nothing to do
                if timer is not threading.current_thread():
                    timer.join(self.lock_timeout)

    def __enter__(self) -> Warehouse:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def query(self, sql: str, params: list[Any] | None = None) -> QueryResult:
        """Flush, then read `sql` the way a reader does: `columns, rows = wh.query(...)`."""
        with self._write_lock:  # DuckDB refuses a read-only open while this process writes
            self.flush()
            return run_query(self.path, sql, params, timeout=READ_TIMEOUT)

    def _add(self, bucket: str, key: Any, value: Any) -> None:
        with self._lock:
            if self._closed:
                raise RuntimeError(f"warehouse {self.path} is closed")
            pending = self._pending
            getattr(pending, bucket)[key] = value
            if bucket == "attempts":
                self._recorded.setdefault(key[0], set()).add(key)
                if key[0] in pending.run_decisions:
                    pending.run_decisions[key[0]].later.add(key)
            if bucket == "run_decisions":  # a whole pass supersedes single decisions before it
                pending.decisions = {k: v for k, v in pending.decisions.items() if k[0] != key}
            # while a reader holds the file, or a flush is under way, only the timer tries: the
            # caller (the run's event loop) does not wait for the file
            flush_now = len(pending) >= self.flush_records and self.why_behind is None and self._flushing is None
            if not flush_now:
                self._schedule()
        if flush_now:
            self._try_flush()

    def _schedule(self) -> None:
        """Arm the flush timer unless one is armed (caller holds `_lock`)."""
        if self._closed or self._armed is not None:
            return

        def fire() -> None:
            with self._lock:
                if self._armed is timer:
                    self._armed = None
            self._try_flush()

        # not a daemon: at exit the interpreter waits for an armed flush instead of killing it
        # inside DuckDB (which aborts the process)
        timer = threading.Timer(self.flush_seconds, fire)
        self._armed = timer
        self._timers = [t for t in self._timers if t.is_alive()] + [timer]
        timer.start()

    def _try_flush(self) -> None:
        """A flush that never raises into the run: a busy or failing write is retried later."""
        was_behind = self.why_behind is not None
        try:
            self.flush(timeout=min(self.lock_timeout, TRY_SECONDS))
        except Exception as exc:
            if isinstance(exc, StorageError):
                if not was_behind:  # once per spell, not at every try
                    log.warning("%s; records wait in memory for the next flush", exc)
            elif not isinstance(exc, WarehouseBusy):
                log.exception("warehouse %s: flush failed; records kept for the next flush", self.path)
            elif not was_behind:
                log.warning("warehouse %s is held by a reader; records wait in memory until it lets go", self.path)
            if threading.main_thread().is_alive():  # at exit, give up: the attempt files remain
                with self._lock:
                    self._schedule()
