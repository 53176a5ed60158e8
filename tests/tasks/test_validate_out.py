"""Where validation results live: factory's cache, one file per source, never the source's folder.

`factory tasks validate` runs here with a stand-in for the Docker verifier (patched at the CLI
edge); tests/tasks/test_validate.py runs it against real containers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import Result
from typer.testing import CliRunner

from factory import cli
from factory.config import TasksConfig
from factory.errors import UsageError
from factory.records import Reason, Verdict
from factory.sandbox.backend import sandbox_backend
from factory.sandbox.config import SandboxConfig
from factory.tasks import load_tasks, load_taskset
from factory.tasks.validate import TaskCheck, read_results, results_path, write_results
from tests.docs_examples import run_examples
from tests.readonly import listing, read_only

ROOT = Path(__file__).parents[2]
DEMO = ROOT / "pipelines/tasksets/demo"


class GoldOnlyVerifier:
    """Resolves a task's gold fix and nothing else; a task whose id ends in `.broken` never resolves."""

    def __init__(self, config, sandbox=None, run_id: str = "verify", share: bool = False) -> None:
        self.config = config
        self.run_id = run_id
        self.backend = sandbox_backend((sandbox or SandboxConfig()).backend)  # the command's sweep is real

    async def close(self) -> None:
        pass

    async def verify(self, task, patch: str) -> Verdict:
        if patch and patch == task.gold_patch and not task.instance_id.endswith(".broken"):
            return Verdict(resolved=True, seconds=1.5)
        return Verdict(resolved=False, reason=Reason.tests_failed, detail="1 failed", seconds=1.0)


@pytest.fixture
def cache(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return tmp_path / "cache" / "factory" / "validation"


@pytest.fixture
def taskset(tmp_path) -> Path:
    """A task-set folder of three demo tasks, the last one broken (no repos/: no images to build)."""
    rows = [json.loads(line) for line in (DEMO / "tasks.jsonl").read_text().splitlines()[:3]]
    rows[2]["instance_id"] += ".broken"
    folder = tmp_path / "tasks"
    folder.mkdir()
    (folder / "tasks.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return folder


def validate(*args: str, monkeypatch) -> Result:
    monkeypatch.setattr("factory.verify.DockerVerifier", GoldOnlyVerifier)
    return CliRunner().invoke(cli.app, ["tasks", "validate", *args])


def test_results_live_in_the_cache_one_file_per_source(cache, tmp_path, monkeypatch):
    for name in ("a", "b"):
        (tmp_path / name / "demo").mkdir(parents=True)
    first = results_path(str(tmp_path / "a/demo"))
    assert first.parent == cache and first.name.startswith("demo-") and first.suffix == ".json"
    # two folders of the same name are two sources; one folder spelled two ways is one
    assert results_path(str(tmp_path / "b/demo")) != first
    monkeypatch.chdir(tmp_path / "a")
    assert results_path("./demo/") == first == results_path("demo", base=tmp_path / "a")
    # a Hub dataset is keyed by its id, apart from any local folder
    assert results_path("SWE-bench/SWE-smith").name.startswith("SWE-bench__SWE-smith-")
    assert results_path("SWE-bench/SWE-smith") != results_path("SWE-bench/SWE-smith-2")


def test_without_xdg_cache_home_the_cache_is_under_home(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    assert results_path("org/tasks").parent == tmp_path / ".cache/factory/validation"
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/cache")  # the XDG spec says to ignore it
    assert results_path("org/tasks").parent == tmp_path / ".cache/factory/validation"


def test_validating_a_read_only_task_folder_writes_only_to_the_cache(cache, taskset, tmp_path, monkeypatch):
    before = listing(taskset)
    with read_only(taskset, tmp_path / "ro") as folder:
        result = validate(str(folder), monkeypatch=monkeypatch)
        assert result.exit_code == 1, result.output  # one task is broken
        assert "2 valid, 1 broken" in result.output
        assert listing(taskset) == before
        results = read_results(str(folder))
        assert list(cache.iterdir()) == [results_path(str(folder))]
        assert sorted(c["status"] for c in results.values()) == ["broken", "valid", "valid"]
        # a run loading the folder finds them: it skips the broken task and times the others
        report = load_taskset(str(folder))
        assert [b.field for b in report.skipped] == ["validation"]
        assert [t.test_seconds for t in report.tasks] == [1.5, 1.5]


def test_out_writes_the_results_where_chosen_and_nowhere_else(cache, taskset, tmp_path, monkeypatch):
    before = listing(taskset)
    chosen = tmp_path / "reports" / "tasks.json"
    result = validate(str(taskset), "--out", str(chosen), monkeypatch=monkeypatch)
    assert result.exit_code == 1, result.output
    assert f"results in {chosen}" in result.output
    assert sorted(c["status"] for c in json.loads(chosen.read_text()).values()) == ["broken", "valid", "valid"]
    assert not cache.exists() and listing(taskset) == before


class OutputQuotingVerifier(GoldOnlyVerifier):
    """Fails as a test run's output does: text in square brackets (which rich would read as markup),
    long, naming what failed at its end."""

    DETAIL = "[/srv/app/shared-488] PASSED " + "x" * 600 + " FAILED test_a.py::test_b - 1 failed"

    async def verify(self, task, patch: str) -> Verdict:
        verdict = await super().verify(task, patch)
        return verdict if verdict.resolved else verdict.model_copy(update={"detail": self.DETAIL})


def test_a_why_quoting_test_output_is_printed_as_text_keeps_its_end_and_its_results(cache, taskset, monkeypatch):
    monkeypatch.setattr("factory.verify.DockerVerifier", OutputQuotingVerifier)
    result = CliRunner().invoke(cli.app, ["tasks", "validate", str(taskset)])
    assert result.exit_code == 1 and isinstance(result.exception, SystemExit), repr(result.exception)  # not a crash
    assert "[/srv/app/shared-488]" in result.output.replace("\n", "")
    [broken] = [c for c in read_results(str(taskset)).values() if c["status"] == "broken"]
    assert broken["why"].startswith("gold fix does not resolve (tests_failed: [/srv/app/shared-488] PASSED xxx")
    assert broken["why"].endswith("FAILED test_a.py::test_b - 1 failed)") and len(broken["why"]) < 400


def test_a_pipeline_relative_source_reads_what_validate_wrote(cache, taskset, monkeypatch):
    validate(str(taskset), monkeypatch=monkeypatch)
    report = load_tasks(TasksConfig(source="tasks"), base=taskset.parent)
    assert len(report.tasks) == 2 and report.skipped[0].field == "validation"


def test_results_beside_the_source_from_older_versions_are_read_but_the_cache_wins(cache, taskset, monkeypatch):
    ids = [t.instance_id for t in load_taskset(str(taskset)).tasks]
    write_results(taskset / "validation.json", [TaskCheck(ids[0], "broken", why="old")])
    assert list(read_results(str(taskset))) == [ids[0]]
    assert [t.instance_id for t in load_taskset(str(taskset)).tasks] == ids[1:]
    validate(str(taskset), monkeypatch=monkeypatch)
    assert [t.instance_id for t in load_taskset(str(taskset)).tasks] == ids[:2]
    assert json.loads((taskset / "validation.json").read_text())[ids[0]]["why"] == "old"  # never rewritten


def test_an_unwritable_cache_is_a_usage_error_that_names_the_way_out(tmp_path, taskset, monkeypatch):
    (tmp_path / "not-a-folder").write_text("")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "not-a-folder"))
    result = validate(str(taskset), monkeypatch=monkeypatch)
    assert isinstance(result.exception, UsageError) and "--out" in str(result.exception)


def test_the_examples_in_the_tasks_page_run_as_shown(cache, monkeypatch):
    monkeypatch.chdir(ROOT)
    assert run_examples("tasks.md") == 3  # the demo task set, rows of every format, a Rust task with its test command
