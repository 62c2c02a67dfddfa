#!/bin/sh
# layout_folders.sh SRC -- the folder table of docs/layout.md ("## Folders") names every
# folder of the repository: each top-level folder (a row of its own, or a row of one of its
# subfolders), each folder of src/ and ports/, and each program of tools/ (a tools/*.c with
# a main).  And every folder a row names exists.  The folders are git's tracked ones when
# SRC is a git work tree, else those on disk but build*/.
src=$1
doc="$src/docs/layout.md"
status=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The table: the rows between "## Folders" and the next heading.
awk '/^## /{on = ($0 == "## Folders"); next} on && /^\|/' "$doc" >"$tmp/table"
# Its first column, one backquoted name a line, without a trailing slash.
awk -F'|' 'NR > 2 {print $2}' "$tmp/table" | grep -o '`[^`]*`' | tr -d '`' |
    sed 's,/$,,' | sort -u >"$tmp/named"
if [ ! -s "$tmp/named" ]; then
    echo "$doc: no folder table found under '## Folders'" >&2
    exit 1
fi

# The repository's folders, as paths relative to SRC (depth 1 and 2).
if git -C "$src" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    git -C "$src" ls-files | awk -F/ 'NF > 1 {print $1} NF > 2 {print $1 "/" $2}'
else
    (cd "$src" && find . -mindepth 1 -maxdepth 2 -type d ! -path './.git*' \
        ! -path './build' ! -path './build/*' ! -path './build-*' | sed 's,^\./,,')
fi | sort -u >"$tmp/dirs"

missing() {
    echo "docs/layout.md's folder table lacks $1" >&2
    status=1
}
# Top level: the folder itself, or one of its subfolders, is a row.
for d in $(grep -v / "$tmp/dirs"); do
    grep -qx -e "$d" -e "$d/.*" "$tmp/named" || missing "$d/"
done
# src/* and ports/*: each its own row.
for d in $(grep -E '^(src|ports)/' "$tmp/dirs"); do
    grep -qx "$d" "$tmp/named" || missing "$d"
done
# tools/*.c with a main: its name anywhere in the table, in backquotes.
for f in "$src"/tools/*.c; do
    grep -Eq '^int[[:space:]]+main[[:space:]]*\(' "$f" || continue
    p=$(basename "$f" .c)
    grep -q "\`$p\`" "$tmp/table" || missing "the program $p (tools/$p.c)"
done
# Every folder a row names exists.
while read -r d; do
    [ -d "$src/$d" ] || { echo "docs/layout.md's folder table names $d, which is not a folder" >&2; status=1; }
done <"$tmp/named"

[ $status = 0 ] && echo "layout_folders: docs/layout.md's folder table names every folder and tools program"
exit $status
