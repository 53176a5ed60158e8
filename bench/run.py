"""`make bench`: every benchmark, each printing ratios against a baseline measured in the same run."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).parent
BENCHES = [
    ["sandbox_bench.py"],
    ["start_state_bench.py"],
    ["orchestration_bench.py"],
    ["swesmith_loss_bench.py"],
    ["verify_bench.py"],
    ["verify_cpu_bench.py"],
    ["warehouse_bench.py"],
    ["render_bench.py", "--mb", "50"],
    ["cli_bench.py"],
    ["cost_bench.py"],
    ["ray_bench.py"],
    ["peer_bench.py", "--sizes", "10,64,256"],
]

if __name__ == "__main__":
    failed = 0
    for bench, *args in BENCHES:
        if (HERE / bench).exists():
            failed |= subprocess.run([sys.executable, str(HERE / bench), *args]).returncode
    sys.exit(failed)
