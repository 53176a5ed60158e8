"""Writes sweagent-1.json beside this file: the OpenAI tool schemas of SWE-agent 1.x's tool
bundles, made the way SWE-agent makes them (`Command.get_function_calling_tool`) from each
bundle's `config.yaml` at the released tags, so an imported SWE-agent run lists the tools its
model was shown. Run it against a SWE-agent clone (not a dependency of factory):

    python factory/interchange/harness_tools/make_sweagent_tools.py /path/to/SWE-agent
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import yaml

TAGS = ("v1.0.0", "v1.0.1", "v1.1.0")
BASH = {"name": "bash", "docstring": "runs the given command directly in bash",
        "arguments": [{"name": "command", "type": "string", "description": "The bash command to execute.",
                       "required": True}]}
"""sweagent/tools/commands.py BASH_COMMAND, added to every agent unless `enable_bash_tool` is off."""


def schema(name: str, command: dict) -> dict:
    properties, required = {}, []
    for arg in command.get("arguments") or []:
        prop = {"type": arg["type"], "description": arg["description"]}
        if arg.get("items"):
            prop["items"] = arg["items"]
        if arg.get("enum"):
            prop["enum"] = arg["enum"]
        properties[arg["name"]] = prop
        if arg.get("required"):
            required.append(arg["name"])
    return {"type": "function", "function": {"name": name, "description": command.get("docstring") or "",
                                             "parameters": {"type": "object", "properties": properties,
                                                            "required": required}}}


def main(repo: Path) -> None:
    bundles: dict[str, list[dict]] = {}
    for tag in TAGS:
        names = subprocess.run(["git", "-C", str(repo), "ls-tree", "-r", "--name-only", tag, "tools"],
                               capture_output=True, text=True, check=True).stdout.split()
        for path in (n for n in names if n.endswith("/config.yaml")):
            text = subprocess.run(["git", "-C", str(repo), "show", f"{tag}:{path}"], capture_output=True, text=True,
                                  check=True).stdout
            tools = (yaml.safe_load(text) or {}).get("tools") or {}
            bundles[path.split("/")[1]] = [schema(name, command) for name, command in tools.items()]
    out = {"source": f"SWE-agent {', '.join(TAGS)}: tools/*/config.yaml and BASH_COMMAND",
           "bash": schema("bash", BASH), "bundles": dict(sorted(bundles.items()))}
    (Path(__file__).parent / "sweagent-1.json").write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
