/* bench-export-xmp — XMP sidecars for a sample library, against ExifTool
 *
 *   bench-export-xmp [--faces N] [--keep DIR] [LIBRARY]
 *
 * LIBRARY: a make-sample library of one's own (its sidecars are written
 * beside its photos, then removed), else one is made.
 * Writes a make-sample library of N faces (20,000) with its photos, names
 * every person (one per ground-truth label, named for it), then in one run,
 * on warm caches:
 *   1. lk_export_xmp creating every sidecar (photos/s);
 *   2. lk_export_xmp again, nothing new (every sidecar read and left);
 *   3. ExifTool in -stay_open batch mode (one process, one argument file
 *      fed on its stdin: what a user would script) creating the same
 *      regions (mwg-rs, MP, PersonInImage) in sidecars of its own beside
 *      Likeness's, from values computed beforehand (so ExifTool is spared
 *      reading the photos, which Likeness does for their size and
 *      orientation).
 * It prints photos/s of each and the ratio ExifTool's time / Likeness's.
 *
 * The comparison favours ExifTool: Likeness makes every sidecar durable
 * (temporaries, one syncfs a batch, renames, one fsync a folder:
 * lk-export-xmp.c), while ExifTool 12.57 never calls fsync, fdatasync or
 * sync (none in /usr/share/perl5/Image/ExifTool* or /usr/bin/exiftool) and
 * with -o opens the final name itself (O_TRUNC, seen with strace) and
 * writes into it.
 */
#include "config.h"

#include <glib/gstdio.h>
#include <stdio.h>
#include <sys/resource.h>
#include <string.h>

#include "export/lk-export-xmp.h"
#include "library/lk-library.h"
#include "lk-test-util.h"

static int faces = 20000;
static char *keep = NULL;

static const GOptionEntry entries[] = {
  { "faces", 0, 0, G_OPTION_ARG_INT, &faces, "Faces in the sample (20000)", "N" },
  { "keep", 0, 0, G_OPTION_ARG_FILENAME, &keep, "Write the library here and keep it", "DIR" },
  { NULL },
};

/* ExifTool's structure syntax escapes , { } [ ] | and a leading space with
 * a bar. */
static void
put_struct_value (GString *out, const char *value)
{
  for (const char *c = value; *c; c++)
    {
      if (strchr (",{}[]|", *c) != NULL || (c == value && *c == ' '))
        g_string_append_c (out, '|');
      g_string_append_c (out, *c);
    }
}

/* CPU seconds of this process (self) or of its waited-for children. */
static double
cpu_seconds (int who)
{
  struct rusage u;
  getrusage (who, &u);
  return u.ru_utime.tv_sec + u.ru_utime.tv_usec / 1e6 + u.ru_stime.tv_sec
         + u.ru_stime.tv_usec / 1e6;
}

static LkPeople *
people_by_label (const LkLibrary *library)
{
  g_autoptr (GHashTable) index = g_hash_table_new (g_str_hash, g_str_equal);
  GPtrArray *names = g_ptr_array_new ();
  LkPeople *people = g_new0 (LkPeople, 1);
  people->n_faces = library->count;
  people->person_of = g_new (gint32, library->count);
  for (gsize f = 0; f < library->count; f++)
    {
      const char *label = library->label[f];
      if (label == NULL)
        {
          people->person_of[f] = -1;
          continue;
        }
      gpointer k;
      if (!g_hash_table_lookup_extended (index, label, NULL, &k))
        {
          k = GINT_TO_POINTER (names->len);
          g_hash_table_insert (index, (gpointer) label, k);
          g_ptr_array_add (names, (gpointer) label);
        }
      people->person_of[f] = GPOINTER_TO_INT (k);
    }
  people->n_people = names->len;
  people->people = g_new0 (LkPerson, names->len);
  for (guint k = 0; k < names->len; k++)
    {
      people->people[k].id = g_strdup_printf ("p%u", k);
      /* A name as a person would have it: the label in a sentence's case. */
      people->people[k].name = g_strdup_printf ("Person %s", (char *) names->pdata[k]);
      people->people[k].faces = g_new0 (guint32, 1);
    }
  g_ptr_array_unref (names);
  return people;
}

int
main (int argc, char **argv)
{
  g_autoptr (GOptionContext) context = g_option_context_new ("— XMP sidecars against ExifTool");
  g_option_context_add_main_entries (context, entries, NULL);
  g_autoptr (GError) error = NULL;
  if (!g_option_context_parse (context, &argc, &argv, &error))
    {
      fprintf (stderr, "%s\n", error->message);
      return 2;
    }
  if (!lk_export_xmp_supported ())
    {
      printf ("built without gexiv2 (-Dxmp): nothing to measure\n");
      return 0;
    }
  g_autofree char *exiftool = g_find_program_in_path ("exiftool");
  g_autofree char *folder
      = keep != NULL ? g_strdup (keep) : g_dir_make_tmp ("likeness-bench-xmp-XXXXXX", NULL);
  g_autofree char *lib = argc > 1 ? g_strdup (argv[1]) : g_build_filename (folder, "lib", NULL);
  g_autofree char *n = g_strdup_printf ("%d", faces);
  if (argc <= 1 && lk_test_run_cli (NULL, NULL, "make-sample", "-n", n, lib, NULL) != 0)
    {
      fprintf (stderr, "make-sample failed\n");
      return 1;
    }
  g_autoptr (LkLibrary) library = lk_library_load (lib, &error);
  if (library == NULL)
    {
      fprintf (stderr, "%s\n", error->message);
      return 1;
    }
  g_autoptr (LkPeople) people = people_by_label (library);

  LkExportXmpOptions options = { 0 };
  double c0 = cpu_seconds (RUSAGE_SELF);
  gint64 t0 = g_get_monotonic_time ();
  g_autoptr (LkExportXmpReport) first = lk_export_xmp (library, people, &options, &error);
  gint64 t1 = g_get_monotonic_time ();
  double c1 = cpu_seconds (RUSAGE_SELF);
  g_autoptr (LkExportXmpReport) second = lk_export_xmp (library, people, &options, &error);
  gint64 t2 = g_get_monotonic_time ();
  double c2 = cpu_seconds (RUSAGE_SELF);
  double s1 = (t1 - t0) / 1e6, s2 = (t2 - t1) / 1e6;
  printf ("library: %zu faces, %zu photos; %zu photos with named faces, %zu regions\n",
          library->count, library->n_photos, first->photos, first->regions);
  printf ("likeness, creating:  %.3f s, %.0f photos/s; %.3f CPU s, %.0f photos per CPU s (%zu "
          "created, %zu refused, %zu failed)\n",
          s1, first->photos / s1, c1 - c0, first->photos / (c1 - c0), first->created,
          first->refused, first->failed);
  printf ("likeness, unchanged: %.3f s, %.0f photos/s; %.3f CPU s, %.0f photos per CPU s (%zu "
          "unchanged)\n",
          s2, second->photos / s2, c2 - c1, second->photos / (c2 - c1), second->unchanged);
  if (exiftool == NULL)
    {
      printf ("exiftool: not installed (libimage-exiftool-perl), no comparison\n");
      return 0;
    }

  /* The same regions, in ExifTool's argument syntax, from the library
   * with lk_export_xmp_area (the sample's photos are PNGs without an
   * orientation; AppliedToDimensions is the PNG's own size, from its
   * header). */
  g_autoptr (GString) args = g_string_new (NULL);
  g_autoptr (GHashTable) by_photo = g_hash_table_new (g_direct_hash, g_direct_equal);
  for (gsize f = 0; f < library->count; f++)
    if (people->person_of[f] >= 0 && library->has_box[f])
      {
        GArray *list = g_hash_table_lookup (by_photo, GSIZE_TO_POINTER (library->photo[f] + 1));
        if (list == NULL)
          {
            list = g_array_new (FALSE, FALSE, sizeof (gsize));
            g_hash_table_insert (by_photo, GSIZE_TO_POINTER (library->photo[f] + 1), list);
          }
        g_array_append_val (list, f);
      }
  gsize et_photos = 0;
  for (gsize i = 0; i < library->n_photos; i++)
    {
      const LkPhoto *photo = &library->photos[i];
      GArray *list = g_hash_table_lookup (by_photo, GSIZE_TO_POINTER (photo->id + 1));
      if (list == NULL || photo->path == NULL)
        continue;
      g_autofree char *path = g_build_filename (library->folder, photo->path, NULL);
      guint32 wh[2] = { 0, 0 };
      FILE *png = fopen (path, "rb");
      if (png != NULL)
        {
          unsigned char header[24];
          if (fread (header, 1, 24, png) == 24)
            for (int k = 0; k < 2; k++)
              wh[k] = (guint32) header[16 + 4 * k] << 24 | (guint32) header[17 + 4 * k] << 16
                      | (guint32) header[18 + 4 * k] << 8 | header[19 + 4 * k];
          fclose (png);
        }
      et_photos++;
      g_string_append_printf (args,
                              "-o\n%s.et.xmp\n-RegionInfo={AppliedToDimensions={W=%u,H=%u,"
                              "Unit=pixel},RegionList=[",
                              path, wh[0], wh[1]);
      g_autoptr (GString) mp = g_string_new ("-RegionInfoMP={Regions=[");
      g_autoptr (GString) persons = g_string_new (NULL);
      for (guint r = 0; r < list->len; r++)
        {
          gsize f = g_array_index (list, gsize, r);
          const char *name = people->people[people->person_of[f]].name;
          double a[4];
          lk_export_xmp_area (library->box[f], photo->width, photo->height, 1, a);
          g_string_append_printf (
              args, "%s{Area={X=%.6f,Y=%.6f,W=%.6f,H=%.6f,Unit=normalized},Name=", r > 0 ? "," : "",
              a[0], a[1], a[2], a[3]);
          put_struct_value (args, name);
          g_string_append (args, ",Type=Face}");
          g_string_append_printf (mp, "%s{Rectangle=%.6f|, %.6f|, %.6f|, %.6f,PersonDisplayName=",
                                  r > 0 ? "," : "", a[0] - a[2] / 2, a[1] - a[3] / 2, a[2], a[3]);
          put_struct_value (mp, name);
          g_string_append (mp, "}");
          g_string_append_printf (persons, "-PersonInImage+=%s\n", name);
        }
      g_string_append_printf (args, "]}\n%s]}\n%s-execute\n", mp->str, persons->str);
    }
  GHashTableIter iter;
  gpointer value;
  g_hash_table_iter_init (&iter, by_photo);
  while (g_hash_table_iter_next (&iter, NULL, &value))
    g_array_unref (value);
  g_string_append (args, "-stay_open\nFalse\n");

  const char *argv_et[] = { exiftool, "-q", "-q", "-stay_open", "True", "-@", "-", NULL };
  double c3 = cpu_seconds (RUSAGE_CHILDREN);
  gint64 t3 = g_get_monotonic_time ();
  g_autoptr (GSubprocess) et = g_subprocess_newv (
      argv_et, G_SUBPROCESS_FLAGS_STDIN_PIPE | G_SUBPROCESS_FLAGS_STDOUT_PIPE, &error);
  g_autoptr (GBytes) input = g_bytes_new (args->str, args->len);
  g_autoptr (GBytes) output = NULL;
  if (et == NULL || !g_subprocess_communicate (et, input, NULL, &output, NULL, &error))
    {
      fprintf (stderr, "exiftool: %s\n", error->message);
      return 1;
    }
  gint64 t4 = g_get_monotonic_time ();
  double s3 = (t4 - t3) / 1e6;
  double c4 = cpu_seconds (RUSAGE_CHILDREN) - c3;
  gsize written = 0;
  for (guint k = 0; k < first->entries->len; k++)
    {
      const LkExportXmpEntry *e = &g_array_index (first->entries, LkExportXmpEntry, k);
      g_autofree char *et_path = g_strconcat (e->photo, ".et.xmp", NULL);
      written += g_file_test (et_path, G_FILE_TEST_IS_REGULAR);
    }
  printf ("exiftool -stay_open, creating: %.3f s, %.0f photos/s; %.3f CPU s, %.0f photos per CPU "
          "s (%zu sidecars written of %zu)\n",
          s3, written / s3, c4, written / c4, written, et_photos);
  printf ("ratio, exiftool / likeness per photo: %.1fx in time, %.1fx in CPU time\n",
          (s3 / MAX (written, 1)) / (s1 / MAX (first->photos, 1)),
          (c4 / MAX (written, 1)) / ((c1 - c0) / MAX (first->photos, 1)));
  if (argc > 1)
    for (guint k = 0; k < first->entries->len; k++)
      {
        const LkExportXmpEntry *e = &g_array_index (first->entries, LkExportXmpEntry, k);
        g_autofree char *et_path = g_strconcat (e->photo, ".et.xmp", NULL);
        g_unlink (e->sidecar);
        g_unlink (et_path);
      }
  if (keep == NULL)
    lk_test_remove_tree (folder);
  return 0;
}
