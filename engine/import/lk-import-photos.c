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

#include "lk-import-private.h"
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
  GSList *formats = gdk_pixbuf_get_formats ();
  const char *wanted[] = { "jpeg", "png", "webp", "tiff", "heif", "avif" };
  for (gsize w = 0; w < G_N_ELEMENTS (wanted); w++)
    for (GSList *l = formats; l != NULL; l = l->next)
      {
        g_autofree char *name = gdk_pixbuf_format_get_name (l->data);
        if (g_strcmp0 (name, wanted[w]) == 0)
          g_string_append_printf (names, "%s%s", names->len > 0 ? ", " : "", name);
      }
  g_slist_free (formats);
#endif
  return g_string_free (names, FALSE);
}

#ifdef LK_HAVE_IMPORT_PHOTOS

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

typedef enum
{
  BAD_NONE,
  BAD_EMPTY,
  BAD_NOT_IMAGE,
  BAD_UNDECODABLE,
  BAD_TOO_LARGE,
  BAD_UNREADABLE,
  BAD_CHANGED,
} BadKind;

typedef struct
{
  char *path;     /* absolute */
  char *relative; /* to its folder, with the folder's index before it when there are several */
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
} PhotoResult;

typedef struct
{
  GPtrArray *candidates; /* of Candidate * */
  GPtrArray *problems;   /* of char *: the walk's own (unreadable folders) */
  GHashTable *visited;   /* "dev:ino" of the folders searched */
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
          g_ptr_array_add (walk->candidates, c);
        }
    }
  g_ptr_array_unref (names);
}

/* The first 16 hex digits of the SHA-256 of `data`: with the box, the face's id. */
static char *
content_digest (const guint8 *data, gsize size)
{
  g_autofree char *full = g_compute_checksum_for_data (G_CHECKSUM_SHA256, data, size);
  return g_strndup (full, 16);
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

static void
search_photo (LkFaceEngine *engine, const Candidate *c, PhotoResult *r)
{
  GError *local = NULL;
  gsize size = 0;
  g_autofree char *bytes = NULL;
  /* Read once, whole: hashed here, then decoded from the page cache. */
  if (!g_file_get_contents (c->path, &bytes, &size, &local))
    {
      g_autofree char *what = g_strdup_printf ("cannot be read: %s", local->message);
      set_bad (r, local->code == G_FILE_ERROR_NOENT ? BAD_CHANGED : BAD_UNREADABLE, c->path,
               local->code == G_FILE_ERROR_NOENT ? "deleted while the import ran" : what);
      g_error_free (local);
      return;
    }
  if (size == 0)
    {
      set_bad (r, BAD_EMPTY, c->path, "an empty file (0 bytes)");
      return;
    }
  r->digest = content_digest ((const guint8 *) bytes, size);
  gboolean complete = jpeg_complete ((const guint8 *) bytes, size);
  g_clear_pointer (&bytes, g_free);

  int width = 0, height = 0;
  GdkPixbufFormat *format = gdk_pixbuf_get_file_info (c->path, &width, &height);
  if (format == NULL || width <= 0 || height <= 0)
    {
      set_bad (r, BAD_NOT_IMAGE, c->path, "not an image in a format this build reads");
      return;
    }
  if (!complete)
    {
      set_bad (r, BAD_UNDECODABLE, c->path,
               "a truncated JPEG (its data stops before the end-of-image marker)");
      return;
    }
  if ((gint64) width * height > LK_PHOTOS_MAX_PIXELS)
    {
      g_autofree char *what
          = g_strdup_printf ("its header says %d × %d pixels, more than the %d megapixels read: "
                             "refused before decoding",
                             width, height, LK_PHOTOS_MAX_PIXELS / 1000000);
      set_bad (r, BAD_TOO_LARGE, c->path, what);
      return;
    }

  g_autoptr (GdkPixbuf) raw = MAX (width, height) > LK_PHOTOS_DETECT_SIDE
                                  ? gdk_pixbuf_new_from_file_at_size (
                                      c->path, LK_PHOTOS_DETECT_SIDE, LK_PHOTOS_DETECT_SIDE, &local)
                                  : gdk_pixbuf_new_from_file (c->path, &local);
  if (raw == NULL)
    {
      g_autofree char *what = g_strdup_printf ("cannot be decoded: %s", local->message);
      set_bad (r, BAD_UNDECODABLE, c->path, what);
      g_error_free (local);
      return;
    }
  gboolean swap = orientation_swaps (raw);
  r->width = swap ? height : width;
  r->height = swap ? width : height;
  /* Boxes are in the pixels the user sees: turned by the EXIF orientation. */
  g_autoptr (GdkPixbuf) image = gdk_pixbuf_apply_embedded_orientation (raw);
  int iw = gdk_pixbuf_get_width (image), ih = gdk_pixbuf_get_height (image);
  int stride = 0;
  g_autofree guint8 *rgb = packed_rgb (image, &stride);

  r->faces = g_array_new (FALSE, TRUE, sizeof (LkDetectedFace));
  if (!lk_face_engine_detect (engine, rgb, iw, ih, stride, r->faces, &local))
    {
      set_bad (r, BAD_UNDECODABLE, c->path, local->message);
      g_error_free (local);
      return;
    }
  guint dim = lk_face_engine_dim (engine);
  r->floats = g_array_sized_new (FALSE, FALSE, sizeof (float), r->faces->len * dim);
  g_array_set_size (r->floats, r->faces->len * dim);
  if (!lk_face_engine_embed (engine, rgb, iw, ih, stride, (LkDetectedFace *) r->faces->data,
                             r->faces->len, (float *) r->floats->data, &local))
    {
      set_bad (r, BAD_UNDECODABLE, c->path, local->message);
      g_error_free (local);
      return;
    }
  /* To the original's pixels. */
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
}

typedef struct
{
  GPtrArray *candidates;
  PhotoResult *results;
  gint next; /* atomic */
  GCancellable *cancellable;
  const LkImportPhotosOptions *options;

  GMutex lock; /* guards below and the progress callback */
  gsize done;
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
      if (k >= job->candidates->len || g_cancellable_is_cancelled (job->cancellable))
        break;
      search_photo (worker->engine, g_ptr_array_index (job->candidates, k), &job->results[k]);
      g_mutex_lock (&job->lock);
      job->done++;
      if (job->options->progress != NULL)
        job->options->progress (LK_IMPORT_PHASE_DETECT, job->done, job->candidates->len,
                                job->options->progress_data);
      g_mutex_unlock (&job->lock);
    }
  return NULL;
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

  Walk walk
      = { g_ptr_array_new_with_free_func (candidate_free), g_ptr_array_new_with_free_func (g_free),
          g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL) };
  guint n_folders = g_strv_length ((char **) options->folders);
  for (guint r = 0; r < n_folders; r++)
    {
      g_autofree char *absolute = g_canonicalize_filename (options->folders[r], NULL);
      g_autofree char *prefix = n_folders > 1 ? g_strdup_printf ("%u", r) : g_strdup ("");
      struct stat st;
      if (stat (absolute, &st) != 0 || !S_ISDIR (st.st_mode))
        {
          int saved = errno;
          g_set_error (error, LK_IMPORT_ERROR, LK_IMPORT_ERROR_CONNECT,
                       "The photo folder %s cannot be read: %s", absolute,
                       S_ISDIR (st.st_mode) ? g_strerror (saved) : "not a folder");
          g_ptr_array_unref (walk.candidates);
          g_ptr_array_unref (walk.problems);
          g_hash_table_unref (walk.visited);
          return FALSE;
        }
      walk_folder (&walk, absolute, prefix, 0);
    }
  g_ptr_array_sort (walk.candidates, compare_candidates);
  g_hash_table_unref (walk.visited);

  guint n = walk.candidates->len;
  PhotoResult *results = g_new0 (PhotoResult, MAX (n, 1));
  SearchJob job = { walk.candidates, results, 0, cancellable, options };
  g_mutex_init (&job.lock);
  guint n_threads = options->threads > 0 ? options->threads : g_get_num_processors ();
  n_threads = CLAMP (n_threads, 1, MAX (n, 1));
  GThread **threads = g_new0 (GThread *, n_threads);
  Worker *workers = g_new0 (Worker, n_threads);
  /* Each worker its own copy of the models (a network keeps its activations
   * inside), made before any of them runs. */
  for (guint t = 0; t < n_threads; t++)
    {
      workers[t] = (Worker){ &job, t == 0 ? engine : lk_face_engine_dup (engine) };
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
  g_mutex_clear (&job.lock);

  gboolean ok = FALSE;
  LkImportSummary *s = options->summary;
  if (job.error != NULL)
    g_propagate_error (error, job.error);
  else if (!g_cancellable_set_error_if_cancelled (cancellable, error))
    {
      LkImportSource source;
      lk_import_source_init (&source, "photos");
      source.model = g_strdup (lk_face_engine_name (engine));
      source.dim = lk_face_engine_dim (engine);
      if (s != NULL)
        for (guint k = 0; k < walk.problems->len; k++)
          summary_count (s, BAD_UNREADABLE, g_ptr_array_index (walk.problems, k));
      for (guint k = 0; k < n; k++)
        {
          const Candidate *c = g_ptr_array_index (walk.candidates, k);
          PhotoResult *r = &results[k];
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
            }
          if (r->faces->len == 0)
            continue;
          guint photo_index = source.photos->len;
          LkImportPhoto *photo = lk_import_source_add_photo (&source);
          photo->source_id = g_strdup (c->relative);
          photo->source_path = g_strdup (c->path);
          photo->width = r->width;
          photo->height = r->height;
          photo->image = g_strdup (c->path);
          for (guint f = 0; f < r->faces->len; f++)
            {
              const LkDetectedFace *d = &g_array_index (r->faces, LkDetectedFace, f);
              LkImportFace face = { 0 };
              /* Stable across imports: the same bytes give the same boxes. */
              face.source_id
                  = g_strdup_printf ("%s-%ld-%ld-%ld-%ld", r->digest, lround (d->box[0]),
                                     lround (d->box[1]), lround (d->box[2]), lround (d->box[3]));
              face.photo = photo_index;
              face.rel[0] = d->box[0] / r->width;
              face.rel[1] = d->box[1] / r->height;
              face.rel[2] = d->box[2] / r->width;
              face.rel[3] = d->box[3] / r->height;
              face.quality = -1;
              face.has_score = TRUE;
              face.score = d->score;
              g_array_append_val (source.faces, face);
            }
          g_array_append_vals (source.floats, r->floats->data, r->floats->len);
        }
      LkImportSink sink = { NULL, NULL, s };
      if (source.faces->len == 0)
        {
          g_set_error (error, LK_IMPORT_ERROR, LK_IMPORT_ERROR_DATA,
                       "No face was found in the %u photos searched", n);
          lk_import_source_clear (&source);
        }
      else
        ok = lk_import_finish (outdir, &source, TRUE, &sink, cancellable, error,
                               "No face was found");
    }

  for (guint k = 0; k < n; k++)
    {
      g_free (results[k].problem);
      g_free (results[k].digest);
      if (results[k].faces != NULL)
        g_array_unref (results[k].faces);
      if (results[k].floats != NULL)
        g_array_unref (results[k].floats);
    }
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
