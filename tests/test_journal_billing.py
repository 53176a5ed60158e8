"""Paid requests cut off in flight are accounted for: journaled before they are sent, and shown
apart from the recorded cost ("possibly billed") once the attempt is redone."""

from __future__ import annotations

import asyncio
import io
import json
import os
from pathlib import Path
from types import SimpleNamespace

import duckdb
import pytest
from rich.console import Console

from factory.errors import TeacherError
from factory.executor.journal import FRAMING_TOKENS, JournalTeacher, load
from factory.records import Completion, Message, PossiblyBilled, Usage
from factory.run.folder import RunStore
from factory.run.scheduler import RunResult
from factory.teachers.prices import lookup
from tests.test_run import factory, kill_when, paid_pipeline

GPT41 = lookup("gpt-4.1")
SUBMIT = {"name": "submit", "arguments": {}}
LS = {"name": "bash", "arguments": {"command": "ls"}}


def completion(text: str = "ok", cost: float = 0.01) -> Completion:
    return Completion(message=Message(role="assistant", content=text), usage=Usage(input_tokens=10), cost_usd=cost)


def intent(turn: int, cost: float | None = 0.5) -> str:
    return json.dumps({"intent": PossiblyBilled(turn=turn, max_input_tokens=100, max_cost_usd=cost).model_dump()})


class Inner:
    """A paid teacher as the journal sees it: settings with a price and `max_tokens`."""

    name = model = "gpt-4.1"

    def __init__(self, journal: Path, *, fail: bool = False, hang: bool = False, model: str = "gpt-4.1"):
        self.config = SimpleNamespace(kind="openai", model=model, price=None, max_tokens=1000)
        self.journal, self.fail, self.hang = journal, fail, hang
        self.journal_when_sent: list[str] = []

    async def complete(self, messages, tools) -> Completion:
        self.journal_when_sent.append(self.journal.read_text())
        if self.hang:
            await asyncio.sleep(3600)
        if self.fail:
            raise TeacherError("HTTP 400: refused")
        return completion("answer")


# ------------------------------------------------------------------ the journal file


def test_load_pairs_each_intent_with_the_outcome_right_after_it(tmp_path):
    path = tmp_path / "0.turns.jsonl"
    lines = [
        intent(0), completion("first").model_dump_json(),  # paid and recorded
        intent(1), json.dumps({"failed": 1}),              # ended in an error
        intent(1),                                          # killed in flight ...
        intent(1), completion("redo").model_dump_json(),   # ... and asked again by the redo
        intent(2, cost=None),                               # killed in flight, price unknown
    ]
    path.write_text("\n".join(lines) + "\n")
    completions, cut_off = load(path)
    assert [c.message.content for c in completions] == ["first", "redo"]
    assert [(c.turn, c.max_cost_usd) for c in cut_off] == [(1, 0.5), (2, None)]


def test_a_journal_of_completions_only_loads_as_before(tmp_path):
    path = tmp_path / "0.turns.jsonl"
    path.write_text(completion("a").model_dump_json() + "\n" + completion("b").model_dump_json() + "\n")
    completions, cut_off = load(path)
    assert [c.message.content for c in completions] == ["a", "b"] and cut_off == []


def test_a_line_cut_short_by_a_kill_leaves_its_intent_open_and_is_cut_off_the_file(tmp_path):
    path = tmp_path / "0.turns.jsonl"
    whole = intent(0) + "\n"
    path.write_text(whole + completion().model_dump_json()[:25])
    completions, cut_off = load(path)
    assert completions == [] and [c.turn for c in cut_off] == [0]
    assert path.read_text() == whole  # the next line starts on a line of its own


# ------------------------------------------------------------------ the teacher


async def test_the_intent_is_on_disk_before_the_request_and_the_completion_after(tmp_path):
    path = tmp_path / "0.turns.jsonl"
    inner = Inner(path)
    teacher = JournalTeacher(inner, path)
    messages = [Message(role="system", content="sé"), Message(role="user", content="fix it")]
    tools = [{"type": "function", "function": {"name": "bash"}}]
    await teacher.complete(messages, tools)
    [before] = inner.journal_when_sent
    assert list(json.loads(before)) == ["intent"]  # only the intent, when the request went out
    sent = json.dumps([m.model_dump(mode="json") for m in messages] + tools, ensure_ascii=False)
    bound = PossiblyBilled.model_validate(json.loads(before)["intent"])
    assert bound.max_input_tokens == len(sent.encode()) + FRAMING_TOKENS  # bytes, not characters
    assert bound.max_output_tokens == 1000
    assert bound.max_cost_usd == pytest.approx(GPT41.most(input_tokens=bound.max_input_tokens, output_tokens=1000))
    completions, cut_off = load(path)
    assert [c.message.content for c in completions] == ["answer"] and cut_off == []


async def test_a_call_cancelled_in_flight_is_possibly_billed_now_and_on_a_redo(tmp_path):
    path = tmp_path / "0.turns.jsonl"
    teacher = JournalTeacher(Inner(path, hang=True), path)
    with pytest.raises(TimeoutError):
        await asyncio.wait_for(teacher.complete([Message(role="user", content="x")], []), 0.1)
    assert [c.turn for c in teacher.possibly_billed] == [0]
    assert [c.turn for c in JournalTeacher(Inner(path), path).possibly_billed] == [0]


async def test_a_call_that_failed_is_not_possibly_billed(tmp_path):
    path = tmp_path / "0.turns.jsonl"
    with pytest.raises(TeacherError):
        await JournalTeacher(Inner(path, fail=True), path).complete([Message(role="user", content="x")], [])
    assert load(path) == ([], [])


async def test_a_model_of_unknown_price_is_counted_without_a_bound(tmp_path):
    path = tmp_path / "0.turns.jsonl"
    teacher = JournalTeacher(Inner(path, hang=True, model="no-such-model"), path)
    with pytest.raises(TimeoutError):
        await asyncio.wait_for(teacher.complete([Message(role="user", content="x")], []), 0.1)
    [cut] = teacher.possibly_billed
    assert cut.max_cost_usd is None and cut.max_input_tokens > 0


def test_the_summary_shows_possibly_billed_apart_from_the_cost(monkeypatch):
    from factory import cli

    out = io.StringIO()
    monkeypatch.setattr(cli, "console", Console(file=out, width=300))
    result = RunResult(spent_usd=24.0, possibly_billed=3, possibly_billed_usd=4.5, possibly_billed_unpriced=1)
    cli.print_summary(SimpleNamespace(result=result, store=SimpleNamespace(run_id="r", warehouse_path="w",
                                                                           attempts_dir="a"),
                                      build=None, warehouse_behind=0))
    assert ("cost          $24.00 (+ up to $4.50 possibly billed by 3 request(s) cut off in flight: "
            "killed, cancelled or timed out, 1 of unknown price)") in out.getvalue()


def test_a_warehouse_written_before_the_columns_takes_them_on(tmp_path):
    from factory.warehouse import Warehouse
    from factory.warehouse.connect import schema_sql
    from tests.warehouse.sample import T0, attempt

    db = tmp_path / "old.duckdb"
    # the schema as it was: its tables (the views come after them) without the columns added since
    tables = schema_sql().partition("CREATE OR REPLACE VIEW")[0]
    with duckdb.connect(str(db)) as con:
        con.execute("\n".join(line for line in tables.splitlines() if not line.startswith("ALTER TABLE")))
    a = attempt("r1", "t1", "A", 0, "pass")
    a.trajectory.possibly_billed = [PossiblyBilled(turn=1, max_input_tokens=10, max_cost_usd=0.25)]
    wh = Warehouse(db)
    wh.record_attempt(a, started_at=T0, finished_at=T0)
    wh.close()
    with duckdb.connect(str(db), read_only=True) as con:
        assert con.execute("select possibly_billed, possibly_billed_usd, cost_usd from v_attempts").fetchone() == (
            1, 0.25, pytest.approx(0.01))


# ------------------------------------------------------------------ a real kill


def billing_pipeline(tmp_path: Path, api_url: str) -> Path:
    return paid_pipeline(tmp_path, api_url, attempts=1, tasks=2, in_flight=2, teacher="    max_tokens: 1000\n")


@pytest.mark.docker
def test_requests_in_flight_at_a_kill_are_possibly_billed_after_the_resume(tmp_path, docker_client):
    from tests.teachers.fake_api import OPENAI_PATH, FakeAPI, openai_completion, slow

    billed: list[Usage] = []  # what the stand-in bills: every request it got, answered or not
    delay = {"seconds": 300.0}

    def answer(request):
        usage = Usage(input_tokens=len(request.raw) // 2, output_tokens=400)
        billed.append(usage)
        turn = sum(m["role"] == "assistant" for m in request.body["messages"])
        counts = {"prompt_tokens": usage.input_tokens, "completion_tokens": usage.output_tokens}
        if turn == 0:
            return openai_completion(tool_calls=[LS], usage=counts)
        return slow(delay["seconds"], openai_completion(tool_calls=[SUBMIT], usage=counts))

    env = {**os.environ, "COLUMNS": "300"}  # the summary on one line
    with FakeAPI() as api:
        api.respond(OPENAI_PATH, answer)
        path = billing_pipeline(tmp_path, api.openai_url)
        store = RunStore(tmp_path / "runs" / "cut")
        proc = factory("run", str(path), "--run-id", "cut", "--quiet", env=env)
        kill_when(proc, lambda: api.in_flight >= 2)  # both attempts past their first, paid turn, on the second
        assert store.attempts() == []
        delay["seconds"] = 0.0
        resumed = factory("run", str(path), "--run-id", "cut", "--quiet", env=env)
        out, err = resumed.communicate(timeout=600)
        assert resumed.returncode == 0, err
        received = len(api.requests)

    attempts = store.attempts()
    assert len(attempts) == 2 and all(a.trajectory.exit == "submitted" for a in attempts)
    recorded = sum(len(a.trajectory.turns) for a in attempts)
    cut_off = [c for a in attempts for c in a.trajectory.possibly_billed]
    assert received == len(billed) == 6  # 2 first turns, 2 cut off by the kill, 2 asked again
    assert recorded == 4 and len(cut_off) == 2
    assert recorded + len(cut_off) == received
    billed_usd = sum(GPT41.cost(u) for u in billed)
    recorded_usd = sum(a.trajectory.cost_usd for a in attempts)
    assert recorded_usd < billed_usd <= recorded_usd + sum(c.max_cost_usd for c in cut_off)
    up_to = sum(c.max_cost_usd for c in cut_off)
    assert f"cost          ${recorded_usd:.2f} (+ up to ${up_to:.2f} possibly billed by 2 request(s)" in out
    with duckdb.connect(str(store.warehouse_path), read_only=True) as db:
        assert db.execute("select sum(possibly_billed), sum(possibly_billed_usd) from attempts").fetchone() == (
            2, pytest.approx(up_to))
