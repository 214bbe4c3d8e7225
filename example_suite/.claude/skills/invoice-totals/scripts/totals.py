"""Sum invoice lines per customer: $WORK_DIR/inputs/*.csv -> $OUTPUT_DIR/totals.json."""

import csv
import json
import os
import sys
from pathlib import Path


def main() -> int:
    inputs = Path(os.environ["WORK_DIR"]) / "inputs"
    totals: dict[str, float] = {}
    for path in sorted(inputs.glob("*.csv")):
        with path.open(newline="", encoding="utf-8") as handle:
            for number, row in enumerate(csv.DictReader(handle), start=2):
                try:
                    amount = float(row["quantity"]) * float(row["unit_price"])
                except (KeyError, ValueError):
                    print(f"{path.name}:{number}: bad quantity or unit_price", file=sys.stderr)
                    return 1
                totals[row["customer"]] = round(totals.get(row["customer"], 0.0) + amount, 2)
    result = {"customers": totals, "grand_total": round(sum(totals.values()), 2)}
    out = Path(os.environ["OUTPUT_DIR"])
    (out / "totals.json").write_text(json.dumps(result, indent=2, sort_keys=True) + "\n")
    print(f"{len(totals)} customers, grand total {result['grand_total']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
