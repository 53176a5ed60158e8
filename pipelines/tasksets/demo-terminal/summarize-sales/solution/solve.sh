#!/bin/bash
mkdir -p /app/out
python3 - <<'PY'
import csv, json
totals = {}
for row in csv.DictReader(open("/app/data/sales.csv")):
    totals[row["region"]] = totals.get(row["region"], 0) + float(row["amount"])
json.dump(totals, open("/app/out/summary.json", "w"))
PY
