/* lk-export-xmp.c — the review written as XMP face regions in sidecars
 *
 * What the readers expect (as their sources read):
 *
 * - Immich, server/src/services/metadata.service.ts: applyTaggedFaces needs
 *   mwg-rs:AppliedToDimensions and a Name per region; it turns the centre
 *   and size into corners, (X − W/2) × AppliedToDimensions.W, after
 *   orientRegionInfo, which maps a region from the image AS STORED to the
 *   image as shown: for orientation 6 (turn 90° clockwise) X' = 1 − Y,
 *   Y' = X; for 8, X' = Y, Y' = 1 − X; for 3, X' = 1 − X, Y' = 1 − Y; for
 *   5–8 W and H swap, and so do AppliedToDimensions' W and H. Its Orientation
 *   is ExifTool's, where a sidecar's tiff:Orientation overrides the photo's.
 * - digiKam, core/libs/metadataengine/dmetadata/dmetadata_faces.cpp: reads
 *   MP:RegionInfo (top-left "x, y, w, h") then mwg-rs (centre x, y) with no
 *   turn of its own; its face rectangles are in the original's unrotated
 *   pixels, so it agrees with Immich.
 *
 * So an Area here is normalised in the image as stored, and
 * AppliedToDimensions is the stored image's pixel size. Likeness's boxes
 * (data/LIBRARY-FORMAT.md, faces[].box) are in the pixels the user sees: the
 * photo turned by its EXIF orientation, photos[].width × height (the
 * importers swap Immich's and PhotoPrism's sensor sizes for orientations 5–8;
 * lk-import.c applies the orientation before cutting thumbnails), so each
 * box is turned back here (lk_export_xmp_area).
 *
 * gexiv2 0.14 on exiv2 0.27.6, as read in their sources:
 * - Struct and array markers are XmpData entries with count() == 0: neither
 *   gexiv2_metadata_get_xmp_tags lists them nor clear_xmp_tag removes them.
 *   A marker is removed here by giving it a one-character value (then its
 *   count is 1) and clearing it (remove_subtree).
 * - gexiv2_metadata_try_set_xmp_tag_struct always adds (XmpData::add): called
 *   twice, the array is written twice. It is called once per sidecar, after
 *   every old marker is gone.
 * - XmpSidecar::readMetadata only warns when the packet does not parse (and
 *   leaves no properties): the warning is caught by our log handler, and
 *   such a sidecar is refused, never rewritten empty. Its writeMetadata
 *   copies Exif converted from the XMP back into it, and on an encoding
 *   failure writes the old packet: so the packet is made here
 *   (gexiv2_metadata_try_generate_xmp_packet, the XMP toolkit's serializer),
 *   parsed back and checked before it replaces the sidecar, which this file
 *   writes itself (temporary file, sync, rename: in batches, see
 *   batch_commit).
 * - gexiv2 cannot open a file that does not exist: a new sidecar starts
 *   from the smallest packet exiv2 recognises, in memory.
 * - The XMP toolkit is initialised once (gexiv2_initialize) without locks,
 *   and each run ends by forgetting every namespace exiv2 learnt: so one
 *   export runs at a time, under `running` (the window's dialog counts
 *   again when an option changes, and its previous count, cancelled, may
 *   still be on its last photo: two runs at once, the new count said 1
 *   region where there were 8, our namespace unregistered under it).
 */
#define _GNU_SOURCE /* syncfs */
#include "config.h"

#include "lk-export-xmp.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#ifdef LK_HAVE_GEXIV2
#include <gexiv2/gexiv2.h>
#endif

#include "library/lk-sandbox.h"

/* clang-format off */
G_DEFINE_QUARK (lk-export-xmp-error-quark, lk_export_xmp_error)
/* clang-format on */

void
lk_export_xmp_report_free (LkExportXmpReport *report)
{
  if (report == NULL)
    return;
  for (guint k = 0; k < report->entries->len; k++)
    {
      LkExportXmpEntry *e = &g_array_index (report->entries, LkExportXmpEntry, k);
      g_free (e->photo);
      g_free (e->sidecar);
      g_free (e->message);
    }
  g_array_unref (report->entries);
  g_free (report->unmapped_example);
  g_free (report->missing_example);
  g_free (report);
}

char *
lk_export_xmp_sidecar_path (const char *photo, LkExportXmpSidecarName name)
{
  if (name == LK_EXPORT_XMP_NAME_BASENAME)
    {
      const char *slash = strrchr (photo, '/');
      const char *dot = strrchr (photo, '.');
      if (dot != NULL && (slash == NULL || dot > slash + 1))
        return g_strdup_printf ("%.*s.xmp", (int) (dot - photo), photo);
    }
  return g_strconcat (photo, ".xmp", NULL);
}

void
lk_export_xmp_area (const double box[4], double display_w, double display_h, int orientation,
                    double area[4])
{
  /* Centre and size, normalised in the image as shown. */
  double x = (box[0] + box[2] / 2) / display_w;
  double y = (box[1] + box[3] / 2) / display_h;
  double w = box[2] / display_w;
  double h = box[3] / display_h;
  /* Immich's orientRegionInfo maps stored (X, Y) to shown (X', Y'); this is
   * its inverse, case by case. */
  double sx = x, sy = y;
  switch (orientation)
    {
      case 2: /* shown X' = 1 − X */
        sx = 1 - x;
        break;
      case 3: /* X' = 1 − X, Y' = 1 − Y */
        sx = 1 - x;
        sy = 1 - y;
        break;
      case 4: /* Y' = 1 − Y */
        sy = 1 - y;
        break;
      case 5: /* X' = Y, Y' = X */
        sx = y;
        sy = x;
        break;
      case 6: /* X' = 1 − Y, Y' = X */
        sx = y;
        sy = 1 - x;
        break;
      case 7: /* X' = 1 − Y, Y' = 1 − X */
        sx = 1 - y;
        sy = 1 - x;
        break;
      case 8: /* X' = Y, Y' = 1 − X */
        sx = 1 - y;
        sy = x;
        break;
      default:
        break;
    }
  gboolean turned = orientation >= 5 && orientation <= 8;
  area[0] = sx;
  area[1] = sy;
  area[2] = turned ? h : w;
  area[3] = turned ? w : h;
}

#ifndef LK_HAVE_GEXIV2

gboolean
lk_export_xmp_supported (void)
{
  return FALSE;
}

LkExportXmpReport *
lk_export_xmp (const LkLibrary *library, const LkPeople *people, const LkExportXmpOptions *options,
               GError **error)
{
  (void) library;
  (void) people;
  (void) options;
  g_set_error_literal (error, LK_EXPORT_XMP_ERROR, LK_EXPORT_XMP_ERROR_UNSUPPORTED,
                       "This Likeness was built without XMP sidecars (meson -Dxmp=enabled "
                       "needs gexiv2)");
  return NULL;
}

#else

gboolean
lk_export_xmp_supported (void)
{
  return TRUE;
}

/* Our own mark inside each region we write: the face's key, in the place
 * MWG keeps for anything else about a region (mwg-rs:Extensions). */
#define LK_XMP_NS     "https://github.com/likeness/likeness/ns/xmp/1.0/"
#define LK_XMP_PREFIX "likeness"

#define REGIONS           "Xmp.mwg-rs.Regions"
#define REGION_LIST       REGIONS "/mwg-rs:RegionList"
#define APPLIED           REGIONS "/mwg-rs:AppliedToDimensions"
#define MP_INFO           "Xmp.MP.RegionInfo"
#define MP_LIST           MP_INFO "/MPRI:Regions"
#define PERSON_IN_IMAGE   "Xmp.iptcExt.PersonInImage"
#define TAGS_LIST         "Xmp.digiKam.TagsList"
#define OUR_MARK          "/mwg-rs:Extensions/" LK_XMP_PREFIX ":face"
#define ORIENTATION       "Xmp.tiff.Orientation"
#define AREA_FIELD        "/mwg-rs:Area/stArea:"
#define AREA_LEN          (sizeof AREA_FIELD - 1)

/* The smallest packet exiv2's XmpSidecar accepts: isXmpType reads 80
 * bytes and looks for "<x:xmpmeta" or "<?xpacket" (a shorter buffer is
 * refused), and the XMP toolkit wants an rdf:RDF inside. What a new sidecar
 * starts from, in memory. */
static const char EMPTY_PACKET[]
    = "<x:xmpmeta xmlns:x=\"adobe:ns:meta/\"><rdf:RDF "
      "xmlns:rdf=\"http://www.w3.org/1999/02/22-rdf-syntax-ns#\"/></x:xmpmeta>";

/* exiv2 reports a packet it cannot parse only as a warning. */
static _Thread_local gboolean warned;
static _Thread_local char warning[256];

static void
log_handler (GExiv2LogLevel level, const gchar *msg)
{
  if (level < GEXIV2_LOG_LEVEL_WARN)
    return;
  if (!warned)
    {
      g_strlcpy (warning, msg != NULL ? msg : "", sizeof warning);
      g_strchomp (warning);
    }
  warned = TRUE;
}

static void
ensure_initialized (void)
{
  static gsize once = 0;
  if (g_once_init_enter (&once))
    {
      gexiv2_log_set_handler (log_handler);
      gexiv2_log_set_level (GEXIV2_LOG_LEVEL_WARN);
      gexiv2_initialize ();
      g_once_init_leave (&once, 1);
    }
}

typedef struct
{
  guint32 face;
  const char *name;
  const char *key;
} NamedFace;

typedef struct
{
  double v[4];
} Box;

/* A region read from a sidecar: its leaves below the item, in order. */
typedef struct
{
  GPtrArray *suffixes; /* "/mwg-rs:Name", "/mwg-rs:Area/stArea:x", … */
  GPtrArray *values;
  char *name;
  double area[4]; /* centre x, y, w, h, normalised; NAN when absent */
  gboolean ours;
} Region;

static void
region_clear (gpointer data)
{
  Region *r = data;
  g_ptr_array_unref (r->suffixes);
  g_ptr_array_unref (r->values);
  g_free (r->name);
}

static char *
tag_string (GExiv2Metadata *m, const char *tag)
{
  GError *error = NULL;
  char *value = gexiv2_metadata_try_get_tag_string (m, tag, &error);
  g_clear_error (&error);
  return value;
}

/* Reads the items of LIST (a bag of structs) from the leaf tags: item i's
 * leaves are the tags starting "LIST[i]/". */
static GArray *
read_regions (GHashTable *values, char **tags, const char *list, gboolean mwg)
{
  GArray *regions = g_array_new (FALSE, TRUE, sizeof (Region));
  g_array_set_clear_func (regions, region_clear);
  for (guint i = 1;; i++)
    {
      g_autofree char *prefix = g_strdup_printf ("%s[%u]/", list, i);
      gsize len = strlen (prefix);
      Region r = { g_ptr_array_new_with_free_func (g_free),
                   g_ptr_array_new_with_free_func (g_free),
                   NULL,
                   { NAN, NAN, NAN, NAN },
                   FALSE };
      for (char **t = tags; *t != NULL; t++)
        {
          if (strncmp (*t, prefix, len) != 0)
            continue;
          const char *value = g_hash_table_lookup (values, *t);
          if (value == NULL)
            continue;
          const char *suffix = *t + len - 1;
          g_ptr_array_add (r.suffixes, g_strdup (suffix));
          g_ptr_array_add (r.values, g_strdup (value));
          if (mwg)
            {
              if (strcmp (suffix, "/mwg-rs:Name") == 0)
                r.name = g_strdup (value);
              else if (strcmp (suffix, OUR_MARK) == 0)
                r.ours = TRUE;
              else if (g_str_has_prefix (suffix, AREA_FIELD) && suffix[AREA_LEN] != '\0'
                       && suffix[AREA_LEN + 1] == '\0')
                {
                  const char *fields = "xywh";
                  const char *at = strchr (fields, suffix[AREA_LEN]);
                  if (at != NULL)
                    r.area[at - fields] = g_ascii_strtod (value, NULL);
                }
            }
          else if (strcmp (suffix, "/MPReg:PersonDisplayName") == 0)
            r.name = g_strdup (value);
          else if (strcmp (suffix, "/MPReg:Rectangle") == 0)
            {
              /* "x, y, w, h", top-left: as a centre, like mwg-rs. */
              g_auto (GStrv) parts = g_strsplit (value, ",", -1);
              if (g_strv_length (parts) == 4)
                {
                  double v[4];
                  for (int k = 0; k < 4; k++)
                    v[k] = g_ascii_strtod (parts[k], NULL);
                  r.area[0] = v[0] + v[2] / 2;
                  r.area[1] = v[1] + v[3] / 2;
                  r.area[2] = v[2];
                  r.area[3] = v[3];
                }
            }
        }
      if (r.suffixes->len == 0)
        {
          region_clear (&r);
          break;
        }
      g_array_append_val (regions, r);
    }
  return regions;
}

/* Intersection over union of two centre-size boxes. */
static double
overlap (const double a[4], const double b[4])
{
  for (int k = 0; k < 4; k++)
    if (!isfinite (a[k]) || !isfinite (b[k]))
      return 0;
  double ix = MIN (a[0] + a[2] / 2, b[0] + b[2] / 2) - MAX (a[0] - a[2] / 2, b[0] - b[2] / 2);
  double iy = MIN (a[1] + a[3] / 2, b[1] + b[3] / 2) - MAX (a[1] - a[3] / 2, b[1] - b[3] / 2);
  if (ix <= 0 || iy <= 0)
    return 0;
  double inter = ix * iy;
  return inter / (a[2] * a[3] + b[2] * b[3] - inter);
}

/* A region on a face Likeness names now: two boxes of one face from two
 * detectors overlap far more than half (and two faces far less). */
#define SAME_FACE_OVERLAP 0.5

static int
compare_length_desc (gconstpointer a, gconstpointer b)
{
  size_t la = strlen (*(char *const *) a), lb = strlen (*(char *const *) b);
  return la < lb ? 1 : la > lb ? -1 : strcmp (*(char *const *) a, *(char *const *) b);
}

/* Removes ROOT and everything below it, markers included (see the top). */
static void
remove_subtree (GExiv2Metadata *m, char **tags, const char *root, const char *const *known)
{
  g_autoptr (GHashTable) markers = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  gsize len = strlen (root);
  g_hash_table_add (markers, g_strdup (root));
  for (const char *const *k = known; k != NULL && *k != NULL; k++)
    g_hash_table_add (markers, g_strdup (*k));
  for (char **t = tags; *t != NULL; t++)
    {
      if (strncmp (*t, root, len) != 0
          || ((*t)[len] != '\0' && (*t)[len] != '/' && (*t)[len] != '['))
        continue;
      gexiv2_metadata_try_clear_tag (m, *t, NULL);
      for (const char *p = *t + len; *p != '\0'; p++)
        if (*p == '/' || *p == '[')
          g_hash_table_add (markers, g_strndup (*t, p - *t));
        else if (*p == ']')
          g_hash_table_add (markers, g_strndup (*t, p + 1 - *t));
    }
  guint n = 0;
  g_autofree char **list = (char **) g_hash_table_get_keys_as_array (markers, &n);
  qsort (list, n, sizeof *list, compare_length_desc);
  for (guint k = 0; k < n; k++)
    /* Up to four copies of one marker (the struct call duplicates). */
    for (int copy = 0; copy < 4; copy++)
      {
        GError *error = NULL;
        gexiv2_metadata_try_set_tag_string (m, list[k], "x", &error);
        g_clear_error (&error);
        gexiv2_metadata_try_clear_tag (m, list[k], NULL);
      }
}

static int
compare_strings (gconstpointer a, gconstpointer b)
{
  return strcmp (*(char *const *) a, *(char *const *) b);
}

/* Every leaf tag and its value, one "key\tvalue" line each, sorted; and
 * when VALUES is given, each tag of TAGS (borrowed) to its value (NULL when
 * exiv2 gives none). Each value read costs exiv2 a linear search of the
 * XmpData that builds every entry's key string: read once here, the
 * regions take theirs from VALUES. */
static GPtrArray *
snapshot_of (GExiv2Metadata *m, char **tags, GHashTable *values)
{
  GPtrArray *lines = g_ptr_array_new_with_free_func (g_free);
  for (char **t = tags; *t != NULL; t++)
    {
      char *value = tag_string (m, *t);
      g_ptr_array_add (lines, g_strdup_printf ("%s\t%s", *t, value != NULL ? value : ""));
      if (values != NULL)
        g_hash_table_insert (values, *t, value);
      else
        g_free (value);
    }
  g_ptr_array_sort (lines, compare_strings);
  return lines;
}

/* gexiv2_metadata_get_xmp_tags copies and sorts the whole XmpData (a
 * quarter of the export's time in perf on the sample): called once per
 * packet. */
static GPtrArray *
snapshot (GExiv2Metadata *m)
{
  g_auto (GStrv) tags = gexiv2_metadata_get_xmp_tags (m);
  return snapshot_of (m, tags, NULL);
}

static gboolean
same_lines (GPtrArray *a, GPtrArray *b)
{
  if (a->len != b->len)
    return FALSE;
  for (guint k = 0; k < a->len; k++)
    if (strcmp (a->pdata[k], b->pdata[k]) != 0)
      return FALSE;
  return TRUE;
}

static gboolean
has_line (GPtrArray *sorted, const char *line)
{
  return bsearch (&line, sorted->pdata, sorted->len, sizeof (char *), compare_strings) != NULL;
}

static void
set_tag (GExiv2Metadata *m, gboolean *ok, const char *tag, const char *value)
{
  GError *error = NULL;
  if (!gexiv2_metadata_try_set_tag_string (m, tag, value, &error))
    *ok = FALSE;
  g_clear_error (&error);
}

static char *
number (double v)
{
  char buf[G_ASCII_DTOSTR_BUF_SIZE];
  /* Six decimals: a millionth of the side, under a pixel for any photo
   * narrower than a million pixels. */
  return g_strdup (g_ascii_formatd (buf, sizeof buf, "%.6f", v));
}

/* Follows a sidecar's symbolic links to the file to write. */
static char *
resolve_link (const char *path, GError **error)
{
  char *current = g_strdup (path);
  for (int hops = 0; hops < 40; hops++)
    {
      struct stat st;
      if (lstat (current, &st) != 0 || !S_ISLNK (st.st_mode))
        return current;
      g_autofree char *target = g_file_read_link (current, error);
      if (target == NULL)
        {
          g_free (current);
          return NULL;
        }
      if (!g_path_is_absolute (target))
        {
          g_autofree char *dir = g_path_get_dirname (current);
          g_autofree char *joined = g_build_filename (dir, target, NULL);
          g_free (current);
          current = g_canonicalize_filename (joined, NULL);
        }
      else
        {
          g_free (current);
          current = g_steal_pointer (&target);
        }
    }
  g_set_error (error, G_IO_ERROR, G_IO_ERROR_TOO_MANY_LINKS, "%s: too many symbolic links", path);
  g_free (current);
  return NULL;
}

/* Sidecars are written in batches, each sidecar whole or not at all:
 *
 *   1. every sidecar of the batch is written to a temporary file beside its
 *      final name (".NAME.xmp.XXXXXX", mode kept), not yet synced;
 *   2. one sync pass: syncfs() once per file system (where it reports
 *      writeback errors, see sync_reports_errors), else fsync() of each
 *      temporary; a temporary whose data cannot be shown durable is
 *      removed, its sidecar FAILED;
 *   3. the renames, in the order written, each temporary onto its name;
 *   4. one fsync() per folder holding a renamed sidecar.
 *
 * What a crash (power lost, the process killed) leaves at each point:
 *   - during 1 or 2: no final name was touched. A previous sidecar is whole
 *     and a new one absent; temporaries, maybe truncated, are left under
 *     names no reader looks for (no reader takes ".IMG.jpg.xmp.Ab12Cd" for
 *     a sidecar: Immich, darktable and digiKam look for IMG.jpg.xmp or
 *     IMG.xmp).
 *   - during 3: a rename swaps one directory entry at a time, atomically,
 *     and only to an inode whose data step 2 already put on the disk: each
 *     name holds the previous sidecar whole or the new one whole, never a
 *     truncated one (the hazard of renaming before syncing, on ext4 with
 *     delayed allocation or XFS: a zero-length file under the final name).
 *   - during 4, or before it: a rename not yet on the disk is undone by the
 *     journal: the previous sidecar, whole, is back; the next run, which
 *     compares content, writes it again.
 * A report says CREATED or UPDATED only once step 3 has renamed the
 * sidecar. A failed folder fsync is not reported: the sidecar is whole and
 * in place, and a crash could at worst bring the previous one back.
 *
 * Why batches: on ext4 an fsync of each sidecar and of its folder costs a
 * journal commit and a cache flush each, most of the export's wall time;
 * an fdatasync of each still flushes each. One syncfs per batch, then the
 * renames and one folder fsync, costs a few times less per sidecar. It also
 * writes whatever else is dirty on that file system, which its periodic
 * writeback would have written within 30 s anyway. Batches are bounded
 * (BATCH_SIZE) so that a Stop or a crash leaves little undone and the open
 * temporaries stay far below the descriptor limit; at 128 the sync's cost
 * per sidecar is a hundredth of one sync per sidecar. */
#define BATCH_SIZE        128

typedef struct
{
  char *tmp;    /* the temporary, written */
  char *target; /* its final name (a link's target) */
  int fd;       /* the temporary, open: syncfs and fsync report on it */
  guint entry;  /* its entry in the report */
} Pending;

typedef struct
{
  GArray *pending;     /* Pending, in the order written */
  GHashTable *targets; /* the pending targets */
  LkExportXmpReport *report;
} Batch;

static void
pending_clear (gpointer data)
{
  Pending *p = data;
  if (p->fd >= 0)
    close (p->fd);
  g_free (p->tmp);
  g_free (p->target);
}

static void
batch_init (Batch *batch, LkExportXmpReport *report)
{
  batch->pending = g_array_new (FALSE, TRUE, sizeof (Pending));
  g_array_set_clear_func (batch->pending, pending_clear);
  batch->targets = g_hash_table_new (g_str_hash, g_str_equal);
  batch->report = report;
}

static void
batch_free (Batch *batch)
{
  g_hash_table_unref (batch->targets);
  g_array_unref (batch->pending);
}

/* Whether syncfs() reports the writeback errors of the file system since
 * its descriptor was opened: Linux 5.8 and later (before, it returned 0
 * even when a page could not be written, and a sidecar would be renamed
 * over its predecessor with data that never reached the disk). Elsewhere,
 * or on an older kernel, each temporary is fsync()ed. */
static gboolean
sync_reports_errors (void)
{
#ifdef __linux__
  static gsize once = 0;
  static gboolean reports;
  if (g_once_init_enter (&once))
    {
      struct utsname u;
      int major = 0, minor = 0;
      reports = uname (&u) == 0 && sscanf (u.release, "%d.%d", &major, &minor) == 2
                && (major > 5 || (major == 5 && minor >= 8));
      g_once_init_leave (&once, 1);
    }
  return reports;
#else
  return FALSE;
#endif
}

/* Step 1: TARGET's new content in a temporary beside it, left open. */
static gboolean
batch_stage (Batch *batch, const char *target, const char *data, gsize size, const struct stat *old,
             GError **error)
{
  g_autofree char *dir = g_path_get_dirname (target);
  g_autofree char *base = g_path_get_basename (target);
  g_autofree char *tmp = g_strdup_printf ("%s/.%s.XXXXXX", dir, base);
  int fd = g_mkstemp_full (tmp, O_RDWR | O_CLOEXEC, 0666);
  if (fd < 0)
    {
      int saved = errno;
      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved),
                   "Cannot write in the folder %s: %s", dir, g_strerror (saved));
      return FALSE;
    }
  gsize done = 0;
  int saved = 0;
  while (done < size)
    {
      ssize_t n = write (fd, data + done, size - done);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        {
          saved = n < 0 ? errno : ENOSPC;
          break;
        }
      done += (gsize) n;
    }
  /* Mode kept: a sidecar the user made private stays private. A new one
   * has 0666 less the umask, as any file the user makes. */
  if (saved == 0 && old != NULL && fchmod (fd, old->st_mode & 07777) != 0)
    saved = errno;
  if (saved != 0)
    {
      close (fd);
      unlink (tmp);
      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved), "Cannot write %s: %s", target,
                   g_strerror (saved));
      return FALSE;
    }
  /* Its entry is the next one the report gains (the caller appends it). */
  Pending p = { g_steal_pointer (&tmp), g_strdup (target), fd, batch->report->entries->len };
  g_array_append_val (batch->pending, p);
  g_hash_table_add (batch->targets, p.target);
  return TRUE;
}

static gboolean
batch_has (Batch *batch, const char *target)
{
  return g_hash_table_contains (batch->targets, target);
}

/* A staged sidecar that could not be put in place: its temporary removed,
 * its entry FAILED. */
static void
batch_fail (Batch *batch, Pending *p, const char *what, int saved)
{
  unlink (p->tmp);
  LkExportXmpReport *report = batch->report;
  if (p->entry >= report->entries->len)
    return;
  LkExportXmpEntry *e = &g_array_index (report->entries, LkExportXmpEntry, p->entry);
  if (e->outcome == LK_EXPORT_XMP_CREATED)
    report->created--;
  else if (e->outcome == LK_EXPORT_XMP_UPDATED)
    report->updated--;
  report->failed++;
  report->regions -= e->regions;
  e->regions = 0;
  e->outcome = LK_EXPORT_XMP_FAILED;
  g_free (e->message);
  e->message = g_strdup_printf ("Cannot %s %s: %s", what, p->target, g_strerror (saved));
}

/* Steps 2 to 4 for every staged sidecar (see above). */
static void
batch_commit (Batch *batch)
{
  GArray *pending = batch->pending;
  if (pending->len == 0)
    return;
  g_autofree int *failed = g_new0 (int, pending->len);
  /* 2: one syncfs per file system, by the descriptor of its first
   * temporary: opened before any of the batch's writes there, so that its
   * error report covers them all. */
  gboolean by_fs = sync_reports_errors ();
  g_autoptr (GArray) devices = g_array_new (FALSE, FALSE, sizeof (dev_t));
  g_autoptr (GArray) synced = g_array_new (FALSE, FALSE, sizeof (gboolean));
  for (guint k = 0; k < pending->len; k++)
    {
      Pending *p = &g_array_index (pending, Pending, k);
      struct stat st;
      gboolean done = FALSE;
      if (by_fs && fstat (p->fd, &st) == 0)
        {
          guint d = 0;
          while (d < devices->len && g_array_index (devices, dev_t, d) != st.st_dev)
            d++;
          if (d == devices->len)
            {
#ifdef __linux__
              gboolean ok = syncfs (p->fd) == 0;
#else
              gboolean ok = FALSE;
#endif
              g_array_append_val (devices, st.st_dev);
              g_array_append_val (synced, ok);
            }
          done = g_array_index (synced, gboolean, d);
        }
      /* Not shown durable by its file system's sync (an error somewhere on
       * it, maybe another program's): its own fsync says. */
      if (!done && fsync (p->fd) != 0)
        failed[k] = errno;
    }
  for (guint k = 0; k < pending->len; k++)
    {
      Pending *p = &g_array_index (pending, Pending, k);
      if (close (p->fd) != 0 && failed[k] == 0)
        failed[k] = errno;
      p->fd = -1;
    }
  /* 3: the renames, in the order written. */
  g_autoptr (GHashTable) folders = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  for (guint k = 0; k < pending->len; k++)
    {
      Pending *p = &g_array_index (pending, Pending, k);
      if (failed[k] != 0)
        batch_fail (batch, p, "write", failed[k]);
      else if (rename (p->tmp, p->target) != 0)
        batch_fail (batch, p, "write", errno);
      else
        g_hash_table_add (folders, g_path_get_dirname (p->target));
    }
  /* 4: each folder once. */
  GHashTableIter iter;
  gpointer folder;
  g_hash_table_iter_init (&iter, folders);
  while (g_hash_table_iter_next (&iter, &folder, NULL))
    {
      int dfd = open (folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
      if (dfd >= 0)
        {
          fsync (dfd);
          close (dfd);
        }
    }
  g_hash_table_remove_all (batch->targets);
  g_array_set_size (pending, 0);
}

/* The photo's EXIF orientation (1 when none) and its stored pixel size. */
static gboolean
read_photo (const char *photo, int *orientation, int *width, int *height, GError **error)
{
  g_autoptr (GExiv2Metadata) m = gexiv2_metadata_new ();
  warned = FALSE;
  g_autoptr (GError) local = NULL;
  if (!gexiv2_metadata_open_path (m, photo, &local))
    {
      g_set_error (error, LK_EXPORT_XMP_ERROR, LK_EXPORT_XMP_ERROR_PHOTO,
                   "Cannot read the photo %s: %s", photo, local->message);
      return FALSE;
    }
  *orientation = 1;
  if (gexiv2_metadata_try_has_tag (m, "Exif.Image.Orientation", NULL))
    {
      glong o = gexiv2_metadata_try_get_tag_long (m, "Exif.Image.Orientation", NULL);
      if (o >= 1 && o <= 8)
        *orientation = (int) o;
    }
  *width = gexiv2_metadata_get_pixel_width (m);
  *height = gexiv2_metadata_get_pixel_height (m);
  return TRUE;
}

static void
add_unique (GPtrArray *list, const char *value)
{
  for (guint k = 0; k < list->len; k++)
    if (strcmp (list->pdata[k], value) == 0)
      return;
  g_ptr_array_add (list, g_strdup (value));
}

static void
remove_value (GPtrArray *list, const char *value)
{
  for (guint k = 0; k < list->len;)
    if (strcmp (list->pdata[k], value) == 0)
      g_ptr_array_remove_index (list, k);
    else
      k++;
}

static GPtrArray *
get_list (GExiv2Metadata *m, const char *tag)
{
  GPtrArray *list = g_ptr_array_new_with_free_func (g_free);
  if (!gexiv2_metadata_try_has_tag (m, tag, NULL))
    return list;
  g_auto (GStrv) values = gexiv2_metadata_try_get_tag_multiple (m, tag, NULL);
  for (char **v = values; v != NULL && *v != NULL; v++)
    add_unique (list, *v);
  return list;
}

static gboolean
set_list (GExiv2Metadata *m, const char *tag, GPtrArray *list)
{
  gexiv2_metadata_try_clear_tag (m, tag, NULL);
  if (list->len == 0)
    return TRUE;
  g_ptr_array_add (list, NULL);
  gboolean ok = gexiv2_metadata_try_set_tag_multiple (m, tag, (const char **) list->pdata, NULL);
  g_ptr_array_remove_index (list, list->len - 1);
  return ok;
}

/* Whether exiv2 would read PACKET, a new sidecar's (only Likeness's
 * properties, serialised by the XMP toolkit), back. Parsing it with exiv2
 * itself (gexiv2_metadata_open_buf) cost half a millisecond for two regions,
 * a third of a new sidecar's CPU time on the 2,000-face sample: exiv2
 * converts every packet it reads into Exif and IPTC, each of its ~90
 * conversions searching the XmpData linearly and building every entry's
 * key string. What the toolkit's serialiser can emit that its parser
 * refuses is XML, not RDF: it writes its own tree, replaces C0 controls by
 * spaces and escapes markup, but passes U+FFFE and U+FFFF through, which
 * XML 1.0 forbids and the parser's validator refuses (tried on every class
 * of code point: controls, C1, noncharacters U+FDD0 and U+1FFFE, private
 * use, U+10FFFF; only those two). So: well-formed XML (GMarkup, which
 * also checks UTF-8 and character references), and neither of those two,
 * 10 µs. An existing sidecar is still read back by exiv2: every property
 * another tool wrote must be found there, exactly. */
static gboolean
reads_back (const char *packet, GError **error)
{
  if (strstr (packet, "\xef\xbf\xbe") != NULL || strstr (packet, "\xef\xbf\xbf") != NULL)
    {
      g_set_error_literal (error, G_MARKUP_ERROR, G_MARKUP_ERROR_BAD_UTF8,
                           "U+FFFE or U+FFFF, which XML cannot hold");
      return FALSE;
    }
  static const GMarkupParser nothing = { 0 };
  GMarkupParseContext *context = g_markup_parse_context_new (&nothing, 0, NULL, NULL);
  gboolean ok = g_markup_parse_context_parse (context, packet, -1, error)
                && g_markup_parse_context_end_parse (context, error);
  g_markup_parse_context_free (context);
  return ok;
}

static LkExportXmpOutcome export_sidecar (const LkLibrary *library, const LkPhoto *photo,
                                          const char *photo_path, const char *target,
                                          const struct stat *st, GArray *named,
                                          const LkExportXmpOptions *options, Batch *batch,
                                          int orientation, int stored_w, int stored_h, char **fresh,
                                          guint *n_regions, GError **error);

/* Whether the file at PATH holds exactly DATA. */
static gboolean
holds (const char *path, const char *data)
{
  g_autofree char *bytes = NULL;
  gsize size = 0;
  return g_file_get_contents (path, &bytes, &size, NULL) && size == strlen (data)
         && memcmp (bytes, data, size) == 0;
}

/* One photo: the outcome, and the entry's regions and message. */
static LkExportXmpOutcome
export_photo (const LkLibrary *library, const LkPhoto *photo, const char *photo_path,
              const char *sidecar, GArray *named, const LkExportXmpOptions *options, Batch *batch,
              guint *n_regions, GError **error)
{
  *n_regions = 0;
  int orientation = 1, stored_w = 0, stored_h = 0;
  if (named->len > 0)
    {
      /* The one look at whether the photo is there: its error code is what
       * the report counts as missing. */
      struct stat ps;
      if (stat (photo_path, &ps) != 0)
        {
          int saved = errno;
          if (saved == ENOENT || saved == ENOTDIR)
            {
              /* In a Flatpak, a photo outside every granted folder is
               * missing too: the hint says so and which override grants it. */
              g_autofree char *hint = lk_sandbox_hint (photo_path);
              g_set_error (error, LK_EXPORT_XMP_ERROR, LK_EXPORT_XMP_ERROR_MISSING,
                           "The photo %s is missing%s%s", photo_path, hint != NULL ? "." : "",
                           hint != NULL ? hint : "");
            }
          else
            g_set_error (error, LK_EXPORT_XMP_ERROR, LK_EXPORT_XMP_ERROR_PHOTO,
                         "Cannot read the photo %s: %s", photo_path, g_strerror (saved));
          return LK_EXPORT_XMP_REFUSED;
        }
      if (!S_ISREG (ps.st_mode))
        {
          g_set_error (error, LK_EXPORT_XMP_ERROR, LK_EXPORT_XMP_ERROR_PHOTO,
                       "The photo %s is not a file", photo_path);
          return LK_EXPORT_XMP_REFUSED;
        }
      if (!read_photo (photo_path, &orientation, &stored_w, &stored_h, error))
        return LK_EXPORT_XMP_REFUSED;
    }

  g_autofree char *target = resolve_link (sidecar, error);
  if (target == NULL)
    return LK_EXPORT_XMP_REFUSED;
  /* A sidecar this batch already writes (two photos, one IMG.xmp): put in
   * place first, so that this photo merges into it as when written one by
   * one. */
  if (batch_has (batch, target))
    batch_commit (batch);
  struct stat st;
  gboolean exists = stat (target, &st) == 0;
  if (!exists && named->len == 0)
    return LK_EXPORT_XMP_UNCHANGED; /* nothing was written, nothing to write */
  /* The sidecar holds exactly what a new one would (Likeness wrote it and
   * nothing changed since, the common case of a second run and of the
   * window's count): unchanged, without exiv2 reading it. Reading an
   * existing sidecar, listing its tags and rebuilding it cost 2.3 ms a
   * photo on the 2,000-face sample, making the new packet ~0.5 ms. When
   * they differ the full merge below decides; a sidecar holding these very
   * bytes merges into these bytes, so the outcome is the same. */
  if (exists && named->len > 0)
    {
      g_autofree char *fresh = NULL;
      guint ignored = 0;
      g_autoptr (GError) local = NULL;
      if (export_sidecar (library, photo, photo_path, target, NULL, named, options, batch,
                          orientation, stored_w, stored_h, &fresh, &ignored, &local)
              == LK_EXPORT_XMP_CREATED
          && fresh != NULL && holds (target, fresh))
        {
          *n_regions = named->len;
          return LK_EXPORT_XMP_UNCHANGED;
        }
    }
  return export_sidecar (library, photo, photo_path, target, exists ? &st : NULL, named, options,
                         batch, orientation, stored_w, stored_h, NULL, n_regions, error);
}

/* What export_sidecar plans before it writes: our regions, normalised in the
 * stored image, and what of the sidecar's regions and names stays. */
typedef struct
{
  GArray *mwg, *mp;           /* the sidecar's regions (Region) */
  double (*areas)[4];         /* ours, in the library's face order */
  GPtrArray *old_names;       /* names Likeness wrote before */
  GArray *old_ours;           /* and their regions (Box) */
  GArray *keep_mwg, *keep_mp; /* indices of the regions that stay */
} Plan;

static void
plan_clear (Plan *plan)
{
  g_clear_pointer (&plan->mwg, g_array_unref);
  g_clear_pointer (&plan->mp, g_array_unref);
  g_clear_pointer (&plan->areas, g_free);
  g_clear_pointer (&plan->old_names, g_ptr_array_unref);
  g_clear_pointer (&plan->old_ours, g_array_unref);
  g_clear_pointer (&plan->keep_mwg, g_array_unref);
  g_clear_pointer (&plan->keep_mp, g_array_unref);
}

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (Plan, plan_clear)

/* The sidecar TARGET opened (a new one from EMPTY_PACKET), with the Exif and
 * IPTC that exiv2 converted from its XMP cleared, so that nothing converts
 * them back (the XMP itself is untouched). */
static gboolean
open_sidecar (GExiv2Metadata *m, const char *target, gboolean exists, GError **error)
{
  g_autoptr (GError) local = NULL;
  warned = FALSE;
  gboolean opened = exists ? gexiv2_metadata_open_path (m, target, &local)
                           : gexiv2_metadata_open_buf (m, (const guint8 *) EMPTY_PACKET,
                                                       sizeof EMPTY_PACKET - 1, &local);
  if (!opened || warned)
    {
      g_set_error (error, LK_EXPORT_XMP_ERROR, LK_EXPORT_XMP_ERROR_SIDECAR,
                   "The sidecar %s cannot be read as XMP (%s); left as it is", target,
                   local != NULL ? local->message : warning);
      return FALSE;
    }
  gexiv2_metadata_clear_exif (m);
  gexiv2_metadata_clear_iptc (m);
  return TRUE;
}

/* Which regions another tool wrote stay: all but ours (marked) and those on
 * a face Likeness names now; names Likeness wrote before are taken out of
 * PersonInImage (and TagsList) with their regions. */
static void
plan_regions (Plan *plan, const LkLibrary *library, GArray *named, double display_w,
              double display_h, int orientation)
{
  plan->areas = g_malloc0_n (MAX (named->len, 1), sizeof *plan->areas);
  for (guint k = 0; k < named->len; k++)
    {
      NamedFace *f = &g_array_index (named, NamedFace, k);
      lk_export_xmp_area (library->box[f->face], display_w, display_h, orientation, plan->areas[k]);
    }
  plan->old_names = g_ptr_array_new_with_free_func (g_free);
  plan->old_ours = g_array_new (FALSE, FALSE, sizeof (Box));
  plan->keep_mwg = g_array_new (FALSE, FALSE, sizeof (guint));
  for (guint i = 0; i < plan->mwg->len; i++)
    {
      Region *r = &g_array_index (plan->mwg, Region, i);
      gboolean replaced = r->ours;
      for (guint k = 0; k < named->len && !replaced; k++)
        replaced = overlap (r->area, plan->areas[k]) >= SAME_FACE_OVERLAP;
      if (r->ours)
        {
          Box b = { { r->area[0], r->area[1], r->area[2], r->area[3] } };
          g_array_append_val (plan->old_ours, b);
          if (r->name != NULL)
            add_unique (plan->old_names, r->name);
        }
      if (!replaced)
        g_array_append_val (plan->keep_mwg, i);
    }
  plan->keep_mp = g_array_new (FALSE, FALSE, sizeof (guint));
  for (guint i = 0; i < plan->mp->len; i++)
    {
      Region *r = &g_array_index (plan->mp, Region, i);
      gboolean replaced = FALSE;
      for (guint k = 0; k < named->len && !replaced; k++)
        replaced = overlap (r->area, plan->areas[k]) >= SAME_FACE_OVERLAP;
      for (guint k = 0; k < plan->old_ours->len && !replaced; k++)
        replaced = overlap (r->area, g_array_index (plan->old_ours, Box, k).v) >= SAME_FACE_OVERLAP;
      if (!replaced)
        g_array_append_val (plan->keep_mp, i);
    }
}

/* The kept regions KEEP of REGIONS written again under LIST from index 1,
 * each property expected back as it was; returns the next index. */
static guint
write_kept (GExiv2Metadata *m, gboolean *ok, const char *list, GArray *regions, GArray *keep,
            GPtrArray *expected)
{
  guint j = 1;
  for (guint k = 0; k < keep->len; k++, j++)
    {
      Region *r = &g_array_index (regions, Region, g_array_index (keep, guint, k));
      for (guint s = 0; s < r->suffixes->len; s++)
        {
          g_autofree char *tag
              = g_strdup_printf ("%s[%u]%s", list, j, (char *) r->suffixes->pdata[s]);
          set_tag (m, ok, tag, r->values->pdata[s]);
          g_ptr_array_add (expected, g_strdup_printf ("%s\t%s", tag, (char *) r->values->pdata[s]));
        }
    }
  return j;
}

/* The MWG region tree: kept regions first, in their order, then ours in the
 * library's face order, so that a second run makes the same tree. */
static void
write_mwg (GExiv2Metadata *m, gboolean *ok, const Plan *plan, GArray *named, char **tags,
           GPtrArray *before, int stored_w, int stored_h, GPtrArray *expected)
{
  if (plan->keep_mwg->len + named->len == 0)
    return;
  if (named->len > 0)
    {
      g_autofree char *w = g_strdup_printf ("%d", stored_w);
      g_autofree char *h = g_strdup_printf ("%d", stored_h);
      set_tag (m, ok, APPLIED "/stDim:w", w);
      set_tag (m, ok, APPLIED "/stDim:h", h);
      set_tag (m, ok, APPLIED "/stDim:unit", "pixel");
    }
  else
    /* Only another tool's regions left: its AppliedToDimensions stays. */
    for (char **t = tags; *t != NULL; t++)
      if (g_str_has_prefix (*t, APPLIED "/"))
        {
          g_autofree char *line = NULL;
          for (guint k = 0; k < before->len; k++)
            if (g_str_has_prefix (before->pdata[k], *t)
                && ((char *) before->pdata[k])[strlen (*t)] == '\t')
              line = g_strdup (before->pdata[k]);
          if (line != NULL)
            set_tag (m, ok, *t, strchr (line, '\t') + 1);
        }
  GError *e = NULL;
  if (!gexiv2_metadata_try_set_xmp_tag_struct (m, REGION_LIST, GEXIV2_STRUCTURE_XA_BAG, &e))
    *ok = FALSE;
  g_clear_error (&e);
  guint j = write_kept (m, ok, REGION_LIST, plan->mwg, plan->keep_mwg, expected);
  for (guint k = 0; k < named->len; k++, j++)
    {
      NamedFace *f = &g_array_index (named, NamedFace, k);
      g_autofree char *item = g_strdup_printf ("%s[%u]", REGION_LIST, j);
      const char *fields[] = { "x", "y", "w", "h" };
      for (int c = 0; c < 4; c++)
        {
          g_autofree char *tag = g_strdup_printf ("%s/mwg-rs:Area/stArea:%s", item, fields[c]);
          g_autofree char *v = number (plan->areas[k][c]);
          set_tag (m, ok, tag, v);
        }
      g_autofree char *unit = g_strconcat (item, "/mwg-rs:Area/stArea:unit", NULL);
      set_tag (m, ok, unit, "normalized");
      g_autofree char *name = g_strconcat (item, "/mwg-rs:Name", NULL);
      set_tag (m, ok, name, f->name);
      g_autofree char *type = g_strconcat (item, "/mwg-rs:Type", NULL);
      set_tag (m, ok, type, "Face");
      g_autofree char *mark = g_strconcat (item, OUR_MARK, NULL);
      set_tag (m, ok, mark, f->key);
    }
}

/* The Microsoft Photo region tree, in the same order. */
static void
write_mp (GExiv2Metadata *m, gboolean *ok, const Plan *plan, GArray *named, GPtrArray *expected)
{
  if (plan->keep_mp->len + named->len == 0)
    return;
  GError *e = NULL;
  if (!gexiv2_metadata_try_set_xmp_tag_struct (m, MP_LIST, GEXIV2_STRUCTURE_XA_BAG, &e))
    *ok = FALSE;
  g_clear_error (&e);
  guint j = write_kept (m, ok, MP_LIST, plan->mp, plan->keep_mp, expected);
  for (guint k = 0; k < named->len; k++, j++)
    {
      NamedFace *f = &g_array_index (named, NamedFace, k);
      const double *a = plan->areas[k];
      char b[4][G_ASCII_DTOSTR_BUF_SIZE];
      double v[4] = { a[0] - a[2] / 2, a[1] - a[3] / 2, a[2], a[3] };
      for (int c = 0; c < 4; c++)
        g_ascii_formatd (b[c], sizeof b[c], "%.6f", v[c]);
      g_autofree char *rect = g_strdup_printf ("%s, %s, %s, %s", b[0], b[1], b[2], b[3]);
      g_autofree char *tag = g_strdup_printf ("%s[%u]/MPReg:Rectangle", MP_LIST, j);
      set_tag (m, ok, tag, rect);
      g_autofree char *name = g_strdup_printf ("%s[%u]/MPReg:PersonDisplayName", MP_LIST, j);
      set_tag (m, ok, name, f->name);
    }
}

/* PersonInImage (and TagsList): the names Likeness wrote before out, the
 * names now in, other values kept in their order. */
static gboolean
write_names (GExiv2Metadata *m, const Plan *plan, GArray *named, const LkExportXmpOptions *options)
{
  gboolean ok = TRUE;
  g_autoptr (GPtrArray) persons = get_list (m, PERSON_IN_IMAGE);
  for (guint k = 0; k < plan->old_names->len; k++)
    remove_value (persons, plan->old_names->pdata[k]);
  for (guint k = 0; k < named->len; k++)
    add_unique (persons, g_array_index (named, NamedFace, k).name);
  ok &= set_list (m, PERSON_IN_IMAGE, persons);
  if (options->digikam_tags)
    {
      g_autoptr (GPtrArray) tags_list = get_list (m, TAGS_LIST);
      for (guint k = 0; k < plan->old_names->len; k++)
        {
          g_autofree char *tag = g_strconcat ("People/", (char *) plan->old_names->pdata[k], NULL);
          remove_value (tags_list, tag);
        }
      for (guint k = 0; k < named->len; k++)
        {
          g_autofree char *tag
              = g_strconcat ("People/", g_array_index (named, NamedFace, k).name, NULL);
          add_unique (tags_list, tag);
        }
      ok &= set_list (m, TAGS_LIST, tags_list);
    }
  return ok;
}

/* Every property Likeness does not manage is expected back as it was. */
static void
expect_unmanaged (GPtrArray *before, GPtrArray *expected)
{
  static const char *const managed[] = { REGIONS, MP_INFO, PERSON_IN_IMAGE, TAGS_LIST, NULL };
  for (guint k = 0; k < before->len; k++)
    {
      const char *line = before->pdata[k];
      gboolean ours = FALSE;
      for (const char *const *p = managed; *p != NULL && !ours; p++)
        {
          gsize n = strlen (*p);
          ours
              = strncmp (line, *p, n) == 0 && (line[n] == '\t' || line[n] == '/' || line[n] == '[');
        }
      if (!ours)
        g_ptr_array_add (expected, g_strdup (line));
    }
}

/* The packet, by the XMP toolkit; NULL when exiv2 cannot encode it. */
static char *
make_packet (GExiv2Metadata *m, const char *target, GError **error)
{
  g_autoptr (GError) local = NULL;
  warned = FALSE;
  g_autofree char *packet
      = gexiv2_metadata_try_generate_xmp_packet (m, GEXIV2_USE_COMPACT_FORMAT, 0, &local);
  if (packet == NULL || warned)
    {
      g_set_error (error, LK_EXPORT_XMP_ERROR, LK_EXPORT_XMP_ERROR_WRITE,
                   "exiv2 cannot encode the XMP for %s (%s); left as it is", target,
                   local != NULL ? local->message : warning);
      return NULL;
    }
  if (packet[0] == '\0')
    {
      /* No property left (the sidecar held only Likeness's regions): the
       * XMP toolkit makes an empty string of it; the file is kept, empty of
       * properties, never deleted (it may be the user's). */
      g_free (packet);
      packet = g_strdup (EMPTY_PACKET);
    }
  return g_steal_pointer (&packet);
}

/* An existing sidecar's new PACKET parsed back: every EXPECTED line in it,
 * and whether anything changed from BEFORE. */
static LkExportXmpOutcome
verify_update (const char *target, const char *packet, GPtrArray *before, GPtrArray *expected,
               GError **error)
{
  g_autoptr (GError) local = NULL;
  g_autoptr (GExiv2Metadata) back = gexiv2_metadata_new ();
  if (!gexiv2_metadata_open_buf (back, (const guint8 *) packet, strlen (packet), &local) || warned)
    {
      g_set_error (error, LK_EXPORT_XMP_ERROR, LK_EXPORT_XMP_ERROR_WRITE,
                   "The XMP made for %s does not read back (%s); left as it is", target,
                   local != NULL ? local->message : warning);
      return LK_EXPORT_XMP_FAILED;
    }
  g_autoptr (GPtrArray) after = snapshot (back);
  for (guint k = 0; k < expected->len; k++)
    if (!has_line (after, expected->pdata[k]))
      {
        g_autofree char *shown = g_strdup (expected->pdata[k]);
        *strchr (shown, '\t') = '\0';
        g_set_error (error, LK_EXPORT_XMP_ERROR, LK_EXPORT_XMP_ERROR_SIDECAR,
                     "The sidecar %s has a property Likeness cannot keep exactly (%s); left "
                     "as it is",
                     target, shown);
        return LK_EXPORT_XMP_REFUSED;
      }
  return same_lines (before, after) ? LK_EXPORT_XMP_UNCHANGED : LK_EXPORT_XMP_UPDATED;
}

/* The sidecar TARGET of one photo, from its current state ST (NULL: it does
 * not exist): the outcome, and the entry's regions and message. With FRESH,
 * only the packet a new sidecar would get is made, returned there, and
 * nothing staged. Read and plan, write the region trees and the names,
 * then make the packet and verify it before anything is staged. */
static LkExportXmpOutcome
export_sidecar (const LkLibrary *library, const LkPhoto *photo, const char *photo_path,
                const char *target, const struct stat *st, GArray *named,
                const LkExportXmpOptions *options, Batch *batch, int orientation, int stored_w,
                int stored_h, char **fresh, guint *n_regions, GError **error)
{
  gboolean exists = st != NULL;
  g_autoptr (GExiv2Metadata) m = gexiv2_metadata_new ();
  if (!open_sidecar (m, target, exists, error))
    return LK_EXPORT_XMP_REFUSED;

  /* A sidecar's tiff:Orientation wins over the photo's, as in ExifTool's
   * merged view that Immich reads. */
  if (gexiv2_metadata_try_has_tag (m, ORIENTATION, NULL))
    {
      glong o = gexiv2_metadata_try_get_tag_long (m, ORIENTATION, NULL);
      if (o >= 1 && o <= 8)
        orientation = (int) o;
    }
  gboolean turned = orientation >= 5 && orientation <= 8;
  /* The library's boxes are in photos[].width × height, the photo as
   * shown; without them, the file's own size turned. */
  double display_w = photo->width > 0 ? (double) photo->width : turned ? stored_h : stored_w;
  double display_h = photo->height > 0 ? (double) photo->height : turned ? stored_w : stored_h;
  if (named->len > 0 && (stored_w <= 0 || stored_h <= 0 || display_w <= 0 || display_h <= 0))
    {
      g_set_error (error, LK_EXPORT_XMP_ERROR, LK_EXPORT_XMP_ERROR_PHOTO,
                   "The photo %s has no pixel size exiv2 can read", photo_path);
      return LK_EXPORT_XMP_REFUSED;
    }

  g_auto (GStrv) tags = gexiv2_metadata_get_xmp_tags (m);
  g_autoptr (GHashTable) values = g_hash_table_new_full (g_str_hash, g_str_equal, NULL, g_free);
  g_autoptr (GPtrArray) before = snapshot_of (m, tags, values);
  g_auto (Plan) plan = { 0 };
  plan.mwg = read_regions (values, tags, REGION_LIST, TRUE);
  plan.mp = read_regions (values, tags, MP_LIST, FALSE);
  plan_regions (&plan, library, named, display_w, display_h, orientation);

  static const char *const mwg_known[] = { REGION_LIST, APPLIED, NULL };
  static const char *const mp_known[] = { MP_LIST, NULL };
  if (exists) /* a new sidecar starts from EMPTY_PACKET: nothing to remove */
    {
      remove_subtree (m, tags, REGIONS, mwg_known);
      remove_subtree (m, tags, MP_INFO, mp_known);
    }
  gboolean ok = TRUE;
  g_autoptr (GPtrArray) expected = g_ptr_array_new_with_free_func (g_free);
  write_mwg (m, &ok, &plan, named, tags, before, stored_w, stored_h, expected);
  write_mp (m, &ok, &plan, named, expected);
  ok &= write_names (m, &plan, named, options);
  expect_unmanaged (before, expected);
  if (!ok)
    {
      g_set_error (error, LK_EXPORT_XMP_ERROR, LK_EXPORT_XMP_ERROR_WRITE,
                   "exiv2 refused a property for %s", target);
      return LK_EXPORT_XMP_FAILED;
    }

  /* The packet, parsed back before anything is written. */
  g_autofree char *packet = make_packet (m, target, error);
  if (packet == NULL)
    return LK_EXPORT_XMP_FAILED;
  /* The sidecar already holds exactly this packet (Likeness wrote it, and
   * nothing changed since): nothing to parse or write. */
  if (exists && holds (target, packet))
    {
      *n_regions = named->len;
      return LK_EXPORT_XMP_UNCHANGED;
    }
  if (!exists)
    {
      /* A new sidecar keeps nothing of anyone's: only whether it parses. */
      g_autoptr (GError) local = NULL;
      if (!reads_back (packet, &local))
        {
          g_set_error (error, LK_EXPORT_XMP_ERROR, LK_EXPORT_XMP_ERROR_WRITE,
                       "The XMP made for %s does not read back (%s); left as it is", target,
                       local->message);
          return LK_EXPORT_XMP_FAILED;
        }
      *n_regions = named->len;
      if (fresh != NULL)
        *fresh = g_steal_pointer (&packet);
      else if (!options->dry_run
               && !batch_stage (batch, target, packet, strlen (packet), NULL, error))
        return LK_EXPORT_XMP_FAILED;
      return LK_EXPORT_XMP_CREATED;
    }
  LkExportXmpOutcome verified = verify_update (target, packet, before, expected, error);
  if (verified != LK_EXPORT_XMP_UPDATED)
    {
      if (verified == LK_EXPORT_XMP_UNCHANGED)
        *n_regions = named->len;
      return verified;
    }
  if (!options->dry_run && !batch_stage (batch, target, packet, strlen (packet), st, error))
    return LK_EXPORT_XMP_FAILED;
  *n_regions = named->len;
  return LK_EXPORT_XMP_UPDATED;
}

/* Named, shown faces with a box, by photo index (n_photos + 1 slots, NULL
 * where a photo has none); a face whose photo has no path is counted. */
static GArray **
named_by_photo (const LkLibrary *library, const LkPeople *people, char **keys,
                LkExportXmpReport *report)
{
  GArray **named = g_new0 (GArray *, library->n_photos + 1);
  for (gsize f = 0; f < library->count; f++)
    {
      gint32 k = people->person_of[f];
      if (k < 0 || !library->has_box[f])
        continue;
      const LkPerson *p = &people->people[k];
      if (p->name == NULL || p->name[0] == '\0' || p->hidden)
        continue;
      const LkPhoto *photo = lk_library_find_photo (library, library->photo[f]);
      if (photo == NULL
          || (photo->path == NULL && photo->original == NULL && photo->source_path == NULL))
        {
          report->without_path++;
          continue;
        }
      gsize index = (gsize) (photo - library->photos);
      if (named[index] == NULL)
        named[index] = g_array_new (FALSE, FALSE, sizeof (NamedFace));
      NamedFace nf = { (guint32) f, p->name, keys[f] };
      g_array_append_val (named[index], nf);
    }
  return named;
}

/* The file of PHOTO, through the options' maps; when it cannot be had, *LOCAL
 * says why and the path is the best name to report it under (NULL: none). */
static char *
photo_file (const LkLibrary *library, const LkPhoto *photo, GArray *faces,
            const LkExportXmpOptions *options, LkExportXmpReport *report, GError **local)
{
  char *path = lk_library_photo_file (library, photo, options->maps, options->n_maps, local);
  if (g_error_matches (*local, LK_LIBRARY_ERROR, LK_LIBRARY_ERROR_UNMAPPED))
    {
      /* A server's path no map covers: never opened, counted once per
       * photo that has a region to write, and the first one named. */
      if (faces->len > 0)
        {
          report->unmapped++;
          if (report->unmapped_example == NULL)
            report->unmapped_example = g_strdup (photo->source_path);
        }
      g_clear_error (local);
    }
  if (path == NULL && *local != NULL && photo->path != NULL)
    path = g_build_filename (library->folder, photo->path, NULL);
  if (path == NULL && *local != NULL)
    path = g_strdup (photo->source_path != NULL ? photo->source_path : photo->original);
  return path;
}

/* One photo's entry ENTRY in the report, and its outcome counted. */
static void
report_entry (LkExportXmpReport *report, LkExportXmpEntry *entry, gboolean has_faces,
              const GError *local)
{
  g_array_append_val (report->entries, *entry);
  if (has_faces)
    report->photos++;
  report->regions += entry->regions;
  switch (entry->outcome)
    {
      case LK_EXPORT_XMP_CREATED:
        report->created++;
        break;
      case LK_EXPORT_XMP_UPDATED:
        report->updated++;
        break;
      case LK_EXPORT_XMP_UNCHANGED:
        report->unchanged++;
        break;
      case LK_EXPORT_XMP_REFUSED:
        report->refused++;
        /* Only a photo with a named face is looked for. */
        if (g_error_matches (local, LK_EXPORT_XMP_ERROR, LK_EXPORT_XMP_ERROR_MISSING))
          {
            report->missing++;
            if (report->missing_example == NULL)
              report->missing_example = g_strdup (entry->photo);
          }
        break;
      case LK_EXPORT_XMP_FAILED:
        report->failed++;
        break;
    }
}

LkExportXmpReport *
lk_export_xmp (const LkLibrary *library, const LkPeople *people, const LkExportXmpOptions *options,
               GError **error)
{
  g_return_val_if_fail (library != NULL && people != NULL, NULL);
  static const LkExportXmpOptions defaults = { 0 };
  static GMutex running;
  if (options == NULL)
    options = &defaults;
  g_mutex_lock (&running);
  ensure_initialized ();
  /* Our namespace for this run; at its end every namespace exiv2 learnt is
   * forgotten: its registry keeps copies of the names that nothing else
   * frees (valgrind and LeakSanitizer count them lost), one per unknown
   * namespace a sidecar brought (darktable's, …). */
  gexiv2_metadata_try_register_xmp_namespace (LK_XMP_NS, LK_XMP_PREFIX, NULL);

  LkExportXmpReport *report = g_new0 (LkExportXmpReport, 1);
  report->entries = g_array_new (FALSE, TRUE, sizeof (LkExportXmpEntry));
  g_auto (GStrv) keys = lk_library_face_keys (library);

  GArray **named = named_by_photo (library, people, keys, report);
  gsize total = library->n_photos;
  Batch batch;
  batch_init (&batch, report);
  g_autoptr (GArray) none = g_array_new (FALSE, FALSE, sizeof (NamedFace));
  for (gsize i = 0; i < library->n_photos; i++)
    {
      if (options->cancellable != NULL && g_cancellable_is_cancelled (options->cancellable))
        {
          report->cancelled = TRUE;
          break;
        }
      const LkPhoto *photo = &library->photos[i];
      GArray *faces = named[i] != NULL ? named[i] : none;
      g_autoptr (GError) local = NULL;
      g_autofree char *path = photo_file (library, photo, faces, options, report, &local);
      if (path != NULL)
        {
          char *sidecar = lk_export_xmp_sidecar_path (path, options->sidecar_name);
          guint n_regions = 0;
          LkExportXmpOutcome outcome = local != NULL
                                           ? LK_EXPORT_XMP_REFUSED
                                           : export_photo (library, photo, path, sidecar, faces,
                                                           options, &batch, &n_regions, &local);
          gboolean visited = faces->len > 0 || outcome != LK_EXPORT_XMP_UNCHANGED
                             || g_file_test (sidecar, G_FILE_TEST_EXISTS);
          if (visited)
            {
              LkExportXmpEntry e = { g_steal_pointer (&path), g_strdup (sidecar), outcome,
                                     n_regions, local != NULL ? g_strdup (local->message) : NULL };
              report_entry (report, &e, faces->len > 0, local);
            }
          g_free (sidecar);
        }
      if (batch.pending->len >= BATCH_SIZE)
        batch_commit (&batch);
      if (options->progress != NULL)
        options->progress (i + 1, total, options->progress_data);
    }
  /* Stopped or done: what is staged is put in place, whole. */
  batch_commit (&batch);
  batch_free (&batch);
  gexiv2_metadata_try_unregister_all_xmp_namespaces (NULL);
  g_mutex_unlock (&running);
  for (gsize i = 0; i <= library->n_photos; i++)
    if (named[i] != NULL)
      g_array_unref (named[i]);
  g_free (named);
  return report;
}

#endif
