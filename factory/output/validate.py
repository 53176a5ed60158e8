"""Offline checks of a built dataset folder: the card's YAML parses, its size bucket is an
official one that fits the row count, every config points at Parquet files that exist, and
every image the card shows from the folder is there."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import yaml

from factory.errors import UsageError
from factory.output.card import SIZE_CATEGORIES, size_category
from factory.output.writer import ROW_CONFIGS

CARD = "README.md"
_REQUIRED_TEXT = ("pretty_name", "license")
_REQUIRED_LISTS = ("tags", "source_datasets", "size_categories", "configs")
_IMAGE = re.compile(r"!\[[^\]]*\]\(([^)\s]+)\)")


def read_metadata(card: str) -> dict[str, Any]:
    """The YAML block between the card's opening `---` lines."""
    if not card.startswith("---\n"):
        raise ValueError("the card does not start with a `---` YAML block")
    end = card.find("\n---\n", 4)
    if end == -1:
        raise ValueError("the card's YAML block is not closed by `---`")
    try:
        data = yaml.safe_load(card[4:end + 1])
    except yaml.YAMLError as exc:
        raise ValueError(f"the card's YAML does not parse: {exc}") from exc
    if not isinstance(data, dict):
        raise ValueError("the card's YAML is not a mapping")
    return data


def _rows(files: list[Path]) -> int:
    return sum(pq.ParquetFile(f).metadata.num_rows for f in files)


def _check_configs(out_dir: Path, configs: list[Any], problems: list[str]) -> dict[str, int]:
    rows: dict[str, int] = {}
    defaults = 0
    for config in configs:
        if not isinstance(config, dict) or not isinstance(config.get("config_name"), str):
            problems.append(f"configs: entry without a config_name: {config!r}")
            continue
        name = config["config_name"]
        if name in rows:
            problems.append(f"configs: {name!r} appears twice")
        defaults += bool(config.get("default"))
        files: list[Path] = []
        data_files = config.get("data_files")
        if not isinstance(data_files, list) or not data_files:
            problems.append(f"configs.{name}: data_files must be a non-empty list of {{split, path}}")
            continue
        for entry in data_files:
            if not (isinstance(entry, dict) and isinstance(entry.get("split"), str) and isinstance(entry.get("path"), str)):
                problems.append(f"configs.{name}: data_files entry needs split and path: {entry!r}")
                continue
            matched = sorted(out_dir.glob(entry["path"]))
            if not matched:
                problems.append(f"configs.{name}: {entry['path']} matches no file in {out_dir}")
            files += matched
        rows[name] = _rows(files) if files else 0
    if defaults > 1:
        problems.append("configs: more than one config is marked default")
    return rows


def validate_card(out_dir: Path | str) -> list[str]:
    """Every problem found with the card and data of `out_dir`; empty when it is fit to publish."""
    out_dir = Path(out_dir)
    card_path = out_dir / CARD
    if not card_path.is_file():
        return [f"{card_path}: missing"]
    text = card_path.read_text(encoding="utf-8")
    try:
        meta = read_metadata(text)
    except ValueError as exc:
        return [f"{card_path}: {exc}"]
    problems: list[str] = [f"shows image {link}, which is not in {out_dir}" for link in _IMAGE.findall(text)
                           if "://" not in link and not (out_dir / link).is_file()]
    for key in _REQUIRED_TEXT:
        if not isinstance(meta.get(key), str) or not meta[key].strip():
            problems.append(f"{key}: must be a non-empty string")
    for key in _REQUIRED_LISTS:
        value = meta.get(key)
        if not isinstance(value, list) or not all(isinstance(v, str | dict) for v in value):
            problems.append(f"{key}: must be a list")
    if isinstance(meta.get("license"), str) and (meta["license"] != meta["license"].lower() or " " in meta["license"]):
        problems.append(f"license: {meta['license']!r} is not a license id (lowercase, no spaces, e.g. apache-2.0)")
    valid = [name for _, name in SIZE_CATEGORIES]
    buckets = meta.get("size_categories")
    bucket = buckets[0] if isinstance(buckets, list) and len(buckets) == 1 and buckets[0] in valid else None
    if bucket is None:
        problems.append(f"size_categories: {buckets!r} is not one of {', '.join(valid)}")
    configs = meta.get("configs")
    rows = _check_configs(out_dir, configs, problems) if isinstance(configs, list) else {}
    rows = {name: n for name, n in rows.items() if name in ROW_CONFIGS}  # `attempts` holds every attempt
    if rows and bucket is not None and bucket != size_category(max(rows.values())):
        largest = max(rows.values())
        problems.append(f"size_categories: {bucket} but the data has {largest} rows ({size_category(largest)})")
    if len(set(rows.values())) > 1:
        problems.append(f"configs hold different row counts: {rows}")
    return [f"{card_path}: {p}" for p in problems]


def check_card(out_dir: Path | str) -> None:
    """Raise `UsageError` listing every problem `validate_card` finds."""
    problems = validate_card(out_dir)
    if problems:
        raise UsageError("the dataset card is not fit to publish: " + "; ".join(problems))
