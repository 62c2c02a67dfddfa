# tool_lib.sh -- what the command-line tool tests share (sourced by tool_*.sh with the
# tool's path as $1): the tool's absolute path in $tool, a scratch directory to work in
# (removed at exit), and the checks below.
tool=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"

fail() {
    echo "FAIL: $*" >&2
    exit 1
}
# has FILE LINE: FILE holds LINE exactly.
has() {
    grep -qxF -- "$2" "$1" || {
        echo "--- $1:" >&2
        cat "$1" >&2
        fail "$1 lacks the line: $2"
    }
}
# png FILE: FILE is a non-empty PNG image.
png() {
    [ -s "$1" ] || fail "$1 is missing or empty"
    [ "$(head -c 4 "$1" | tail -c 3)" = PNG ] || fail "$1 is not a PNG"
}
# expect_fail CODE PATTERN CMD...: CMD exits with CODE (any non-zero when CODE is x) and
# prints one line on stderr containing PATTERN.
expect_fail() {
    code=$1 pattern=$2
    shift 2
    rc=0
    "$@" >out.txt 2>err.txt || rc=$?
    [ "$rc" -ne 0 ] || fail "'$*' succeeded"
    [ "$code" = x ] || [ "$rc" -eq "$code" ] || fail "'$*' exited $rc, not $code"
    [ "$(wc -l <err.txt)" -eq 1 ] || fail "'$*' printed other than one line on stderr"
    grep -qF -- "$pattern" err.txt || fail "'$*' said '$(cat err.txt)', not '$pattern'"
}
