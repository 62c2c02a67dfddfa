#!/bin/sh
# doc_links.sh SRC -- every relative link of README.md and docs/*.md, [text](path#anchor),
# points to a file or folder that exists, and its #anchor (or a bare #anchor, in the same
# page) to a heading of that page, named as GitHub names it: lower case, punctuation but
# '-' and '_' dropped, spaces to '-', a repeated heading suffixed -1, -2, ...  Links in
# fenced code blocks and in `code` are not links; http(s) and mailto links are not checked.
src=$1
status=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The anchors of a Markdown page, one a line.
anchors() {
    LC_ALL=C awk '
        /^```/ { fence = !fence; next }
        fence || !/^#+ / { next }
        {
            h = $0; sub(/^#+ +/, "", h); sub(/ +#* *$/, "", h)
            h = tolower(h); gsub(/[^a-z0-9 _\200-\377-]/, "", h); gsub(/ /, "-", h)
            n = seen[h]++
            print (n ? h "-" n : h)
        }' "$1"
}

for page in "$src/README.md" "$src"/docs/*.md; do
    dir=$(dirname "$page")
    rel=${page#"$src"/}
    # The link targets, outside fences and code spans, one a line.
    awk '/^```/ { fence = !fence; next }
         !fence { gsub(/`[^`]*`/, ""); while (match($0, /\]\([^)]*\)/)) {
             print substr($0, RSTART + 2, RLENGTH - 3); $0 = substr($0, RSTART + RLENGTH) } }' \
        "$page" >"$tmp/targets"
    while read -r target; do
        case $target in http://* | https://* | mailto:*) continue ;; esac
        path=${target%%#*}
        anchor=
        case $target in *'#'*) anchor=${target#*#} ;; esac
        if [ -z "$path" ]; then
            file=$page
        else
            file="$dir/$path"
            if [ ! -e "$file" ]; then
                echo "$rel: link to $target: no such file" >&2
                status=1
                continue
            fi
        fi
        [ -n "$anchor" ] || continue
        case $file in
            *.md) ;;
            *) continue ;; # anchors of other files are not headings
        esac
        if ! anchors "$file" | grep -qxF -- "$anchor"; then
            echo "$rel: link to $target: no heading with that anchor" >&2
            status=1
        fi
    done <"$tmp/targets"
done
[ $status = 0 ] && echo "doc_links: every relative link of README.md and docs/*.md points to a file and heading that exist"
exit $status
