"""The default prompts of every harness in every language: they name the repo's language, what the
sandbox has for it, the task's own test command and the missing network, and a non-Python task's
prompts say nothing of Python or pytest."""

from __future__ import annotations

from pathlib import Path

import pytest

from factory.agent.config import AgentConfig
from factory.agent.harness import HARNESSES
from factory.agent.prompts import render_prompts
from factory.agent.toolchain import REPORT_DIR, agent_test_command, shell_setup, toolchain
from factory.errors import UsageError
from factory.records import Task, TestSpec
from factory.tasks import load_taskset

TASKSETS = Path(__file__).parents[2] / "pipelines" / "tasksets"
FIRST = {lang: load_taskset(str(TASKSETS / folder), skip_invalid=False).tasks[0]
         for lang, folder in [("python", "demo"), ("go", "demo-go"), ("javascript", "demo-js"),
                              ("java", "demo-java"), ("rust", "demo-rust")]}
# What each language's prompt must say: its name, a word of its toolchain, the command of its tests.
SAYS = {
    "python": ("Python", "pytest", "python -m pytest"),
    "go": ("Go", "`go test`", "go test -json ./..."),
    "javascript": ("JavaScript", "Node.js", "mocha --reporter json"),
    "java": ("Java", "JUnit 5", "sh run-tests.sh"),
    "rust": ("Rust", "cargo", "cargo test --offline --no-fail-fast"),
}


def prompts(task: Task, harness: str, config: AgentConfig | None = None) -> str:
    h = HARNESSES.get(harness)
    system, instance = render_prompts(task, task.workdir, config or AgentConfig(), h.system_template,
                                      h.instance_template)
    return system + "\n" + instance


@pytest.mark.parametrize("harness", HARNESSES.kinds())
@pytest.mark.parametrize("language", sorted(SAYS))
def test_every_harness_names_the_language_its_toolchain_and_the_tasks_test_command(language, harness):
    task = FIRST[language]
    assert task.language == language
    text = prompts(task, harness)
    name, tool, command = SAYS[language]
    assert f"{name} repository" in text or f"{name} code repository" in text
    assert f"`{agent_test_command(task)}`" in text and command in text
    assert "network" in text or harness == "swe-agent"  # SWE-agent's own layout says nothing of it
    if harness != "swe-agent":
        assert tool in text
    if language != "python":
        assert "python" not in text.lower() and "pytest" not in text


def test_a_language_without_an_entry_is_named_as_the_task_names_it():
    task = FIRST["go"].model_copy(update={"language": "kotlin", "tests": TestSpec(
        framework="command", command="gradle test --offline", results="junit")})
    text = prompts(task, "factory")
    assert "kotlin repository" in text and "the kotlin toolchain of the repository's image" in text
    assert "`gradle test --offline`" in text


def test_the_new_fields_serve_a_pipelines_own_template_and_others_are_refused():
    config = AgentConfig(instance_prompt="{language} at {workdir}: run `{test_command}` ({toolchain})")
    text = prompts(FIRST["rust"], "factory", config)
    assert text.endswith("Rust at /testbed: run `cargo test --offline --no-fail-fast` "
                         "(rustc and cargo, offline (no crate can be fetched))")
    with pytest.raises(UsageError, match=r"unknown field \{runner\}.*\{test_command\}"):
        prompts(FIRST["rust"], "factory", AgentConfig(instance_prompt="{runner}"))


def test_a_report_dir_is_set_in_the_agents_shell_only_for_a_command_that_writes_there():
    assert "REPORT_DIR" in FIRST["javascript"].tests.command
    assert shell_setup(FIRST["javascript"]) == f'export REPORT_DIR={REPORT_DIR} && mkdir -p "$REPORT_DIR"'
    assert shell_setup(FIRST["go"]) is None and shell_setup(FIRST["python"]) == FIRST["python"].test_cmd
    conda = FIRST["javascript"].model_copy(update={"test_cmd": "source /env"})
    assert shell_setup(conda).splitlines()[0] == "source /env"


@pytest.mark.parametrize(("language", "line", "name"), [
    ("python", "    def _caret(self, version):", "_caret"),
    ("go", "func (c *Constraint) Check(v Version) bool {", "Check"),
    ("go", "type partial struct {", "partial"),
    ("javascript", "function decode(text) {", "decode"),
    ("javascript", "const parseUrl = (url) => {", "parseUrl"),
    ("java", "    private static int arity(String name) {", "arity"),
    ("java", "public final class Calculator {", "Calculator"),
    ("rust", "    pub fn parse(&mut self) -> Result<Vec<Record>, Error> {", "parse"),
])
def test_a_definition_is_read_in_each_languages_syntax(language, line, name):
    assert toolchain(language).defined_name(line) == name
