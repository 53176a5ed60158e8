#!/bin/bash
# rotate.sh DIR N: keep the N newest .log files of DIR, delete the rest
dir=$1 keep=$2
ls -t "$dir"/*.log | head -n "$keep" | while read -r old; do
  rm -f -- "$old"
done
