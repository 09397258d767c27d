#!/bin/sh
# check-pot.sh SOURCE_ROOT — the template regenerates cleanly: xgettext, with
# the keywords and format flags of meson's 'glib' preset (what `ninja
# likeness-pot` runs), extracts every file of po/POTFILES.in without a
# warning. The usual warning is a format built from a macro, such as
# _("%" G_GUINT64_FORMAT): xgettext cannot expand the macro, so the catalogue
# holds a different string from the one the program asks for at run time and
# the message is never translated. Format the number into a string first and
# translate a "%s".
set -eu
cd "$1"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
status=0
xgettext --package-name=likeness --from-code=UTF-8 --add-comments \
  --keyword=_ --keyword=N_ --keyword=C_:1c,2 --keyword=NC_:1c,2 \
  --keyword=g_dcgettext:2 --keyword=g_dngettext:2,3 --keyword=g_dpgettext2:2c,3 \
  --flag=N_:1:pass-c-format --flag=C_:2:pass-c-format --flag=NC_:2:pass-c-format \
  --flag=g_dngettext:2:pass-c-format --flag=g_strdup_printf:1:c-format \
  --flag=g_string_printf:2:c-format --flag=g_string_append_printf:2:c-format \
  --flag=g_error_new:3:c-format --flag=g_set_error:4:c-format \
  --flag=g_markup_printf_escaped:1:c-format --flag=g_log:3:c-format \
  --flag=g_print:1:c-format --flag=g_printerr:1:c-format --flag=g_printf:1:c-format \
  --flag=g_fprintf:2:c-format --flag=g_sprintf:2:c-format --flag=g_snprintf:3:c-format \
  --files-from=po/POTFILES.in --output="$out/likeness.pot" 2> "$out/warnings" || status=1
if [ -s "$out/warnings" ]; then
  cat "$out/warnings"
  status=1
fi
[ $status -eq 0 ] && echo "likeness.pot: $(grep -c '^msgid ' "$out/likeness.pot") messages, no warning"
exit $status
