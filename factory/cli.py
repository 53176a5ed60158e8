"""The `factory` command line (typer). Each command is a thin edge over a stage's Python API.

Exit codes: 0 success, 1 the job ran and failed, 2 bad usage or bad input (one line that
names the file, line or field at fault).
"""

from __future__ import annotations

import sys
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, TypeVar

import typer
from rich.console import Console
from rich.markup import escape

from factory import __version__
from factory.errors import FactoryError, StorageError, UsageError

if TYPE_CHECKING:  # the pipeline's config pulls in every stage; `factory --help` needs none of them
    from factory.config import Pipeline, VerifierConfig
    from factory.run.folder import RunStore
    from factory.verify import DockerVerifier

T = TypeVar("T")
BACKEND_HELP = "The sandbox backend the containers live on (default: sandbox.backend's)"


app = typer.Typer(
    name="factory",
    help="Rejection-sampling SFT data for coding agents: run teachers on tasks in Docker "
    "sandboxes, keep what hidden tests verify, write chat-template datasets.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
    rich_markup_mode=None,  # help text is plain: `[/TEACHER]` in an argument's help is not a tag
)
console = Console(soft_wrap=True)  # piped output keeps its lines whole (a command to copy, a path)
err_console = Console(stderr=True, soft_wrap=True)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"factory {__version__}")
        raise typer.Exit()


@app.callback()
def main(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version and exit.")
    ] = False,
) -> None:
    """factory: SFT data for coding agents by rejection sampling."""


@app.command()
def run(
    pipeline: Annotated[Path, typer.Argument(help="Pipeline YAML, e.g. pipelines/demo.yaml.")],
    run_id: Annotated[str | None, typer.Option(help="Run id; rerunning an id resumes it.")] = None,
    limit: Annotated[int | None, typer.Option(help="Use at most this many tasks.")] = None,
    max_cost: Annotated[float | None, typer.Option(help="Stop launching at this many USD.")] = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Validate the pipeline and print the plan and forecast.")] = False,
    pilot: Annotated[str | None, typer.Option(
        help="With --dry-run: forecast from this run's pass rates and costs (a run folder or id).")] = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress display.")] = False,
    allow_changes: Annotated[bool, typer.Option(
        "--allow-changes", help="Resume even though settings or the task selection differ (recorded in run.json).")] = False,
    executor: Annotated[str | None, typer.Option(help="Where attempts run: local or ray (executor.kind).")] = None,
    ray_address: Annotated[str | None, typer.Option(
        help="With --executor ray: auto, or the head's HOST:PORT (executor.address).")] = None,
    backend: Annotated[str | None, typer.Option(help="The sandbox backend the containers live on (sandbox.backend).")] = None,
) -> None:
    """Run (or resume) a pipeline: sample, verify, filter, render, write the dataset."""
    import asyncio

    from factory.config import Override, load_pipeline

    if ray_address is not None and executor is None:  # an address means the cluster at it
        executor = "ray"
    given = [Override("--limit", "tasks.limit", limit), Override("--max-cost", "budget.max_cost_usd", max_cost),
             Override("--executor", "executor.kind", executor), Override("--ray-address", "executor.address", ray_address),
             Override("--backend", "sandbox.backend", backend)]
    config = load_pipeline(pipeline, [o for o in given if o.value is not None])  # validated as the YAML is
    if pilot is not None and not dry_run:
        raise UsageError("--pilot goes with --dry-run: it is what the forecast reads")
    if dry_run:
        print_plan(config, run_id)
        print_forecast(config, pilot)
        return
    from factory.run.progress import make_progress
    from factory.run.runner import run_pipeline

    outcome = asyncio.run(run_pipeline(config, run_id=run_id, progress=make_progress(quiet), allow_changes=allow_changes))
    print_summary(outcome)
    if outcome.result.stopped == "interrupted":
        raise typer.Exit(130)


def print_summary(outcome) -> None:
    r, store = outcome.result, outcome.store
    console.print(f"[bold]run[/] {store.run_id}: {r.finished} attempt(s) finished now, {r.resumed} from before")
    if r.stopped:
        why = {"budget": "the budget was reached", "interrupted": "interrupted; rerun with --run-id to resume"}
        console.print(f"  stopped early: {why.get(r.stopped, r.stopped)}")
    unknown = f" (+{r.unknown_cost} attempt(s) of unknown cost)" if r.unknown_cost else ""
    if r.possibly_billed:  # apart from the recorded cost: a bound, not a bill (docs/run.md)
        up_to = f"up to ${r.possibly_billed_usd:.2f} " if r.possibly_billed > r.possibly_billed_unpriced else ""
        unpriced = f", {r.possibly_billed_unpriced} of unknown price" if r.possibly_billed_unpriced else ""
        unknown += (f" (+ {up_to}possibly billed by {r.possibly_billed} request(s) cut off in flight: "
                    f"killed, cancelled or timed out{unpriced})")
    console.print(f"  cost          ${r.spent_usd:.2f}{unknown}")
    if r.cap is not None:
        console.print(f"  early stop    {r.at_cap} of {r.tasks} task(s) reached the cap of {r.cap} "
                      f"(filters.cap); {r.not_needed} attempt(s) not made")
    if r.saved:  # every unit never made, by the decision that spared it (factory.run.allocation)
        console.print(f"  saved         {sum(r.saved.values())} attempt(s) never made: "
                      + ", ".join(f"{n} by {why}" for why, n in sorted(r.saved.items())))
    if outcome.build is not None:
        console.print(f"  funnel        {escape(outcome.build.chain.format_funnel())}")
        console.print(f"  dataset       {outcome.build.out_dir} ({outcome.build.rows} rows; card {outcome.build.card.name})")
    console.print(f"  warehouse     {store.warehouse_path}  (factory query funnel --db {store.warehouse_path})")
    if outcome.warehouse_behind:
        console.print(f"                {escape(outcome.warehouse_behind)}; a resume or `factory build` "
                      "records them from the attempt files")
    console.print(f"  attempts      {store.attempts_dir}")


@app.command()
def clean(
    all_: Annotated[bool, typer.Option("--all", help="Remove every factory container, also of live runs.")] = False,
    run_id: Annotated[str | None, typer.Option(help="Remove every container of this run, live ones included.")] = None,
    backend: Annotated[str | None, typer.Option(help=BACKEND_HELP)] = None,
) -> None:
    """Remove leftover sandbox containers (found by their factory labels)."""
    from factory.sandbox.backend import sandbox_backend

    removed = sandbox_backend(_backend(backend)).remove_containers(run_id=run_id, everything=all_)
    scope = "all factory containers" if all_ else (f"run {run_id}" if run_id else "containers of dead factory processes")
    console.print(f"removed {removed} container(s): {scope}")


def _render_command():
    from factory.render.cli import render

    return render


app.command("render", help="Print a rendered trajectory with the trained (assistant) spans marked.")(_render_command())

def _query_command():
    from factory.warehouse.cli import query

    return query


app.command("query", help="DuckDB over the warehouse: SQL or a named query (funnel, learnable_tasks, ...).")(_query_command())

tasks_app = typer.Typer(help="Inspect and validate task sets.", no_args_is_help=True)
images_app = typer.Typer(help="Build sandbox images of local task sets.", no_args_is_help=True)
app.add_typer(tasks_app, name="tasks")
app.add_typer(images_app, name="images")
TASKSET_HELP = "A task-set folder, a JSONL or Parquet file, or a Hugging Face dataset name."


def _load(taskset: str, strict: bool = False):
    from factory.tasks import load_taskset

    report = load_taskset(taskset, strict=strict, skip_invalid=False)
    for bad in report.skipped:
        err_console.print(f"skipped: {bad}", markup=False, highlight=False)
    if report.skipped:
        err_console.print(report.summary(), markup=False, highlight=False)
    return report.tasks


def _backend(name: str | None) -> str:
    """`--backend`'s value (the default backend when not given), when a backend of that name is
    registered; else a usage error naming the option and the valid names."""
    from factory.sandbox.backend import BACKENDS, DEFAULT_BACKEND

    if name is None:
        return DEFAULT_BACKEND
    if name not in BACKENDS:
        raise UsageError(f"--backend: {BACKENDS.unknown(name)}")
    return name


def _local_images(taskset: str, tasks, backend: str) -> None:
    """Build missing images when the source is a local task set with repo sources."""
    from factory.sandbox.images import ensure_local_images

    for image, state in ensure_local_images(Path(taskset), tasks, backend=backend):
        if state == "built":
            console.print(f"built image {image}")


@tasks_app.command("list")
def tasks_list(taskset: Annotated[str, typer.Argument(help=TASKSET_HELP)]) -> None:
    """One line per task: instance id, repo, language and how its tests are read, number of
    FAIL_TO_PASS / PASS_TO_PASS tests, image."""
    for t in _load(taskset):
        tests = t.tests.results or t.tests.framework
        typer.echo(f"{t.instance_id}\t{t.repo}\t{t.language} ({tests})\t"
                   f"f2p={len(t.FAIL_TO_PASS)} p2p={len(t.PASS_TO_PASS)}\t{t.image}")


@tasks_app.command("show")
def tasks_show(
    taskset: Annotated[str, typer.Argument(help=TASKSET_HELP)],
    instance_id: Annotated[str, typer.Argument(help="The task's instance id.")],
) -> None:
    """Print one task as JSON (the `Task` record every loader produces)."""
    match = [t for t in _load(taskset) if t.instance_id == instance_id]
    if not match:
        raise UsageError(f"no task {instance_id!r} in {taskset} (see `factory tasks list {taskset}`)")
    typer.echo(match[0].model_dump_json(indent=2))


@tasks_app.command("validate")
def tasks_validate(
    taskset: Annotated[str, typer.Argument(help=TASKSET_HELP)],
    jobs: Annotated[int, typer.Option(help="Tasks checked at once.")] = 2,
    repeat: Annotated[int, typer.Option(help="Run the gold check K times; differing results mark a task flaky.")] = 1,
    timeout: Annotated[float, typer.Option(help="Seconds the tests of one check may run.")] = 300,
    out: Annotated[Path | None, typer.Option(
        help="Write the results to this file instead of factory's cache (runs read only the cache).")] = None,
    backend: Annotated[str | None, typer.Option(help=BACKEND_HELP)] = None,
) -> None:
    """Gold fix must resolve each task and the empty patch must not; exit 1 if any task is broken.
    A terminal task (Harbor): its solution/solve.sh must earn the reward, its start state must not.

    Results go to factory's cache (~/.cache/factory/validation, or under $XDG_CACHE_HOME), one
    file per source, where runs look for them; nothing is written into the task source's folder."""
    import asyncio

    from rich.table import Table
    from rich.text import Text

    from factory.config import VerifierConfig
    from factory.tasks.validate import results_path, validate, write_results

    backend = _backend(backend)
    tasks = _load(taskset)
    _local_images(taskset, tasks, backend)
    progress = lambda c: console.print(f"  {c.status:7} {c.instance_id}", markup=False)  # noqa: E731
    checks = asyncio.run(_verifying(VerifierConfig(timeout=timeout), backend,
                                    lambda verifier: validate(verifier, tasks, jobs=jobs, repeat=repeat, progress=progress,
                                                                     backend=verifier.backend)))
    where = out or results_path(taskset)
    try:
        write_results(where, checks)
    except OSError as exc:
        raise UsageError(f"cannot write the results to {where} ({exc.strerror}); choose a file with --out "
                         "or a writable cache with XDG_CACHE_HOME") from exc
    table = Table("instance", "status", "why")
    for c in checks:  # a why quotes test output, whose brackets are not rich markup
        table.add_row(Text(c.instance_id), c.status, Text(c.why))
    console.print(table)
    bad = [c for c in checks if c.status != "valid"]
    console.print(f"{len(checks) - len(bad)} valid, {len(bad)} broken, flaky or not checked (infra_error); "
                  f"results in {where}", markup=False, highlight=False, soft_wrap=True)
    if out:
        console.print(f"runs look for the results of {taskset} in {results_path(taskset)}, not in {out}",
                      markup=False, highlight=False, soft_wrap=True)
    if bad:
        raise typer.Exit(1)


async def _verifying(config: VerifierConfig, backend: str, work: Callable[[DockerVerifier], Awaitable[T]]) -> T:
    """`work` with a verifier of this command's own, whose containers are all gone when it ends,
    however it ends (Ctrl-C included): any left is removed and told."""
    from factory.sandbox.config import SandboxConfig
    from factory.verify import DockerVerifier

    verifier = DockerVerifier(config, SandboxConfig(backend=backend), run_id=f"verify-{uuid.uuid4().hex[:12]}", share=True)
    try:
        return await work(verifier)
    finally:
        await verifier.close()
        left = await verifier.backend.remove_left(verifier.run_id)
        if left:
            console.print(f"removed {left} verification container(s) left on the engine", markup=False)


@images_app.command("build")
def images_build(
    taskset: Annotated[str, typer.Argument(help="A local task-set folder (tasks.jsonl + repos/), or of Harbor tasks.")],
    rebuild: Annotated[bool, typer.Option(help="Rebuild images that already exist.")] = False,
    backend: Annotated[str | None, typer.Option(help=BACKEND_HELP)] = None,
) -> None:
    """Build one image per repo of a local task set from the base image, or one per Harbor task
    from its Dockerfile (no registry, no network)."""
    from factory.sandbox.backend import sandbox_backend
    from factory.sandbox.images import ensure_images, local_taskset
    from factory.tasks.harbor import is_taskset

    backend = _backend(backend)
    folder = Path(taskset)
    if is_taskset(folder):
        for image, state in sandbox_backend(backend).build_dockerfile_images(_load(taskset), rebuild=rebuild):
            console.print(f"{state:8} {image}")
        return
    if local_taskset(folder) != folder:
        raise UsageError(f"{taskset}: not a local task set (expected {folder}/tasks.jsonl and {folder}/repos/)")
    for image, state in ensure_images(_load(taskset), folder, rebuild=rebuild, backend=backend):
        console.print(f"{state:8} {image}")


@app.command()
def verify(
    taskset: Annotated[str, typer.Option(help=TASKSET_HELP)],
    instance: Annotated[str, typer.Option(help="Instance id of the task.")],
    patch: Annotated[Path, typer.Option(help="The agent's diff against the task's start state ('-' for stdin).")],
    json_out: Annotated[bool, typer.Option("--json", help="Print the verdict as JSON.")] = False,
    timeout: Annotated[float, typer.Option(help="Seconds the tests may run.")] = 900,
    backend: Annotated[str | None, typer.Option(help=BACKEND_HELP)] = None,
) -> None:
    """Verify one patch in a fresh container; exit 0 when resolved, 1 when not."""
    import asyncio

    from factory.config import VerifierConfig

    backend = _backend(backend)
    tasks = [t for t in _load(taskset) if t.instance_id == instance]
    if not tasks:
        raise UsageError(f"no task {instance!r} in {taskset} (see `factory tasks list {taskset}`)")
    # bytes that are not UTF-8 (a Latin-1 data file in the diff) are read as a run reads its
    # sandbox's diff, so this verdict is the one the run would give
    if str(patch) == "-":
        diff = sys.stdin.buffer.read().decode(errors="replace")
    elif patch.exists():
        diff = patch.read_bytes().decode(errors="replace")
    else:
        raise UsageError(f"patch file {patch} does not exist")
    _local_images(taskset, tasks, backend)
    verdict = asyncio.run(_verifying(VerifierConfig(timeout=timeout), backend, lambda verifier: verifier.verify(tasks[0], diff)))
    if json_out:
        typer.echo(verdict.model_dump_json(indent=2))
    else:
        console.print(f"resolved: {verdict.resolved}  reason: {verdict.reason}  {verdict.detail}", markup=False)
    raise typer.Exit(0 if verdict.resolved else 1)


RUN_HELP = "A run folder, or a run id under ./runs."


@app.command()
def show(
    run_: Annotated[str, typer.Argument(metavar="RUN", help=RUN_HELP)],
    attempt: Annotated[str | None, typer.Argument(help="INSTANCE[/TEACHER]/INDEX: show one trajectory.")] = None,
    width: Annotated[int, typer.Option(help="Characters of each tool output shown.")] = 600,
) -> None:
    """A run's summary, or one trajectory rendered readably (turns, tool calls, outputs, verdict)."""
    from factory.run.folder import RunStore
    from factory.run.show import show_attempt, show_run

    store = RunStore.find(run_)
    if attempt:
        show_attempt(console, store.find_attempt(attempt), width)
    else:
        show_run(console, store)


@app.command()
def build(
    run_: Annotated[str, typer.Argument(metavar="RUN", help=RUN_HELP)],
    per_task: Annotated[int | None, typer.Option(help="Keep at most N runs per task (cap).")] = None,
    min_repeats: Annotated[int | None, typer.Option(help="Repeated actions that make a loop.")] = None,
    max_period: Annotated[int | None, typer.Option(help="Longest action cycle counted as a loop.")] = None,
    max_tokens: Annotated[int | None, typer.Option(help="Drop rows longer than this after rendering.")] = None,
    near_threshold: Annotated[float | None, typer.Option(help="MinHash similarity that makes a near duplicate.")] = None,
) -> None:
    """Re-filter and re-write a finished run's dataset with other settings; no new attempts."""
    from factory.output import BuildSettings
    from factory.run.folder import RunStore
    from factory.run.runner import build_run, open_warehouse, pipeline_of
    from factory.tasks import load_tasks

    store = RunStore.find(run_)
    pipeline = pipeline_of(store)
    settings = BuildSettings(filters=pipeline.filters, build_command=" ".join(["factory", *sys.argv[1:]])).with_overrides(
        per_task=per_task, min_repeats=min_repeats, max_period=max_period, max_tokens=max_tokens,
        near_threshold=near_threshold,
    )
    tasks = load_tasks(pipeline.tasks.model_copy(update={"skip_invalid": False}), base=pipeline.base).tasks
    with store.locked():  # a live run writes the same warehouse and dataset
        warehouse = open_warehouse(pipeline, store, tasks)
        try:
            attempts = store.attempts()
            warehouse.resync(attempts)  # what a reader kept out of the run's warehouse comes in now
            summary = build_run(pipeline, store, attempts, tasks, warehouse, settings)
        finally:
            warehouse.close()
    console.print(escape(summary.format()))


@app.command()
def report(
    run_: Annotated[str, typer.Argument(metavar="RUN", help=RUN_HELP)],
    out: Annotated[Path | None, typer.Option(
        help="Folder for index.html and its PNGs; default: the run folder's report/.")] = None,
) -> None:
    """A page of the run's plots from its warehouse (funnel, pass rates, time, exits, teachers, row lengths,
    reward spread, ...) and a per-task table linking to each kept row's trajectory."""
    from factory.report import write_report
    from factory.run.folder import RunStore

    store = RunStore.find(run_)
    page = write_report(_run_warehouse(store), store.run_id, out if out is not None else store.folder / "report",
                        store.dataset_dir)
    console.print(f"report: {page}  (open it in a browser; the PNGs are next to it)", markup=False, highlight=False)


def _run_warehouse(store: RunStore) -> Path:
    """The run folder's warehouse, else the one its pipeline's `warehouse.path` names."""
    if store.warehouse_path.exists():
        return store.warehouse_path
    from factory.config import parse_pipeline

    pipeline = parse_pipeline(store.pipeline_text(), store.meta()["pipeline"])
    return pipeline.resolve(pipeline.warehouse.path) if pipeline.warehouse.path else store.warehouse_path


@app.command()
def push(
    run_: Annotated[str, typer.Argument(metavar="RUN", help=RUN_HELP)],
    repo_id: Annotated[str | None, typer.Option(help="ORG/NAME on the Hub; default: the pipeline's output.hub_repo_id.")] = None,
    private: Annotated[bool | None, typer.Option(
        "--private/--public",
        help="Visibility of a repo this push creates; default: the pipeline's output.private (true).")] = None,
    revision: Annotated[str | None, typer.Option(help="Branch to push to.")] = None,
) -> None:
    """Upload a run's dataset and card to the Hugging Face Hub in one commit (token: HF_TOKEN or login)."""
    from factory.output import push as push_dataset
    from factory.run.folder import RunStore
    from factory.run.runner import pipeline_of

    store = RunStore.find(run_)
    output = pipeline_of(store).output
    repo = repo_id or output.hub_repo_id
    if not repo:
        raise UsageError("no --repo-id given and the pipeline has no output.hub_repo_id")
    if not (store.dataset_dir / "README.md").exists():
        raise UsageError(f"run {store.run_id} has no dataset yet; run `factory build {run_}` first")
    wanted = output.private if private is None else private
    with store.locked():  # not while a run or a build rewrites the dataset
        result = push_dataset(store.dataset_dir, repo, private=wanted, revision=revision)
    console.print(escape(str(result)))
    if result.private != wanted:
        console.print(f"note: {repo} already existed and stays {'private' if result.private else 'public'}; "
                      "a push sets the visibility only of a repo it creates", markup=False, highlight=False)


@app.command()
def export(
    run_: Annotated[str, typer.Argument(metavar="RUN", help=RUN_HELP)],
    format_: Annotated[str, typer.Option("--format", help="openai (chat fine-tuning JSONL with tools), sharegpt (LLaMA-Factory), dpo (TRL preference pairs), atif (Harbor trajectories) or rollouts (every graded attempt for RL; .parquet or JSON lines).")],
    out: Annotated[Path, typer.Option(help="The file to write (JSON lines; rollouts: .parquet too); trainer files go beside it.")],
    rows: Annotated[str, typer.Option(help="attempt (whole conversation), step (one row per assistant turn, trained on it) or last (trained on the final turn).")] = "attempt",
    filter_: Annotated[str | None, typer.Option("--filter", help="kept (the dataset's rows; default), resolved, failed or all graded attempts of the run.")] = None,
    thinking: Annotated[str, typer.Option(help="keep (reasoning trained), context (only on untrained turns: never in the loss) or drop.")] = "keep",
) -> None:
    """Write a run's rows as OpenAI chat JSONL, ShareGPT or DPO pairs, each line checked, with what a trainer needs beside it."""
    from factory.interchange.export import ExportOptions, export_dataset
    from factory.interchange.kept import Which
    from factory.interchange.shape import RowShape, ThinkingPolicy
    from factory.run.folder import RunStore
    from factory.run.runner import pipeline_of

    def choice(enum, value, flag):
        try:
            return enum(value)
        except ValueError:
            raise UsageError(f"{flag} {value!r}: choose one of {', '.join(e.value for e in enum)}") from None

    options = ExportOptions(rows=choice(RowShape, rows, "--rows"),
                            which=None if filter_ is None else choice(Which, filter_, "--filter"),
                            thinking=choice(ThinkingPolicy, thinking, "--thinking"),
                            command=" ".join(["factory", *sys.argv[1:]]))
    store = RunStore.find(run_)
    summary = export_dataset(store.dataset_dir, format_, out, options, attempts=store.attempts,
                             secrets=pipeline_of(store).filters.secrets)
    for line in summary.format_lines():
        console.print(line, markup=False, highlight=False)


@app.command("import")
def import_(
    path: Annotated[Path, typer.Argument(help="A trajectory file, or a folder of them.")],
    format_: Annotated[str, typer.Option("--format", help="mini-swe-agent, swe-agent, openhands, swe-smith-sft or atif.")],
    run_id: Annotated[str, typer.Option(help="Id of the run the import becomes (under ./runs).")],
    tasks: Annotated[str | None, typer.Option(
        help="The task source the trajectories were made on, to verify their patches against. " + TASKSET_HELP
        + " Without it the tasks come from the files and no patch is verified.")] = None,
    trust_source: Annotated[bool, typer.Option(
        "--trust-source", help="Keep trajectories that hold no patch and ended by submitting as their source "
        "verified them (verified_by: source in every output); a patch is still verified by factory.")] = False,
) -> None:
    """Other agents' trajectories as a run: each patch verified by factory, then filtered and built."""
    import asyncio

    from factory.interchange.importer import import_run

    outcome = asyncio.run(import_run(path, format_, tasks, run_id, trust_source=trust_source))
    for line in outcome.format_lines():
        console.print(line, markup=False, highlight=False)


def _keeps(config: Pipeline) -> str:
    cap = config.filters.cap
    return f"the dataset keeps {cap.per_task} runs of it (filters.cap)" if cap.enabled else "all its attempts are made"


def print_plan(config: Pipeline, run_id: str | None) -> None:
    """The plan of a run; never prints values that came from the environment (secrets)."""
    from factory.config import teacher_label

    t, s = config.tasks, config.sampling
    console.print(f"[bold]pipeline[/] {config.name}  ({config.path})")
    console.print(f"  run id        {run_id or '(new)'}")
    selection = [f"limit={t.limit}" if t.limit else "", f"limit_per_source={t.limit_per_source}" if t.limit_per_source else "",
                 f"shuffle_seed={t.shuffle_seed}" if t.shuffle_seed is not None else ""]
    console.print(f"  tasks         {escape(t.named())} {escape(f'[{t.format}]')} {' '.join(x for x in selection if x)}")
    for teacher in config.teachers:
        console.print(f"  teacher       {teacher_label(teacher)}: {teacher.kind} {teacher.model}")
    console.print(
        f"  attempts      up to {s.attempts_per_task} per task and teacher, "
        f"{s.max_in_flight} in flight; a task stops once {_keeps(config)}"
    )
    a, sb = config.agent, config.sandbox
    console.print(f"  agent limits  {a.max_turns} turns, {a.max_tokens} tokens, {a.max_wall_seconds:.0f} s per attempt")
    console.print(f"  sandboxes     network={sb.network} memory={sb.memory} cpus={sb.cpus} max_live={sb.max_live}")
    budget = config.budget.max_cost_usd
    console.print(f"  budget        {'none' if budget is None else _usd(budget)}")
    if budget is not None:
        console.print(f"  per attempt   {_ceilings(config)}")
    console.print(f"  output        {config.resolve(config.output.dir)}")


def print_forecast(config: Pipeline, pilot_run: str | None) -> None:
    """The run's expected attempts, kept rows and cost (factory.run.forecast); starts nothing."""
    from factory.run.folder import RunStore
    from factory.run.forecast import forecast, forecast_lines, read_pilot
    from factory.run.parts import plan_of

    if all(config.resolve(source).exists() for source in config.tasks.sources):
        from factory.tasks import load_tasks

        tasks = len(load_tasks(config.tasks, base=config.base).tasks)
        per = ""
    else:  # a Hub dataset: not downloaded for a dry run
        tasks = config.tasks.limit or 100
        per = "" if config.tasks.limit else "  (per 100 tasks: the source is not read by a dry run; give tasks.limit)"
    pilot = None
    if pilot_run is not None:
        store = RunStore.find(pilot_run, [config.resolve(config.output.dir)])
        pilot = read_pilot(_run_warehouse(store), store.run_id, config.sampling.hopeless.prior)
    for i, line in enumerate(forecast_lines(forecast(plan_of(config), tasks, pilot))):
        console.print(f"  {'forecast' if i == 0 else '':13} {escape(line)}{per if i == 0 else ''}", highlight=False)


def _usd(value: float) -> str:
    """Dollars as given: to the cent, or every digit when cents would hide some."""
    from decimal import Decimal

    return f"${value:.2f}" if round(value, 2) == value else f"${Decimal(repr(value)):f}"


def _ceilings(config: Pipeline) -> str:
    """What the budget reserves for one attempt in flight, before any has finished."""
    from factory.run.parts import terms_of

    terms = terms_of(config)
    if terms.per_attempt is not None:
        return f"at most {_usd(terms.per_attempt)} (agent.max_cost_usd)"
    each = ", ".join(f"{teacher} ${first or 0.0:.2f}" for teacher, first in terms.first.items())
    return f"at most {each} until one finishes, then the dearest seen"


def entrypoint() -> None:
    """Console-script entry: a user's error is one line on stderr and exit code 2."""
    try:
        app(prog_name="factory")  # also under `python -m factory.cli`
    except UsageError as exc:  # several problems of one file (ConfigError): one line each
        for line in str(exc).splitlines() or [""]:
            err_console.print(f"factory: {line}", markup=False, highlight=False, soft_wrap=True)
        sys.exit(2)
    except FactoryError as exc:
        err_console.print(f"factory: {exc}", markup=False, highlight=False, soft_wrap=True)
        sys.exit(1)
    except OSError as exc:  # a write that no stage translated (the dataset, build.json): still one line
        if exc.errno not in StorageError.HINTS:
            raise
        err_console.print(f"factory: {StorageError.writing(exc.filename or 'a file', exc)}", markup=False,
                          highlight=False, soft_wrap=True)
        sys.exit(1)


if __name__ == "__main__":
    entrypoint()
