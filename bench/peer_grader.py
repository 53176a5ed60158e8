"""The peer's grader: mini-swe-agent's predictions judged the SWE-bench way, for bench/peer_bench.py.

What a user of mini-swe-agent runs to get verified data: per prediction a fresh container of the
task's image (`docker run --rm`, the docker CLI), the start state (the bug applied, as SWE-smith's
instance branch has it), the prediction applied (`git apply`, then `patch --fuzz`, as SWE-bench's
harness tries), the test files restored (`git checkout HEAD -- FILES`), one `pytest -rA` run over
them, and its short summary parsed: resolved when every FAIL_TO_PASS and PASS_TO_PASS id PASSED.
As many at once as cores (SWE-bench's `--max_workers` advice). The patch goes in on stdin, one
CLI call per prediction: the cheapest way the engine offers, so the peer's figures are a floor.
No controls, no blind checks, no path policy, and the tests run as root in the container the
patch was applied in: the guarantees factory's verifier adds are not here.
"""

from __future__ import annotations

import base64
import shlex
import subprocess
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

PREFIX_TEST = "source /opt/miniconda3/bin/activate && conda activate testbed"  # SWE-smith images' test env
MARKER = "peer-grader-tests-start"
STATUSES = ("PASSED", "FAILED", "ERROR", "SKIPPED", "XFAIL", "XPASS")


@dataclass
class Graded:
    instance_id: str
    resolved: bool
    why: str = ""


def test_files(row: dict) -> list[str]:
    return sorted({nodeid.split("::")[0] for nodeid in (*row["FAIL_TO_PASS"], *row["PASS_TO_PASS"])})


def eval_script(row: dict) -> str:
    """The grader's shell in a fresh container; the prediction arrives on stdin."""
    files = " ".join(map(shlex.quote, test_files(row)))
    bug = base64.b64encode(row["patch"].encode()).decode()
    return "\n".join([
        "cd /testbed",
        f"echo {bug} | base64 -d | git apply || exit 3",
        "cat > /tmp/pred.patch",
        "git apply /tmp/pred.patch 2>/dev/null || patch --batch --fuzz=5 -p1 -i /tmp/pred.patch || exit 4",
        f"git checkout -q HEAD -- {files}",
        f"{PREFIX_TEST}",
        f"echo {MARKER}",
        f"pytest -rA {files}",
        "true",
    ])


def statuses(log: str) -> dict[str, str]:
    """Test id -> status from pytest's `-rA` short summary, after the marker, read as SWE-bench's
    `parse_log_pytest` reads it (the id is the second word: ids with spaces are cut there, as there)."""
    found = {}
    for line in log.split(MARKER, 1)[-1].splitlines():
        if line.startswith(STATUSES):
            words = (line.replace(" - ", " ") if line.startswith("FAILED") else line).split()
            if len(words) > 1:
                found[words[1]] = words[0]
    return found


def judge(row: dict, log: str) -> Graded:
    seen = statuses(log)
    wrong = [t for t in (*row["FAIL_TO_PASS"], *row["PASS_TO_PASS"]) if seen.get(t) != "PASSED"]
    return Graded(row["instance_id"], not wrong, f"{len(wrong)} test(s) not passed, e.g. {wrong[0]}" if wrong else "")


def grade_one(row: dict, prediction: str, image: str, labels: dict[str, str]) -> Graded:
    args = [arg for key, value in labels.items() for arg in ("--label", f"{key}={value}")]
    done = subprocess.run(["docker", "run", "--rm", "-i", "--network", "none", *args, image, "bash", "-c", eval_script(row)],
                          input=prediction, capture_output=True, text=True)
    if done.returncode in (3, 4):
        return Graded(row["instance_id"], False, f"patch did not apply (exit {done.returncode}): {done.stderr[-300:]}")
    return judge(row, done.stdout)


def grade_all(rows: list[dict], predictions: dict[str, str], image: str, labels_of, workers: int) -> list[Graded]:
    """Every row with a prediction graded, `workers` at once; `labels_of(instance_id)` labels its container."""
    with ThreadPoolExecutor(workers) as pool:
        return list(pool.map(lambda r: grade_one(r, predictions[r["instance_id"]], image, labels_of(r["instance_id"])),
                             [r for r in rows if r["instance_id"] in predictions]))
