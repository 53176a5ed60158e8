"""A run with two harnesses (`agent.harnesses`) writes rows of both, each with its own tool
schemas, and records the harness per attempt in the warehouse (real sandboxes and verifier)."""

from __future__ import annotations

import asyncio
import json

import pyarrow.parquet as pq
import pytest

from factory.agent.harness import MINI_TOOLS
from factory.agent.tools import TOOLS
from factory.config import load_pipeline
from factory.run.progress import QuietProgress
from factory.run.runner import run_pipeline
from factory.warehouse import Warehouse
from tests.agent.local_sandbox import DEMO

pytestmark = pytest.mark.docker


def test_a_run_with_two_harnesses_writes_rows_of_both_each_with_its_tools(tmp_path, docker_client):
    path = tmp_path / "p.yaml"
    path.write_text(f"""\
name: two-harnesses
tasks: {{source: {DEMO}, limit: 2}}
teachers:
  - {{kind: scripted, model: scripted-test, seed: 3,
      profile: {{solve: 1.0, wrong_fix: 0, loop: 0, format_error: 0, give_up: 0}}}}
agent:
  max_turns: 30
  harnesses: [{{name: factory, share: 1}}, {{name: mini-swe-agent, share: 1}}]
sandbox: {{memory: 512m, max_live: 4}}
sampling: {{attempts_per_task: 2, max_in_flight: 2}}
filters:
  dedup: {{enabled: false}}  # both harnesses make the same fix of a task
  cap: {{per_task: 3}}
verifier: {{timeout: 120}}
output: {{dir: {tmp_path / "runs"}}}
""")
    outcome = asyncio.run(run_pipeline(load_pipeline(path), run_id="harnesses", progress=QuietProgress(),
                                       command="test"))
    shard = next((outcome.store.dataset_dir / "messages").glob("*.parquet"))
    rows = pq.read_table(shard).to_pylist()
    assert len(rows) == 4
    by_harness = {h: [r for r in rows if r["harness"] == h] for h in ("factory", "mini-swe-agent")}
    assert [r["attempt"] for r in by_harness["factory"]] == [0, 0]
    assert [r["attempt"] for r in by_harness["mini-swe-agent"]] == [1, 1]
    for harness, tools in (("factory", TOOLS), ("mini-swe-agent", MINI_TOOLS)):
        for row in by_harness[harness]:
            assert [json.loads(t) for t in row["tools"]] == tools
            called = {c["function"]["name"] for m in row["messages"] for c in m["tool_calls"]}
            assert called <= {t["function"]["name"] for t in tools}
    card = (outcome.store.dataset_dir / "README.md").read_text()
    assert "with the tools of their harness (`factory`, `mini-swe-agent`; each row has its own `tools`)" in card
    with Warehouse(outcome.store.warehouse_path) as warehouse:
        counts = warehouse.query("SELECT harness, count(*) FILTER (WHERE resolved) FROM v_attempts GROUP BY harness "
                                 "ORDER BY harness").rows
    assert [tuple(r) for r in counts] == [("factory", 2), ("mini-swe-agent", 2)]
