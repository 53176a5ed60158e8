import shutil
import subprocess


def run(*args):
    return subprocess.run(["python3", "/app/dist/calc.pyz", *args], capture_output=True, text=True, cwd="/")


def test_the_zipapp_runs_without_its_sources():
    shutil.rmtree("/app/src")
    assert run("add", "2", "3").stdout.strip() == "5"
    assert run("mul", "4", "5").stdout.strip() == "20"
