"""The model SDKs load with the first API teacher, not with the package: the sandbox, the
verifier and the command line start without them (issues 15 and 19)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from factory.teachers import build_teacher
from factory.teachers.anthropic import AnthropicConfig
from factory.teachers.openai import OpenAIConfig

PROBE = "import sys, {module}; print(sorted({{m.split('.')[0] for m in sys.modules}} & {{'anthropic', 'openai'}}))"


@pytest.mark.parametrize("module", ["factory.sandbox", "factory.verify", "factory.cli", "factory.run.scheduler",
                                    "factory.teachers"])
def test_importing_a_stage_loads_no_model_sdk(module):
    out = subprocess.run([sys.executable, "-c", PROBE.format(module=module)], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out.stdout


@pytest.mark.parametrize(("config", "sdk"), [
    (AnthropicConfig(model="claude-sonnet-4-5", base_url="http://127.0.0.1:9"), "anthropic"),
    (OpenAIConfig(model="gpt-4.1", base_url="http://127.0.0.1:9/v1"), "openai"),
])
def test_an_api_teacher_brings_its_sdk(config, sdk):
    teacher = build_teacher(config)
    assert teacher.sdk.__name__ == sdk and sdk in sys.modules


@pytest.mark.parametrize("module", ["factory.sandbox", "factory.verify", "factory.tasks"])
def test_a_stage_brings_its_own_config_not_the_pipeline(module):
    """Section configs live next to their stage; only `factory.config` assembles them."""
    probe = f"import json, sys, {module}; print(json.dumps([m for m in sys.modules if m.startswith('factory.')]))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    loaded = {m.split(".")[1] for m in json.loads(out)}
    assert not loaded & {"config", "agent", "teachers", "filters"}, loaded


def test_the_command_line_starts_without_the_stages_it_does_not_run():
    """`factory --help` and `factory query` load no pipeline config, teacher, filter, pyarrow or plotting."""
    probe = "import json, sys, factory.cli; print(json.dumps(sorted(sys.modules)))"
    loaded = set(json.loads(subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                                           check=True).stdout))
    assert not loaded & {"factory.config", "factory.teachers", "factory.filters", "factory.agent", "pyarrow",
                         "matplotlib", "factory.report"}, loaded
