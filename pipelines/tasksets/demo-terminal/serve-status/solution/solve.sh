#!/bin/bash
sed -i 's/^port = .*/port = 8081/; s/^name = .*/name = inventory/' /app/status/status.ini
# its output goes to a log, not to this shell: the service runs on after the command that started it
nohup python3 /app/status/server.py > /tmp/status.log 2>&1 &
for _ in $(seq 50); do
  python3 -c 'import urllib.request; urllib.request.urlopen("http://127.0.0.1:8081/status", timeout=1)' 2>/dev/null && break
  sleep 0.1
done
