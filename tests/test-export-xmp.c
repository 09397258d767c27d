/* test-export-xmp.c — the review as XMP face regions in sidecars, read back
 * by ExifTool (the reader Immich uses, an independent one): names and boxes
 * within a pixel for EXIF orientations 1, 3, 6 and 8; another tool's
 * properties and regions kept; idempotence (no mtime moves); renames,
 * take-outs, hiding and un-naming brought in line; corrupt sidecars and
 * failed writes reported, others written; symbolic links written through,
 * modes kept; names with markup characters, other scripts and 200
 * characters. */
#include "config.h"

#include <gdk-pixbuf/gdk-pixbuf.h>
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <math.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "export/lk-export-xmp.h"
#include "library/lk-library.h"
#include "lk-test-util.h"

#define DIM 4

typedef struct
{
  const char *path;
  int width, height; /* as shown */
  int orientation;
} TPhoto;

typedef struct
{
  int photo;
  double box[4];
  int person; /* index into the names, -1 unassigned */
} TFace;

static char *exiftool;

/* A library folder with the photos (grey JPEGs, stored turned back by their
 * orientation, which ExifTool writes into them) and faces. */
static char *
make_library (const TPhoto *photos, int n_photos, const TFace *faces, int n_faces)
{
  char *folder = g_dir_make_tmp ("likeness-xmp-XXXXXX", NULL);
  g_assert_nonnull (folder);
  GString *json = g_string_new (NULL);
  g_string_append_printf (json,
                          "{ \"format\": \"likeness-library\", \"version\": 1,\n"
                          "  \"embeddings\": { \"file\": \"embeddings.f32\", \"dim\": %d,"
                          " \"count\": %d },\n  \"photos\": [\n",
                          DIM, n_faces);
  for (int p = 0; p < n_photos; p++)
    {
      g_string_append_printf (json,
                              "    { \"id\": %d, \"path\": \"%s\", \"width\": %d, \"height\": %d "
                              "}%s\n",
                              p, photos[p].path, photos[p].width, photos[p].height,
                              p + 1 < n_photos ? "," : "");
      g_autofree char *path = g_build_filename (folder, photos[p].path, NULL);
      g_autofree char *dir = g_path_get_dirname (path);
      g_assert_cmpint (g_mkdir_with_parents (dir, 0755), ==, 0);
      gboolean turned = photos[p].orientation >= 5;
      /* Stored at a quarter of the library's size: boxes are scaled by the
       * ratio (LIBRARY-FORMAT: a smaller export). */
      int sw = (turned ? photos[p].height : photos[p].width) / 4;
      int sh = (turned ? photos[p].width : photos[p].height) / 4;
      g_autoptr (GdkPixbuf) pb = gdk_pixbuf_new (GDK_COLORSPACE_RGB, FALSE, 8, sw, sh);
      gdk_pixbuf_fill (pb, 0x808080ff);
      g_assert_true (gdk_pixbuf_save (pb, path, "jpeg", NULL, NULL));
      if (photos[p].orientation != 1)
        {
          g_autofree char *arg = g_strdup_printf ("-Orientation#=%d", photos[p].orientation);
          const char *argv[] = { exiftool, "-q", "-overwrite_original", arg, path, NULL };
          int status = -1;
          g_assert_true (g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_DEFAULT, NULL, NULL,
                                       NULL, NULL, &status, NULL));
          g_assert_true (g_spawn_check_wait_status (status, NULL));
        }
    }
  g_string_append (json, "  ],\n  \"faces\": [\n");
  for (int f = 0; f < n_faces; f++)
    g_string_append_printf (json,
                            "    { \"id\": \"face-%d\", \"photo\": %d, \"crop_px\": 100, "
                            "\"box\": [%g, %g, %g, %g] }%s\n",
                            f, faces[f].photo, faces[f].box[0], faces[f].box[1], faces[f].box[2],
                            faces[f].box[3], f + 1 < n_faces ? "," : "");
  g_string_append (json, "  ]\n}\n");
  g_autofree char *manifest = g_build_filename (folder, "library.json", NULL);
  g_assert_true (g_file_set_contents (manifest, json->str, -1, NULL));
  g_string_free (json, TRUE);
  float *rows = g_new0 (float, (gsize) n_faces *DIM);
  for (int f = 0; f < n_faces; f++)
    rows[f * DIM + f % DIM] = 1;
  g_autofree char *emb = g_build_filename (folder, "embeddings.f32", NULL);
  g_assert_true (g_file_set_contents (emb, (const char *) rows, (gssize) n_faces * DIM * 4, NULL));
  g_free (rows);
  return folder;
}

/* People as the review would make them: person k is named names[k] (NULL:
 * unnamed) and hidden when hidden[k]. */
static LkPeople *
make_people (const LkLibrary *library, const TFace *faces, const char *const *names,
             const gboolean *hidden, int n_people)
{
  LkPeople *people = g_new0 (LkPeople, 1);
  people->n_people = n_people;
  people->people = g_new0 (LkPerson, MAX (n_people, 1));
  people->n_faces = library->count;
  people->person_of = g_new (gint32, library->count);
  for (int k = 0; k < n_people; k++)
    {
      people->people[k].id = g_strdup_printf ("p%d", k);
      people->people[k].name = g_strdup (names[k]);
      people->people[k].hidden = hidden != NULL && hidden[k];
      people->people[k].faces = g_new0 (guint32, 1);
    }
  for (gsize f = 0; f < library->count; f++)
    people->person_of[f] = faces[f].person;
  return people;
}

/* ExifTool's reading of one sidecar, as JSON (-n: numbers as numbers). */
static JsonObject *
read_back (JsonParser *parser, const char *sidecar)
{
  const char *argv[] = { exiftool,
                         "-j",
                         "-struct",
                         "-n",
                         "-RegionInfo",
                         "-RegionInfoMP",
                         "-PersonInImage",
                         "-TagsList",
                         "-Rating",
                         "-Subject",
                         "-XMP-darktable:all",
                         sidecar,
                         NULL };
  g_autofree char *out = NULL;
  int status = -1;
  g_assert_true (g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_STDERR_TO_DEV_NULL, NULL, NULL,
                               &out, NULL, &status, NULL));
  g_assert_true (g_spawn_check_wait_status (status, NULL));
  g_assert_true (json_parser_load_from_data (parser, out, -1, NULL));
  return json_array_get_object_element (json_node_get_array (json_parser_get_root (parser)), 0);
}

/* Immich's orientRegionInfo and applyTaggedFaces
 * (server/src/services/metadata.service.ts), written again here from its
 * source, not from lk-export-xmp.c: the region as Immich places it, in the
 * pixels of the photo as shown. */
static void
immich_box (JsonObject *region, JsonObject *dims, int orientation, double corners[4])
{
  JsonObject *area = json_object_get_object_member (region, "Area");
  double X = json_object_get_double_member (area, "X");
  double Y = json_object_get_double_member (area, "Y");
  double W = json_object_get_double_member (area, "W");
  double H = json_object_get_double_member (area, "H");
  double DW = json_object_get_double_member (dims, "W");
  double DH = json_object_get_double_member (dims, "H");
  gboolean sidewards = orientation >= 5 && orientation <= 8;
  double t;
  switch (orientation)
    {
      case 3:
        X = 1 - X;
        Y = 1 - Y;
        break;
      case 6: /* Rotate90CW: [X, Y] = [1 - Y, X] */
        t = X;
        X = 1 - Y;
        Y = t;
        break;
      case 8: /* Rotate270CW: [X, Y] = [Y, 1 - X] */
        t = X;
        X = Y;
        Y = 1 - t;
        break;
      default:
        break;
    }
  if (sidewards)
    {
      t = W, W = H, H = t;
      t = DW, DW = DH, DH = t;
    }
  corners[0] = floor ((X - W / 2) * DW);
  corners[1] = floor ((Y - H / 2) * DH);
  corners[2] = floor ((X + W / 2) * DW);
  corners[3] = floor ((Y + H / 2) * DH);
}

static JsonArray *
region_list (JsonObject *o)
{
  if (!json_object_has_member (o, "RegionInfo"))
    return NULL;
  return json_object_get_array_member (json_object_get_object_member (o, "RegionInfo"),
                                       "RegionList");
}

/* Every region ExifTool reads, placed as Immich places it, equals the
 * library's box (scaled to the stored photo) within a pixel. */
static void
check_sidecar (const char *sidecar, const TPhoto *photo, const TFace *faces, int n_faces,
               const char *const *names, int expect_regions)
{
  g_autoptr (JsonParser) parser = json_parser_new ();
  JsonObject *o = read_back (parser, sidecar);
  JsonArray *list = region_list (o);
  guint n = list != NULL ? json_array_get_length (list) : 0;
  g_assert_cmpuint (n, ==, expect_regions);
  if (n == 0)
    return;
  JsonObject *dims = json_object_get_object_member (json_object_get_object_member (o, "RegionInfo"),
                                                    "AppliedToDimensions");
  gboolean turned = photo->orientation >= 5;
  double scale = (turned ? json_object_get_double_member (dims, "H")
                         : json_object_get_double_member (dims, "W"))
                 / photo->width;
  for (guint r = 0; r < n; r++)
    {
      JsonObject *region = json_array_get_object_element (list, r);
      const char *name = json_object_get_string_member (region, "Name");
      g_assert_cmpstr (json_object_get_string_member (region, "Type"), ==, "Face");
      double c[4];
      immich_box (region, dims, photo->orientation, c);
      gboolean found = FALSE;
      for (int f = 0; f < n_faces && !found; f++)
        {
          if (faces[f].person < 0 || strcmp (names[faces[f].person], name) != 0)
            continue;
          const double *b = faces[f].box;
          double want[4]
              = { b[0] * scale, b[1] * scale, (b[0] + b[2]) * scale, (b[1] + b[3]) * scale };
          found = TRUE;
          for (int k = 0; k < 4; k++)
            if (fabs (c[k] - want[k]) > 1.0)
              found = FALSE;
          if (found)
            g_test_message ("%s: %s at %g,%g–%g,%g (library %g,%g–%g,%g)", sidecar, name, c[0],
                            c[1], c[2], c[3], want[0], want[1], want[2], want[3]);
        }
      if (!found)
        g_error ("%s: region “%s” at %g,%g–%g,%g is on no face of that name", sidecar, name, c[0],
                 c[1], c[2], c[3]);
    }
}

static gint64
mtime_ns (const char *path)
{
  struct stat st;
  g_assert_cmpint (stat (path, &st), ==, 0);
  return (gint64) st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
}

static LkExportXmpReport *
run (const char *folder, LkPeople *people, const LkExportXmpOptions *options)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (LkLibrary) library = lk_library_load (folder, &error);
  g_assert_no_error (error);
  LkExportXmpReport *report = lk_export_xmp (library, people, options, &error);
  g_assert_no_error (error);
  for (guint k = 0; k < report->entries->len; k++)
    {
      const LkExportXmpEntry *e = &g_array_index (report->entries, LkExportXmpEntry, k);
      g_test_message ("%s: outcome %d, %u regions%s%s", e->sidecar, e->outcome, e->regions,
                      e->message != NULL ? ": " : "", e->message != NULL ? e->message : "");
    }
  return report;
}

static const LkExportXmpEntry *
entry_for (const LkExportXmpReport *report, const char *suffix)
{
  for (guint k = 0; k < report->entries->len; k++)
    {
      const LkExportXmpEntry *e = &g_array_index (report->entries, LkExportXmpEntry, k);
      if (g_str_has_suffix (e->sidecar, suffix))
        return e;
    }
  return NULL;
}

/* Orientations 1, 3, 6 and 8: boxes land where Immich puts them; a second
 * run writes nothing. */
static void
test_orientations (void)
{
  static const TPhoto photos[] = {
    { "a/o1.jpg", 1600, 1200, 1 },
    { "a/o3.jpg", 1600, 1200, 3 },
    { "a/o6.jpg", 1200, 1600, 6 },
    { "a/o8.jpg", 1200, 1600, 8 },
  };
  static const TFace faces[] = {
    { 0, { 100, 200, 300, 360 }, 0 }, { 0, { 900, 500, 200, 240 }, 1 },
    { 1, { 100, 200, 300, 360 }, 0 }, { 1, { 1200, 40, 320, 300 }, 1 },
    { 2, { 80, 1000, 300, 360 }, 0 }, { 2, { 700, 120, 400, 420 }, 1 },
    { 3, { 80, 1000, 300, 360 }, 0 }, { 3, { 700, 120, 400, 420 }, 1 },
  };
  static const char *const names[] = { "Ada", "Grace" };
  g_autofree char *folder = make_library (photos, 4, faces, 8);
  g_autoptr (LkLibrary) library = lk_library_load (folder, NULL);
  g_autoptr (LkPeople) people = make_people (library, faces, names, NULL, 2);
  LkExportXmpOptions options = { 0 };
  g_autoptr (LkExportXmpReport) report = run (folder, people, &options);
  g_assert_cmpuint (report->created, ==, 4);
  g_assert_cmpuint (report->regions, ==, 8);
  gint64 mtimes[4];
  for (int p = 0; p < 4; p++)
    {
      g_autofree char *sidecar = g_strdup_printf ("%s/%s.xmp", folder, photos[p].path);
      check_sidecar (sidecar, &photos[p], faces, 8, names, 2);
      mtimes[p] = mtime_ns (sidecar);
    }
  /* The photos themselves: not written (ExifTool's orientation stays). */
  g_autoptr (LkExportXmpReport) again = run (folder, people, &options);
  g_assert_cmpuint (again->unchanged, ==, 4);
  g_assert_cmpuint (again->created + again->updated, ==, 0);
  for (int p = 0; p < 4; p++)
    {
      g_autofree char *sidecar = g_strdup_printf ("%s/%s.xmp", folder, photos[p].path);
      g_assert_cmpint (mtime_ns (sidecar), ==, mtimes[p]);
    }
  lk_test_remove_tree (folder);
}

/* A darktable-style sidecar with another tool's region: everything of it
 * stays, its region too; ours joins. */
static const char darktable_sidecar[]
    = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      "<x:xmpmeta xmlns:x=\"adobe:ns:meta/\" x:xmptk=\"XMP Core 4.4.0-Exiv2\">\n"
      " <rdf:RDF xmlns:rdf=\"http://www.w3.org/1999/02/22-rdf-syntax-ns#\">\n"
      "  <rdf:Description rdf:about=\"\"\n"
      "    xmlns:xmp=\"http://ns.adobe.com/xap/1.0/\"\n"
      "    xmlns:dc=\"http://purl.org/dc/elements/1.1/\"\n"
      "    xmlns:darktable=\"http://darktable.sf.net/\"\n"
      "    xmlns:mwg-rs=\"http://www.metadataworkinggroup.com/schemas/regions/\"\n"
      "    xmlns:stArea=\"http://ns.adobe.com/xmp/sType/Area#\"\n"
      "    xmlns:stDim=\"http://ns.adobe.com/xap/1.0/sType/Dimensions#\"\n"
      "   xmp:Rating=\"4\" darktable:xmp_version=\"5\" darktable:history_end=\"2\">\n"
      "   <dc:subject><rdf:Bag><rdf:li>holiday</rdf:li><rdf:li>beach</rdf:li></rdf:Bag>"
      "</dc:subject>\n"
      "   <darktable:history><rdf:Seq>\n"
      "    <rdf:li darktable:num=\"0\" darktable:operation=\"exposure\" darktable:enabled=\"1\" "
      "darktable:params=\"0000000000\"/>\n"
      "    <rdf:li darktable:num=\"1\" darktable:operation=\"colorin\" darktable:enabled=\"1\" "
      "darktable:params=\"gz48eJxjZBgFowAE\"/>\n"
      "   </rdf:Seq></darktable:history>\n"
      "   <mwg-rs:Regions rdf:parseType=\"Resource\">\n"
      "    <mwg-rs:AppliedToDimensions stDim:w=\"400\" stDim:h=\"300\" stDim:unit=\"pixel\"/>\n"
      "    <mwg-rs:RegionList><rdf:Bag>\n"
      "     <rdf:li rdf:parseType=\"Resource\"><mwg-rs:Name>Someone Else</mwg-rs:Name>"
      "<mwg-rs:Type>Face</mwg-rs:Type>"
      "<mwg-rs:Area stArea:x=\"0.9\" stArea:y=\"0.9\" stArea:w=\"0.05\" stArea:h=\"0.05\" "
      "stArea:unit=\"normalized\"/></rdf:li>\n"
      "     <rdf:li rdf:parseType=\"Resource\"><mwg-rs:Name>Old Guess</mwg-rs:Name>"
      "<mwg-rs:Type>Face</mwg-rs:Type>"
      "<mwg-rs:Area stArea:x=\"0.15625\" stArea:y=\"0.316666\" stArea:w=\"0.1875\" "
      "stArea:h=\"0.3\" stArea:unit=\"normalized\"/></rdf:li>\n"
      "    </rdf:Bag></mwg-rs:RegionList>\n"
      "   </mwg-rs:Regions>\n"
      "  </rdf:Description>\n"
      " </rdf:RDF>\n"
      "</x:xmpmeta>\n";

static char *
foreign_view (const char *sidecar)
{
  const char *argv[]
      = { exiftool, "-j", "-struct", "-Rating", "-Subject", "-XMP-darktable:all", sidecar, NULL };
  char *out = NULL;
  g_assert_true (g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_STDERR_TO_DEV_NULL, NULL, NULL,
                               &out, NULL, NULL, NULL));
  return out;
}

static void
test_merge (void)
{
  static const TPhoto photos[] = { { "b/dt.jpg", 1600, 1200, 1 } };
  /* Face 0 is where the other tool's "Old Guess" is (same box): Likeness
   * names it now, so that region is replaced; "Someone Else" stays. */
  static const TFace faces[] = { { 0, { 100, 200, 300, 360 }, 0 } };
  static const char *const names[] = { "Ada" };
  g_autofree char *folder = make_library (photos, 1, faces, 1);
  g_autofree char *sidecar = g_build_filename (folder, "b/dt.jpg.xmp", NULL);
  g_assert_true (g_file_set_contents (sidecar, darktable_sidecar, -1, NULL));
  g_autofree char *foreign_before = foreign_view (sidecar);
  g_autoptr (LkLibrary) library = lk_library_load (folder, NULL);
  g_autoptr (LkPeople) people = make_people (library, faces, names, NULL, 1);
  LkExportXmpOptions options = { 0 };
  g_autoptr (LkExportXmpReport) report = run (folder, people, &options);
  g_assert_cmpuint (report->updated, ==, 1);

  g_autofree char *foreign_after = foreign_view (sidecar);
  g_assert_cmpstr (foreign_before, ==, foreign_after);
  g_assert_nonnull (strstr (foreign_after, "\"colorin\""));
  g_autoptr (JsonParser) parser = json_parser_new ();
  JsonObject *o = read_back (parser, sidecar);
  JsonArray *list = region_list (o);
  g_assert_cmpuint (json_array_get_length (list), ==, 2);
  g_assert_cmpstr (json_object_get_string_member (json_array_get_object_element (list, 0), "Name"),
                   ==, "Someone Else");
  g_assert_cmpstr (json_object_get_string_member (json_array_get_object_element (list, 1), "Name"),
                   ==, "Ada");
  JsonObject *area
      = json_object_get_object_member (json_array_get_object_element (list, 0), "Area");
  g_assert_cmpfloat_with_epsilon (json_object_get_double_member (area, "X"), 0.9, 1e-9);
  /* Once merged, the next run changes nothing. */
  gint64 mtime = mtime_ns (sidecar);
  g_autoptr (LkExportXmpReport) again = run (folder, people, &options);
  g_assert_cmpuint (again->unchanged, ==, 1);
  g_assert_cmpint (mtime_ns (sidecar), ==, mtime);
  lk_test_remove_tree (folder);
}

static gboolean
person_in_image_has (JsonObject *o, const char *name)
{
  if (!json_object_has_member (o, "PersonInImage"))
    return FALSE;
  JsonNode *node = json_object_get_member (o, "PersonInImage");
  if (JSON_NODE_HOLDS_VALUE (node))
    return g_strcmp0 (json_node_get_string (node), name) == 0;
  JsonArray *a = json_node_get_array (node);
  for (guint k = 0; k < json_array_get_length (a); k++)
    if (g_strcmp0 (json_array_get_string_element (a, k), name) == 0)
      return TRUE;
  return FALSE;
}

/* Renamed, moved to someone else, taken out, hidden, un-named: each next
 * run brings the sidecar in line. */
static void
test_updates (void)
{
  static const TPhoto photos[] = { { "c/u.jpg", 1600, 1200, 1 } };
  TFace faces[] = { { 0, { 100, 200, 300, 360 }, 0 }, { 0, { 900, 500, 200, 240 }, 1 } };
  const char *names[] = { "Ada", "Grace" };
  g_autofree char *folder = make_library (photos, 1, faces, 2);
  g_autofree char *sidecar = g_build_filename (folder, "c/u.jpg.xmp", NULL);
  g_autoptr (LkLibrary) library = lk_library_load (folder, NULL);
  LkExportXmpOptions options = { 0 };
  options.digikam_tags = TRUE;

  {
    g_autoptr (LkPeople) people = make_people (library, faces, names, NULL, 2);
    g_autoptr (LkExportXmpReport) r = run (folder, people, &options);
    g_assert_cmpuint (r->created, ==, 1);
    check_sidecar (sidecar, &photos[0], faces, 2, names, 2);
  }
  /* Renamed. */
  names[0] = "Ada Lovelace";
  {
    g_autoptr (LkPeople) people = make_people (library, faces, names, NULL, 2);
    g_autoptr (LkExportXmpReport) r = run (folder, people, &options);
    g_assert_cmpuint (r->updated, ==, 1);
    check_sidecar (sidecar, &photos[0], faces, 2, names, 2);
    g_autoptr (JsonParser) parser = json_parser_new ();
    JsonObject *o = read_back (parser, sidecar);
    g_assert_true (person_in_image_has (o, "Ada Lovelace"));
    g_assert_false (person_in_image_has (o, "Ada"));
    g_autoptr (JsonGenerator) gen = json_generator_new ();
    json_generator_set_root (gen, json_parser_get_root (parser));
    g_autofree char *text = json_generator_to_data (gen, NULL);
    g_assert_nonnull (strstr (text, "People/Ada Lovelace"));
    g_assert_null (strstr (text, "People/Ada\""));
  }
  /* Face 1 moved to Ada Lovelace. */
  faces[1].person = 0;
  {
    g_autoptr (LkPeople) people = make_people (library, faces, names, NULL, 2);
    g_autoptr (LkExportXmpReport) r = run (folder, people, &options);
    g_assert_cmpuint (r->updated, ==, 1);
    check_sidecar (sidecar, &photos[0], faces, 2, names, 2);
    g_autoptr (JsonParser) parser = json_parser_new ();
    JsonObject *o = read_back (parser, sidecar);
    g_assert_false (person_in_image_has (o, "Grace"));
  }
  /* Face 1 taken out. */
  faces[1].person = -1;
  {
    g_autoptr (LkPeople) people = make_people (library, faces, names, NULL, 2);
    g_autoptr (LkExportXmpReport) r = run (folder, people, &options);
    g_assert_cmpuint (r->updated, ==, 1);
    check_sidecar (sidecar, &photos[0], faces, 2, names, 1);
  }
  /* Ada hidden: no region left. */
  {
    gboolean hidden[] = { TRUE, FALSE };
    g_autoptr (LkPeople) people = make_people (library, faces, names, hidden, 2);
    g_autoptr (LkExportXmpReport) r = run (folder, people, &options);
    g_assert_cmpuint (r->updated, ==, 1);
    check_sidecar (sidecar, &photos[0], faces, 2, names, 0);
    g_autoptr (JsonParser) parser = json_parser_new ();
    JsonObject *o = read_back (parser, sidecar);
    g_assert_false (person_in_image_has (o, "Ada Lovelace"));
  }
  /* Shown again, then un-named. */
  {
    g_autoptr (LkPeople) people = make_people (library, faces, names, NULL, 2);
    g_autoptr (LkExportXmpReport) r = run (folder, people, &options);
    g_assert_cmpuint (r->updated, ==, 1);
    check_sidecar (sidecar, &photos[0], faces, 2, names, 1);
  }
  names[0] = NULL;
  {
    g_autoptr (LkPeople) people = make_people (library, faces, names, NULL, 2);
    g_autoptr (LkExportXmpReport) r = run (folder, people, &options);
    g_assert_cmpuint (r->updated, ==, 1);
    g_assert_cmpuint (r->photos, ==, 0);
    const char *none[] = { "", "" };
    check_sidecar (sidecar, &photos[0], faces, 2, none, 0);
  }
  lk_test_remove_tree (folder);
}

/* A corrupt sidecar is left byte for byte and reported; a sidecar that
 * cannot be written is reported; the others are written. A symbolic link
 * is written through, a private mode kept. */
static void
test_bad_sidecars (void)
{
  static const TPhoto photos[] = {
    { "d/corrupt.jpg", 800, 600, 1 }, { "d/good.jpg", 800, 600, 1 },
    { "d/linked.jpg", 800, 600, 1 },  { "d/dangling.jpg", 800, 600, 1 },
    { "d/private.jpg", 800, 600, 1 }, { "d/missing.jpg", 800, 600, 1 },
  };
  static const TFace faces[] = {
    { 0, { 100, 100, 100, 100 }, 0 }, { 1, { 100, 100, 100, 100 }, 0 },
    { 2, { 100, 100, 100, 100 }, 0 }, { 3, { 100, 100, 100, 100 }, 0 },
    { 4, { 100, 100, 100, 100 }, 0 }, { 5, { 100, 100, 100, 100 }, 0 },
  };
  static const char *const names[] = { "Ada" };
  g_autofree char *folder = make_library (photos, 6, faces, 6);
  g_autofree char *corrupt = g_build_filename (folder, "d/corrupt.jpg.xmp", NULL);
  static const char garbage[] = "<x:xmpmeta xmlns:x=\"adobe:ns:meta/\"><rdf:RDF "
                                "xmlns:rdf=\"http://www.w3.org/1999/02/22-rdf-syntax-ns#\">"
                                "<rdf:Description rdf:about=\"\" <<< truncated";
  g_assert_true (g_file_set_contents (corrupt, garbage, -1, NULL));
  gint64 corrupt_mtime = mtime_ns (corrupt);
  /* linked.jpg.xmp → elsewhere/real.xmp */
  g_autofree char *elsewhere = g_build_filename (folder, "elsewhere", NULL);
  g_assert_cmpint (g_mkdir (elsewhere, 0755), ==, 0);
  g_autofree char *real = g_build_filename (elsewhere, "real.xmp", NULL);
  g_autofree char *linked = g_build_filename (folder, "d/linked.jpg.xmp", NULL);
  g_assert_cmpint (symlink ("../elsewhere/real.xmp", linked), ==, 0);
  /* dangling.jpg.xmp → a folder that does not exist: the write fails. */
  g_autofree char *dangling = g_build_filename (folder, "d/dangling.jpg.xmp", NULL);
  g_assert_cmpint (symlink ("../no-such-folder/x.xmp", dangling), ==, 0);
  /* private.jpg.xmp: an empty sidecar of mode 0600. */
  g_autofree char *private = g_build_filename (folder, "d/private.jpg.xmp", NULL);
  g_assert_true (g_file_set_contents (
      private,
      "<?xml version=\"1.0\"?><x:xmpmeta xmlns:x=\"adobe:ns:meta/\"><rdf:RDF "
      "xmlns:rdf=\"http://www.w3.org/1999/02/22-rdf-syntax-ns#\"/></x:xmpmeta>\n",
      -1, NULL));
  g_assert_cmpint (chmod (private, 0600), ==, 0);
  g_autofree char *missing = g_build_filename (folder, "d/missing.jpg", NULL);
  g_assert_cmpint (unlink (missing), ==, 0);

  g_autoptr (LkLibrary) library = lk_library_load (folder, NULL);
  g_autoptr (LkPeople) people = make_people (library, faces, names, NULL, 1);
  LkExportXmpOptions options = { 0 };
  g_autoptr (LkExportXmpReport) report = run (folder, people, &options);
  g_assert_cmpuint (report->refused, ==, 2); /* corrupt, missing */
  g_assert_cmpuint (report->failed, ==, 1);  /* dangling */
  g_assert_cmpuint (report->created, ==, 2); /* good, and linked's target */
  g_assert_cmpuint (report->updated, ==, 1); /* private */
  const LkExportXmpEntry *e = entry_for (report, "corrupt.jpg.xmp");
  g_assert_cmpint (e->outcome, ==, LK_EXPORT_XMP_REFUSED);
  g_assert_nonnull (strstr (e->message, "corrupt.jpg.xmp"));
  g_test_message ("corrupt: %s", e->message);
  e = entry_for (report, "missing.jpg.xmp");
  g_assert_nonnull (strstr (e->message, "missing"));
  /* Counted as missing (the corrupt sidecar's photo is there), and named. */
  g_assert_cmpuint (report->missing, ==, 1);
  g_assert_cmpstr (report->missing_example, ==, missing);
  e = entry_for (report, "dangling.jpg.xmp");
  g_assert_cmpint (e->outcome, ==, LK_EXPORT_XMP_FAILED);
  g_test_message ("dangling: %s", e->message);
  g_autofree char *bytes = NULL;
  g_assert_true (g_file_get_contents (corrupt, &bytes, NULL, NULL));
  g_assert_cmpstr (bytes, ==, garbage);
  g_assert_cmpint (mtime_ns (corrupt), ==, corrupt_mtime);
  /* Written through the link: the link is still a link, its target holds
   * the region. */
  e = entry_for (report, "linked.jpg.xmp");
  g_assert_cmpint (e->outcome, ==, LK_EXPORT_XMP_CREATED);
  struct stat st;
  g_assert_cmpint (lstat (linked, &st), ==, 0);
  g_assert_true (S_ISLNK (st.st_mode));
  check_sidecar (real, &photos[2], faces, 6, names, 1);
  g_assert_cmpint (stat (private, &st), ==, 0);
  g_assert_cmpint (st.st_mode & 0777, ==, 0600);
  check_sidecar (private, &photos[4], faces, 6, names, 1);
  /* No temporary file left behind. */
  g_autofree char *dir = g_build_filename (folder, "d", NULL);
  g_autoptr (GDir) d = g_dir_open (dir, 0, NULL);
  for (const char *name; (name = g_dir_read_name (d)) != NULL;)
    g_assert_false (name[0] == '.');
  lk_test_remove_tree (folder);
}

/* Names with XML's characters, other scripts and 200 characters come back
 * as they were; --sidecar-name=basename; a dry run writes nothing. */
static void
test_names (void)
{
  static const TPhoto photos[] = { { "e/n.jpg", 2000, 1000, 1 } };
  static const TFace faces[] = {
    { 0, { 10, 10, 100, 100 }, 0 },
    { 0, { 300, 10, 100, 100 }, 1 },
    { 0, { 600, 10, 100, 100 }, 2 },
    { 0, { 900, 10, 100, 100 }, 3 },
  };
  g_autofree char *long_name = g_strnfill (200, 'x');
  memcpy (long_name, "Ångström", strlen ("Ångström"));
  const char *names[] = { "Tom & \"Jerry\" <O'Neil>", "Zoë Ångström", "李小龙", long_name };
  g_autofree char *folder = make_library (photos, 1, faces, 4);
  g_autoptr (LkLibrary) library = lk_library_load (folder, NULL);
  g_autoptr (LkPeople) people = make_people (library, faces, names, NULL, 4);
  LkExportXmpOptions options = { 0 };
  options.sidecar_name = LK_EXPORT_XMP_NAME_BASENAME;
  options.dry_run = TRUE;
  g_autofree char *sidecar = g_build_filename (folder, "e/n.xmp", NULL);
  {
    g_autoptr (LkExportXmpReport) r = run (folder, people, &options);
    g_assert_cmpuint (r->created, ==, 1);
    g_assert_false (g_file_test (sidecar, G_FILE_TEST_EXISTS));
  }
  options.dry_run = FALSE;
  g_autoptr (LkExportXmpReport) r = run (folder, people, &options);
  g_assert_cmpuint (r->created, ==, 1);
  check_sidecar (sidecar, &photos[0], faces, 4, names, 4);
  g_autoptr (JsonParser) parser = json_parser_new ();
  JsonObject *o = read_back (parser, sidecar);
  for (int k = 0; k < 4; k++)
    g_assert_true (person_in_image_has (o, names[k]));
  lk_test_remove_tree (folder);
}

/* likeness-cli export --xmp on a sample library named through the review:
 * the dry run lists and writes nothing, the run writes, the next run leaves
 * every sidecar; a failed write is exit status 1, named on stderr. */
static void
test_cli (void)
{
  g_autofree char *folder = g_dir_make_tmp ("likeness-xmp-cli-XXXXXX", NULL);
  g_autofree char *lib = g_build_filename (folder, "lib", NULL);
  g_assert_cmpint (lk_test_run_cli (NULL, NULL, "make-sample", "-n", "300", lib, NULL), ==, 0);
  g_autofree char *people = NULL;
  g_assert_cmpint (lk_test_run_cli (&people, NULL, "people", lib, NULL), ==, 0);
  g_auto (GStrv) lines = g_strsplit (people, "\n", -1);
  g_auto (GStrv) first = g_strsplit (lines[0], "\t", -1);
  g_assert_cmpint (
      lk_test_run_cli (NULL, NULL, "review", lib, "name", first[0], "Zoë Ångström", NULL), ==, 0);

  g_autofree char *out = NULL, *err = NULL;
  g_assert_cmpint (lk_test_run_cli (&out, &err, "export", lib, "--xmp", "--dry-run", NULL), ==, 0);
  g_assert_true (g_str_has_prefix (out, "create\t1\t"));
  g_assert_nonnull (strstr (out, "Dry run: "));
  g_auto (GStrv) listed = g_strsplit (out, "\n", -1);
  g_autofree char *first_sidecar = g_strdup (strrchr (listed[0], '\t') + 1);
  g_assert_false (g_file_test (first_sidecar, G_FILE_TEST_EXISTS));
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);
  g_assert_cmpint (lk_test_run_cli (&out, &err, "export", lib, "--xmp", NULL), ==, 0);
  g_assert_nonnull (strstr (out, " created, 0 updated, 0 unchanged, 0 refused, 0 failed"));
  g_assert_true (g_file_test (first_sidecar, G_FILE_TEST_IS_REGULAR));
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);
  g_assert_cmpint (lk_test_run_cli (&out, &err, "export", lib, "--xmp", NULL), ==, 0);
  g_assert_nonnull (strstr (out, ": 0 created, 0 updated, "));
  /* A sidecar whose folder is gone (a dangling link): exit 1, named. */
  g_assert_cmpint (unlink (first_sidecar), ==, 0);
  g_assert_cmpint (symlink ("/nonexistent-folder/x.xmp", first_sidecar), ==, 0);
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);
  g_assert_cmpint (lk_test_run_cli (&out, &err, "export", lib, "--xmp", NULL), ==, 1);
  g_assert_nonnull (strstr (err, first_sidecar));
  g_assert_nonnull (strstr (out, "1 failed"));
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);
  g_assert_cmpint (lk_test_run_cli (&out, &err, "export", lib, "--xmp", "--sidecar-name=x", NULL),
                   ==, 2);
  lk_test_remove_tree (folder);
}

/* likeness-cli export --xmp where no photo with named faces is where the
 * library says (a sample made without its photos): exit 1, naming where the
 * first one was looked for, nothing written, in a dry run as in a run. */
static void
test_cli_every_photo_missing (void)
{
  g_autofree char *folder = g_dir_make_tmp ("likeness-xmp-cli-XXXXXX", NULL);
  g_autofree char *lib = g_build_filename (folder, "lib", NULL);
  g_assert_cmpint (
      lk_test_run_cli (NULL, NULL, "make-sample", "-n", "300", "--no-photos", lib, NULL), ==, 0);
  g_autofree char *people = NULL;
  g_assert_cmpint (lk_test_run_cli (&people, NULL, "people", lib, NULL), ==, 0);
  g_auto (GStrv) lines = g_strsplit (people, "\n", -1);
  g_auto (GStrv) first = g_strsplit (lines[0], "\t", -1);
  g_assert_cmpint (lk_test_run_cli (NULL, NULL, "review", lib, "name", first[0], "Ada", NULL), ==,
                   0);
  g_autofree char *looked = g_strconcat (lib, G_DIR_SEPARATOR_S, NULL);
  const char *const modes[] = { "--dry-run", NULL };
  for (int m = 0; m < 2; m++)
    {
      g_autofree char *out = NULL, *err = NULL;
      g_assert_cmpint (lk_test_run_cli (&out, &err, "export", lib, "--xmp", modes[m], NULL), ==, 1);
      g_test_message ("%s%s", out, err);
      g_assert_nonnull (strstr (out, " 0 unchanged, "));
      g_assert_null (strstr (out, " 0 refused"));
      g_assert_nonnull (strstr (err, "with named faces is where the library says (the first: "));
      g_assert_nonnull (strstr (err, looked));
      g_assert_nonnull (
          strstr (err, m == 0 ? "no sidecar would be written" : "no sidecar was written"));
    }
  lk_test_remove_tree (folder);
}

/* Runs likeness-cli as the unprivileged user 65534 (nobody), through
 * setpriv: the tests run as root, for whom a read-only folder is writable.
 * Returns the exit status, or -1 with *why set when it cannot be done
 * here. */
static int
run_cli_as_nobody (const char *const *args, char **out, char **err, char **why)
{
  g_autofree char *setpriv = g_find_program_in_path ("setpriv");
  if (setpriv == NULL)
    {
      *why = g_strdup ("no setpriv (util-linux) to run the write as an unprivileged user");
      return -1;
    }
  g_autoptr (GPtrArray) argv = g_ptr_array_new ();
  const char *prefix[]
      = { setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", g_getenv ("LIKENESS_CLI") };
  for (gsize k = 0; k < G_N_ELEMENTS (prefix); k++)
    g_ptr_array_add (argv, (char *) prefix[k]);
  for (gsize k = 0; args[k] != NULL; k++)
    g_ptr_array_add (argv, (char *) args[k]);
  g_ptr_array_add (argv, NULL);
  int status = -1;
  g_autoptr (GError) error = NULL;
  if (!g_spawn_sync (NULL, (char **) argv->pdata, NULL, G_SPAWN_DEFAULT, NULL, NULL, out, err,
                     &status, &error))
    {
      *why = g_strdup_printf ("setpriv cannot be run: %s", error->message);
      return -1;
    }
  g_test_message ("as nobody: stdout:\n%s\nstderr:\n%s", *out, *err);
  if (!WIFEXITED (status))
    {
      *why = g_strdup ("setpriv did not exit");
      return -1;
    }
  /* setpriv's own failure (no CAP_SETUID in this container) is its
   * message, not likeness-cli's. */
  if (WEXITSTATUS (status) != 0 && g_str_has_prefix (*err, "setpriv:"))
    {
      *why = g_strdup_printf ("setpriv cannot change user here: %s", *err);
      return -1;
    }
  /* 126/127: likeness-cli could not be started as nobody (likeness-cli
   * itself exits 0, 1 or 2). Seen in the Flatpak stage's build sandbox
   * (.ci/flatpak), whose /etc is 0700: nobody cannot follow Debian's
   * /etc/alternatives link to libblas.so.3, which dlib needs ("error while
   * loading shared libraries"). */
  if (WEXITSTATUS (status) == 126 || WEXITSTATUS (status) == 127)
    {
      *why = g_strdup_printf ("likeness-cli cannot be started as nobody here (status %d): %s",
                              WEXITSTATUS (status), *err);
      return -1;
    }
  return WEXITSTATUS (status);
}

/* A name XML cannot hold is never written into a new sidecar: U+FFFE and
 * U+FFFF pass the XMP toolkit's serialiser but not its parser (a sidecar
 * Likeness could then never update): FAILED, nothing written. A C0
 * control, which the serialiser turns into a space, makes a sidecar that
 * reads back: the second run finds it unchanged (it would be refused as
 * unreadable otherwise). */
static void
test_unwritable_names (void)
{
  static const TPhoto photos[] = { { "u/fffe.jpg", 800, 600, 1 },
                                   { "u/ffff.jpg", 800, 600, 1 },
                                   { "u/c0.jpg", 800, 600, 1 } };
  static const TFace faces[] = {
    { 0, { 100, 100, 100, 100 }, 0 },
    { 1, { 100, 100, 100, 100 }, 1 },
    { 2, { 100, 100, 100, 100 }, 2 },
  };
  const char *names[] = { "Ada \xef\xbf\xbe Lovelace", "Ada \xef\xbf\xbf", "Ada\x01Byron" };
  g_autofree char *folder = make_library (photos, 3, faces, 3);
  g_autoptr (LkLibrary) library = lk_library_load (folder, NULL);
  g_autoptr (LkPeople) people = make_people (library, faces, names, NULL, 3);
  g_autoptr (LkExportXmpReport) r = run (folder, people, NULL);
  g_assert_cmpuint (r->failed, ==, 2);
  g_assert_cmpuint (r->created, ==, 1);
  for (int k = 0; k < 2; k++)
    {
      const LkExportXmpEntry *e = entry_for (r, k == 0 ? "fffe.jpg.xmp" : "ffff.jpg.xmp");
      g_assert_nonnull (e);
      g_assert_cmpint (e->outcome, ==, LK_EXPORT_XMP_FAILED);
      g_assert_nonnull (strstr (e->message, "does not read back"));
      g_assert_false (g_file_test (e->sidecar, G_FILE_TEST_EXISTS));
    }
  g_autoptr (LkExportXmpReport) again = run (folder, people, NULL);
  g_assert_cmpuint (again->unchanged, ==, 1);
  g_assert_cmpuint (again->refused, ==, 0);
  lk_test_remove_tree (folder);
}

/* Issue 32: a photo in a read-only folder is reported, the others are
 * written. As root a folder's mode does not stop a write, so the export
 * runs as the unprivileged user nobody (setpriv); run by another user the
 * test needs no setpriv. The count of failures is 1, the exit status 1,
 * the message names the folder; the writable folder's sidecar is made. */
static void
test_read_only_folder (void)
{
  static const TPhoto photos[] = { { "ro/a.jpg", 800, 600, 1 }, { "rw/b.jpg", 800, 600, 1 } };
  static const TFace faces[]
      = { { 0, { 100, 100, 100, 100 }, 0 }, { 1, { 200, 100, 100, 100 }, 0 } };
  static const char *const names[] = { "Ada" };
  g_autofree char *folder = make_library (photos, 2, faces, 2);
  /* The person named in the manifest (the source's word), so the export
   * needs no review.json. */
  g_autofree char *manifest = g_build_filename (folder, "library.json", NULL);
  g_autofree char *text = NULL;
  g_assert_true (g_file_get_contents (manifest, &text, NULL, NULL));
  char *end = strrchr (text, ']');
  g_assert_nonnull (end);
  *end = '\0';
  g_autofree char *with_people
      = g_strconcat (text,
                     "],\n  \"people\": [ { \"id\": \"p0\", \"name\": \"Ada\", \"faces\": "
                     "[\"face-0\", \"face-1\"] } ]\n}\n",
                     NULL);
  g_assert_true (g_file_set_contents (manifest, with_people, -1, NULL));
  g_autofree char *ro = g_build_filename (folder, "ro", NULL);
  g_autofree char *rw = g_build_filename (folder, "rw", NULL);
  g_autofree char *ro_sidecar = g_build_filename (ro, "a.jpg.xmp", NULL);
  g_autofree char *rw_sidecar = g_build_filename (rw, "b.jpg.xmp", NULL);
  g_assert_cmpint (chmod (ro, 0555), ==, 0);

  int status;
  g_autofree char *out = NULL, *err = NULL, *why = NULL;
  const char *args[] = { "export", folder, "--xmp", NULL };
  if (geteuid () != 0)
    status = lk_test_run_cli_argv (args, &out, &err);
  else
    {
      /* nobody must reach the library (g_dir_make_tmp makes it 0700) and
       * write in rw/, and nothing else. */
      g_assert_cmpint (chmod (folder, 0755), ==, 0);
      g_assert_cmpint (chmod (rw, 0777), ==, 0);
      for (g_autofree char *up = g_path_get_dirname (folder); strcmp (up, "/") != 0;)
        {
          GStatBuf st;
          g_assert_cmpint (g_stat (up, &st), ==, 0);
          if ((st.st_mode & 0001) == 0)
            {
              g_autofree char *reason
                  = g_strdup_printf ("%s cannot be searched by other users (TMPDIR)", up);
              chmod (ro, 0755);
              lk_test_remove_tree (folder);
              g_test_skip (reason);
              return;
            }
          char *next = g_path_get_dirname (up);
          g_free (up);
          up = next;
        }
      status = run_cli_as_nobody (args, &out, &err, &why);
      if (status < 0)
        {
          chmod (ro, 0755);
          lk_test_remove_tree (folder);
          g_test_skip (why);
          return;
        }
    }
  g_assert_cmpint (status, ==, 1);
  g_assert_nonnull (strstr (out, "1 created, 0 updated, 0 unchanged, 0 refused, 1 failed"));
  g_autofree char *folder_named = g_strdup_printf ("Cannot write in the folder %s", ro);
  g_assert_nonnull (strstr (err, folder_named));
  g_assert_nonnull (strstr (err, ro_sidecar));
  g_assert_false (g_file_test (ro_sidecar, G_FILE_TEST_EXISTS));
  check_sidecar (rw_sidecar, &photos[1], faces, 2, names, 1);
  g_assert_cmpint (chmod (ro, 0755), ==, 0);
  lk_test_remove_tree (folder);
}

static void
skipped (void)
{
  lk_test_skip_unless_required ("LK_TEST_REQUIRE_EXIFTOOL",
                                !lk_export_xmp_supported ()
                                    ? "built without gexiv2 (-Dxmp)"
                                    : "no exiftool (libimage-exiftool-perl)");
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  exiftool = g_find_program_in_path ("exiftool");
  if (!lk_export_xmp_supported () || exiftool == NULL)
    {
      g_test_add_func ("/export-xmp/skipped", skipped);
      return g_test_run ();
    }
  g_test_add_func ("/export-xmp/orientations", test_orientations);
  g_test_add_func ("/export-xmp/merge", test_merge);
  g_test_add_func ("/export-xmp/updates", test_updates);
  g_test_add_func ("/export-xmp/bad-sidecars", test_bad_sidecars);
  g_test_add_func ("/export-xmp/names", test_names);
  g_test_add_func ("/export-xmp/unwritable-names", test_unwritable_names);
  g_test_add_func ("/export-xmp/cli", test_cli);
  g_test_add_func ("/export-xmp/cli-every-photo-missing", test_cli_every_photo_missing);
  g_test_add_func ("/export-xmp/read-only-folder", test_read_only_folder);
  return g_test_run ();
}
