"""Task rows of every language and format map onto one Task: image, start state, gold fix,
hidden tests, language, how the tests run and are read, and the test names to grade.

The rows in tests/tasks/data/ follow the publishers' documented schemas (README.md there)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from factory.config import TasksConfig
from factory.errors import UsageError
from factory.records import TestSpec
from factory.tasks import FORMATS, BadRow, Unsupported, load_taskset, task_from_row
from factory.tasks.formats import detect
from factory.tasks.patches import reverse_patch
from factory.tasks.runners import LOG_PARSERS, go_json
from factory.tasks.swebench_v5 import read_eval_script
from factory.verify.results import READERS

DATA = Path(__file__).parent / "data"
ROOT = Path(__file__).parents[2]


def rows(name: str) -> dict[str, dict]:
    return {r["instance_id"]: r for r in map(json.loads, (DATA / name).read_text().splitlines())}


SMITH, V5, REBENCH, MSB = (rows(n) for n in ("swesmith_languages.jsonl", "swebench_v5.jsonl",
                                             "swe_rebench_v2.jsonl", "multi_swe_bench.jsonl"))


# ------------------------------------------------------------------------------ SWE-smith


def test_swesmith_go_row_runs_go_test_json_in_the_swesmith_layout():
    row = SMITH["gin-gonic__gin.3c12d2a8.func_pm_op_change__q0v3n1ke"]
    task = task_from_row(row, source="s.jsonl")
    assert task.language == "go" and task.source == "swesmith:s.jsonl"
    assert task.image == "swebench/swesmith.x86_64.gin-gonic_1776_gin.3c12d2a8" and task.workdir == "/testbed"
    assert task.start.bug_patch == row["patch"] and task.gold_patch == reverse_patch(row["patch"])
    assert task.start.hide_paths == [] and task.test_patch == "" and task.test_cmd is None
    # GoProfile's `go test -v -count=1 ./...`, run as the same tests with a structured report
    assert task.tests == TestSpec(framework="command", as_root=True, command="go test -json -count=1 ./...", results="go-json")
    assert task.FAIL_TO_PASS == ["TestContextNext", "TestMiddlewareGeneralCase"]
    assert task.PASS_TO_PASS == ["TestContextReset", "TestRouteStaticNoListing/with_prefix"]


@pytest.mark.parametrize(("iid", "command"), [
    ("dtolnay__anyhow.1d7ef1db.func_pm_bool_negate__2g1t8c3x", "cargo test --verbose"),
    ("tokio-rs__tokio.ab3ff69c.func_pm_remove_cond__7a1b2c3d", "cargo test --verbose --features full -- --skip try_exists"),
])
def test_swesmith_rust_rows_take_their_profiles_command(iid, command):
    task = task_from_row(SMITH[iid])
    assert task.language == "rust" and task.tests == TestSpec(framework="command", as_root=True, command=command, results="cargo")
    assert SMITH[iid]["FAIL_TO_PASS"] == task.FAIL_TO_PASS


def test_swesmith_old_image_names_map_in_every_language():
    task = task_from_row(SMITH["dtolnay__anyhow.1d7ef1db.func_pm_bool_negate__2g1t8c3x"])
    assert task.image == "swebench/swesmith.x86_64.dtolnay_1776_anyhow.1d7ef1db"


def test_swesmith_java_row_reads_the_junit_reports_maven_or_gradle_write():
    task = task_from_row(SMITH["google__gson.dd2fe59c.func_pm_ctrl_invert_if__m3k9x0qa"])
    assert task.language == "java"
    assert (task.tests.framework, task.tests.results, task.tests.report) == ("command", "junit", "junit.xml")
    assert "./gradlew test" in task.tests.command and "mvn test" in task.tests.command
    assert task.tests.command.endswith("exit $status")  # the runner's status, not find's
    assert task.FAIL_TO_PASS == ["com.google.gson.JsonArrayTest.testIsEmpty", "com.google.gson.JsonArrayTest#testRemove"]


def test_swesmith_javascript_row_takes_its_repos_runner():
    task = task_from_row(SMITH["Automattic__mongoose.5f57a5bb.func_pm_op_swap__c1d2e3f4"])
    assert task.language == "javascript"
    assert task.tests == TestSpec(framework="command", as_root=True, command="npm test -- --verbose", results="js-spec")


def test_swesmith_babel_runs_only_the_packages_its_bug_touches():
    bug = ("diff --git a/packages/babel-parser/src/index.ts b/packages/babel-parser/src/index.ts\n"
           "--- a/packages/babel-parser/src/index.ts\n+++ b/packages/babel-parser/src/index.ts\n"
           "@@ -1 +1 @@\n-export const a = 1;\n+export const a = 2;\n")
    row = {**SMITH["Automattic__mongoose.5f57a5bb.func_pm_op_swap__c1d2e3f4"], "instance_id": "babel__babel.2ea3fc8f.x",
           "repo": "swesmith/babel__babel.2ea3fc8f", "patch": bug}
    task = task_from_row(row)
    assert task.language == "typescript"
    assert task.tests.command == "yarn jest --verbose packages/babel-parser" and task.tests.results == "js-spec"


@pytest.mark.parametrize(("iid", "language", "why"), [
    ("trpc__trpc.2f40ba93.func_pm_arg_swap__0a9b8c7d", "typescript", "knows none for trpc/trpc"),
    ("fmtlib__fmt.8303d140.func_pm_op_change__5e6f7a8b", "cpp", "no result reader"),
])
def test_swesmith_rows_without_a_reader_are_unsupported(iid, language, why):
    with pytest.raises(Unsupported, match=why) as caught:
        task_from_row(SMITH[iid])
    assert (caught.value.instance_id, caught.value.field, caught.value.language) == (iid, "language", language)
    assert "\n" not in str(caught.value)


def test_a_swesmith_row_may_say_its_language_and_tests():
    row = {**SMITH["gin-gonic__gin.3c12d2a8.func_pm_op_change__q0v3n1ke"], "language": "golang",
           "tests": {"framework": "command", "command": "go test -json ./...", "results": "go-json"}}
    task = task_from_row(row)
    assert task.language == "go" and task.tests.command == "go test -json ./..."
    with pytest.raises(BadRow) as caught:
        task_from_row({**row, "tests": {"framework": "command", "results": 3}})
    assert caught.value.field == "tests.results"


# ------------------------------------------------------------------------------ SWE-bench v5


def test_swebench_v5_go_row():
    row = V5["gin-gonic__gin-4003"]
    task = task_from_row(row)
    assert task.source == "swebench-v5" and task.language == "go"
    assert task.image == row["image"] and task.workdir == "/testbed"
    assert task.start.base_commit == row["base_commit"] and task.start.bug_patch == ""
    assert task.gold_patch == row["patch"] and task.test_patch == row["test_patch"]
    assert task.tests == TestSpec(framework="command", as_root=True, command="go test -json -run '^TestContextGetUint16$' .",
                                  results="go-json")
    assert task.FAIL_TO_PASS == ["TestContextGetUint16"]
    assert task.PASS_TO_PASS == ["TestContextGetUint32", "TestContextGetInt8"]  # JSON strings in the row
    assert task.test_cmd is None


def test_swebench_v5_environment_goes_to_every_shell_and_set_up_runs_before_the_tests():
    rust = task_from_row(V5["tokio-rs__tokio-6551"])
    assert rust.language == "rust" and rust.test_cmd == "export RUST_BACKTRACE=1"
    assert rust.tests == TestSpec(framework="command", as_root=True, command="cargo test --test io_read_buf -- --nocapture",
                                  results="cargo")
    js = task_from_row(V5["axios__axios-5085"])
    assert js.language == "javascript"
    assert js.tests == TestSpec(framework="command", as_root=True, results="js-spec",
                                command="npm run build\nnpx jest --verbose test/unit/helpers/combineURLs.js")


def test_swebench_v5_python_row_runs_on_the_pytest_framework():
    task = task_from_row(V5["pallets__flask-5063"])
    assert task.language == "python" and task.tests == TestSpec()
    assert task.test_cmd == "source /opt/miniconda3/bin/activate\nconda activate testbed"
    assert task.FAIL_TO_PASS == ["tests/test_basic.py::test_url_for_with_anchor"]


def test_swebench_v5_fail_only_rows_grade_fail_to_pass_alone():
    task = task_from_row(V5["chartjs__Chart.js-11116"])
    assert task.FAIL_TO_PASS == ["Core.scale min honours the user"] and task.PASS_TO_PASS == []


@pytest.mark.parametrize(("iid", "parser", "language"), [
    ("google__gson-2479", "parse_log_maven", "java"),
    ("laravel__framework-48573", "parse_log_phpunit", "php"),
])
def test_swebench_v5_parsers_without_a_reader_are_unsupported(iid, parser, language):
    with pytest.raises(Unsupported, match=parser) as caught:
        task_from_row(V5[iid])
    assert (caught.value.field, caught.value.language) == ("log_parser", language)


@pytest.mark.parametrize(("change", "field"), [
    ({"eval_script": "#!/bin/bash\ngo test -v ./...\n"}, "eval_script"),
    ({"eval_type": "most"}, "eval_type"),
    ({"image": None}, "image"),
    ({"log_parser": ""}, "log_parser"),
    ({"FAIL_TO_PASS": "[oops"}, "FAIL_TO_PASS"),
])
def test_malformed_swebench_v5_rows_name_the_field(change, field):
    row = {**V5["gin-gonic__gin-4003"], **change}
    with pytest.raises(BadRow) as caught:
        task_from_row(row, "swebench-v5")
    assert not isinstance(caught.value, Unsupported)
    assert (caught.value.instance_id, caught.value.field) == ("gin-gonic__gin-4003", field)


def test_the_eval_script_test_patch_is_left_to_factory():
    environment, setup, command, workdir = read_eval_script(V5["pallets__flask-5063"]["eval_script"], "x")
    assert (environment, setup, command, workdir) == (
        ["source /opt/miniconda3/bin/activate", "conda activate testbed"], ["python -m pip install -e ."],
        "pytest -rA tests/test_basic.py", "/testbed")


# ------------------------------------------------------------------------------ SWE-rebench V2


def test_swe_rebench_v2_go_row_in_its_repo_folder():
    row = REBENCH["spf13__cobra-2120"]
    task = task_from_row(row)
    assert task.source == "swe-rebench-v2" and task.language == "go"
    assert task.image == row["image_name"] and task.workdir == "/cobra"
    assert task.start.base_commit == row["base_commit"] and task.gold_patch == row["patch"]
    assert task.test_patch == row["test_patch"]
    assert task.tests == TestSpec(framework="command", as_root=True, command="go test -json ./...", results="go-json")
    assert task.PASS_TO_PASS == ["TestRequiredFlags", "TestFlagGroups/required"]


def test_swe_rebench_v2_command_lists_run_every_command():
    task = task_from_row(REBENCH["colinhacks__zod-3211"])  # install_config as JSON text
    assert task.language == "typescript" and task.workdir == "/zod" and task.tests.results == "js-spec"
    assert task.tests.command == ("status=0\nyarn build || status=1\n"
                                  "yarn jest --verbose src/__tests__/string.test.ts || status=1\nexit $status")


def test_swe_rebench_v2_rust_python_and_unsupported_rows():
    assert task_from_row(REBENCH["BurntSushi__ripgrep-2610"]).tests == TestSpec(
        framework="command", command="cargo test -p globset", results="cargo", as_root=True)
    python = task_from_row(REBENCH["encode__httpx-3109"])
    assert python.language == "python" and python.tests == TestSpec() and "conda activate testbed" in python.test_cmd
    with pytest.raises(Unsupported, match="parse_log_kotlin_junit") as caught:
        task_from_row(REBENCH["Kotlin__kotlinx.coroutines-4012"])
    assert (caught.value.field, caught.value.language) == ("install_config.log_parser", "kotlin")


@pytest.mark.parametrize(("change", "field"), [
    ({"install_config": {"test_cmd": "go test -v ./..."}}, "install_config.log_parser"),
    ({"install_config": {"log_parser": "parse_log_gotest", "test_cmd": []}}, "install_config.test_cmd"),
    ({"install_config": "{not json"}, "install_config"),
    ({"repo": "cobra"}, "repo"),
    ({"image_name": ""}, "image_name"),
])
def test_malformed_swe_rebench_v2_rows_name_the_field(change, field):
    with pytest.raises(BadRow) as caught:
        task_from_row({**REBENCH["spf13__cobra-2120"], **change})
    assert (caught.value.instance_id, caught.value.field) == ("spf13__cobra-2120", field)


# ------------------------------------------------------------------------------ Multi-SWE-bench


def test_multi_swe_bench_go_row():
    row = MSB["beego__beego-5725"]
    task = task_from_row(row)
    assert task.source == "multi-swe-bench" and task.language == "go" and task.repo == "beego/beego"
    assert task.image == "mswebench/beego_m_beego:pr-5725" and task.workdir == "/home/beego"
    assert task.start.base_commit == row["base"]["sha"]
    assert task.start.hide_paths == ["/home/fix.patch", "/home/test.patch"]  # the image holds the fix
    assert task.gold_patch == row["fix_patch"] and task.test_patch == row["test_patch"]
    assert task.tests == TestSpec(framework="command", as_root=True, command="bash /home/run.sh", results="go-text")
    assert task.FAIL_TO_PASS == ["TestRouterPrefix", "TestRouterPrefix/nested"]  # f2p, then n2p
    assert task.PASS_TO_PASS == ["TestRouter"]
    assert task.problem_statement.startswith("Prefix routes never match\n\nA router registered")


def test_multi_swe_bench_skipped_to_pass_tests_must_pass_and_the_pr_stands_in_for_issues():
    task = task_from_row(MSB["clap-rs__clap-5520"])
    assert task.language == "rust" and task.tests.results == "cargo"
    assert task.FAIL_TO_PASS == ["builder::require::required_after_subcommand", "builder::require::ignored_until_fixed"]
    assert task.problem_statement == "Fix"  # no resolved issue: the pull request's title


@pytest.mark.parametrize(("iid", "language"), [("alibaba__fastjson2-2285", "java"), ("vuejs__core-11589", "typescript")])
def test_multi_swe_bench_languages_without_a_reader_are_unsupported(iid, language):
    with pytest.raises(Unsupported) as caught:
        task_from_row(MSB[iid])
    assert (caught.value.instance_id, caught.value.language) == (iid, language)


@pytest.mark.parametrize(("change", "field"), [
    ({"number": "5725"}, "number"),
    ({"base": {"label": "x", "ref": "main"}}, "base.sha"),
    ({"f2p_tests": {}, "n2p_tests": {}}, "f2p_tests"),
    ({"p2p_tests": {"TestRouter": "PASS"}}, "p2p_tests"),
    ({"fix_patch": ""}, "fix_patch"),
])
def test_malformed_multi_swe_bench_rows_name_the_field(change, field):
    with pytest.raises(BadRow) as caught:
        task_from_row({**MSB["beego__beego-5725"], **change})
    assert caught.value.field == field


# ------------------------------------------------------------------------------ formats, loading


@pytest.mark.parametrize(("name", "fmt"), [
    ("swesmith_languages.jsonl", "swesmith"), ("swebench_v5.jsonl", "swebench-v5"),
    ("swe_rebench_v2.jsonl", "swe-rebench-v2"), ("multi_swe_bench.jsonl", "multi-swe-bench"),
])
def test_auto_reads_each_rows_format_and_skips_unsupported_rows_with_a_count(name, fmt):
    every = rows(name)
    assert {detect(row).name for row in every.values()} == {fmt}
    report = load_taskset(str(DATA / name))
    assert {t.source for t in report.tasks} == {f"{fmt}:{DATA / name}"}
    assert all(isinstance(bad, Unsupported) for bad in report.skipped)
    assert len(report.tasks) + len(report.skipped) == len(every)
    # well-formed rows without a reader never stop a strict load
    assert len(load_taskset(str(DATA / name), strict=True).tasks) == len(report.tasks)


def test_the_load_report_counts_what_it_skipped_and_why(tmp_path):
    path = tmp_path / "mixed.jsonl"
    smith = SMITH["gin-gonic__gin.3c12d2a8.func_pm_op_change__q0v3n1ke"]
    lines = [*SMITH.values(), {**smith, "instance_id": "broken", "FAIL_TO_PASS": []}, *V5.values()]
    path.write_text("".join(json.dumps(r) + "\n" for r in lines))
    report = load_taskset(str(path))
    assert report.unsupported() == {"typescript": 1, "cpp": 1, "java": 1, "php": 1}
    assert report.summary() == ("10 task(s) loaded, 1 malformed row(s) skipped, "
                                "4 row(s) skipped with no reader for their tests (cpp 1, java 1, php 1, typescript 1)")
    with pytest.raises(UsageError, match="mixed.jsonl:8: task broken: FAIL_TO_PASS"):
        load_taskset(str(path), strict=True)


def test_a_forced_format_reads_every_row_as_that_format():
    with pytest.raises(BadRow) as caught:
        task_from_row(V5["gin-gonic__gin-4003"], "multi-swe-bench")
    assert caught.value.field == "org"


def test_an_unknown_format_lists_the_valid_ones():
    with pytest.raises(UsageError, match="valid: auto, harbor, multi-swe-bench, swe-rebench-v2, swebench-v5, swebench, swesmith, imported"):
        task_from_row(SMITH["gin-gonic__gin.3c12d2a8.func_pm_op_change__q0v3n1ke"], "swe-smith")
    with pytest.raises(ValueError, match="unknown task format 'polybench'; valid: auto, "):
        TasksConfig(source="x.jsonl", format="polybench")
    assert set(FORMATS) == {"swesmith", "swebench", "swebench-v5", "swe-rebench-v2", "multi-swe-bench", "harbor",
                            "imported"}


def test_every_reader_a_loader_names_exists():
    named = {r.results for r in LOG_PARSERS.values() if r.results} | {"go-json", "junit", "cargo", "js-spec", "go-text"}
    assert named <= set(READERS)
    loaded = [t for name in ("swesmith_languages.jsonl", "swebench_v5.jsonl", "swe_rebench_v2.jsonl",
                             "multi_swe_bench.jsonl") for t in load_taskset(str(DATA / name)).tasks]
    assert {t.tests.results for t in loaded if t.tests.framework == "command"} <= set(READERS)
    assert {t.tests.framework for t in loaded} == {"pytest", "command"}


@pytest.mark.parametrize(("command", "expected"), [
    ("go test -v -count=1 ./...", "go test -json -count=1 ./..."),
    ("go test -v -run '^TestA$' ./pkg && go test -v ./cmd", "go test -json -run '^TestA$' ./pkg && go test -json ./cmd"),
    ("go test -json ./...", "go test -json ./..."),
    ("go build ./... && go test -v ./...", "go build ./... && go test -json ./..."),
    ("go test -v ./... || true", "go test -json ./... || true"),
    ("go test -v ./... 2>&1 | tee out.txt", None),  # its reader expects the text
    ("go test -v ./... > out.txt", None),
    ("go test ./...", None),  # no per-test lines to begin with
    ("make test", None),
])
def test_go_test_v_becomes_json_only_where_the_same_run_says_the_same(command, expected):
    assert go_json(command) == expected


def test_tasks_list_shows_the_language_and_the_reader():
    out = subprocess.run([sys.executable, "-m", "factory.cli", "tasks", "list", str(DATA / "swe_rebench_v2.jsonl")],
                         capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    lines = [line.split("\t") for line in out.stdout.splitlines()]
    assert [(cols[0], cols[2]) for cols in lines] == [
        ("spf13__cobra-2120", "go (go-json)"), ("colinhacks__zod-3211", "typescript (js-spec)"),
        ("BurntSushi__ripgrep-2610", "rust (cargo)"), ("encode__httpx-3109", "python (pytest)")]
    assert "skipped: task Kotlin__kotlinx.coroutines-4012: install_config.log_parser: unsupported" in out.stderr
    assert "4 task(s) loaded, 1 row(s) skipped with no reader for their tests (kotlin 1)" in out.stderr
