/* lk-review-location.h — where a library's decisions are kept when its folder
 * cannot be written
 *
 * A library on a read-only medium (a DVD, a write-protected card, a share
 * mounted read-only) opens and scans, but its review.json cannot be written.
 * The user then chooses another folder; the decisions are saved there, as
 * <chosen folder>/review.json (the same file format, written by the same
 * atomic lk_review_save), and the association library folder → review.json is
 * remembered in the user's own configuration, so the next opening of the same
 * library reads and saves that file instead.
 *
 * The associations live in one key file,
 * $XDG_CONFIG_HOME/likeness/review-locations.ini (g_get_user_config_dir()),
 * one group per library, named by the SHA-256 of its folder (a path may hold
 * any byte, a group name may not):
 *
 *   [library 3f2a…]
 *   folder=/media/dvd/photos
 *   review=/home/ada/Documents/photos-review/review.json
 *
 * Nothing else is written anywhere; the library folder is never touched.
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* The review.json remembered for the library in `folder` (its real path, as
 * LkLibrary->folder), or NULL when there is none. */
char *lk_review_location_lookup (const char *folder);

/* Remembers that the decisions of the library in `folder` are kept in
 * `review_path`; NULL forgets the association (the library's own review.json
 * is used again). Writes the key file atomically; an error names it. */
gboolean lk_review_location_remember (const char *folder, const char *review_path, GError **error);

/* The review.json a library's decisions are saved to: the remembered one, or
 * <folder>/review.json. `start` (may be NULL) receives the file the decisions
 * are read from when the library opens: the remembered file when it exists,
 * otherwise the library's own review.json, so decisions made before the
 * folder became read-only (or before the association) are the starting
 * state. */
char *lk_review_location_resolve (const char *folder, char **start);

G_END_DECLS
