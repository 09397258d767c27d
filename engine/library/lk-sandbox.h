/* lk-sandbox.h — what to tell the user when a path is not there in a Flatpak
 *
 * Inside the Flatpak sandbox a folder the app was not granted does not exist:
 * opening it fails with "No such file or directory", the same as a typo. The
 * sandbox cannot tell the two apart (the host's file system is not visible),
 * so when the app runs as a Flatpak (/.flatpak-info exists) every "not there"
 * message gets one more sentence: the folders this installation may see (the
 * "filesystems" of /.flatpak-info's [Context], and the ones opened through
 * the file chooser) and the command that grants another one.
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* NULL outside a Flatpak; otherwise a sentence (starting with a space) to
 * append to a message saying `path` is not there. */
char *lk_sandbox_hint (const char *path);
/* The same, reading `info` (a /.flatpak-info key file) instead: NULL when
 * that file does not exist. For the tests. */
char *lk_sandbox_hint_from (const char *info, const char *path);

G_END_DECLS
