#!/bin/sh
# check-install.sh MESON BUILD_DIR PREFIX PATH… — installs the build into a
# temporary DESTDIR (never the real system; meson skips the icon-cache and
# schema-compile hooks when DESTDIR is set) and checks that each PATH,
# relative to PREFIX, was installed, and that nothing landed outside PREFIX.
set -eu
meson=$1 build=$2 prefix=$3
shift 3
destdir=$(mktemp -d)
trap 'rm -rf "$destdir"' EXIT

"$meson" install -C "$build" --no-rebuild --quiet --destdir "$destdir"

status=0
for path in "$@"; do
  if [ -e "$destdir$prefix/$path" ]; then
    echo "ok: $prefix/$path"
  else
    echo "missing: $prefix/$path was not installed"
    status=1
  fi
done

outside=$(find "$destdir" -type f | grep -v "^$destdir$prefix/" || true)
if [ -n "$outside" ]; then
  echo "installed outside the prefix $prefix:"; echo "$outside"
  status=1
fi
echo "$(find "$destdir" -type f | wc -l) files installed under $prefix"
exit $status
