#!/bin/bash
set -e
mkdir -p /app/dist
python3 -m zipapp /app/src -m "calc.__main__:main" -o /app/dist/calc.pyz
