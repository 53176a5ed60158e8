"""The system prompt and the first user message, from templates a pipeline may override.

Templates are `str.format` strings with the fields `{problem_statement}`, `{workdir}`, `{repo}`,
`{language}` (the repo's language as the prompt names it: `Python`, `Go`, `Rust`, ...),
`{toolchain}` (what the sandbox has for it) and `{test_command}` (what runs the task's tests:
the task set's own command, pytest for a pytest task; factory/agent/toolchain.py); literal
braces are written `{{` and `}}`. The defaults suit SWE tasks in any language: fix an issue,
check the fix with the repository's tests, then submit.
"""

from __future__ import annotations

import string

from factory.agent.config import AgentConfig
from factory.agent.toolchain import agent_test_command, toolchain
from factory.errors import UsageError
from factory.records import Task

FIELDS = ("problem_statement", "workdir", "repo", "language", "toolchain", "test_command")

SYSTEM_TEMPLATE = """\
You are a careful software engineer. You work in a checkout of the {language} repository {repo} at \
{workdir}, inside a sandbox without network access: it has {toolchain}, and nothing can be \
downloaded or installed. You act only through your tools:

- `bash` runs a command in a fresh shell in {workdir} (`cd` and variables do not carry over \
between calls; long-running commands are killed at their timeout).
- `str_replace_editor` views files with line numbers, lists directories, creates files, \
replaces an exact unique string, inserts lines, and undoes your last edit of a file.
- `submit` ends your work: your changes to the repository, as they are then, are your answer.

Fix the issue by changing the source code. Do not change the existing tests or the test \
configuration, and keep your change as small as the fix allows."""

INSTANCE_TEMPLATE = """\
<issue>
{problem_statement}
</issue>

The repository {repo} is at {workdir}. Make the changes to its source code so that the \
behaviour described in the issue is fixed.

A way of working that succeeds:
1. Find and read the code involved.
2. Reproduce the problem with a short script, and run it.
3. Edit the source code to fix it.
4. Rerun your script to confirm the fix, and run the existing tests: `{test_command}`.
5. Think about edge cases and make sure your fix handles them.
6. Call `submit`."""


def check_template(template: str, where: str) -> None:
    """Refuse a template that names a field other than FIELDS, or is not valid `str.format` text."""
    try:
        names = [name for _, name, _, _ in string.Formatter().parse(template) if name is not None]
    except ValueError as exc:
        raise UsageError(
            f"{where}: not a valid template ({exc}); write {{{{ and }}}} for literal braces"
        ) from None
    for name in names:
        if name.split(".")[0].split("[")[0] not in FIELDS:
            raise UsageError(
                f"{where}: unknown field {{{name}}}; templates may use "
                + ", ".join(f"{{{f}}}" for f in FIELDS)
                + " (write {{ and }} for literal braces)"
            )


def render_prompts(task: Task, workdir: str, config: AgentConfig, system_template: str = SYSTEM_TEMPLATE,
                   instance_template: str = INSTANCE_TEMPLATE) -> tuple[str, str]:
    """The system prompt and the first user message for `task`: the pipeline's templates, else
    the harness's defaults."""
    system = config.system_prompt if config.system_prompt is not None else system_template
    instance = config.instance_prompt if config.instance_prompt is not None else instance_template
    check_template(system, "agent.system_prompt")
    check_template(instance, "agent.instance_prompt")
    chain = toolchain(task.language)
    fields = {
        "problem_statement": task.problem_statement.strip(),
        "workdir": workdir,
        "repo": task.repo,
        "language": chain.name,
        "toolchain": chain.tools,
        "test_command": agent_test_command(task),
    }
    return system.format(**fields), instance.format(**fields)
