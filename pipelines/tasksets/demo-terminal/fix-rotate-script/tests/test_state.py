import os
import subprocess


def test_keeps_the_newest(tmp_path):
    for age, name in enumerate(["e", "d", "c", "b", "a"]):  # a is the oldest
        path = tmp_path / f"{name}.log"
        path.write_text(name)
        os.utime(path, (1000 + 100 * (5 - age), 1000 + 100 * (5 - age)))
    (tmp_path / "notes.txt").write_text("keep me")
    subprocess.run(["bash", "/app/bin/rotate.sh", str(tmp_path), "2"], check=True)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["d.log", "e.log", "notes.txt"]
