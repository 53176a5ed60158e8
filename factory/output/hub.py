"""Pushes a built dataset folder to the Hugging Face Hub: card and data in one commit.

Only the configured endpoint is called (`HF_ENDPOINT`, else the client's default). The repo is
created when missing; shards that a previous push left and this build no longer has are
deleted in the same commit, so a second push updates the dataset rather than piling up files.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

import pyarrow.parquet as pq
from huggingface_hub import CommitOperationAdd, CommitOperationDelete, HfApi, get_token
from huggingface_hub.errors import HfHubHTTPError

from factory import __version__
from factory.errors import FactoryError, UsageError
from factory.output.card import for_hub
from factory.output.validate import CARD, check_card
from factory.output.writer import CONFIGS, PLOTS

REPO_TYPE = "dataset"
_REPO_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[A-Za-z0-9][\w.-]*$")
# HfHubHTTPError's base is the HTTP client's error (transport errors included); OSError covers
# connection errors of older clients.
_HUB_ERRORS: tuple[type[BaseException], ...] = (HfHubHTTPError, *HfHubHTTPError.__bases__, OSError)


class PushError(FactoryError):
    """The Hub refused the push or could not be reached (the job ran and failed: exit 1)."""


@dataclass(frozen=True)
class PushResult:
    repo_id: str
    revision: str
    commit_oid: str
    commit_url: str
    uploaded: list[str]
    deleted: list[str]
    private: bool
    """The repo's visibility after the push (an existing repo keeps its own)."""


def local_files(out_dir: Path) -> dict[str, Path]:
    """path in repo -> local file: the card, every config's Parquet shards and the card's plots."""
    files = {CARD: out_dir / CARD}
    for config in CONFIGS:
        for path in sorted((out_dir / config).glob("*.parquet")):
            files[f"{config}/{path.name}"] = path
    for path in sorted((out_dir / PLOTS).glob("*.png")):
        files[f"{PLOTS}/{path.name}"] = path
    return files


def resolve_token(token: str | None) -> str:
    token = token or get_token()
    if not token:
        raise UsageError(
            "no Hugging Face token: set HF_TOKEN or run `hf auth login` with a token that can write to the repo"
        )
    return token


def push(
    out_dir: Path | str,
    repo_id: str,
    *,
    private: bool = True,
    revision: str | None = None,
    token: str | None = None,
    endpoint: str | None = None,
    commit_message: str | None = None,
) -> PushResult:
    """Upload `out_dir` (as written by `build_dataset`) to the dataset repo `repo_id`.

    `private` applies when the repo is created (private unless told otherwise, so that nothing is
    published by accident); an existing repo keeps its visibility, which the result reports."""
    out_dir = Path(out_dir)
    if not _REPO_ID.match(repo_id):
        raise UsageError(f"--repo-id {repo_id!r}: expected ORG/NAME")
    if os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in ("1", "true", "yes", "on"):
        raise UsageError("HF_HUB_OFFLINE is set: unset it to push")
    check_card(out_dir)
    if not any(pq.ParquetFile(f).metadata.num_rows for f in local_files(out_dir).values() if f.suffix == ".parquet"):
        raise UsageError(f"{out_dir}: the dataset has no rows; nothing to push")
    token = resolve_token(token)
    api = HfApi(endpoint=endpoint or os.environ.get("HF_ENDPOINT") or None, token=token,
                library_name="factory", library_version=__version__)
    files = local_files(out_dir)
    card = for_hub(files.pop(CARD).read_text(encoding="utf-8"), repo_id)
    branch = revision or "main"
    try:
        api.create_repo(repo_id, repo_type=REPO_TYPE, private=private, exist_ok=True)
        visible = api.repo_info(repo_id, repo_type=REPO_TYPE).private
        if branch != "main":
            api.create_branch(repo_id, repo_type=REPO_TYPE, branch=branch, exist_ok=True)
        remote = api.list_repo_files(repo_id, repo_type=REPO_TYPE, revision=branch)
        stale = sorted(p for p in remote if p.split("/", 1)[0] in (*CONFIGS, PLOTS) and p not in files)
        operations: list[CommitOperationAdd | CommitOperationDelete] = [
            CommitOperationAdd(path_in_repo=CARD, path_or_fileobj=card.encode("utf-8"))
        ]
        operations += [CommitOperationAdd(path_in_repo=p, path_or_fileobj=str(f)) for p, f in files.items()]
        operations += [CommitOperationDelete(path_in_repo=p) for p in stale]
        info = api.create_commit(
            repo_id,
            operations,
            repo_type=REPO_TYPE,
            revision=branch,
            commit_message=commit_message or f"factory {__version__}: dataset with {len(files)} data files",
            commit_description=f"Built by factory {__version__} from {out_dir.name}.",
        )
    except _HUB_ERRORS as exc:
        raise PushError(f"push of {out_dir} to {api.endpoint} dataset {repo_id}@{branch} failed: {exc}") from exc
    return PushResult(repo_id, branch, info.oid, info.commit_url, [CARD, *files], stale,
                      private=bool(visible))
