#!/bin/bash
set -e
cd /app/repo
git -c safe.directory='*' branch feature "$(git -c safe.directory='*' log -g --format=%H --grep='add parser' HEAD | head -n 1)"
