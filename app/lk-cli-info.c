/* likeness-cli info — what a library holds, and whether it loads
 *
 * Prints one `key=value` line per figure, like `likeness-cli cpu`, so scripts
 * can read it. Every thumbnail is decoded (that is the only way to know it is
 * not bad); the first bad one's message goes to stderr.
 */
#include "config.h"

#include <glib/gi18n.h>
#include <stdio.h>

#include "lk-cli.h"
#include "library/lk-library.h"
#include "people/lk-source-people.h"
#include "library/lk-thumbnail.h"

typedef struct
{
  gsize present;
  gsize missing;
  gsize bad;
  gsize none;
} ThumbnailCounts;

static void
count_thumbnails (const LkLibrary *library, ThumbnailCounts *counts)
{
  *counts = (ThumbnailCounts){ 0 };
  for (gsize i = 0; i < library->count; i++)
    {
      g_autofree char *path = lk_library_thumbnail_path (library, i);
      g_autoptr (GError) error = NULL;
      g_autoptr (LkThumbnail) thumbnail = NULL;

      if (path == NULL)
        {
          counts->none++;
          continue;
        }
      thumbnail = lk_thumbnail_load (path, &error);
      if (thumbnail != NULL)
        counts->present++;
      else if (g_error_matches (error, LK_THUMBNAIL_ERROR, LK_THUMBNAIL_ERROR_MISSING))
        counts->missing++;
      else if (counts->bad++ == 0)
        fprintf (stderr, _ ("likeness-cli info: faces[%zu].thumbnail: %s\n"), i, error->message);
    }
}

int
lk_cli_info (int argc, char **argv)
{
  g_autoptr (GError) error = NULL;

  if (!lk_cli_parse ("info", "LIBRARY",
                     N_ ("Load a library folder, check it against the format, and print what it "
                         "holds: faces, photos, gallery faces, calibration and thumbnails."),
                     NULL, &argc, &argv, 1, 1))
    return LK_CLI_USAGE;

  g_autoptr (LkLibrary) library = lk_library_load (argv[1], &error);
  if (library == NULL)
    return lk_cli_fail (error);
  if (library->thumbnail_warning != NULL)
    fprintf (stderr, _ ("likeness-cli info: warning: %s\n"), library->thumbnail_warning);

  g_autoptr (GHashTable) photo_ids = g_hash_table_new (g_int64_hash, g_int64_equal);
  gsize gallery = 0, labelled = 0;
  for (gsize i = 0; i < library->count; i++)
    {
      g_hash_table_add (photo_ids, &library->photo[i]);
      gallery += library->gallery[i];
      labelled += library->label[i] != NULL;
    }
  ThumbnailCounts thumbnails;
  count_thumbnails (library, &thumbnails);

  char number[G_ASCII_DTOSTR_BUF_SIZE];
  printf ("library=%s\n", library->folder);
  printf ("faces=%" G_GSIZE_FORMAT "\n", library->count);
  printf ("dim=%u\n", library->dim);
  printf ("normalized_on_disk=%s\n", library->normalized_on_disk ? "true" : "false");
  printf ("photos=%u\n", g_hash_table_size (photo_ids));
  printf ("photos_listed=%" G_GSIZE_FORMAT "\n", library->n_photos);
  printf ("gallery_faces=%" G_GSIZE_FORMAT "\n", gallery);
  printf ("probe_faces=%" G_GSIZE_FORMAT "\n", library->count - gallery);
  printf ("labelled_faces=%" G_GSIZE_FORMAT "\n", labelled);
  printf ("calibration_a=%s\n",
          g_ascii_formatd (number, sizeof number, "%.15g", library->calibration.a));
  printf ("calibration_b=%s\n",
          g_ascii_formatd (number, sizeof number, "%.15g", library->calibration.b));
  printf ("calibration_w_size=%s\n",
          g_ascii_formatd (number, sizeof number, "%.15g", library->calibration.w_size));
  printf ("calibration_positive_pairs=%" G_GINT64_FORMAT "\n", library->calibration.positive_pairs);
  printf ("calibration_negative_pairs=%" G_GINT64_FORMAT "\n", library->calibration.negative_pairs);
  printf ("min_probability=%s\n",
          g_ascii_formatd (number, sizeof number, "%.15g", library->min_probability));
  printf ("min_gallery_quality=%s\n",
          g_ascii_formatd (number, sizeof number, "%.15g", library->min_gallery_quality));
  printf ("thumbnails_present=%" G_GSIZE_FORMAT "\n", thumbnails.present);
  printf ("thumbnails_missing=%" G_GSIZE_FORMAT "\n", thumbnails.missing);
  printf ("thumbnails_bad=%" G_GSIZE_FORMAT "\n", thumbnails.bad);
  printf ("thumbnails_none=%" G_GSIZE_FORMAT "\n", thumbnails.none);
  /* The source's people (an imported library): what Likeness shows as
   * theirs, and every assignment its rules refuse, on stderr. */
  g_autoptr (GPtrArray) refusals = g_ptr_array_new_with_free_func (g_free);
  g_autoptr (GPtrArray) pins = lk_source_people_pins (library, refusals);
  printf ("source_people=%u\n", pins->len);
  printf ("source_assignments_refused=%" G_GSIZE_FORMAT "\n",
          refusals->len + library->source_unknown_faces);
  for (guint k = 0; k < refusals->len; k++)
    fprintf (stderr, _ ("likeness-cli info: %s\n"), (const char *) g_ptr_array_index (refusals, k));
  if (library->source_unknown_faces > 0)
    fprintf (stderr,
             ngettext ("likeness-cli info: people: %zu face id names no face of this library\n",
                       "likeness-cli info: people: %zu face ids name no face of this library\n",
                       library->source_unknown_faces),
             library->source_unknown_faces);
  printf ("fingerprint=%s\n", library->fingerprint);
  return LK_CLI_OK;
}
