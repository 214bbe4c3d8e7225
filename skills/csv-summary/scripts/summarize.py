"""Summarise the CSV files of a folder into out/summary.json and out/summary.txt."""

import argparse
import csv
import json
import os
import sys
from pathlib import Path


def summarize(path: Path, only_column: str | None) -> dict:
    with path.open(newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    columns = list(rows[0].keys()) if rows else []
    stats = {}
    for column in columns:
        if only_column and column != only_column:
            continue
        values = [row[column] for row in rows if row[column] not in ("", None)]
        try:
            numbers = [float(value) for value in values]
        except ValueError:
            continue
        if numbers:
            stats[column] = {
                "min": min(numbers),
                "max": max(numbers),
                "mean": round(sum(numbers) / len(numbers), 4),
            }
    return {"file": path.name, "rows": len(rows), "columns": columns, "numeric": stats}


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument(
        "--input", default=os.path.join(os.environ.get("WORK_DIR", "work"), "inputs")
    )
    parser.add_argument("--column")
    args = parser.parse_args()
    files = sorted(Path(args.input).glob("*.csv"))
    if not files:
        print(f"no CSV file in {args.input}", file=sys.stderr)
        return 2
    summaries = [summarize(path, args.column) for path in files]
    out = Path(os.environ.get("OUTPUT_DIR", "out"))
    out.mkdir(parents=True, exist_ok=True)
    (out / "summary.json").write_text(json.dumps(summaries, indent=2) + "\n", encoding="utf-8")
    lines = []
    for summary in summaries:
        lines.append(
            f"{summary['file']}: {summary['rows']} rows, columns: {', '.join(summary['columns'])}"
        )
        for column, numbers in summary["numeric"].items():
            lines.append(
                f"  {column}: min {numbers['min']}, max {numbers['max']}, mean {numbers['mean']}"
            )
    (out / "summary.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"summarised {len(summaries)} file(s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
