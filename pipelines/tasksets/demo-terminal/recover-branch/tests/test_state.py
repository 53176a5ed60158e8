import subprocess


def git(*args):
    return subprocess.run(["git", "-c", "safe.directory=*", "-C", "/app/repo", *args],
                          capture_output=True, text=True, check=True).stdout.strip()


def test_feature_is_back_at_the_lost_commit():
    assert git("log", "-1", "--format=%s", "feature") == "add parser"
    assert "def parse" in git("show", "feature:parser.py")


def test_main_is_unchanged():
    assert git("log", "--format=%s", "main").splitlines() == ["update readme", "start"]
