"""Start states on a large repository: a start image against making the state from scratch.

The repository is made here: a copy of two large pure-Python packages from this venv (the
Anthropic and OpenAI SDKs, more than 5,000 files), built into an image like a task set's. Per
start state, side by side in this run:

    factory       DockerSandbox.prepare on a sandbox of the image's start image (made once,
                  timed apart): bug patch, hidden test removed, one commit
    from scratch  what a sandbox did before start images, in a container of the same image:
                  history dropped, bytecode swept, the repo handed to the agent user, every
                  file hashed into a new commit

Goal (issue #16): a start state on the 5,000-file repository in at most 1 s.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import importlib.util
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from factory.records import StartState
from factory.sandbox.config import SandboxConfig
from factory.sandbox.docker import DockerSandbox, engine
from factory.sandbox.docker.images import build_image, image_exists
from factory.sandbox.docker.start_image import start_image
from factory.sandbox.images import RepoImage

PACKAGES = ("anthropic", "openai")
FROM_SCRATCH = r"""
set -e; cd /testbed; rm -rf .git
find . -type d \( -name __pycache__ -o -name .pytest_cache \) -prune -exec rm -rf {} +
id -u agent >/dev/null 2>&1 || useradd --create-home agent
chown -R agent:agent /testbed
git init -q && git add -A && git -c user.name=f -c user.email=f@f commit -q -m start
"""


def make_repo(folder: Path) -> int:
    for name in PACKAGES:
        spec = importlib.util.find_spec(name)
        assert spec and spec.submodule_search_locations, name
        shutil.copytree(next(iter(spec.submodule_search_locations)), folder / name,
                        ignore=shutil.ignore_patterns("__pycache__"))
    (folder / "tests").mkdir()
    (folder / "tests/test_hidden.py").write_text("def test_hidden():\n    assert True\n")
    return sum(1 for p in folder.rglob("*") if p.is_file())


def bug_patch(folder: Path) -> str:
    path = f"{PACKAGES[0]}/_version.py"
    lines = (folder / path).read_text().splitlines()
    return (f"diff --git a/{path} b/{path}\n--- a/{path}\n+++ b/{path}\n@@ -1,{len(lines[:2])} +1,{len(lines[:2]) + 1} @@\n"
            "+# the bug\n" + "".join(f" {line}\n" for line in lines[:2]))


async def main(samples: int) -> None:
    folder = Path(tempfile.mkdtemp(prefix="factory-bench-repo-")) / "repo"
    folder.mkdir(parents=True)
    try:
        files = make_repo(folder)
        digest = hashlib.sha256("\n".join(sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))).encode())
        image = f"factory-bench/large-repo:{digest.hexdigest()[:12]}"
        if not image_exists(image):
            build_image(RepoImage(image, folder))
        start = StartState(bug_patch=bug_patch(folder), hide_paths=["tests/test_hidden.py"])
        config = SandboxConfig()

        t = time.perf_counter()
        await start_image(image, "/testbed", config.user)
        made = time.perf_counter() - t

        ours, scratch = [], []
        client = engine.client()
        for _ in range(samples):
            async with await DockerSandbox.create(image, config, run_id="bench") as sb:
                t = time.perf_counter()
                await sb.prepare(start)
                ours.append(time.perf_counter() - t)
            raw = client.containers.run(image, ["sleep", "600"], detach=True, network_mode="none",
                                        labels=engine.labels("bench", "from-scratch"))
            try:
                t = time.perf_counter()
                code, out = raw.exec_run(["bash", "-c", FROM_SCRATCH])
                scratch.append(time.perf_counter() - t)
                assert code == 0, out
            finally:
                raw.remove(force=True)
    finally:
        shutil.rmtree(folder.parent, ignore_errors=True)
    mine, base = statistics.median(ours), statistics.median(scratch)
    print(f"start state bench ({files} files, {samples} samples; medians)")
    print(f"  start image, made once        {made:8.2f} s")
    print(f"  start state, factory          {mine:8.2f} s")
    print(f"  start state, from scratch     {base:8.2f} s")
    print(f"start state on {files} files: factory {mine:.2f} s, from scratch {base:.2f} s, ratio {mine / base:.2f} "
          f"(goal: at most 1 s)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("-n", type=int, default=5, help="start states of each kind")
    asyncio.run(main(parser.parse_args().n))
