#!/usr/bin/env bash
# tools/doc-figures.sh -- the figures of "Where it stands" (README.md, docs/benchmarks.md) and
# the memory tables (docs/memory.md) come from one scripts/bench results file, never by hand:
#
#   tools/doc-figures.sh take REPORT_DIR   keep the lines the docs use from a scripts/bench
#                                          report folder (machine.txt, summary.txt, table.txt)
#                                          in docs/figures/bench.txt, then write the docs
#   tools/doc-figures.sh write             rewrite the docs' generated blocks from
#                                          docs/figures/bench.txt
#   tools/doc-figures.sh check             the docs' blocks are what write makes (ctest)
#
# A generated block lies between "<!-- figures:NAME -->" and "<!-- /figures:NAME -->"; the
# text around it is written by hand.  Each block names the machine, the date and the source
# the run measured.  A figure the run lacks prints as "(not in this run)".
set -euo pipefail
cd "$(dirname "$0")/.."
figs=docs/figures/bench.txt
root=. # where the docs are written: the tree, or check's copy
usage() {
    echo "tools/doc-figures.sh: $1" >&2
    echo "usage: tools/doc-figures.sh take REPORT_DIR | write | check" >&2
    exit 2
}

take() { # REPORT_DIR
    local d=$1 stamp
    for f in machine.txt summary.txt table.txt; do
        [ -s "$d/$f" ] || usage "$d/$f is missing or empty: not a scripts/bench report folder"
    done
    stamp=$(basename "$d" | sed -n 's/^report-\([0-9]\{4\}\)\([0-9]\{2\}\)\([0-9]\{2\}\)-.*/\1-\2-\3/p')
    [ -n "$stamp" ] || usage "$d: the folder is not named report-YYYYMMDD-HHMMSS"
    {
        echo "# The scripts/bench run the docs' figures come from (tools/doc-figures.sh take)."
        echo "date: $stamp"
        sed -n 's/^\(machine\|system\|source\): /\1: /p; s/^load average \([0-9.]*\).*/load: \1/p' "$d/machine.txt"
        echo "== memory"
        awk '/^engine +created \|/{on=1} on && /^  [^ ]/{exit} on' "$d/table.txt"
        echo "== targets"
        cat "$d/summary.txt"
    } >"$figs.new"
    mv "$figs.new" "$figs"
}

# field NAME: the value of "NAME: ..." in the figures file.
field() { sed -n "s/^$1: //p" "$figs" | head -n 1; }
# lookup KEY: the target line containing KEY: its figure (after its last ": ") in $fig and
# its verdict (met, missed, ...) in $verdict.
lookup() {
    local line
    line=$(grep -F -- "$1" "$figs" | head -n 1 || true)
    fig="(not in this run)" verdict="-"
    if [ -n "$line" ]; then
        verdict=${line%% *}
        fig=${line##*: }
    fi
}
# token KEY REGEX: the first match of REGEX in the figure of KEY.
token() {
    lookup "$1"
    grep -oE -- "$2" <<<"$fig" | head -n 1 || echo "(not in this run)"
}

run_note() {
    echo "Measured by \`scripts/bench\` on $(field date), $(field machine) (load average" \
        "$(field load) at the start; source $(field source)); tools/doc-figures.sh wrote" \
        "this from [its results](figures/bench.txt)."
}

block_readme() {
    local umq head mem
    umq=$(token "UMQ, 4096 / 32768: llv at least 20x faster than ll" 'umq/32768 [0-9.]+x')
    head=$(token "headline: geometric mean" '^[0-9.]+±[0-9]+%')
    lookup "bytes per entry at the peak <= 1.5 x ucx's"
    mem=$(grep -oE ' [0-9.]+ \(' <<<"$fig" | tr -d ' (' | sort -n | sed -n '1p;$p' | paste -sd - -)
    echo "$(field date), $(field machine | cut -d , -f 1-2 | sed 's/ online//'), source $(field source): \`llv\`"
    echo "searches a 32768-entry unexpected queue ${umq#umq/32768 } faster than a linked list; the"
    echo "default engine inline takes ${head%%±*} (±${head#*±}) times the fastest inline peer"
    echo "(geometric mean);"
    echo "at a burst's peak it holds ${mem}x UCX's bytes per entry."
}

# A table row: what, figure, verdict of the target line containing KEY.
row() { # WHAT KEY
    lookup "$2"
    echo "| $1 | $fig | $verdict |"
}
block_where() {
    run_note
    echo
    echo "| what (target) | figure: median (quartiles) or ±half the interquartile range | verdict |"
    echo "|---|---|---|"
    row "\`llv\` reverse search of the UMQ at 4096 / 32768 entries, times faster than \`ll\` (>= 20)" "UMQ, 4096 / 32768: llv at least 20x faster than ll"
    row "\`llv\` reverse search at 32768, times faster than fuzzy512 (>= 1.5)" "reverse search, 32768: llv at least 1.5x faster than fuzzy"
    row "\`llv\` wildcard mix at 4096, times faster than \`ll\` (>= 10)" "wildcard mix, 4096: llv at least 10x faster than ll"
    row "\`llv\` forward search at 1 and 8 entries, \`ll\`'s time / \`llv\`'s (>= 0.91)" "forward search, 1 and 8 entries: llv no slower than ll"
    row "headline: \`hash-inl\` / the fastest of four inline peers, geometric mean (<= 0.9)" "headline: geometric mean"
    row "headline: every row <= 1.1" "headline: every row:"
    row "default engine (library calls) / the fastest baseline, geometric mean over the report (<= 0.7)" "hash: geometric mean over the report"
    row "default engine's bytes per entry at a burst's peak / \`ucx\`'s (<= 1.5)" "bytes per entry at the peak <= 1.5 x ucx's"
}

block_memory() {
    run_note
    echo
    echo "| engine | created | posted P=1024: B/entry, drained, quiet | unexpected P=1024 | posted P=4096 |"
    echo "|---|---|---|---|---|"
    awk '/^== memory/{on=1; next} /^== /{on=0} on && /\|/ && !/created|B\/entry/ {
        n = split($0, part, "|")
        name = part[1]; sub(/ +[0-9]+ *$/, "", name)
        created = part[1]; sub(/ +$/, "", created); sub(/.* /, "", created)
        printf "| %s | %s", name, created
        for (i = 2; i <= n; i++) { gsub(/^ +| +$/, "", part[i]); gsub(/ +/, ", ", part[i]); printf " | %s", part[i] }
        print " |" }' "$figs"
}

block_memory_targets() {
    echo "| target (\`memory: ...\`) | figure | verdict |"
    echo "|---|---|---|"
    grep -E '^[a-z ]+ +memory: ' "$figs" | while IFS= read -r line; do
        local v=${line%% *} rest=${line#* } what
        rest=${rest#"${rest%%[! ]*}"}
        what=${rest#memory: }
        echo "| ${what%: *} | ${rest##*: } | $v |"
    done
}

# Rewrite FILE's block NAME with the output of block_NAME.
write_block() { # FILE NAME
    local file=$root/$1 name=$2 out
    grep -q "^<!-- figures:$name -->" "$file" || usage "$file has no block '<!-- figures:$name -->'"
    out=$(mktemp)
    "block_${name//-/_}" >"$out.block"
    awk -v b="<!-- figures:$name -->" -v e="<!-- /figures:$name -->" -v blk="$out.block" '
        $0 == b { print; while ((getline l < blk) > 0) print l; skip = 1; next }
        $0 == e { skip = 0 } !skip' "$file" >"$out"
    cat "$out" >"$file"
    rm -f "$out" "$out.block"
}
write_all() {
    [ -s "$figs" ] || usage "$figs is missing: run 'tools/doc-figures.sh take REPORT_DIR' first"
    write_block README.md readme
    write_block docs/benchmarks.md where
    write_block docs/memory.md memory
    write_block docs/memory.md memory-targets
}

case ${1:-} in
take)
    [ $# -eq 2 ] || usage "take needs REPORT_DIR"
    take "$2"
    write_all
    ;;
write)
    [ $# -eq 1 ] || usage "write takes no argument"
    write_all
    ;;
check)
    [ $# -eq 1 ] || usage "check takes no argument"
    root=$(mktemp -d)
    trap 'rm -rf "$root"' EXIT
    for f in README.md docs/benchmarks.md docs/memory.md; do cp --parents "$f" "$root/"; done
    write_all
    status=0
    for f in README.md docs/benchmarks.md docs/memory.md; do
        diff -u "$f" "$root/$f" >&2 || status=1
    done
    [ $status -eq 0 ] || usage "the docs' figures differ from $figs (above): run tools/doc-figures.sh write"
    echo "PASS (doc figures)"
    ;;
*) usage "${1:+unknown command '$1'}${1:-no command}" ;;
esac
