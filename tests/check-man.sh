#!/bin/sh
# check-man.sh PAGE LIKENESS_CLI — the man page help2man made names every
# command `likeness-cli --help` lists, and man renders it. A command added
# to the program but missing from the page means the page was built from
# another program.
set -eu
page=$1
cli=$2
status=0
commands=$(LC_ALL=C "$cli" --help | sed -n '/^Commands:/,/^$/p' | awk 'NF > 1 { print $1 }')
[ -n "$commands" ] || { echo "likeness-cli --help lists no command"; exit 1; }
rendered=$(mktemp)
trap 'rm -f "$rendered"' EXIT
if command -v man >/dev/null 2>&1; then
  if ! LC_ALL=C MANWIDTH=200 man -l "$page" > "$rendered" 2>&1; then
    echo "man -l $page failed:"; cat "$rendered"
    exit 1
  fi
else
  # No man here: read the page's source, which holds the same words once
  # its escaped hyphens are plain.
  sed 's/\\-/-/g' "$page" > "$rendered"
fi
for name in $commands; do
  # Its line in COMMANDS (alone on it when the name is long) and its example.
  if ! grep -Eq -- "^ *$name( |\$)" "$rendered" || ! grep -q -- "likeness-cli $name " "$rendered"; then
    echo "$page does not name the command $name"
    status=1
  fi
done
grep -q 'EXAMPLES' "$rendered" || { echo "$page has no EXAMPLES section"; status=1; }
[ $status -eq 0 ] && echo "$page names all $(echo "$commands" | wc -l) commands and renders"
exit $status
