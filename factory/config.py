"""The pipeline YAML as typed models, with errors that name file, line, column and field.

    Pipeline ── tasks, teachers[], agent, sandbox, verifier, sampling, filters, output,
                warehouse, budget, executor

Unknown keys are errors everywhere. `${VAR}` and `${VAR:-default}` in string values are
read from the environment; values that came from the environment are never printed.
Command-line values (`Override`) are put into the YAML's data before validation, so they are
checked by the same rules; an error in one names its option.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, Field, ValidationError, model_validator
from pydantic_core import ErrorDetails, PydanticCustomError

from factory.agent.config import AgentConfig
from factory.errors import ConfigError, UsageError
from factory.executor.config import ExecutorConfig
from factory.filters import FiltersConfig
from factory.sandbox.config import SandboxConfig
from factory.section import Section
from factory.tasks.config import TasksConfig
from factory.teachers import TEACHERS, config_union, kinds
from factory.teachers.label import teacher_label
from factory.teachers.prices import price_of
from factory.verify.config import VerifierConfig

TeacherConfig = config_union()
"""One teacher: the union of every registered kind's own config (`anthropic`, `openai`, `scripted`)."""


class HopelessConfig(Section):
    """When a teacher stops paying for a task: its posterior pass rate is almost surely near 0."""

    enabled: bool = True
    """Stop a teacher on a task once the posterior says it is hopeless."""
    below: float = Field(default=0.05, gt=0, lt=1)
    """A pass rate under this is hopeless."""
    mass: float = Field(default=0.7, gt=0, lt=1)
    """The posterior probability below `below` that makes a teacher hopeless on a task."""
    prior: tuple[float, float] = (0.25, 0.65)
    """Beta prior (passes, failures) of a task's pass rate before any attempt: U-shaped, as pass
    rates of coding tasks pile up near 0 with some near 1; its mean, 0.28, is SWE-smith's 5,016
    kept runs of 17,906 attempts. With the defaults a teacher is hopeless after 4 failures and
    no pass."""
    min_attempts: int = Field(default=3, ge=1)
    """Graded attempts of a teacher on a task before it may be called hopeless."""


class SamplingConfig(Section):
    attempts_per_task: int = Field(default=5, ge=1)
    """Attempts per task and teacher, at most."""
    give_up_after_failures: int | None = Field(default=None, ge=1)
    """Stop sampling a task after this many failures in a row; None never gives up."""
    max_in_flight: int = Field(default=8, ge=1)
    """Attempts running at once across all teachers."""
    infra_retries: int = Field(default=2, ge=0)
    """Redo an attempt this many times when infrastructure (sandbox, API outage) failed it."""
    seed: int = 0
    """Seed for every random choice of the run."""
    hopeless: HopelessConfig = Field(default_factory=HopelessConfig)
    """When a teacher stops paying for a task whose posterior pass rate is near 0 (docs/allocation.md)."""
    tiers: list[list[str]] | None = None
    """Teacher cascade: teacher labels by tier, cheapest first, every teacher in one tier; a task
    reaches a tier once the one before failed it `escalate_after` times or was done with it.
    None: every teacher samples every task from the start."""
    escalate_after: int = Field(default=2, ge=1)
    """Failures of a tier on a task, with no pass, that open the next tier to it."""

    @model_validator(mode="before")
    @classmethod
    def _moved(cls, data: Any) -> Any:
        if isinstance(data, dict) and "stop_after_kept" in data:
            raise ValueError("stop_after_kept is gone: a task stops once the dataset keeps filters.cap.per_task "
                             "runs of it; set that instead")
        return data


class OutputConfig(Section):
    dir: str = "runs"
    """Folder under which each run writes `<dir>/<run id>/` (relative to the YAML file)."""
    template: Literal["qwen3", "chatml"] = "qwen3"
    """Chat template of the `tokenized` config."""
    license: str = "apache-2.0"
    """License written into the dataset card."""
    pretty_name: str | None = None
    hub_repo_id: str | None = None
    """Default `ORG/NAME` for `factory push`."""
    private: bool = True
    """Visibility of the Hub repo that `factory push` creates (`--public`/`--private` override)."""
    include_failures: bool = False
    """Also write the dataset's `attempts` config: every graded attempt, failures too, with its
    verdict and filter decision (docs/dataset.md)."""


class WarehouseConfig(Section):
    path: str | None = None
    """DuckDB file; None puts `warehouse.duckdb` in the run folder."""


class BudgetConfig(Section):
    max_cost_usd: float | None = Field(default=None, gt=0, allow_inf_nan=False)
    """USD for the whole run: an attempt starts only while the cost spent plus the ceilings of
    the attempts in flight, its own included, stay within it (docs/run.md, "Budget")."""


class Pipeline(Section):
    name: str
    """Name of the pipeline; default prefix of run ids and the dataset's pretty name."""
    description: str = ""
    tasks: TasksConfig
    teachers: list[TeacherConfig] = Field(min_length=1)
    agent: AgentConfig = Field(default_factory=AgentConfig)
    sandbox: SandboxConfig = Field(default_factory=SandboxConfig)
    verifier: VerifierConfig = Field(default_factory=VerifierConfig)
    sampling: SamplingConfig = Field(default_factory=SamplingConfig)
    filters: FiltersConfig = Field(default_factory=FiltersConfig)
    output: OutputConfig = Field(default_factory=OutputConfig)
    warehouse: WarehouseConfig = Field(default_factory=WarehouseConfig)
    budget: BudgetConfig = Field(default_factory=BudgetConfig)
    executor: ExecutorConfig = Field(default_factory=ExecutorConfig)

    path: Path | None = Field(default=None, exclude=True)
    """Where the pipeline was read from; relative paths in it resolve against its folder."""

    @property
    def base(self) -> Path:
        """The folder relative paths in the pipeline are read from: the file's, else the current one."""
        return self.path.parent if self.path else Path.cwd()

    def resolve(self, relative: str) -> Path:
        base = self.base
        return (base / relative).resolve()

    @model_validator(mode="after")
    def _budget_needs_prices(self) -> Pipeline:
        """A budget cannot hold over a teacher whose cost is unknown."""
        if self.budget.max_cost_usd is None:
            return self
        for index, teacher in enumerate(self.teachers):
            if price_of(teacher) is None:
                raise PydanticCustomError(
                    UNPRICED,
                    f"teacher {teacher_label(teacher)!r} has no known price for model {teacher.model!r}, and a "
                    "budget needs one: give the teacher `price:` (input, output, cache_read, cache_write in USD "
                    "per million tokens), or run without a budget",
                    {"teacher": index},
                )
        return self

    @model_validator(mode="after")
    def _tiers_name_teachers(self) -> Pipeline:
        """Each teacher in exactly one tier, each tier label a teacher of the pipeline."""
        tiers = self.sampling.tiers
        if tiers is None:
            return self
        labels = [teacher_label(t) for t in self.teachers]
        seen: set[str] = set()
        for i, tier in enumerate(tiers):
            if not tier:
                raise PydanticCustomError(AT, "a tier lists at least one teacher", {"loc": ("sampling", "tiers", i)})
            for j, label in enumerate(tier):
                if label not in labels or label in seen:
                    why = "is in two tiers" if label in seen else f"is no teacher (teachers: {', '.join(labels)})"
                    raise PydanticCustomError(AT, f"{label!r} {why}", {"loc": ("sampling", "tiers", i, j)})
                seen.add(label)
        missing = [label for label in labels if label not in seen]
        if missing:
            raise PydanticCustomError(AT, f"teacher(s) {', '.join(missing)} in no tier; list each teacher in one",
                                      {"loc": ("sampling", "tiers")})
        return self


UNPRICED = "unpriced_teacher"
AT = "error_at"
"""A pipeline-wide check's error, placed at `ctx["loc"]`."""


@dataclass(frozen=True)
class Override:
    """A command-line value for one field of the pipeline, e.g. `--limit` for `tasks.limit`."""

    option: str
    field: str
    """Dotted path of the field it sets."""
    value: Any


# ------------------------------------------------------------------------------ loading

_ENV_REF = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


def load_pipeline(path: str | Path, overrides: Sequence[Override] = ()) -> Pipeline:
    """Read and validate a pipeline YAML; every problem is a `ConfigError` with file:line:col,
    or a `UsageError` that names the option when an override is at fault."""
    path = Path(path)
    try:
        text = path.read_text()
    except OSError as exc:
        raise ConfigError(str(path), None, None, "", f"cannot read: {exc.strerror}") from exc
    return parse_pipeline(text, str(path), overrides)


def parse_pipeline(text: str, filename: str = "<pipeline>", overrides: Sequence[Override] = ()) -> Pipeline:
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        problem = getattr(exc, "problem", None) or str(exc)
        line, col = (mark.line + 1, mark.column + 1) if mark else (None, None)
        raise ConfigError(filename, line, col, "", f"YAML syntax error: {problem}") from None
    if not isinstance(data, dict):
        raise ConfigError(filename, 1, 1, "", "a pipeline is a YAML mapping (name:, tasks:, teachers:, ...)")
    problems: list[UsageError] = []
    data = _interpolate(data, root, filename, (), problems)
    for override in overrides:
        _put(data, override.field.split("."), override.value)
    try:
        pipeline = Pipeline.model_validate(data)
    except ValidationError as exc:
        problems += [_config_error(err, root, filename, overrides) for err in exc.errors(include_url=False,
                                                                                       include_input=False)]
    if problems:
        raise _every(problems) from None
    if filename != "<pipeline>":
        pipeline.path = Path(filename).resolve()
    return pipeline


def _every(problems: list[UsageError]) -> UsageError:
    """One error holding each problem once (a field that is wrong in two ways is named once, by
    the first), in the file's order, one line each."""
    seen: set[str] = set()
    unique = []
    for problem in problems:
        key = problem.field if isinstance(problem, ConfigError) else str(problem)
        if key not in seen:
            seen.add(key)
            unique.append(problem)
    in_file = sorted((p for p in unique if isinstance(p, ConfigError)), key=lambda p: (p.line or 0, p.column or 0))
    options = [p for p in unique if not isinstance(p, ConfigError)]
    if not options:
        return ConfigError.of(in_file)
    return UsageError("\n".join(str(p) for p in [*options, *in_file]))


def _interpolate(value: Any, root: yaml.Node, filename: str, loc: tuple[Any, ...], problems: list[UsageError]) -> Any:
    """`${VAR}` read from the environment; a variable that is not set is a problem, its text left as it is."""
    if isinstance(value, dict):
        return {k: _interpolate(v, root, filename, (*loc, k), problems) for k, v in value.items()}
    if isinstance(value, list):
        return [_interpolate(v, root, filename, (*loc, i), problems) for i, v in enumerate(value)]
    if not isinstance(value, str) or "${" not in value:
        return value

    def lookup(match: re.Match[str]) -> str:
        name, default = match.group(1), match.group(2)
        if name in os.environ:
            return os.environ[name]
        if default is not None:
            return default
        line, col = _position(root, loc)
        problems.append(ConfigError(
            filename, line, col, _dotted(loc),
            f"environment variable {name} is not set; export it or write ${{{name}:-default}}",
        ))
        return match.group(0)

    return _ENV_REF.sub(lookup, value)


def _put(data: dict[str, Any], path: list[str], value: Any) -> None:
    for part in path[:-1]:
        data = data.setdefault(part, {})
        if not isinstance(data, dict):  # the YAML's own value is wrong: validation says so
            return
    data[path[-1]] = value


def _config_error(
    err: ErrorDetails, root: yaml.Node, filename: str, overrides: Sequence[Override] = ()
) -> UsageError:
    """One validation error, placed on the YAML node (or the option) it is about."""
    raw = err["loc"]
    # drop union tags pydantic puts in the path (`teachers.1.openai.model` -> `teachers[1].model`)
    loc = tuple(
        p for i, p in enumerate(raw)
        if not (isinstance(p, str) and (p in _UNION_TAGS or (i and isinstance(raw[i - 1], int) and p in kinds())))
    )
    message = err["msg"]
    if err["type"] == "union_tag_invalid":  # the one union of kinds in a pipeline is its teachers'
        loc = (*loc, "kind")
        message = TEACHERS.unknown(err["ctx"]["tag"])
    elif err["type"] == "union_tag_not_found":
        loc = (*loc, "kind")
        message = f"field required; valid: {', '.join(kinds())}"
    elif err["type"] == "missing":
        message = "field required"
    elif err["type"] == "extra_forbidden":
        kind = next((p for p in raw if isinstance(p, str) and p in kinds()), None)
        message = f"unknown key (valid keys: {', '.join(_valid_keys(loc, kind))})"
    elif err["type"] == UNPRICED:
        loc = ("teachers", err["ctx"]["teacher"], "model")
    elif err["type"] == AT:
        loc = tuple(err["ctx"]["loc"])
    given = next((o for o in overrides if o.field == _dotted(loc)), None)
    if given is not None:
        return UsageError(f"{given.option} {given.value}: {message}")
    line, col = _position(root, loc, at_key=err["type"] == "extra_forbidden")
    return ConfigError(filename, line, col, _dotted(loc), message)


_UNION_TAGS = {"str", "int", "float", "bool", "list[str]", "none"}


def _model_in(annotation: Any, kind: str | None) -> type[BaseModel] | None:
    """The pydantic model inside an annotation (list[...], X | None, a union picked by `kind`)."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in getattr(annotation, "__args__", ()) + getattr(annotation, "__metadata__", ()):
        found = _model_in(arg, kind)
        if found is not None and (kind is None or "kind" not in found.model_fields
                                  or found.model_fields["kind"].default == kind):
            return found
    return None


def _valid_keys(loc: tuple[Any, ...], kind: str | None = None) -> list[str]:
    model: Any = Pipeline
    for part in loc[:-1]:
        if isinstance(part, int):
            continue
        field = model.model_fields.get(part)
        if field is None:
            return []
        model = _model_in(field.annotation, kind)
        if model is None:
            return []
    return sorted(model.model_fields)


def _position(
    root: yaml.Node | None, loc: tuple[Any, ...], *, at_key: bool = False
) -> tuple[int | None, int | None]:
    """Line and column of the deepest node on `loc` that exists (a missing key points at its parent)."""
    node = root
    for depth, part in enumerate(loc, 1):
        child = None
        if isinstance(node, yaml.MappingNode):
            for key, val in node.value:
                if key.value == part:
                    # an unknown key is reported where the key is written, a bad value at the value
                    child = key if at_key and depth == len(loc) else val
                    break
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int) and part < len(node.value):
            child = node.value[part]
        if child is None:
            break
        node = child
    if node is None:
        return None, None
    return node.start_mark.line + 1, node.start_mark.column + 1


def _dotted(loc: tuple[Any, ...]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out
