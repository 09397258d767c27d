/* lk-display-path.h — a folder or file as a person reads it */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* The last part of `folder`, in UTF-8: "sample" for /home/ada/sample. */
char *lk_display_name (const char *folder);
/* `path` in UTF-8, the home folder as “~”: "~/Pictures/sample". */
char *lk_display_path (const char *path);

G_END_DECLS
