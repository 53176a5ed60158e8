"""The command line as a user meets it: a real subprocess, real exit codes."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parent.parent


def factory(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "factory.cli", *args], capture_output=True, text=True, cwd=ROOT, env=env
    )


def test_version_and_help():
    assert factory("--version").stdout.startswith("factory ")
    out = factory("--help")
    assert out.returncode == 0
    assert "run" in out.stdout


def command_paths() -> list[list[str]]:
    """Every command and subcommand of the CLI, as the words that name it."""
    import click
    import typer

    from factory.cli import app

    def walk(command: click.Command, words: list[str]) -> list[list[str]]:
        subs = getattr(command, "commands", {})
        return [words] + [path for name, sub in sorted(subs.items()) for path in walk(sub, [*words, name])]

    return walk(typer.main.get_command(app), [])[1:]


@pytest.mark.parametrize("words", command_paths(), ids=" ".join)
def test_every_command_has_a_help_that_prints(words):
    out = factory(*words, "--help")
    assert out.returncode == 0 and not out.stderr, out.stderr[-500:]
    assert f"Usage: factory {' '.join(words)}" in out.stdout


@pytest.mark.parametrize("name", ["demo.yaml", "swe_smith.yaml", "swe_gym.yaml"])
def test_dry_run_prints_the_plan(name):
    out = factory("run", f"pipelines/{name}", "--dry-run", "--limit", "7", "--max-cost", "12.5")
    assert out.returncode == 0, out.stderr
    assert "limit=7" in out.stdout
    assert "$12.50" in out.stdout
    assert "teacher" in out.stdout
    # piped, a line stays whole however long (no wrapping at 80 columns)
    assert any(line.startswith("  attempts ") and line.endswith("(filters.cap)") for line in out.stdout.splitlines())


def test_broken_yaml_exits_2_with_one_line(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: x\ntasks:\n  source: t\nteachers:\n  - kind: nope\n    model: m\n")
    out = factory("run", str(bad), "--dry-run")
    assert out.returncode == 2
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1
    assert f"{bad}:5:11: teachers[0].kind:" in lines[0]
    assert "Traceback" not in out.stderr


def test_a_missing_field_and_an_unknown_key_are_both_reported_one_line_each(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: x\ntasks:\n  source: t\n  sourse: u\nteachers:\n  - kind: openai\n    name: m\n")
    out = factory("run", str(bad), "--dry-run")
    assert out.returncode == 2
    lines = out.stderr.strip().splitlines()
    assert lines[0].startswith(f"factory: {bad}:4:3: tasks.sourse: unknown key (valid keys: ")
    assert lines[1] == f"factory: {bad}:6:5: teachers[0].model: field required"  # the mapping that lacks it
    assert len(lines) == 2


def test_secrets_from_the_environment_are_not_printed(tmp_path):
    import os

    secret = "sk-ant-test-SECRET-do-not-print-123"
    cfg = tmp_path / "p.yaml"
    cfg.write_text(
        "name: x\ntasks:\n  source: t\nteachers:\n  - kind: anthropic\n    model: m\n"
        "    api_key: ${FACTORY_TEST_KEY}\n"
    )
    out = factory("run", str(cfg), "--dry-run", env={**os.environ, "FACTORY_TEST_KEY": secret})
    assert out.returncode == 0, out.stderr
    assert secret not in out.stdout + out.stderr


def test_a_missing_api_key_is_reported_before_the_task_source_is_fetched(tmp_path):
    """pipelines/swe_smith.yaml reads its tasks from the Hub; a missing key, known locally, is told
    first, and the Hub (here a local stand-in that counts what it is asked) is never asked."""
    import os
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    asked: list[str] = []

    class Hub(BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 (the handler's API)
            asked.append(self.path)
            self.send_response(503)
            self.end_headers()

        do_HEAD = do_POST = do_GET  # noqa: N815

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Hub)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    env = {k: v for k, v in os.environ.items() if k not in ("ANTHROPIC_API_KEY", "HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE")}
    env.update(HF_ENDPOINT=f"http://127.0.0.1:{server.server_port}", HF_HOME=str(tmp_path / "hf"))
    try:
        out = factory("run", "pipelines/swe_smith.yaml", "--run-id", f"nokey-{tmp_path.name}", env=env)
    finally:
        server.shutdown()
    assert out.returncode == 2, out.stderr
    assert out.stderr.count("\n") == 1 and "ANTHROPIC_API_KEY" in out.stderr and "Traceback" not in out.stderr
    assert asked == []
    assert not (ROOT / "runs" / f"nokey-{tmp_path.name}").exists()
