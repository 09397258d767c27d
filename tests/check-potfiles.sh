#!/bin/sh
# check-potfiles.sh SOURCE_ROOT — po/POTFILES.in must list every source file
# with a translatable string, and only files that exist.
#
# Translatable means: in C, a _(" N_(" C_(" NC_(" or ngettext (" call; in
# GtkBuilder .ui files, translatable="yes"; desktop, metainfo and GSettings
# schema sources always. A file missing from POTFILES.in is a string users
# never see translated; a listed file that is gone breaks `ninja likeness-pot`.
# It walks the source folders (not git), so it works in a tarball or a Flatpak
# build too.
set -eu
root=$1
potfiles=$root/po/POTFILES.in
listed=$(mktemp)
trap 'rm -f "$listed"' EXIT
grep -v -e '^#' -e '^[[:space:]]*$' "$potfiles" | sort > "$listed"
status=0

dups=$(uniq -d "$listed")
if [ -n "$dups" ]; then
  echo "po/POTFILES.in lists these more than once:"; echo "$dups"
  status=1
fi

while read -r file; do
  if [ ! -f "$root/$file" ]; then
    echo "po/POTFILES.in lists $file, which does not exist: remove the line"
    status=1
  fi
done < "$listed"

cd "$root"
for file in $(find app engine ui data -type f \( -name '*.c' -o -name '*.h' -o -name '*.ui' \
                -o -name '*.desktop.in' -o -name '*.metainfo.xml.in' -o -name '*.gschema.xml' \) \
                | sort); do
  case $file in
    *.c|*.h) grep -Eq '(^|[^A-Za-z0-9_])(_|N_|C_|NC_|Q_|ngettext) *\( *"' "$file" || continue ;;
    *.ui) grep -q 'translatable="yes"' "$file" || continue ;;
  esac
  if ! grep -qx "$file" "$listed"; then
    echo "$file has translatable strings but po/POTFILES.in does not list it: add the line “$file”"
    status=1
  fi
done
[ $status -eq 0 ] && echo "po/POTFILES.in lists all $(wc -l < "$listed") files with translatable strings"
exit $status
