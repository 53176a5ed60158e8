#!/bin/bash
cat > /app/service/service.ini <<'INI'
[server]
host = 127.0.0.1
port = 8080
name = orders
INI
