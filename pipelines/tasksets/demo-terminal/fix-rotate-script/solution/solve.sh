#!/bin/bash
sed -i 's/head -n "\$keep"/tail -n +"$((keep + 1))"/' /app/bin/rotate.sh
