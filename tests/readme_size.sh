#!/bin/sh
# readme_size.sh README [LIMIT] -- the README is a front page: at most LIMIT bytes (16384).
# Figures and long sections belong in docs/, with a line and a link in the README.
readme=$1
limit=${2:-16384}
size=$(wc -c <"$readme")
if [ "$size" -gt "$limit" ]; then
    echo "$readme is $size bytes, more than $limit: move figures and long sections to docs/ (a line and a link stay)" >&2
    exit 1
fi
echo "readme_size: $readme is $size bytes, at most $limit"
