#!/bin/bash
cat > /app/settings.json <<'JSON'
{"name": "orders", "port": 8125, "workers": 4, "debug": false, "tags": ["a", "b"]}
JSON
