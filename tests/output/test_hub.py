import io

import pyarrow.parquet as pq
import pytest
from huggingface_hub import constants

from factory.errors import UsageError
from factory.output import BuildSettings, CardMeta, PushError, build_dataset, push
from factory.output.validate import read_metadata
from tests.output.sample_run import PIPELINE_YAML, TASKS, demo_attempts

REPO = "acme/widget-trajectories"


def build(out, **overrides):
    settings = BuildSettings().with_overrides(**overrides)
    return build_dataset(demo_attempts(), PIPELINE_YAML, out, settings, tasks=TASKS, meta=CardMeta(task_set="demo"))


def test_a_push_uploads_data_and_card_in_one_commit(tmp_path, fake_hub):
    summary = build(tmp_path / "out")
    result = push(summary.out_dir, REPO, private=True)
    repo = fake_hub.repo(REPO)
    assert len(fake_hub.repos) == 1 and repo.private
    assert [c.title for c in repo.history()] == ["factory 0.1.0: dataset with 1 data files", "initial commit"]
    head = repo.head()
    assert head.oid == result.commit_oid
    assert sorted(head.files) == [".gitattributes", "README.md", "messages/train-00000-of-00001.parquet"]
    shard = head.files["messages/train-00000-of-00001.parquet"]
    assert shard.lfs  # Parquet went through the LFS batch endpoint
    assert shard.data == (summary.out_dir / "messages/train-00000-of-00001.parquet").read_bytes()
    assert pq.read_table(io.BytesIO(shard.data)).num_rows == 4
    card = head.files["README.md"].data.decode()
    assert f'load_dataset("{REPO}", "messages"' in card and "<org>/<name>" not in card
    assert read_metadata(card)["configs"][0]["config_name"] == "messages"
    assert fake_hub.unhandled == []
    for request in [
        ("POST", "/api/repos/create"),
        ("POST", "/api/validate-yaml"),
        ("POST", f"/api/datasets/{REPO}/preupload/main"),
        ("POST", f"/datasets/{REPO}.git/info/lfs/objects/batch"),
        ("PUT", f"/lfs/upload/{shard.sha256}"),
        ("POST", f"/api/datasets/{REPO}/commit/main"),
    ]:
        assert request in fake_hub.requests
    assert fake_hub.requests.count(("POST", f"/api/datasets/{REPO}/commit/main")) == 1


def test_pushing_the_same_build_again_makes_no_empty_commit(tmp_path, fake_hub):
    out = build(tmp_path / "out").out_dir
    first = push(out, REPO)
    again = push(out, REPO)
    assert again.commit_oid == first.commit_oid
    assert len(fake_hub.repo(REPO).history()) == 2
    assert fake_hub.unhandled == []


def test_a_second_push_updates_the_same_repo(tmp_path, fake_hub):
    out = tmp_path / "out"
    first = push(build(out).out_dir, REPO)
    build(out, per_task=1)
    (out / "messages/train-00000-of-00001.parquet").rename(out / "messages/train-00000-of-00002.parquet")
    second = push(out, REPO)
    repo = fake_hub.repo(REPO)
    assert len(fake_hub.repos) == 1
    assert [c.oid for c in repo.history()][:2] == [second.commit_oid, first.commit_oid]
    assert second.deleted == ["messages/train-00000-of-00001.parquet"]
    head = repo.head()
    assert sorted(head.files) == [".gitattributes", "README.md", "messages/train-00000-of-00002.parquet"]
    assert pq.read_table(io.BytesIO(head.files["messages/train-00000-of-00002.parquet"].data)).num_rows == 2
    assert {op["key"] for op in head.operations} == {"file", "lfsFile", "deletedFile"}
    assert [c["name"] for c in fake_hub.create_calls] == ["widget-trajectories", "widget-trajectories"]


def test_a_push_to_a_branch(tmp_path, fake_hub):
    out = build(tmp_path / "out").out_dir
    result = push(out, REPO, revision="v2")
    repo = fake_hub.repo(REPO)
    assert result.revision == "v2"
    assert repo.branches["v2"] == result.commit_oid
    assert sorted(repo.head("main").files) == [".gitattributes"]


def test_a_missing_token_is_a_clear_error(tmp_path, fake_hub, monkeypatch):
    out = build(tmp_path / "out").out_dir
    monkeypatch.delenv("HF_TOKEN")
    monkeypatch.delenv("HUGGING_FACE_HUB_TOKEN", raising=False)
    monkeypatch.setattr(constants, "HF_TOKEN_PATH", str(tmp_path / "no-token"))
    with pytest.raises(UsageError, match="no Hugging Face token: set HF_TOKEN or run `hf auth login`"):
        push(out, REPO)
    assert fake_hub.requests == []


def test_a_refused_token_is_a_push_error(tmp_path, fake_hub):
    out = build(tmp_path / "out").out_dir
    with pytest.raises(PushError, match=f"dataset {REPO}@main failed"):
        push(out, REPO, token="hf_" + "wrong" * 8)
    assert fake_hub.repos == {}


def test_nothing_is_sent_for_a_bad_card_or_repo_id(tmp_path, fake_hub):
    out = build(tmp_path / "out").out_dir
    with pytest.raises(UsageError, match="expected ORG/NAME"):
        push(out, "no-namespace")
    (out / "README.md").write_text("no metadata")
    with pytest.raises(UsageError, match="not fit to publish"):
        push(out, REPO)
    assert fake_hub.requests == []


def test_offline_mode_is_refused_up_front(tmp_path, fake_hub, monkeypatch):
    out = build(tmp_path / "out").out_dir
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(UsageError, match="HF_HUB_OFFLINE is set"):
        push(out, REPO)
