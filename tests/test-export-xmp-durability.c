/* test-export-xmp-durability.c — sidecars are put in place whole, in order
 *
 * lk-export-xmp.c writes a batch of sidecars in four steps (temporaries,
 * one sync pass, renames in order, one fsync per folder). With lk-fail-shim
 * preloaded (tests/meson.build), the file system fails at a chosen step or
 * logs every step, and these tests prove:
 *   - the sync step failing (EIO from fsync and syncfs): every sidecar of
 *     the batch FAILED and named, a previous sidecar byte-for-byte as it
 *     was, no new sidecar under its final name, no temporary left; the disk
 *     healed, the next run writes them all;
 *   - the rename step failing (ENOSPC): the same;
 *   - the order, from the shim's trace: no sidecar written under its final
 *     name, every rename after a sync that follows its temporary's last
 *     write, the renames in the order written and after every write of the
 *     batch, then exactly one fsync of each folder after its last rename;
 *   - Stop: the photos visited before it have their sidecars whole, the
 *     others none, no temporary left (this one needs no shim).
 */
#include "config.h"

#include <errno.h>
#include <gdk-pixbuf/gdk-pixbuf.h>
#include <glib/gstdio.h>
#include <stdlib.h>
#include <string.h>

#include "export/lk-export-xmp.h"
#include "library/lk-library.h"
#include "lk-test-util.h"

#define DIM 4

/* A sidecar another tool wrote: a rating, which must survive. */
static const char OLD_SIDECAR[]
    = "<?xpacket begin=\"\" id=\"W5M0MpCehiHzreSzNTczkc9d\"?>\n"
      "<x:xmpmeta xmlns:x=\"adobe:ns:meta/\"><rdf:RDF "
      "xmlns:rdf=\"http://www.w3.org/1999/02/22-rdf-syntax-ns#\"><rdf:Description rdf:about=\"\" "
      "xmlns:xmp=\"http://ns.adobe.com/xap/1.0/\" xmp:Rating=\"3\"/></rdf:RDF></x:xmpmeta>\n"
      "<?xpacket end=\"w\"?>\n";

/* A library (its folder's real path: the shim compares the paths the
 * kernel gives) of one grey 400 × 300 JPEG per path, one face in each, all
 * of one person. */
static char *
make_library (const char *const *paths)
{
  g_autofree char *made = g_dir_make_tmp ("likeness-xmp-durability-XXXXXX", NULL);
  g_assert_nonnull (made);
  char *folder = realpath (made, NULL);
  g_assert_nonnull (folder);
  int n = (int) g_strv_length ((char **) paths);
  g_autoptr (GString) json = g_string_new (NULL);
  g_string_append_printf (json,
                          "{ \"format\": \"likeness-library\", \"version\": 1,\n"
                          "  \"embeddings\": { \"file\": \"embeddings.f32\", \"dim\": %d,"
                          " \"count\": %d },\n  \"photos\": [\n",
                          DIM, n);
  g_autoptr (GdkPixbuf) pb = gdk_pixbuf_new (GDK_COLORSPACE_RGB, FALSE, 8, 400, 300);
  gdk_pixbuf_fill (pb, 0x808080ff);
  for (int p = 0; p < n; p++)
    {
      g_string_append_printf (json,
                              "    { \"id\": %d, \"path\": \"%s\", \"width\": 400, \"height\": 300 "
                              "}%s\n",
                              p, paths[p], p + 1 < n ? "," : "");
      g_autofree char *path = g_build_filename (folder, paths[p], NULL);
      g_autofree char *dir = g_path_get_dirname (path);
      g_assert_cmpint (g_mkdir_with_parents (dir, 0755), ==, 0);
      g_assert_true (gdk_pixbuf_save (pb, path, "jpeg", NULL, NULL));
    }
  g_string_append (json, "  ],\n  \"faces\": [\n");
  for (int f = 0; f < n; f++)
    g_string_append_printf (json,
                            "    { \"id\": \"face-%d\", \"photo\": %d, \"crop_px\": 100, "
                            "\"box\": [100, 80, 120, 120] }%s\n",
                            f, f, f + 1 < n ? "," : "");
  g_string_append (json, "  ]\n}\n");
  g_autofree char *manifest = g_build_filename (folder, "library.json", NULL);
  g_assert_true (g_file_set_contents (manifest, json->str, -1, NULL));
  g_autofree float *rows = g_new0 (float, (gsize) n *DIM);
  for (int f = 0; f < n; f++)
    rows[f * DIM + f % DIM] = 1;
  g_autofree char *emb = g_build_filename (folder, "embeddings.f32", NULL);
  g_assert_true (g_file_set_contents (emb, (const char *) rows, (gssize) n * DIM * 4, NULL));
  return folder;
}

static LkPeople *
make_people (const LkLibrary *library)
{
  LkPeople *people = g_new0 (LkPeople, 1);
  people->n_people = 1;
  people->people = g_new0 (LkPerson, 1);
  people->people[0].id = g_strdup ("p0");
  people->people[0].name = g_strdup ("Ada Lovelace");
  people->people[0].faces = g_new0 (guint32, 1);
  people->n_faces = library->count;
  people->person_of = g_new0 (gint32, library->count);
  return people;
}

typedef struct
{
  gsize stop_after;
  GCancellable *cancellable;
} StopAt;

static void
stop_at (gsize done, gsize total, gpointer data)
{
  (void) total;
  StopAt *s = data;
  if (done == s->stop_after)
    g_cancellable_cancel (s->cancellable);
}

static LkExportXmpReport *
run (const char *folder, const LkExportXmpOptions *options)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (LkLibrary) library = lk_library_load (folder, &error);
  g_assert_no_error (error);
  g_autoptr (LkPeople) people = make_people (library);
  static const LkExportXmpOptions defaults = { 0 };
  LkExportXmpReport *report
      = lk_export_xmp (library, people, options != NULL ? options : &defaults, &error);
  g_assert_no_error (error);
  for (guint k = 0; k < report->entries->len; k++)
    {
      const LkExportXmpEntry *e = &g_array_index (report->entries, LkExportXmpEntry, k);
      g_test_message ("%s: outcome %d, %u regions%s%s", e->sidecar, e->outcome, e->regions,
                      e->message != NULL ? ": " : "", e->message != NULL ? e->message : "");
    }
  return report;
}

static char *
file_in (const char *folder, const char *name)
{
  return g_build_filename (folder, name, NULL);
}

static char *
contents (const char *path)
{
  char *text = NULL;
  return g_file_get_contents (path, &text, NULL, NULL) ? text : NULL;
}

/* Nothing in FOLDER (recursively) whose name starts with a dot: no
 * temporary left. */
static void
assert_no_temporary (const char *folder)
{
  g_autoptr (GDir) d = g_dir_open (folder, 0, NULL);
  g_assert_nonnull (d);
  const char *name;
  while ((name = g_dir_read_name (d)) != NULL)
    {
      g_autofree char *path = g_build_filename (folder, name, NULL);
      if (name[0] == '.')
        g_error ("a temporary was left: %s", path);
      if (g_file_test (path, G_FILE_TEST_IS_DIR))
        assert_no_temporary (path);
    }
}

static const char *control;

static gboolean
shim_ready (void)
{
  control = g_getenv ("LK_FAIL_SHIM_CONTROL");
  if (control == NULL || g_getenv ("LD_PRELOAD") == NULL)
    {
      g_test_skip ("needs lk-fail-shim preloaded (meson sets it up in builds without sanitizers)");
      return FALSE;
    }
  return TRUE;
}

static void
shim_set (const char *mode, const char *dir)
{
  g_autofree char *line = mode != NULL ? g_strdup_printf ("%s %s\n", mode, dir) : g_strdup ("");
  g_assert_true (g_file_set_contents (control, line, -1, NULL));
}

/* The file system fails at one step (MODE on the photos' folder): every
 * sidecar FAILED with WHY in its message, the previous one as it was, no
 * new one, no temporary; healed, the next run writes them. */
static void
check_step_fails (const char *mode, const char *why)
{
  if (!shim_ready ())
    return;
  static const char *const paths[] = { "photos/a.jpg", "photos/b.jpg", "photos/c.jpg", NULL };
  g_autofree char *folder = make_library (paths);
  g_autofree char *photos = file_in (folder, "photos");
  g_autofree char *a = file_in (photos, "a.jpg.xmp");
  g_autofree char *b = file_in (photos, "b.jpg.xmp");
  g_autofree char *c = file_in (photos, "c.jpg.xmp");
  g_assert_true (g_file_set_contents (a, OLD_SIDECAR, -1, NULL));

  shim_set (mode, photos);
  g_autoptr (LkExportXmpReport) failing = run (folder, NULL);
  shim_set (NULL, NULL);
  g_assert_cmpuint (failing->failed, ==, 3);
  g_assert_cmpuint (failing->created + failing->updated, ==, 0);
  g_assert_cmpuint (failing->regions, ==, 0);
  for (guint k = 0; k < failing->entries->len; k++)
    {
      const LkExportXmpEntry *e = &g_array_index (failing->entries, LkExportXmpEntry, k);
      g_assert_cmpint (e->outcome, ==, LK_EXPORT_XMP_FAILED);
      g_assert_nonnull (e->message);
      g_assert_nonnull (strstr (e->message, e->sidecar));
      g_assert_nonnull (strstr (e->message, why));
    }
  g_autofree char *after = contents (a);
  g_assert_cmpstr (after, ==, OLD_SIDECAR);
  g_assert_false (g_file_test (b, G_FILE_TEST_EXISTS));
  g_assert_false (g_file_test (c, G_FILE_TEST_EXISTS));
  assert_no_temporary (folder);

  g_autoptr (LkExportXmpReport) healed = run (folder, NULL);
  g_assert_cmpuint (healed->failed, ==, 0);
  g_assert_cmpuint (healed->updated, ==, 1);
  g_assert_cmpuint (healed->created, ==, 2);
  g_autofree char *merged = contents (a);
  g_assert_nonnull (strstr (merged, "Ada Lovelace"));
  g_assert_nonnull (strstr (merged, "Rating=\"3\""));
  g_assert_true (g_file_test (b, G_FILE_TEST_IS_REGULAR));
  g_assert_true (g_file_test (c, G_FILE_TEST_IS_REGULAR));
  assert_no_temporary (folder);
  lk_test_remove_tree (folder);
}

static void
test_sync_fails (void)
{
  check_step_fails ("eio-fsync", g_strerror (EIO));
}

static void
test_rename_fails (void)
{
  check_step_fails ("enospc-rename", g_strerror (ENOSPC));
}

/* The index of the last line before END that is OP PATH, or -1. */
static int
last_before (char **lines, int end, const char *op, const char *path)
{
  g_autofree char *want = g_strdup_printf ("%s %s", op, path);
  for (int k = end - 1; k >= 0; k--)
    if (strcmp (lines[k], want) == 0)
      return k;
  return -1;
}

static void
test_order (void)
{
  if (!shim_ready ())
    return;
  static const char *const paths[]
      = { "x/1.jpg", "x/2.jpg", "x/3.jpg", "y/1.jpg", "y/2.jpg", NULL };
  g_autofree char *folder = make_library (paths);
  g_autofree char *x1 = g_build_filename (folder, "x", "1.jpg.xmp", NULL);
  g_assert_true (g_file_set_contents (x1, OLD_SIDECAR, -1, NULL));
  g_autofree char *trace_path = g_strconcat (control, ".trace", NULL);
  g_unlink (trace_path);

  shim_set ("trace", folder);
  g_autoptr (LkExportXmpReport) report = run (folder, NULL);
  shim_set (NULL, NULL);
  g_assert_cmpuint (report->created, ==, 4);
  g_assert_cmpuint (report->updated, ==, 1);
  g_autofree char *text = contents (trace_path);
  g_assert_nonnull (text);
  g_test_message ("trace:\n%s", text);
  g_auto (GStrv) lines = g_strsplit (text, "\n", -1);
  int n = (int) g_strv_length (lines);
  if (n > 0 && lines[n - 1][0] == '\0')
    n--;

  /* The sidecars' final names and their folders. */
  g_autoptr (GPtrArray) finals = g_ptr_array_new_with_free_func (g_free);
  for (guint k = 0; k < report->entries->len; k++)
    g_ptr_array_add (finals,
                     g_strdup (g_array_index (report->entries, LkExportXmpEntry, k).sidecar));
  int last_write = -1, first_rename = -1, syncfs_calls = 0;
  guint renamed = 0;
  for (int k = 0; k < n; k++)
    {
      if (g_str_has_prefix (lines[k], "write "))
        {
          last_write = k;
          for (guint s = 0; s < finals->len; s++)
            if (strcmp (lines[k] + 6, finals->pdata[s]) == 0)
              g_error ("line %d: a sidecar written in place: %s", k, lines[k]);
        }
      syncfs_calls += g_str_has_prefix (lines[k], "syncfs ");
      if (!g_str_has_prefix (lines[k], "rename "))
        continue;
      if (first_rename < 0)
        first_rename = k;
      g_auto (GStrv) parts = g_strsplit (lines[k] + 7, " ", 2);
      g_assert_cmpuint (g_strv_length (parts), ==, 2);
      /* Renamed in the order the photos come, onto the sidecar's name. */
      g_assert_cmpuint (renamed, <, finals->len);
      g_assert_cmpstr (parts[1], ==, finals->pdata[renamed]);
      renamed++;
      g_autofree char *from_dir = g_path_get_dirname (parts[0]);
      g_autofree char *to_dir = g_path_get_dirname (parts[1]);
      g_assert_cmpstr (from_dir, ==, to_dir);
      /* After the temporary's last write, a sync (of it, or of the whole
       * file system) before its rename. */
      int written = last_before (lines, k, "write", parts[0]);
      g_assert_cmpint (written, >=, 0);
      g_autofree char *own_fsync = g_strconcat ("fsync ", parts[0], NULL);
      gboolean synced = FALSE;
      for (int j = written + 1; j < k && !synced; j++)
        synced = g_str_has_prefix (lines[j], "syncfs ") || strcmp (lines[j], own_fsync) == 0;
      if (!synced)
        g_error ("line %d: %s renamed with no sync after its last write (line %d)", k, parts[0],
                 written);
    }
  g_assert_cmpuint (renamed, ==, finals->len);
  /* A batch: every temporary written before the first rename. */
  g_assert_cmpint (last_write, <, first_rename);
  /* At most one syncfs for the batch (none where each temporary is
   * fsync()ed: before Linux 5.8). */
  g_assert_cmpint (syncfs_calls, <=, 1);
  /* Each folder fsync()ed once, after its last rename. */
  const char *dirs[] = { "x", "y" };
  for (int d = 0; d < 2; d++)
    {
      g_autofree char *dir = g_build_filename (folder, dirs[d], NULL);
      g_autofree char *want = g_strconcat ("fsync ", dir, NULL);
      g_autofree char *prefix = g_strconcat ("rename ", dir, "/", NULL);
      int last_rename = -1, fsyncs = 0, fsync_at = -1;
      for (int k = 0; k < n; k++)
        {
          if (g_str_has_prefix (lines[k], prefix))
            last_rename = k;
          if (strcmp (lines[k], want) == 0)
            fsyncs++, fsync_at = k;
        }
      g_assert_cmpint (last_rename, >=, 0);
      g_assert_cmpint (fsyncs, ==, 1);
      g_assert_cmpint (fsync_at, >, last_rename);
    }
  assert_no_temporary (folder);
  g_unlink (trace_path);
  lk_test_remove_tree (folder);
}

/* Stop after the second of five photos: those two have their sidecars,
 * whole (what is staged is put in place), the rest none. */
static void
test_stop (void)
{
  static const char *const paths[]
      = { "p/1.jpg", "p/2.jpg", "p/3.jpg", "p/4.jpg", "p/5.jpg", NULL };
  g_autofree char *folder = make_library (paths);
  g_autoptr (GCancellable) cancellable = g_cancellable_new ();
  StopAt stop = { 2, cancellable };
  LkExportXmpOptions options = { 0 };
  options.cancellable = cancellable;
  options.progress = stop_at;
  options.progress_data = &stop;
  g_autoptr (LkExportXmpReport) report = run (folder, &options);
  g_assert_true (report->cancelled);
  g_assert_cmpuint (report->created, ==, 2);
  for (int k = 1; k <= 5; k++)
    {
      g_autofree char *name = g_strdup_printf ("p/%d.jpg.xmp", k);
      g_autofree char *sidecar = file_in (folder, name);
      g_autofree char *text = contents (sidecar);
      if (k <= 2)
        {
          g_assert_nonnull (text);
          g_assert_nonnull (strstr (text, "Ada Lovelace"));
          g_assert_nonnull (strstr (text, "</x:xmpmeta>"));
        }
      else
        g_assert_null (text);
    }
  assert_no_temporary (folder);
  lk_test_remove_tree (folder);
}

static void
skipped (void)
{
  g_test_skip ("built without gexiv2 (-Dxmp)");
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  if (!lk_export_xmp_supported ())
    {
      g_test_add_func ("/export-xmp-durability/skipped", skipped);
      return g_test_run ();
    }
  g_test_add_func ("/export-xmp-durability/sync-fails", test_sync_fails);
  g_test_add_func ("/export-xmp-durability/rename-fails", test_rename_fails);
  g_test_add_func ("/export-xmp-durability/order", test_order);
  g_test_add_func ("/export-xmp-durability/stop", test_stop);
  return g_test_run ();
}
