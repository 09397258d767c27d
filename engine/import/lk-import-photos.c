/* lk-import-photos.c — see lk-import-photos.h
 *
 * The walk lists every candidate file first (sorted, so one folder gives
 * one library whatever the threads), then workers take photos by index,
 * each with its own copy of the face engine (a dlib network keeps its
 * activations inside), and put each photo's result in its own slot; the
 * library is assembled in walk order and written by lk_import_write, which
 * cuts the thumbnails.
 */
#include "config.h"

#include "lk-import-photos.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <glib/gstdio.h>

#include "lk-import-private.h"
#include "lk-photos-journal.h"
#include "detect/lk-detect-dlib.h"

#ifdef LK_HAVE_IMPORT_PHOTOS
#include <gdk-pixbuf/gdk-pixbuf.h>
#endif

gboolean
lk_import_photos_available (void)
{
#ifdef LK_HAVE_IMPORT_PHOTOS
  return lk_face_engine_dlib_available ();
#else
  return FALSE;
#endif
}

char *
lk_import_photos_formats (void)
{
  GString *names = g_string_new (NULL);
#ifdef LK_HAVE_IMPORT_PHOTOS
  /* By the file extensions a loader claims, not by its name: libheif's
   * loader (heif-gdk-pixbuf) is named "heif/avif" and reads both. */
  GSList *formats = gdk_pixbuf_get_formats ();
  static const char *const wanted[][2]
      = { { "jpeg", "jpg" },  { "png", "png" },   { "webp", "webp" },
          { "tiff", "tiff" }, { "heif", "heic" }, { "avif", "avif" } };
  for (gsize w = 0; w < G_N_ELEMENTS (wanted); w++)
    {
      gboolean found = FALSE;
      for (GSList *l = formats; l != NULL && !found; l = l->next)
        {
          g_auto (GStrv) extensions = gdk_pixbuf_format_get_extensions (l->data);
          found = extensions != NULL
                  && g_strv_contains ((const char *const *) extensions, wanted[w][1]);
        }
      if (found)
        g_string_append_printf (names, "%s%s", names->len > 0 ? ", " : "", wanted[w][0]);
    }
  g_slist_free (formats);
#endif
  return g_string_free (names, FALSE);
}

/* The file names searched, by extension (case-insensitive). */
static gboolean
is_photo_name (const char *name)
{
  static const char *const extensions[]
      = { ".jpg", ".jpeg", ".jpe", ".png", ".webp", ".tif", ".tiff", ".heic", ".heif", ".avif" };
  const char *dot = strrchr (name, '.');
  if (dot == NULL)
    return FALSE;
  for (gsize k = 0; k < G_N_ELEMENTS (extensions); k++)
    if (g_ascii_strcasecmp (dot, extensions[k]) == 0)
      return TRUE;
  return FALSE;
}

/* Entries a probe reads at most: a folder of tens of thousands of photos
 * answers as fast as one of ten, and a photo is usually among the first
 * names of the first folders. */
#define PROBE_ENTRIES 4096

/* A photo among the first entries of `path` (depth 0) or of the folders in
 * it (depth 1); *budget counts the entries read. */
static gboolean
probe_folder (const char *path, int depth, guint *budget)
{
  g_autoptr (GDir) dir = g_dir_open (path, 0, NULL);
  g_autoptr (GPtrArray) folders = g_ptr_array_new_with_free_func (g_free);
  const char *name;

  if (dir == NULL)
    return FALSE;
  while (*budget > 0 && (name = g_dir_read_name (dir)) != NULL)
    {
      (*budget)--;
      if (name[0] == '.')
        continue;
      if (is_photo_name (name))
        return TRUE;
      if (depth == 0 && strchr (name, '.') == NULL)
        g_ptr_array_add (folders, g_build_filename (path, name, NULL));
    }
  for (guint k = 0; k<folders->len && * budget> 0; k++)
    if (g_file_test (folders->pdata[k], G_FILE_TEST_IS_DIR)
        && probe_folder (folders->pdata[k], depth + 1, budget))
      return TRUE;
  return FALSE;
}

gboolean
lk_import_photos_probe (const char *folder)
{
  g_return_val_if_fail (folder != NULL, FALSE);

  g_autofree char *manifest = g_build_filename (folder, "library.json", NULL);
  guint budget = PROBE_ENTRIES;
  if (g_file_test (manifest, G_FILE_TEST_EXISTS))
    return FALSE;
  return probe_folder (folder, 0, &budget);
}

char **
lk_import_photos_missing_models (LkDetectorKind detector, char ***looked_in)
{
  GPtrArray *missing = g_ptr_array_new ();
  const LkModelFile *needed[] = { &lk_dlib_model_recognition, &lk_dlib_model_shape,
                                  detector == LK_DETECTOR_CNN ? &lk_dlib_model_cnn : NULL };

  for (gsize k = 0; k < G_N_ELEMENTS (needed); k++)
    if (needed[k] != NULL && !lk_face_models_present (needed[k]))
      g_ptr_array_add (missing, g_strdup (needed[k]->file));
  g_ptr_array_add (missing, NULL);
  if (looked_in != NULL)
    *looked_in = lk_face_models_dirs ();
  return (char **) g_ptr_array_free (missing, FALSE);
}

#ifdef LK_HAVE_IMPORT_PHOTOS

typedef enum
{
  BAD_NONE,
  BAD_EMPTY,
  BAD_NOT_IMAGE,
  BAD_NO_LOADER,
  BAD_UNDECODABLE,
  BAD_TOO_LARGE,
  BAD_UNREADABLE,
  BAD_CHANGED,
} BadKind;

typedef struct
{
  char *path;         /* absolute */
  char *relative;     /* to its folder, with the folder's index before it when there are several */
  const char *inside; /* in `relative`: the path inside its folder */
  guint folder;       /* the index of its folder in the options' folders */
} Candidate;

typedef struct
{
  BadKind bad;
  char *problem; /* "PATH: what is wrong" */
  char *digest;  /* the file's content hash (SHA-256, first 16 hex digits) */
  gint64 width;  /* the original's pixels, oriented */
  gint64 height;
  GArray *faces; /* of LkDetectedFace, in the original's pixels */
  GArray *floats;
  gboolean reused;       /* from the journal: not searched again */
  GError *journal_error; /* the journal could not be written */
  char **thumbnails;     /* per face: its thumbnail made here (staged), or NULL */
} PhotoResult;

typedef struct
{
  GPtrArray *candidates; /* of Candidate * */
  GPtrArray *problems;   /* of char *: the walk's own (unreadable folders) */
  GHashTable *visited;   /* "dev:ino" of the folders searched */
  guint folder;          /* the index of the folder being walked */
  gsize prefix;          /* the bytes of `relative` before the path inside it */
} Walk;

static void
candidate_free (gpointer data)
{
  Candidate *c = data;
  g_free (c->path);
  g_free (c->relative);
  g_free (c);
}

static int
compare_candidates (gconstpointer a, gconstpointer b)
{
  const Candidate *x = *(Candidate *const *) a, *y = *(Candidate *const *) b;
  return strcmp (x->relative, y->relative);
}

static void
walk_folder (Walk *walk, const char *path, const char *relative, guint depth)
{
  struct stat st;
  if (stat (path, &st) != 0)
    {
      int saved = errno;
      g_ptr_array_add (walk->problems,
                       g_strdup_printf ("%s: cannot be read: %s", path, g_strerror (saved)));
      return;
    }
  g_autofree char *key = g_strdup_printf ("%ju:%ju", (uintmax_t) st.st_dev, (uintmax_t) st.st_ino);
  /* A symbolic link back up (a loop) or a second link to a folder: searched once. */
  if (g_hash_table_contains (walk->visited, key) || depth > 64)
    return;
  g_hash_table_add (walk->visited, g_steal_pointer (&key));

  DIR *dir = opendir (path);
  if (dir == NULL)
    {
      int saved = errno;
      g_ptr_array_add (walk->problems, g_strdup_printf ("%s: the folder cannot be read: %s", path,
                                                        g_strerror (saved)));
      return;
    }
  GPtrArray *names = g_ptr_array_new_with_free_func (g_free);
  struct dirent *entry;
  while ((entry = readdir (dir)) != NULL)
    if (entry->d_name[0] != '.') /* hidden files and folders, and . and .. */
      g_ptr_array_add (names, g_strdup (entry->d_name));
  closedir (dir);

  for (guint k = 0; k < names->len; k++)
    {
      const char *name = g_ptr_array_index (names, k);
      g_autofree char *child = g_build_filename (path, name, NULL);
      g_autofree char *child_relative
          = relative[0] != '\0' ? g_build_filename (relative, name, NULL) : g_strdup (name);
      struct stat cs;
      if (stat (child, &cs) != 0)
        {
          /* A dangling link is not a photo; anything else unreadable is said. */
          int saved = errno;
          if (saved != ENOENT && is_photo_name (name))
            g_ptr_array_add (walk->problems,
                             g_strdup_printf ("%s: cannot be read: %s", child, g_strerror (saved)));
          continue;
        }
      if (S_ISDIR (cs.st_mode))
        walk_folder (walk, child, child_relative, depth + 1);
      else if (S_ISREG (cs.st_mode) && is_photo_name (name))
        {
          Candidate *c = g_new0 (Candidate, 1);
          c->path = g_steal_pointer (&child);
          c->relative = g_steal_pointer (&child_relative);
          c->inside = c->relative + walk->prefix;
          c->folder = walk->folder;
          g_ptr_array_add (walk->candidates, c);
        }
    }
  g_ptr_array_unref (names);
}

/* The first LK_PHOTOS_DIGEST_CHARS hex digits of the SHA-256 of `data`:
 * with the box, the face's id. */
static char *
content_digest (const guint8 *data, gsize size)
{
  g_autofree char *full = g_compute_checksum_for_data (G_CHECKSUM_SHA256, data, size);
  return g_strndup (full, LK_PHOTOS_DIGEST_CHARS);
}

/* What a file's first bytes say it is, for one gdk-pixbuf has no loader for:
 * the format's name for the user, and the Debian package that adds its
 * gdk-pixbuf loader; NULL when they match none of the formats the importer
 * looks for. JPEG and PNG are built into Debian's gdk-pixbuf, the others are
 * loaders of their own (a build without them would call a photo "not an
 * image", which it is not). */
static const char *
sniff_format (const guint8 *d, gsize n, const char **package)
{
  *package = NULL;
  if (n >= 3 && d[0] == 0xFF && d[1] == 0xD8 && d[2] == 0xFF)
    return "JPEG";
  if (n >= 8 && memcmp (d, "\x89PNG\r\n\x1a\n", 8) == 0)
    return "PNG";
  if (n >= 12 && memcmp (d, "RIFF", 4) == 0 && memcmp (d + 8, "WEBP", 4) == 0)
    {
      *package = "webp-pixbuf-loader";
      return "WebP";
    }
  if (n >= 4 && (memcmp (d, "II*\0", 4) == 0 || memcmp (d, "MM\0*", 4) == 0))
    {
      *package = "libgdk-pixbuf-2.0-0";
      return "TIFF";
    }
  /* ISO BMFF: a box "ftyp" first, its major brand, then compatible brands
   * to the box's end (HEIF's mif1 may carry AV1: avif among them). */
  if (n >= 16 && memcmp (d + 4, "ftyp", 4) == 0)
    {
      gsize box = ((gsize) d[0] << 24) | ((gsize) d[1] << 16) | ((gsize) d[2] << 8) | d[3];
      box = MIN (box, n);
      gboolean avif = memcmp (d + 8, "avif", 4) == 0 || memcmp (d + 8, "avis", 4) == 0;
      for (gsize b = 16; !avif && b + 4 <= box; b += 4)
        avif = memcmp (d + b, "avif", 4) == 0;
      if (avif)
        {
          *package = "heif-gdk-pixbuf";
          return "AVIF";
        }
      static const char *const heif[]
          = { "heic", "heix", "heim", "heis", "hevc", "hevx", "mif1", "msf1" };
      for (gsize k = 0; k < G_N_ELEMENTS (heif); k++)
        if (memcmp (d + 8, heif[k], 4) == 0)
          {
            *package = "heif-gdk-pixbuf";
            return "HEIF";
          }
    }
  return NULL;
}

/* TRUE when a JPEG file ends: its markers, walked from SOI, reach EOI.
 * gdk-pixbuf decodes a truncated JPEG without an error (libjpeg only warns
 * and fills the rest grey), so a cut-off file would be searched as a photo
 * with a grey half. Data after EOI (a Motion Photo's video) is allowed; an
 * EXIF thumbnail's own EOI is inside its APP1 segment, skipped by length. */
static gboolean
jpeg_complete (const guint8 *d, gsize n)
{
  if (n < 4 || d[0] != 0xFF || d[1] != 0xD8)
    return TRUE; /* not a JPEG: gdk-pixbuf judges it */
  gsize i = 2;
  while (i + 1 < n)
    {
      if (d[i] != 0xFF)
        return FALSE;
      guint8 marker = d[i + 1];
      if (marker == 0xFF)
        {
          i++; /* fill bytes */
          continue;
        }
      if (marker == 0xD9)
        return TRUE;
      if ((marker >= 0xD0 && marker <= 0xD7) || marker == 0x01)
        {
          i += 2;
          continue;
        }
      if (i + 3 >= n)
        return FALSE;
      gsize length = ((gsize) d[i + 2] << 8) | d[i + 3];
      i += 2 + length;
      if (marker == 0xDA)
        {
          /* Entropy-coded data: up to the next marker that is not a
           * stuffed 0xFF00 or a restart. */
          while (i + 1 < n
                 && !(d[i] == 0xFF && d[i + 1] != 0x00 && !(d[i + 1] >= 0xD0 && d[i + 1] <= 0xD7)))
            i++;
        }
    }
  return FALSE;
}

/* The pixbuf as packed RGB (3 bytes a pixel), the layout engines take. */
static guint8 *
packed_rgb (GdkPixbuf *image, int *stride)
{
  int w = gdk_pixbuf_get_width (image), h = gdk_pixbuf_get_height (image);
  int channels = gdk_pixbuf_get_n_channels (image);
  int in_stride = gdk_pixbuf_get_rowstride (image);
  const guint8 *in = gdk_pixbuf_read_pixels (image);
  *stride = 3 * w;
  guint8 *out = g_malloc ((gsize) *stride * h);
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++)
      memcpy (out + (gsize) y * *stride + 3 * x, in + (gsize) y * in_stride + channels * x, 3);
  return out;
}

static void
set_bad (PhotoResult *r, BadKind bad, const char *path, const char *what)
{
  r->bad = bad;
  r->problem = g_strdup_printf ("%s: %s", path, what);
}

/* EXIF orientations 5–8 swap the sides. */
static gboolean
orientation_swaps (GdkPixbuf *raw)
{
  const char *o = gdk_pixbuf_get_option (raw, "orientation");
  int v = o != NULL ? atoi (o) : 1;
  return v >= 5 && v <= 8;
}

/* The face's id without the copy number: the photo's content hash and its
 * box (see lk_import_photos below), and the name of its staged thumbnail. */
static char *
face_key (const char *digest, const LkDetectedFace *d)
{
  return g_strdup_printf ("%s-%ld-%ld-%ld-%ld", digest, lround (d->box[0]), lround (d->box[1]),
                          lround (d->box[2]), lround (d->box[3]));
}

static char *
staged_thumbnail (const char *staging, const char *digest, const LkDetectedFace *d)
{
  g_autofree char *key = face_key (digest, d);
  g_autofree char *name = g_strconcat (key, ".png", NULL);
  return g_build_filename (staging, name, NULL);
}

/* The thumbnails of a photo found in the journal, when every one of them was
 * staged by the run that searched it (else the writer cuts them). */
static void
find_staged (const char *staging, PhotoResult *r)
{
  guint n = r->faces->len;
  char **files = g_new0 (char *, n + 1);
  for (guint k = 0; k < n; k++)
    {
      files[k]
          = staged_thumbnail (staging, r->digest, &g_array_index (r->faces, LkDetectedFace, k));
      if (!g_file_test (files[k], G_FILE_TEST_IS_REGULAR))
        {
          g_strfreev (files);
          return;
        }
    }
  r->thumbnails = files;
}

/* Cuts every face's thumbnail from the image searched (`image`, the photo
 * as shown at its full size; the boxes in its pixels) into `staging`, named
 * by the face's key: the writer links them into the library instead of
 * decoding the photo a second time (on 12 photos of 1.5 MP that second
 * decode and RGBA zlib were 9 % of the import's CPU). A thumbnail that
 * cannot be staged is left to the writer. */
static void
stage_thumbnails (const char *staging, GdkPixbuf *image, PhotoResult *r)
{
  guint n = r->faces->len;
  r->thumbnails = g_new0 (char *, n + 1);
  for (guint k = 0; k < n; k++)
    {
      const LkDetectedFace *d = &g_array_index (r->faces, LkDetectedFace, k);
      /* As the writer has them (lk_import_photos below). */
      double rel[4] = { d->box[0] / r->width, d->box[1] / r->height, d->box[2] / r->width,
                        d->box[3] / r->height };
      g_autofree char *file = staged_thumbnail (staging, r->digest, d);
      /* Staged by an earlier run (its key is the content and the box: the
       * same thumbnail), whole (written by a rename): kept, not rewritten
       * (a rewrite over an existing file costs GLib's fsync). */
      if (g_file_test (file, G_FILE_TEST_IS_REGULAR))
        {
          r->thumbnails[k] = g_steal_pointer (&file);
          continue;
        }
      g_autoptr (GBytes) png = lk_import_cut_thumbnail (image, rel, NULL);
      if (png == NULL)
        continue;
      gsize length = 0;
      const char *data = g_bytes_get_data (png, &length);
      if (g_file_set_contents_full (file, data, (gssize) length, G_FILE_SET_CONTENTS_CONSISTENT,
                                    0644, NULL))
        r->thumbnails[k] = g_steal_pointer (&file);
    }
}

static void
result_clear (PhotoResult *r)
{
  g_clear_pointer (&r->problem, g_free);
  g_clear_pointer (&r->digest, g_free);
  g_clear_error (&r->journal_error);
  g_clear_pointer (&r->faces, g_array_unref);
  g_clear_pointer (&r->floats, g_array_unref);
  g_clear_pointer (&r->thumbnails, g_strfreev);
  *r = (PhotoResult){ 0 };
}

/* The same file, unchanged: the same inode, size and times. A photo
 * rewritten in place changes its size or its modification and change times
 * (to the file system's clock tick), one replaced by a rename its inode. */
static gboolean
same_file (const struct stat *a, const struct stat *b)
{
  return a->st_dev == b->st_dev && a->st_ino == b->st_ino && a->st_size == b->st_size
         && a->st_mtim.tv_sec == b->st_mtim.tv_sec && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec
         && a->st_ctim.tv_sec == b->st_ctim.tv_sec && a->st_ctim.tv_nsec == b->st_ctim.tv_nsec;
}

typedef enum
{
  SEARCH_DONE,
  SEARCH_CHANGED, /* the file changed while it was read: nothing kept, read it again */
} SearchOutcome;

/* The photo C read once, whole, into *BYTES (hashed here, then decoded from
 * the page cache), its state in BEFORE; FALSE, with R set bad, when it
 * cannot be read or is empty. */
static gboolean
read_whole (const Candidate *c, void (*read_hook) (const char *path), struct stat *before,
            char **bytes, gsize *size, PhotoResult *r)
{
  GError *local = NULL;
  if (stat (c->path, before) != 0)
    {
      int saved = errno;
      g_autofree char *what = g_strdup_printf ("cannot be read: %s", g_strerror (saved));
      set_bad (r, saved == ENOENT ? BAD_CHANGED : BAD_UNREADABLE, c->path,
               saved == ENOENT ? "deleted while the import ran" : what);
      return FALSE;
    }
  if (!g_file_get_contents (c->path, bytes, size, &local))
    {
      g_autofree char *what = g_strdup_printf ("cannot be read: %s", local->message);
      set_bad (r, local->code == G_FILE_ERROR_NOENT ? BAD_CHANGED : BAD_UNREADABLE, c->path,
               local->code == G_FILE_ERROR_NOENT ? "deleted while the import ran" : what);
      g_error_free (local);
      return FALSE;
    }
  if (read_hook != NULL)
    read_hook (c->path);
  if (*size == 0)
    {
      set_bad (r, BAD_EMPTY, c->path, "an empty file (0 bytes)");
      return FALSE;
    }
  return TRUE;
}

/* Searched before (a re-import, or a run that was stopped): the same bytes
 * give the same faces, taken from the journal. FALSE: not in it. */
static gboolean
reuse_searched (LkFaceEngine *engine, LkPhotosJournal *journal, const char *staging, PhotoResult *r)
{
  const LkJournalEntry *found = lk_photos_journal_lookup (journal, r->digest);
  if (found == NULL)
    return FALSE;
  r->reused = TRUE;
  r->width = found->width;
  r->height = found->height;
  r->faces = g_array_new (FALSE, TRUE, sizeof (LkDetectedFace));
  g_array_append_vals (r->faces, found->faces, found->n_faces);
  guint dim = lk_face_engine_dim (engine);
  r->floats = g_array_new (FALSE, FALSE, sizeof (float));
  g_array_append_vals (r->floats, found->floats, found->n_faces * dim);
  find_staged (staging, r);
  return TRUE;
}

/* What the bytes (COMPLETE, SNIFFED, PACKAGE) and the header say before
 * anything is decoded: FALSE, with R set bad, for a photo this build has no
 * loader for, not an image, a truncated JPEG or one too large. */
static gboolean
check_header (const Candidate *c, gboolean complete, const char *sniffed, const char *package,
              int *width, int *height, PhotoResult *r)
{
  GdkPixbufFormat *format = gdk_pixbuf_get_file_info (c->path, width, height);
  if (format == NULL && sniffed != NULL && package != NULL)
    {
      /* A photo, but this build has no loader for its format (the formats
       * read are listed with the summary): said so, with what adds it. */
      /* In a Flatpak the loaders are the runtime's: no package of the
       * host's adds one there. */
      g_autofree char *what
          = g_file_test ("/.flatpak-info", G_FILE_TEST_EXISTS)
                ? g_strdup_printf ("a photo in %s, a format this build has no gdk-pixbuf loader "
                                   "for: skipped (the loaders are the Flatpak runtime's, and "
                                   "this one has none for %s)",
                                   sniffed, sniffed)
                : g_strdup_printf ("a photo in %s, a format this build has no gdk-pixbuf loader "
                                   "for: skipped (on Debian and Ubuntu the package %s adds one)",
                                   sniffed, package);
      set_bad (r, BAD_NO_LOADER, c->path, what);
      return FALSE;
    }
  if (format == NULL || *width <= 0 || *height <= 0)
    {
      set_bad (r, BAD_NOT_IMAGE, c->path, "not an image in a format this build reads");
      return FALSE;
    }
  if (!complete)
    {
      set_bad (r, BAD_UNDECODABLE, c->path,
               "a truncated JPEG (its data stops before the end-of-image marker)");
      return FALSE;
    }
  if ((gint64) *width * *height > LK_PHOTOS_MAX_PIXELS)
    {
      g_autofree char *what
          = g_strdup_printf ("its header says %d × %d pixels, more than the %d megapixels read: "
                             "refused before decoding",
                             *width, *height, LK_PHOTOS_MAX_PIXELS / 1000000);
      set_bad (r, BAD_TOO_LARGE, c->path, what);
      return FALSE;
    }
  return TRUE;
}

/* The faces in IMAGE found and embedded, their boxes and landmarks then
 * scaled to the original's pixels (R->width × height); FALSE, with R set
 * bad, when the engine fails. */
static gboolean
detect_and_embed (LkFaceEngine *engine, GdkPixbuf *image, const Candidate *c, PhotoResult *r)
{
  GError *local = NULL;
  int iw = gdk_pixbuf_get_width (image), ih = gdk_pixbuf_get_height (image);
  int stride = 0;
  g_autofree guint8 *rgb = packed_rgb (image, &stride);

  r->faces = g_array_new (FALSE, TRUE, sizeof (LkDetectedFace));
  if (!lk_face_engine_detect (engine, rgb, iw, ih, stride, r->faces, &local))
    {
      set_bad (r, BAD_UNDECODABLE, c->path, local->message);
      g_error_free (local);
      return FALSE;
    }
  guint dim = lk_face_engine_dim (engine);
  r->floats = g_array_sized_new (FALSE, FALSE, sizeof (float), r->faces->len * dim);
  g_array_set_size (r->floats, r->faces->len * dim);
  if (!lk_face_engine_embed (engine, rgb, iw, ih, stride, (LkDetectedFace *) r->faces->data,
                             r->faces->len, (float *) r->floats->data, &local))
    {
      set_bad (r, BAD_UNDECODABLE, c->path, local->message);
      g_error_free (local);
      return FALSE;
    }
  double sx = (double) r->width / iw, sy = (double) r->height / ih;
  for (guint k = 0; k < r->faces->len; k++)
    {
      LkDetectedFace *f = &g_array_index (r->faces, LkDetectedFace, k);
      f->box[0] *= sx;
      f->box[1] *= sy;
      f->box[2] *= sx;
      f->box[3] *= sy;
      for (int p = 0; p < 5; p++)
        {
          f->landmarks[2 * p] *= sx;
          f->landmarks[2 * p + 1] *= sy;
        }
    }
  return TRUE;
}

/* One photo searched: read and hashed, taken from the journal if it was
 * searched before, else checked, decoded, its faces found and embedded, its
 * thumbnails staged and its entry journalled. */
static SearchOutcome
search_once (LkFaceEngine *engine, LkPhotosJournal *journal, const char *staging,
             void (*read_hook) (const char *path), const Candidate *c, PhotoResult *r)
{
  GError *local = NULL;
  gsize size = 0;
  g_autofree char *bytes = NULL;
  struct stat before, after;
  if (!read_whole (c, read_hook, &before, &bytes, &size, r))
    return SEARCH_DONE;
  r->digest = content_digest ((const guint8 *) bytes, size);
  if (reuse_searched (engine, journal, staging, r))
    return SEARCH_DONE;
  gboolean complete = jpeg_complete ((const guint8 *) bytes, size);
  const char *package = NULL;
  const char *sniffed = sniff_format ((const guint8 *) bytes, size, &package);
  g_clear_pointer (&bytes, g_free);

  int width = 0, height = 0;
  if (!check_header (c, complete, sniffed, package, &width, &height, r))
    return SEARCH_DONE;
  g_autoptr (GdkPixbuf) raw = MAX (width, height) > LK_PHOTOS_DETECT_SIDE
                                  ? gdk_pixbuf_new_from_file_at_size (
                                      c->path, LK_PHOTOS_DETECT_SIDE, LK_PHOTOS_DETECT_SIDE, &local)
                                  : gdk_pixbuf_new_from_file (c->path, &local);
  if (raw == NULL)
    {
      g_autofree char *what = g_strdup_printf ("cannot be decoded: %s", local->message);
      set_bad (r, BAD_UNDECODABLE, c->path, what);
      g_error_free (local);
      return SEARCH_DONE;
    }
  /* The bytes hashed and the pixels decoded must be the same photo: one
   * rewritten meanwhile is read again (its id and journal entry name the
   * content its faces come from). */
  if (stat (c->path, &after) != 0 || !same_file (&before, &after))
    return SEARCH_CHANGED;
  gboolean swap = orientation_swaps (raw);
  r->width = swap ? height : width;
  r->height = swap ? width : height;
  /* Boxes are in the pixels the user sees: turned by the EXIF orientation. */
  g_autoptr (GdkPixbuf) image = gdk_pixbuf_apply_embedded_orientation (raw);
  if (!detect_and_embed (engine, image, c, r))
    return SEARCH_DONE;
  /* Only from the original's own pixels: a photo decoded smaller for the
   * search (past LK_PHOTOS_DETECT_SIDE) is left to the writer, which cuts
   * from the original (a 6000-px photo's thumbnails cut from its 2048-px
   * decode had a third of the pixels, and differed from a re-import's). */
  if (gdk_pixbuf_get_width (image) == r->width && gdk_pixbuf_get_height (image) == r->height)
    stage_thumbnails (staging, image, r);
  if (!lk_photos_journal_append (journal, r->digest, r->width, r->height,
                                 (const LkDetectedFace *) r->faces->data, r->faces->len,
                                 (const float *) r->floats->data, &local))
    {
      r->journal_error = local;
      local = NULL;
    }
  return SEARCH_DONE;
}

/* A photo that keeps changing while it is read (a file being written, a
 * sync client's) is counted as changed after this many readings. */
#define SEARCH_ATTEMPTS 3

static void
search_photo (LkFaceEngine *engine, LkPhotosJournal *journal, const char *staging,
              void (*read_hook) (const char *path), const Candidate *c, PhotoResult *r)
{
  for (guint attempt = 0; attempt < SEARCH_ATTEMPTS; attempt++)
    {
      result_clear (r);
      if (search_once (engine, journal, staging, read_hook, c, r) == SEARCH_DONE)
        return;
    }
  result_clear (r);
  g_autofree char *what = g_strdup_printf (
      "changed while the import read it, %d times in a row: not searched", SEARCH_ATTEMPTS);
  set_bad (r, BAD_CHANGED, c->path, what);
}

typedef struct
{
  GPtrArray *candidates;
  PhotoResult *results;
  gint next; /* atomic */
  GCancellable *cancellable;
  const LkImportPhotosOptions *options;
  LkPhotosJournal *journal;
  const char *staging; /* the thumbnails cut while searching */

  GMutex lock; /* guards below and the progress callback */
  gsize done;
  gsize faces;
  GCancellable *stop; /* a journal that cannot be written stops every worker */
  GError *error;
} SearchJob;

typedef struct
{
  SearchJob *job;
  LkFaceEngine *engine; /* this worker's own */
} Worker;

static gpointer
search_worker (gpointer data)
{
  const Worker *worker = data;
  SearchJob *job = worker->job;

  for (;;)
    {
      guint k = (guint) g_atomic_int_add (&job->next, 1);
      if (k >= job->candidates->len || g_cancellable_is_cancelled (job->cancellable)
          || g_cancellable_is_cancelled (job->stop))
        break;
      PhotoResult *r = &job->results[k];
      search_photo (worker->engine, job->journal, job->staging, job->options->read_hook,
                    g_ptr_array_index (job->candidates, k), r);
      g_mutex_lock (&job->lock);
      job->done++;
      if (r->faces != NULL)
        job->faces += r->faces->len;
      if (job->options->faces_found != NULL)
        *job->options->faces_found = job->faces;
      if (r->journal_error != NULL && job->error == NULL)
        {
          job->error = r->journal_error;
          r->journal_error = NULL;
          g_cancellable_cancel (job->stop);
        }
      if (job->options->progress != NULL)
        job->options->progress (LK_IMPORT_PHASE_DETECT, job->done, job->candidates->len,
                                job->options->progress_data);
      g_mutex_unlock (&job->lock);
    }
  return NULL;
}

/* Removes the staged thumbnails of photos the library no longer has (and a
 * write cut short by a kill), as the journal's compaction drops their
 * entries: a staged name starts with its photo's content hash. */
static void
prune_staged (const char *staging, GPtrArray *digests)
{
  g_autoptr (GHashTable) kept = g_hash_table_new (g_str_hash, g_str_equal);
  for (guint k = 0; k < digests->len; k++)
    g_hash_table_add (kept, g_ptr_array_index (digests, k));
  g_autoptr (GDir) dir = g_dir_open (staging, 0, NULL);
  const char *name;
  while (dir != NULL && (name = g_dir_read_name (dir)) != NULL)
    {
      g_autofree char *digest = g_strndup (name, LK_PHOTOS_DIGEST_CHARS);
      if (!g_str_has_suffix (name, ".png") || !g_hash_table_contains (kept, digest))
        {
          g_autofree char *path = g_build_filename (staging, name, NULL);
          g_unlink (path);
        }
    }
}

static void
summary_count (LkImportSummary *s, BadKind bad, const char *problem)
{
  switch (bad)
    {
      case BAD_EMPTY:
        s->bad_empty++;
        break;
      case BAD_NOT_IMAGE:
        s->bad_not_image++;
        break;
      case BAD_NO_LOADER:
        s->bad_no_loader++;
        break;
      case BAD_UNDECODABLE:
        s->bad_undecodable++;
        break;
      case BAD_TOO_LARGE:
        s->bad_too_large++;
        break;
      case BAD_UNREADABLE:
        s->bad_unreadable++;
        break;
      case BAD_CHANGED:
        s->bad_changed++;
        break;
      case BAD_NONE:
        return;
    }
  if (s->problems == NULL)
    s->problems = g_ptr_array_new_with_free_func (g_free);
  g_ptr_array_add (s->problems, g_strdup (problem));
}

/* Every photo in the options' folders found, sorted, into WALK's candidates
 * and problems, and each folder's absolute path into FOLDERS; FALSE when a
 * folder cannot be read. WALK's visited set is spent either way. */
static gboolean
walk_folders (Walk *walk, const LkImportPhotosOptions *options, GPtrArray *folders, GError **error)
{
  guint n_folders = g_strv_length ((char **) options->folders);
  for (guint r = 0; r < n_folders; r++)
    {
      g_autofree char *absolute = g_canonicalize_filename (options->folders[r], NULL);
      g_autofree char *prefix = n_folders > 1 ? g_strdup_printf ("%u", r) : g_strdup ("");
      struct stat st;
      int found = stat (absolute, &st);
      int saved = errno;
      if (found != 0 || !S_ISDIR (st.st_mode))
        {
          g_set_error (error, LK_IMPORT_ERROR, LK_IMPORT_ERROR_CONNECT,
                       "The photo folder %s cannot be read: %s", absolute,
                       found != 0 ? g_strerror (saved) : "not a folder");
          g_clear_pointer (&walk->visited, g_hash_table_unref);
          return FALSE;
        }
      walk->folder = r;
      walk->prefix = prefix[0] != '\0' ? strlen (prefix) + 1 : 0;
      walk_folder (walk, absolute, prefix, 0);
      g_ptr_array_add (folders, g_steal_pointer (&absolute));
    }
  g_ptr_array_sort (walk->candidates, compare_candidates);
  g_clear_pointer (&walk->visited, g_hash_table_unref);
  return TRUE;
}

/* JOB's photos searched by the workers, each with its own copy of ENGINE's
 * models (a network keeps its activations inside), made before any of them
 * runs; this thread is the first worker. */
static void
search_all (SearchJob *job, LkFaceEngine *engine, guint n)
{
  guint n_threads = job->options->threads > 0 ? job->options->threads : g_get_num_processors ();
  n_threads = CLAMP (n_threads, 1, MAX (n, 1));
  GThread **threads = g_new0 (GThread *, n_threads);
  Worker *workers = g_new0 (Worker, n_threads);
  for (guint t = 0; t < n_threads; t++)
    {
      workers[t] = (Worker){ job, t == 0 ? engine : lk_face_engine_dup (engine) };
      if (workers[t].engine == NULL)
        {
          n_threads = t;
          break;
        }
    }
  for (guint t = 1; t < n_threads; t++)
    threads[t] = g_thread_new ("lk-import-photos", search_worker, &workers[t]);
  search_worker (&workers[0]);
  for (guint t = 1; t < n_threads; t++)
    g_thread_join (threads[t]);
  for (guint t = 1; t < n_threads; t++)
    lk_face_engine_free (workers[t].engine);
  g_free (threads);
  g_free (workers);
}

/* The photo C with its faces R into SOURCE; IDS holds the faces' ids so far. */
static void
add_photo (LkImportSource *source, const Candidate *c, const PhotoResult *r, GHashTable *ids)
{
  guint photo_index = source->photos->len;
  LkImportPhoto *photo = lk_import_source_add_photo (source);
  photo->source_id = g_strdup (c->relative);
  photo->source_path = g_strdup (c->path);
  photo->original = g_strdup (c->inside);
  photo->folder = c->folder;
  photo->width = r->width;
  photo->height = r->height;
  photo->image = g_strdup (c->path);
  for (guint f = 0; f < r->faces->len; f++)
    {
      const LkDetectedFace *d = &g_array_index (r->faces, LkDetectedFace, f);
      LkImportFace face = { 0 };
      /* Stable across imports: the same bytes give the same boxes. A second
       * copy of a photo (same bytes, another path) numbers its faces' ids on. */
      g_autofree char *id = face_key (r->digest, d);
      face.source_id = g_strdup (id);
      for (guint copy = 2; g_hash_table_contains (ids, face.source_id); copy++)
        {
          g_free (face.source_id);
          face.source_id = g_strdup_printf ("%s#%u", id, copy);
        }
      g_hash_table_add (ids, g_strdup (face.source_id));
      face.photo = photo_index;
      face.rel[0] = d->box[0] / r->width;
      face.rel[1] = d->box[1] / r->height;
      face.rel[2] = d->box[2] / r->width;
      face.rel[3] = d->box[3] / r->height;
      face.quality = -1;
      face.has_score = TRUE;
      face.score = d->score;
      if (r->thumbnails != NULL)
        face.thumbnail_file = g_strdup (r->thumbnails[f]);
      g_array_append_val (source->faces, face);
    }
  g_array_append_vals (source->floats, r->floats->data, r->floats->len);
}

/* The search's results gathered into SOURCE (initialised here), each
 * refusal counted in the summary S (may be NULL). */
static void
gather (LkImportSource *source, LkFaceEngine *engine, GPtrArray *folders, const Walk *walk,
        const PhotoResult *results, LkImportSummary *s)
{
  lk_import_source_init (source, "photos");
  source->model = g_strdup (lk_face_engine_name (engine));
  source->dim = lk_face_engine_dim (engine);
  for (guint r = 0; r < folders->len; r++)
    g_ptr_array_add (source->photo_folders, g_strdup (g_ptr_array_index (folders, r)));
  g_autoptr (GHashTable) ids = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  if (s != NULL)
    for (guint k = 0; k < walk->problems->len; k++)
      summary_count (s, BAD_UNREADABLE, g_ptr_array_index (walk->problems, k));
  for (guint k = 0; k < walk->candidates->len; k++)
    {
      const PhotoResult *r = &results[k];
      if (r->bad != BAD_NONE)
        {
          if (s != NULL)
            summary_count (s, r->bad, r->problem);
          continue;
        }
      if (s != NULL)
        {
          s->photos_searched++;
          s->photos_with_faces += r->faces->len > 0;
          s->photos_reused += r->reused;
        }
      if (r->faces->len > 0)
        add_photo (source, g_ptr_array_index (walk->candidates, k), r, ids);
    }
}

/* SOURCE written as the library OUTDIR; then the journal keeps what the
 * library has, and the photos without a face (searched again otherwise at
 * every re-import), and the staged thumbnails the same. */
static gboolean
write_library (const char *outdir, LkImportSource *source, const Walk *walk,
               const PhotoResult *results, LkPhotosJournal *journal, const char *staging,
               LkImportSummary *s, GCancellable *cancellable, GError **error)
{
  guint n = walk->candidates->len;
  LkImportSink sink = { NULL, NULL, s };
  guint bad = 0;
  for (guint k = 0; k < n; k++)
    bad += results[k].bad != BAD_NONE;
  if (source->faces->len == 0)
    {
      g_set_error (error, LK_IMPORT_ERROR, LK_IMPORT_ERROR_DATA,
                   "No face was found in the %u photos searched (%u files or folders refused)",
                   n - bad, bad + walk->problems->len);
      lk_import_source_clear (source);
      return FALSE;
    }
  if (!lk_import_finish (outdir, source, TRUE, &sink, cancellable, error, "No face was found"))
    return FALSE;
  g_autoptr (GPtrArray) digests = g_ptr_array_new ();
  for (guint k = 0; k < n; k++)
    if (results[k].bad == BAD_NONE && results[k].digest != NULL)
      g_ptr_array_add (digests, results[k].digest);
  g_autoptr (GError) local = NULL;
  if (!lk_photos_journal_compact (journal, (const char *const *) digests->pdata, digests->len,
                                  &local))
    g_warning ("%s", local->message); /* the library is written: only speed is lost */
  prune_staged (staging, digests);
  return TRUE;
}

/* Open the face engine and the journal, walk the folders, search every photo
 * on the workers, gather the faces found and write the library. */
gboolean
lk_import_photos (const char *outdir, const LkImportPhotosOptions *options,
                  GCancellable *cancellable, GError **error)
{
  g_return_val_if_fail (options->folders != NULL && options->folders[0] != NULL, FALSE);

  if (!lk_import_check_outdir (outdir, "photos", error))
    return FALSE;
  g_autoptr (LkFaceEngine) engine = lk_face_engine_dlib_new (options->detector, error);
  if (engine == NULL)
    return FALSE;
  /* Beside OUTDIR, as the folder being written is: the library folder
   * itself only ever holds a whole library. */
  g_autofree char *parent = g_path_get_dirname (outdir);
  g_autofree char *base = g_path_get_basename (outdir);
  g_autofree char *journal_path = g_strdup_printf ("%s/.%s.photos-journal", parent, base);
  g_autofree char *journal_model = g_strdup_printf (
      "%s/%s", lk_face_engine_name (engine), options->detector == LK_DETECTOR_CNN ? "cnn" : "hog");
  g_autoptr (LkPhotosJournal) journal
      = lk_photos_journal_open (journal_path, journal_model, lk_face_engine_dim (engine), error);
  if (journal == NULL)
    return FALSE;
  Walk walk = { .candidates = g_ptr_array_new_with_free_func (candidate_free),
                .problems = g_ptr_array_new_with_free_func (g_free),
                .visited = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL) };
  g_autoptr (GPtrArray) folders = g_ptr_array_new_with_free_func (g_free);
  if (!walk_folders (&walk, options, folders, error))
    {
      g_ptr_array_unref (walk.candidates);
      g_ptr_array_unref (walk.problems);
      return FALSE;
    }

  /* The thumbnails cut while searching, beside OUTDIR as the journal is,
   * named by the face's key (content hash and box): linked into each library
   * written, kept for the next import's reused photos. Made once the photo
   * folders are found: a mistyped one leaves nothing beside OUTDIR. */
  g_autofree char *staging = g_strdup_printf ("%s/.%s.photos-thumbs", parent, base);
  if (g_mkdir_with_parents (staging, 0755) != 0)
    {
      int saved = errno;
      g_set_error (error, LK_IMPORT_ERROR, LK_IMPORT_ERROR_OUTPUT, "Cannot create %s: %s", staging,
                   g_strerror (saved));
      g_ptr_array_unref (walk.candidates);
      g_ptr_array_unref (walk.problems);
      return FALSE;
    }

  guint n = walk.candidates->len;
  PhotoResult *results = g_new0 (PhotoResult, MAX (n, 1));
  g_autoptr (GCancellable) stop = g_cancellable_new ();
  SearchJob job = { walk.candidates, results, 0, cancellable, options, journal, staging };
  job.stop = stop;
  g_mutex_init (&job.lock);
  search_all (&job, engine, n);
  g_mutex_clear (&job.lock);

  gboolean ok = FALSE;
  if (job.error != NULL)
    g_propagate_error (error, job.error);
  else if (!g_cancellable_set_error_if_cancelled (cancellable, error))
    {
      LkImportSource source;
      gather (&source, engine, folders, &walk, results, options->summary);
      ok = write_library (outdir, &source, &walk, results, journal, staging, options->summary,
                          cancellable, error);
    }

  for (guint k = 0; k < n; k++)
    result_clear (&results[k]);
  g_free (results);
  g_ptr_array_unref (walk.candidates);
  g_ptr_array_unref (walk.problems);
  return ok;
}

#else /* !LK_HAVE_IMPORT_PHOTOS */

gboolean
lk_import_photos (const char *outdir, const LkImportPhotosOptions *options,
                  GCancellable *cancellable, GError **error)
{
  g_set_error_literal (error, LK_IMPORT_ERROR, LK_IMPORT_ERROR_UNSUPPORTED,
                       "This build of Likeness finds no faces in photos (built without -Ddetect: "
                       "it needs libdlib-dev and gdk-pixbuf)");
  return FALSE;
}

#endif
