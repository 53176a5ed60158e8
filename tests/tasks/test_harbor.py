"""The `harbor` task source: Harbor and Terminal-Bench 1 task folders read into Tasks."""

from pathlib import Path

import pytest

from factory.errors import UsageError
from factory.tasks import load_taskset

DEMO = Path(__file__).parents[2] / "pipelines" / "tasksets" / "demo-terminal"


def test_the_demo_set_reads_as_seven_terminal_tasks():
    tasks = {t.instance_id: t for t in load_taskset(str(DEMO)).tasks}
    assert sorted(tasks) == ["build-zipapp", "configure-service", "fix-rotate-script", "recover-branch",
                             "repair-json", "serve-status", "summarize-sales"]
    task = tasks["configure-service"]
    assert task.terminal is not None and task.tests.framework == "final-state"
    assert "listens on port 8080" in task.problem_statement
    assert task.workdir == "/app" and task.image.startswith("factory-harbor/demo-terminal.configure-service:")
    assert (task.terminal.verifier_seconds, task.terminal.agent_seconds) == (60.0, 300.0)
    assert (task.terminal.cpus, task.terminal.memory_mb, task.terminal.network) == (1.0, 1024, False)
    assert set(task.terminal.tests) == {"test.sh", "test_state.py"} and "solve.sh" in task.terminal.solution
    assert task.terminal.build == str(DEMO / "configure-service" / "environment")


def _harbor_task(root: Path, name: str, toml: str) -> Path:
    folder = root / name
    (folder / "tests").mkdir(parents=True)
    (folder / "task.toml").write_text(toml)
    (folder / "instruction.md").write_text("Do the thing.\n")
    (folder / "tests" / "test.sh").write_text("echo 1 > /logs/verifier/reward.txt\n")
    return folder


def test_a_named_image_and_the_older_memory_spelling(tmp_path):
    _harbor_task(tmp_path, "named", '[environment]\ndocker_image = "org/img:1"\nmemory = "2G"\n'
                                    '[verifier]\nenv = { MODE = "strict" }\n')
    [task] = load_taskset(str(tmp_path)).tasks
    assert task.image == "org/img:1" and task.terminal.build == ""
    assert task.terminal.memory_mb == 2048 and task.terminal.verifier_env == {"MODE": "strict"}


def test_an_edited_dockerfile_names_a_new_image(tmp_path):
    folder = _harbor_task(tmp_path, "built", "")
    (folder / "environment").mkdir()
    (folder / "environment" / "Dockerfile").write_text("FROM factory/python:3.11\nWORKDIR /srv/x\n")
    [before] = load_taskset(str(tmp_path)).tasks
    (folder / "environment" / "Dockerfile").write_text("FROM factory/python:3.11\nWORKDIR /srv/y\n")
    [after] = load_taskset(str(tmp_path)).tasks
    assert before.image != after.image and after.workdir == "/srv/y"


def test_terminal_bench_1_layout(tmp_path):
    folder = tmp_path / "tb1-task"
    (folder / "tests").mkdir(parents=True)
    (folder / "task.yaml").write_text("instruction: |\n  Make hello.txt.\nmax_test_timeout_sec: 30\n")
    (folder / "Dockerfile").write_text("FROM factory/python:3.11\nWORKDIR /app\n")
    (folder / "run-tests.sh").write_text("pytest $TEST_DIR/test_outputs.py\n")
    (folder / "tests" / "test_outputs.py").write_text("def test_x(): pass\n")
    (folder / "solution.sh").write_text("touch /app/hello.txt\n")
    [task] = load_taskset(str(tmp_path)).tasks
    spec = task.terminal
    assert task.problem_statement.strip() == "Make hello.txt."
    assert spec.script == "run-tests.sh" and spec.reward_from_exit and spec.verifier_seconds == 30.0
    assert set(spec.tests) == {"run-tests.sh", "test_outputs.py"} and spec.verifier_env == {"TEST_DIR": "/tests"}
    assert spec.solution == {"solve.sh": "touch /app/hello.txt\n"}


def test_terminal_bench_s_older_descriptions_list_is_the_instruction(tmp_path):
    folder = tmp_path / "tb1-old"
    (folder / "tests").mkdir(parents=True)
    (folder / "task.yaml").write_text("descriptions:\n  - key: hard\n    description: Make it fast.\n"
                                      "  - key: base\n    description: |\n      Make hello.txt.\nauthor_email: a@b.c\n")
    (folder / "Dockerfile").write_text("FROM factory/python:3.11\nWORKDIR /app\n")
    (folder / "run-tests.sh").write_text("pytest $TEST_DIR/test_outputs.py\n")
    [task] = load_taskset(str(tmp_path)).tasks
    assert task.problem_statement.strip() == "Make hello.txt."
    (folder / "task.yaml").write_text("descriptions:\n  - key: hard\n    description: Make it fast.\n")
    [bad] = load_taskset(str(tmp_path)).skipped
    assert "descriptions: no entry with key: base" in str(bad)


def test_a_task_whose_compose_file_runs_other_services_is_unsupported_and_named(tmp_path):
    folder = _harbor_task(tmp_path, "with-db", '[environment]\ndocker_image = "x"\n')
    (folder / "environment").mkdir()
    compose = folder / "environment" / "docker-compose.yaml"
    compose.write_text("services:\n  main:\n    build: .\n")
    assert len(load_taskset(str(tmp_path)).tasks) == 1  # its own container alone: read
    compose.write_text("services:\n  main:\n    build: .\n  db:\n    image: postgres:16\n")
    report = load_taskset(str(tmp_path), strict=True)  # unsupported is never fatal
    [skipped] = report.skipped
    assert report.tasks == [] and "unsupported: services beside main (db)" in str(skipped) and str(compose) in str(skipped)


@pytest.mark.parametrize(("toml", "file", "field"), [
    ('[environment]\ndocker_image = "x"\ncpus = "two"\n', "task.toml", "environment.cpus"),
    ("[environment\n", "task.toml", "not valid TOML"),
    ('[environment]\ndocker_image = "x"\nallow_internet = "yes"\n', "task.toml", "environment.allow_internet"),
    ('[environment]\ndocker_image = "x"\n[verifier]\ntimeout_sec = -1\n', "task.toml", "verifier.timeout_sec"),
    ("", "task.toml", "environment.docker_image"),
])
def test_a_malformed_task_is_one_line_naming_its_file_and_field(tmp_path, toml, file, field):
    _harbor_task(tmp_path, "bad", toml)
    report = load_taskset(str(tmp_path))
    assert report.tasks == [] and len(report.skipped) == 1
    line = str(report.skipped[0])
    assert "\n" not in line and str(tmp_path / "bad" / file) in line and field in line
    with pytest.raises(UsageError, match=field):
        load_taskset(str(tmp_path), strict=True)


def test_a_task_without_its_test_script_names_it(tmp_path):
    folder = _harbor_task(tmp_path, "bad", '[environment]\ndocker_image = "x"\n')
    (folder / "tests" / "test.sh").unlink()
    [bad] = load_taskset(str(tmp_path)).skipped
    assert "tests/test.sh" in str(bad)
