"""A mixed-language run end to end, as `make demo` makes one: the Python, Go, JavaScript, Java and
Rust demo task sets listed as one pipeline's sources, the scripted teacher, real sandboxes, the
real verifier (pytest for the Python set, each set's own command for the others), the warehouse
and the dataset. Every language keeps rows, and every output says which language a row is."""

from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq
import pytest

from factory.config import load_pipeline
from factory.report import load_run
from factory.report.data import file_query
from factory.run.progress import QuietProgress
from factory.run.runner import run_pipeline
from factory.tasks import load_tasks
from factory.warehouse import named_queries, run_query

pytestmark = pytest.mark.docker
ROOT = Path(__file__).parent.parent
TASKSETS = ROOT / "pipelines" / "tasksets"
LANGUAGES = {"demo": "python", "demo-go": "go", "demo-js": "javascript", "demo-java": "java", "demo-rust": "rust"}
ALL = sorted(LANGUAGES.values())


def scripted(name: str, outcome: str) -> str:
    rates = {k: float(k == outcome) for k in ("solve", "wrong_fix", "loop", "format_error", "give_up")}
    return f"  - {{kind: scripted, model: scripted-test, name: {name}, seed: 1, profile: {rates}}}\n"


def pipeline_file(tmp_path: Path) -> Path:
    sources = "".join(f"    - {TASKSETS / folder}\n" for folder in LANGUAGES)
    path = tmp_path / "mixed.yaml"
    path.write_text(
        "name: mixed\ntasks:\n  source:\n" + sources + "  limit_per_source: 1\n"
        "teachers:\n" + scripted("scripted-solver", "solve") + scripted("scripted-wrong", "wrong_fix")
        + f"""\
agent: {{max_turns: 30, command_timeout: 120}}
sandbox: {{memory: 1g, max_live: 5}}
sampling: {{attempts_per_task: 1, max_in_flight: 3}}
verifier: {{timeout: 300}}
output: {{dir: {tmp_path / "runs"}}}
""")
    return path


def test_a_list_of_sources_loads_each_with_the_same_selection(tmp_path):
    pipeline = load_pipeline(pipeline_file(tmp_path))
    tasks = load_tasks(pipeline.tasks, base=pipeline.base).tasks
    assert [t.language for t in tasks] == list(LANGUAGES.values())  # one of each, in the order listed
    capped = pipeline.tasks.model_copy(update={"limit_per_source": None, "limit": 7})
    assert [t.language for t in load_tasks(capped).tasks] == ["python"] * 7  # `limit` is of them all


async def test_a_mixed_language_run_keeps_rows_in_every_language_and_says_which(tmp_path, docker_client):
    outcome = await run_pipeline(load_pipeline(pipeline_file(tmp_path)), run_id="mixed", progress=QuietProgress(),
                                 command="test")
    store = outcome.store
    db = store.warehouse_path
    # each task: one solve (resolved, kept) and one wrong fix (refused by its own tests)
    rows = run_query(db, named_queries()["pass_rate_by_language"].read_text()).dicts()
    assert {r["language"]: (r["attempts"], r["graded"], r["passed"], r["kept"]) for r in rows} == {
        language: (2, 2, 1, 1) for language in ALL}
    by_teacher = run_query(db, "SELECT language, teacher, resolved FROM v_attempts ORDER BY language, teacher").rows
    assert by_teacher == [(lang, teacher, teacher == "scripted-solver") for lang in ALL
                          for teacher in ("scripted-solver", "scripted-wrong")]
    learnable = run_query(db, named_queries()["learnable_tasks"].read_text()).dicts()
    assert sorted(r["language"] for r in learnable) == ALL
    # the dataset: a row per language, each saying its language; the card's table of them
    table = pq.read_table(sorted((store.dataset_dir / "messages").glob("*.parquet"))[0]).to_pylist()
    assert sorted(r["language"] for r in table) == ALL
    card = (store.dataset_dir / "README.md").read_text()
    for language in ALL:
        assert f"| `{language}` | 1 | 2 | 1 | 50.0% | 1 |" in card
    assert [(g.label, g.kept) for g in load_run(file_query(db), "mixed").languages] == [(lang, 1) for lang in ALL]
