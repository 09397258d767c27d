#!/bin/sh
# check-speed-gates.sh CLI LIST — the 'speed' suite runs one test per gate
# named in LIST (tests/speed-gates.txt). Fails when the catalogue that
# `likeness-cli gates --list` prints has a gate LIST lacks — that gate would
# never run — or LIST names a gate the catalogue no longer has.
set -eu
cli=$1
list=$2
catalogue=$("$cli" gates --list | grep -v '^[[:space:]]' | cut -f1)
listed=$(grep -v -e '^#' -e '^[[:space:]]*$' "$list")
if [ "$catalogue" != "$listed" ]; then
  echo "tests/speed-gates.txt does not list the gates of the catalogue in its order."
  echo "catalogue (likeness-cli gates --list):"; echo "$catalogue" | sed 's/^/  /'
  echo "speed-gates.txt:"; echo "$listed" | sed 's/^/  /'
  echo "Make speed-gates.txt name every gate of engine/scan/lk-gates.c, one per line, in order."
  exit 1
fi
echo "speed suite covers all $(echo "$catalogue" | wc -l) catalogued gates"
