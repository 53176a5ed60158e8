"""Each stage of a run receives its part of the pipeline, never the whole (`factory.run.parts`).

Two ways it could rot, two checks: a constructor in the orchestration or the executors that
names `Pipeline` in its signature; and a stage built as the run builds it that holds the
pipeline somewhere in what it keeps (a field typed `Any`, a closure over it).
"""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import pkgutil
import re
from pathlib import Path

import pytest

import factory.executor
import factory.run
from factory.config import Pipeline, parse_pipeline
from factory.executor.local import LocalExecutor
from factory.run.budget import Budget
from factory.run.folder import RunStore
from factory.run.parts import executor_site, plan_of, terms_of
from factory.run.progress import QuietProgress
from factory.run.scheduler import Scheduler
from factory.sandbox.pool import SandboxPool
from factory.teachers import build_teacher
from factory.verify import DockerVerifier

PIPELINE = """\
name: parts
tasks: {source: t}
teachers:
  - {kind: scripted, model: scripted-a}
  - {kind: openai, model: m, name: priced, price: {input: 1, output: 1, cache_read: 0, cache_write: 0}}
budget: {max_cost_usd: 5}
"""


def constructors(package) -> list[tuple[str, object]]:
    """Every class defined in `package`'s modules, by dotted name."""
    found = []
    for info in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
        module = importlib.import_module(info.name)
        for name, cls in vars(module).items():
            if inspect.isclass(cls) and cls.__module__ == info.name:
                found.append((f"{info.name}.{name}", cls))
    return found


def names_the_pipeline(cls) -> bool:
    """Whether `cls`'s constructor, or one of its dataclass fields, is annotated with `Pipeline`."""
    try:
        parameters = inspect.signature(cls.__init__).parameters.values()
    except (TypeError, ValueError):  # a builtin's slot wrapper: no signature to read
        parameters = []
    annotations = [p.annotation for p in parameters]
    if dataclasses.is_dataclass(cls):
        annotations += [f.type for f in dataclasses.fields(cls)]
    return any(re.search(r"\bPipeline\b", a if isinstance(a, str) else getattr(a, "__name__", repr(a)))
               for a in annotations)


@pytest.mark.parametrize("package", [factory.run, factory.executor])
def test_no_constructor_of_the_orchestration_or_the_executors_takes_the_pipeline(package):
    assert [name for name, cls in constructors(package) if names_the_pipeline(cls)] == []


def test_the_check_sees_a_constructor_that_takes_the_pipeline():
    class Takes:
        def __init__(self, pipeline: Pipeline): ...

    @dataclasses.dataclass
    class Holds:
        pipeline: Pipeline | None

    class Other:
        def __init__(self, sampling: int): ...

    assert names_the_pipeline(Takes) and names_the_pipeline(Holds) and not names_the_pipeline(Other)


def reachable(root: object) -> list[object]:
    """Everything `root` holds, followed through attributes, containers, bound methods and closures."""
    seen: dict[int, object] = {}
    stack = [root]
    while stack:
        obj = stack.pop()
        if id(obj) in seen or inspect.ismodule(obj) or inspect.isclass(obj) or isinstance(obj, str | bytes):
            continue
        seen[id(obj)] = obj
        if isinstance(obj, dict):
            stack += [*obj.keys(), *obj.values()]
        elif isinstance(obj, list | tuple | set | frozenset):
            stack += list(obj)
        if inspect.ismethod(obj):
            stack.append(obj.__self__)
        if inspect.isfunction(obj):
            stack += [cell.cell_contents for cell in obj.__closure__ or () if cell.cell_contents is not None]
        elif hasattr(obj, "__dict__"):
            stack += list(vars(obj).values())
    return list(seen.values())


def test_each_stage_built_as_the_run_builds_it_holds_no_pipeline(tmp_path: Path):
    pipeline = parse_pipeline(PIPELINE)
    store = RunStore(tmp_path / "run")
    teachers = {"scripted-a": build_teacher(pipeline.teachers[0])}
    pool = SandboxPool(pipeline.sandbox, run_id="parts")
    executor = LocalExecutor(pool, DockerVerifier(pipeline.verifier, pipeline.sandbox, run_id="parts"), teachers,
                             pipeline.agent)
    scheduler = Scheduler(plan_of(pipeline), [], teachers, store, executor=executor, progress=QuietProgress())
    site = executor_site(pipeline, store, [], teachers, {"priced"}, QuietProgress())
    for stage in (scheduler, Budget(terms_of(pipeline)), site):
        held = reachable(stage)
        assert not [o for o in held if isinstance(o, Pipeline)], type(stage).__name__
        assert len(held) > 10  # the walk went into what the stage holds


def test_the_walk_finds_a_pipeline_held_in_a_closure():
    pipeline = parse_pipeline(PIPELINE)

    class Stage:
        def __init__(self):
            self.later = lambda: pipeline.name

    assert any(isinstance(o, Pipeline) for o in reachable(Stage()))
