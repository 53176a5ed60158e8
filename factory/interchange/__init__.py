"""Other formats in and out: other agents' trajectories become runs; a run's kept rows go out
as OpenAI chat fine-tuning JSONL, ShareGPT or DPO pairs, with what a trainer needs beside them.

    importer.import_run(path, "mini-swe-agent" | "swe-agent" | "openhands" | "swe-smith-sft" | "atif", tasks, run_id)
    export_dataset(dataset_dir, "openai" | "sharegpt" | "dpo" | "atif", out, ExportOptions(rows, which, thinking)) -> ExportSummary
    openai_chat.check_line(line), sharegpt.check_line(line) -> problems (empty: fit for the format)
"""

from factory.interchange.export import FORMATS, ExportSummary, export_dataset, export_rows
from factory.interchange.kept import KeptRow, read_kept

__all__ = ["FORMATS", "ExportSummary", "KeptRow", "export_dataset", "export_rows", "read_kept"]
