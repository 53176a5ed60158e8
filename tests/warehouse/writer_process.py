"""A run's writer in its own process: `python -m tests.warehouse.writer_process DB N`.

Records N attempts one at a time, a little apart, as a scheduler would, then closes. After
each quarter it says how many it wrote and waits for a line on stdin, so a reader gets its
turn mid-run however loaded the machine is.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from factory.warehouse import Warehouse
from tests.warehouse.sample import T0, attempt, task


def main(db: Path, n: int) -> None:
    wh = Warehouse(db, flush_seconds=0.02, flush_records=8)
    wh.start_run("live", "demo", "name: demo\n", "factory run demo.yaml")
    wh.record_tasks("live", [task(f"t{i}") for i in range(10)])
    wh.flush()
    print("ready", flush=True)
    for i in range(n):
        wh.record_attempt(attempt("live", f"t{i % 10}", "A", i // 10, "pass" if i % 3 else "fail"),
                          started_at=T0, finished_at=T0)
        time.sleep(0.005)
        if (i + 1) % (n // 4) == 0 and i + 1 < n:
            wh.flush()
            print(f"wrote {i + 1}", flush=True)
            sys.stdin.readline()
    wh.close()
    print("done", flush=True)


if __name__ == "__main__":
    main(Path(sys.argv[1]), int(sys.argv[2]))
