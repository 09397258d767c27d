/* lk-import.c — the writer every importer shares (lk-import-private.h)
 *
 * Thumbnails are cut from the source's own images, decoded with gdk-pixbuf:
 * it reads JPEG and PNG (Immich's previews and thumbnails, most originals)
 * with its built-in loaders, needs only GIO (no display: the engine stays
 * GTK-free), and is already on every machine that runs the window. It is a
 * dependency of the engine only when an importer is built.
 *
 * One decode per photo, not per face: faces arrive grouped by photo, and a
 * 1440-pixel JPEG preview costs ~27 ms of CPU to decode (20,000 faces on
 * 8,000 previews, Zen 4) against ~1 ms to cut, scale and PNG-encode a
 * 128-pixel face. Photos are spread over a few worker
 * threads, each decoding its own; a face whose thumbnail could not be cut
 * keeps no `thumbnail` field and the window shows its placeholder.
 */
#define _GNU_SOURCE /* renameat2 */
#include "config.h"

#include "lk-import-private.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <math.h>
#include <string.h>

#include "people/lk-calibrate.h"
#include "library/lk-library.h"
#include "library/lk-thumbnail.h"

#ifdef LK_HAVE_IMPORT_THUMBNAILS
#include <gdk-pixbuf/gdk-pixbuf.h>
#endif

/* The quark string is written with hyphens, which clang-format would space. */
/* clang-format off */
G_DEFINE_QUARK (lk-import-error-quark, lk_import_error)
/* clang-format on */

/* Side of the square thumbnails written: the window's grid tiles show faces
 * at up to 128 logical pixels; larger would only cost disk and decode time. */
#define THUMBNAIL_SIDE   128
/* The square cut around a face is this many times the box's longer side:
 * enough to show hair and chin, as the source's own face crops do. */
#define THUMBNAIL_MARGIN 1.5
/* Originals larger than this on their long side are decoded scaled down
 * (libjpeg's DCT scaling, far cheaper than a full decode): a 24-megapixel
 * original would otherwise take ~70 MB and ~150 ms per photo. Boxes are
 * relative, so the cut is the same face. */
#define MAX_DECODE_SIDE  2560

void
lk_import_summary_clear (LkImportSummary *summary)
{
  g_clear_pointer (&summary->model, g_free);
  g_clear_pointer (&summary->first_problem, g_free);
  g_clear_pointer (&summary->problems, g_ptr_array_unref);
  *summary = (LkImportSummary){ 0 };
}

/* A rate needs a little history before it means anything: a quarter second
 * of the phase and one item (the first batch of 2,000 faces read). */
#define RATE_SETTLE_USEC (G_USEC_PER_SEC / 4)

void
lk_import_rate_init (LkImportRate *rate, gint64 now)
{
  *rate = (LkImportRate){ LK_IMPORT_PHASE_READ, now, 0, 0, 0.0, -1.0 };
}

void
lk_import_rate_update (LkImportRate *rate, LkImportPhase phase, gsize done, gsize total, gint64 now)
{
  if (phase != rate->phase)
    {
      rate->phase = phase;
      rate->phase_start = now;
    }
  rate->done = done;
  rate->total = total;
  gint64 elapsed = now - rate->phase_start;
  if (elapsed >= RATE_SETTLE_USEC && done > 0)
    {
      rate->per_second = done / (elapsed / 1e6);
      rate->seconds_left = total > done ? (total - done) / rate->per_second : 0.0;
    }
  else
    {
      rate->per_second = 0.0;
      rate->seconds_left = -1.0;
    }
}

char *
lk_import_redact_uri (const char *uri)
{
  g_autoptr (GRegex) url = g_regex_new ("(://[^:/@]*:)[^@]*@", 0, 0, NULL);
  g_autoptr (GRegex) kv
      = g_regex_new ("(password\\s*=\\s*)('[^']*'|\\S+)", G_REGEX_CASELESS, 0, NULL);
  g_autofree char *a = g_regex_replace (url, uri, -1, 0, "\\1***@", 0, NULL);
  g_autofree char *b = g_regex_replace (kv, a, -1, 0, "\\1***", 0, NULL);
  g_autoptr (GRegex) query = g_regex_new ("([?&]password=)[^&]*", G_REGEX_CASELESS, 0, NULL);
  return g_regex_replace (query, b, -1, 0, "\\1***", 0, NULL);
}

/* --- the source ------------------------------------------------------------------------------ */

static void
photo_free (gpointer p)
{
  LkImportPhoto *photo = p;
  g_free (photo->source_id);
  g_free (photo->source_path);
  g_free (photo->taken);
  g_free (photo->image);
  g_free (photo->fallback);
  g_free (photo);
}

static void
person_free (gpointer p)
{
  LkImportPerson *person = p;
  g_free (person->source_id);
  g_free (person->name);
  g_ptr_array_unref (person->faces);
  g_free (person);
}

static void
face_clear (gpointer p)
{
  g_free (((LkImportFace *) p)->source_id);
}

void
lk_import_source_init (LkImportSource *source, const char *kind)
{
  *source = (LkImportSource){ 0 };
  source->kind = kind;
  source->photos = g_ptr_array_new_with_free_func (photo_free);
  source->faces = g_array_new (FALSE, FALSE, sizeof (LkImportFace));
  g_array_set_clear_func (source->faces, face_clear);
  source->floats = g_array_new (FALSE, FALSE, sizeof (float));
  source->people = g_ptr_array_new_with_free_func (person_free);
}

void
lk_import_source_clear (LkImportSource *source)
{
  g_clear_pointer (&source->model, g_free);
  g_clear_pointer (&source->photos, g_ptr_array_unref);
  g_clear_pointer (&source->faces, g_array_unref);
  g_clear_pointer (&source->floats, g_array_unref);
  g_clear_pointer (&source->people, g_ptr_array_unref);
}

LkImportPhoto *
lk_import_source_add_photo (LkImportSource *source)
{
  LkImportPhoto *photo = g_new0 (LkImportPhoto, 1);
  g_ptr_array_add (source->photos, photo);
  return photo;
}

LkImportPerson *
lk_import_source_add_person (LkImportSource *source, const char *source_id)
{
  LkImportPerson *person = g_new0 (LkImportPerson, 1);
  person->source_id = g_strdup (source_id);
  person->name = g_strdup ("");
  person->faces = g_ptr_array_new_with_free_func (g_free);
  g_ptr_array_add (source->people, person);
  return person;
}

/* The source kind of the library in `folder` ("immich", …), or NULL when
 * it holds no library.json that an importer wrote. */
static char *
imported_kind (const char *folder)
{
  g_autofree char *manifest = g_build_filename (folder, "library.json", NULL);
  g_autoptr (JsonParser) parser = json_parser_new ();
  if (!g_file_test (manifest, G_FILE_TEST_IS_REGULAR)
      || !json_parser_load_from_mapped_file (parser, manifest, NULL))
    return NULL;
  JsonNode *root = json_parser_get_root (parser);
  if (root == NULL || !JSON_NODE_HOLDS_OBJECT (root))
    return NULL;
  JsonNode *source = json_object_get_member (json_node_get_object (root), "source");
  if (source == NULL || !JSON_NODE_HOLDS_OBJECT (source))
    return NULL;
  JsonNode *kind = json_object_get_member (json_node_get_object (source), "kind");
  if (kind == NULL || !JSON_NODE_HOLDS_VALUE (kind)
      || json_node_get_value_type (kind) != G_TYPE_STRING)
    return NULL;
  return g_strdup (json_node_get_string (kind));
}

gboolean
lk_import_check_outdir (const char *outdir, const char *kind, GError **error)
{
  g_autoptr (GError) local = NULL;
  g_autoptr (GDir) dir = g_dir_open (outdir, 0, &local);

  if (dir == NULL)
    {
      if (g_error_matches (local, G_FILE_ERROR, G_FILE_ERROR_NOENT))
        return TRUE;
      g_set_error (error, LK_IMPORT_ERROR, LK_IMPORT_ERROR_OUTPUT, "Cannot import into %s: %s",
                   outdir, local->message);
      return FALSE;
    }
  if (g_dir_read_name (dir) == NULL)
    return TRUE;
  g_autofree char *found = imported_kind (outdir);
  if (g_strcmp0 (found, kind) == 0)
    return TRUE;
  if (found != NULL)
    g_set_error (error, LK_IMPORT_ERROR, LK_IMPORT_ERROR_OUTPUT,
                 "%s holds a library imported from %s, not %s; import into a new or empty "
                 "folder",
                 outdir, found, kind);
  else
    g_set_error (error, LK_IMPORT_ERROR, LK_IMPORT_ERROR_OUTPUT,
                 "%s is not empty and holds no library imported from %s; import into a new or "
                 "empty folder",
                 outdir, kind);
  return FALSE;
}

/* --- thumbnails ------------------------------------------------------------------------------ */

typedef enum
{
  THUMB_NONE, /* no image to cut from was named (no media folder) */
  THUMB_WRITTEN,
  THUMB_MISSING,
  THUMB_UNDECODABLE,
} ThumbState;

typedef struct
{
  const LkImportSource *source;
  const char *folder; /* the temporary library folder */
  guint *first_face;  /* per photo: its faces are order[first_face[p] … first_face[p + 1]) */
  guint *order;       /* face indices grouped by photo */
  guint8 *state;      /* per face: ThumbState */
  gint next_photo;    /* atomic */
  GCancellable *cancellable;

  GMutex lock; /* guards the fields below and the progress callback */
  const LkImportSink *sink;
  gsize done;
  guint problem_photo; /* the lowest photo with a problem, G_MAXUINT: none */
  char *problem;
  GError *error; /* the first write error */
} ThumbJob;

#ifdef LK_HAVE_IMPORT_THUMBNAILS

static GdkPixbuf *
decode_image (const char *path, GError **error)
{
  int width = 0, height = 0;
  if (gdk_pixbuf_get_file_info (path, &width, &height) == NULL)
    {
      g_set_error_literal (error, GDK_PIXBUF_ERROR, GDK_PIXBUF_ERROR_UNKNOWN_TYPE,
                           "not in a format gdk-pixbuf reads here (JPEG and PNG are)");
      return NULL;
    }
  g_autoptr (GdkPixbuf) raw
      = MAX (width, height) > MAX_DECODE_SIDE
            ? gdk_pixbuf_new_from_file_at_size (path, MAX_DECODE_SIDE, MAX_DECODE_SIDE, error)
            : gdk_pixbuf_new_from_file (path, error);
  if (raw == NULL)
    return NULL;
  /* Boxes are in the pixels the user sees: the original turned by its EXIF
   * orientation (a preview is stored already turned and has none). */
  return gdk_pixbuf_apply_embedded_orientation (raw);
}

/* The square around the face, THUMBNAIL_MARGIN × its longer side, shifted to
 * stay inside the image (and shrunk to fit a small one), scaled to
 * THUMBNAIL_SIDE. */
static LkThumbnail *
cut_face (GdkPixbuf *image, const double rel[4])
{
  int iw = gdk_pixbuf_get_width (image), ih = gdk_pixbuf_get_height (image);
  double bx = rel[0] * iw, by = rel[1] * ih, bw = rel[2] * iw, bh = rel[3] * ih;
  double side = MIN (THUMBNAIL_MARGIN * MAX (bw, bh), MIN (iw, ih));
  int s = MAX (1, (int) lround (side));
  int x0 = (int) lround (bx + bw / 2 - s / 2.0), y0 = (int) lround (by + bh / 2 - s / 2.0);
  x0 = CLAMP (x0, 0, iw - s);
  y0 = CLAMP (y0, 0, ih - s);

  g_autoptr (GdkPixbuf) square = gdk_pixbuf_new_subpixbuf (image, x0, y0, s, s);
  g_autoptr (GdkPixbuf) scaled
      = gdk_pixbuf_scale_simple (square, THUMBNAIL_SIDE, THUMBNAIL_SIDE, GDK_INTERP_BILINEAR);
  if (scaled == NULL)
    return NULL;
  LkThumbnail *thumbnail = lk_thumbnail_new (THUMBNAIL_SIDE, THUMBNAIL_SIDE);
  int channels = gdk_pixbuf_get_n_channels (scaled);
  int stride = gdk_pixbuf_get_rowstride (scaled);
  const guint8 *pixels = gdk_pixbuf_read_pixels (scaled);
  for (guint y = 0; y < THUMBNAIL_SIDE; y++)
    for (guint x = 0; x < THUMBNAIL_SIDE; x++)
      {
        const guint8 *in = pixels + (gsize) y * stride + (gsize) x * channels;
        guint8 *out = thumbnail->pixels + y * thumbnail->stride + x * 4;
        out[0] = in[0];
        out[1] = in[1];
        out[2] = in[2];
        out[3] = channels == 4 ? in[3] : 255;
      }
  return thumbnail;
}

#endif

static char *
thumbnail_name (guint face)
{
  return g_strdup_printf ("thumbs/%06u.png", face);
}

static void
thumb_note_problem (ThumbJob *job, guint photo, const char *what)
{
  if (photo < job->problem_photo)
    {
      job->problem_photo = photo;
      g_free (job->problem);
      job->problem = g_strdup (what);
    }
}

static gboolean
cut_photo (ThumbJob *job, guint p, GError **error)
{
  const LkImportPhoto *photo = g_ptr_array_index (job->source->photos, p);
  guint first = job->first_face[p], end = job->first_face[p + 1];
  ThumbState state = THUMB_NONE;
  g_autofree char *problem = NULL;

  if (first == end)
    return TRUE;
#ifdef LK_HAVE_IMPORT_THUMBNAILS
  /* The preview first; the original when the preview is missing or cannot
   * be decoded (a WebP preview where gdk-pixbuf has no WebP loader). */
  const char *candidates[2] = { photo->image, photo->fallback };
  g_autoptr (GdkPixbuf) image = NULL;
  for (int c = 0; c < 2 && image == NULL; c++)
    {
      const char *path = candidates[c];
      if (path == NULL || !g_file_test (path, G_FILE_TEST_EXISTS))
        continue;
      g_autoptr (GError) local = NULL;
      image = decode_image (path, &local);
      if (image == NULL && problem == NULL)
        {
          state = THUMB_UNDECODABLE;
          problem = g_strdup_printf ("%s cannot be decoded: %s", path, local->message);
        }
    }
  if (image != NULL)
    {
      state = THUMB_NONE;
      g_clear_pointer (&problem, g_free);
    }
  else if (state == THUMB_NONE && (photo->image != NULL || photo->fallback != NULL))
    {
      state = THUMB_MISSING;
      problem = g_strdup_printf ("photo %s has neither its preview (%s) nor its original (%s)",
                                 photo->source_id, photo->image ? photo->image : "none",
                                 photo->fallback ? photo->fallback : "none");
    }
  for (guint k = first; k < end && image != NULL; k++)
    {
      guint f = job->order[k];
      const LkImportFace *face = &g_array_index (job->source->faces, LkImportFace, f);
      g_autoptr (LkThumbnail) thumbnail = cut_face (image, face->rel);
      g_autoptr (GBytes) png = thumbnail ? lk_thumbnail_encode (thumbnail, error) : NULL;
      if (png == NULL)
        {
          if (error != NULL && *error == NULL)
            g_set_error (error, LK_IMPORT_ERROR, LK_IMPORT_ERROR_OUTPUT,
                         "Cannot scale face %s's thumbnail: out of memory", face->source_id);
          return FALSE;
        }
      g_autofree char *name = thumbnail_name (f);
      g_autofree char *file = g_build_filename (job->folder, name, NULL);
      gsize length = 0;
      const char *data = g_bytes_get_data (png, &length);
      g_autoptr (GError) local = NULL;
      if (!g_file_set_contents_full (file, data, (gssize) length, G_FILE_SET_CONTENTS_NONE, 0644,
                                     &local))
        {
          g_set_error (error, LK_IMPORT_ERROR, LK_IMPORT_ERROR_OUTPUT,
                       "Cannot write a thumbnail: %s", local->message);
          return FALSE;
        }
      job->state[f] = THUMB_WRITTEN;
    }
#else
  (void) photo;
#endif
  if (state != THUMB_NONE)
    for (guint k = first; k < end; k++)
      job->state[job->order[k]] = state;

  g_mutex_lock (&job->lock);
  job->done += end - first;
  if (problem != NULL)
    thumb_note_problem (job, p, problem);
  if (job->sink->progress != NULL)
    job->sink->progress (LK_IMPORT_PHASE_THUMBNAILS, job->done, job->source->faces->len,
                         job->sink->progress_data);
  g_mutex_unlock (&job->lock);
  return TRUE;
}

static gpointer
thumb_worker (gpointer data)
{
  ThumbJob *job = data;
  guint n_photos = job->source->photos->len;

  for (;;)
    {
      guint p = (guint) g_atomic_int_add (&job->next_photo, 1);
      if (p >= n_photos || g_cancellable_is_cancelled (job->cancellable))
        break;
      g_mutex_lock (&job->lock);
      gboolean failed = job->error != NULL;
      g_mutex_unlock (&job->lock);
      if (failed)
        break;
      GError *local = NULL;
      if (!cut_photo (job, p, &local))
        {
          g_mutex_lock (&job->lock);
          if (job->error == NULL)
            job->error = local;
          else
            g_error_free (local);
          g_mutex_unlock (&job->lock);
          break;
        }
    }
  return NULL;
}

/* Fills state[] (per face) and the summary's thumbnail counts. */
static gboolean
cut_thumbnails (const LkImportSource *source, const char *folder, guint8 *state,
                const LkImportSink *sink, GCancellable *cancellable, GError **error)
{
  guint n_photos = source->photos->len, n_faces = source->faces->len;
  g_autofree guint *first_face = g_new0 (guint, n_photos + 1);
  g_autofree guint *order = g_new (guint, MAX (n_faces, 1));
  g_autofree guint *fill = g_new0 (guint, n_photos + 1);

  for (guint f = 0; f < n_faces; f++)
    first_face[g_array_index (source->faces, LkImportFace, f).photo + 1]++;
  for (guint p = 0; p < n_photos; p++)
    first_face[p + 1] += first_face[p];
  for (guint f = 0; f < n_faces; f++)
    {
      guint p = g_array_index (source->faces, LkImportFace, f).photo;
      order[first_face[p] + fill[p]++] = f;
    }

  g_autofree char *thumbs = g_build_filename (folder, "thumbs", NULL);
  if (g_mkdir (thumbs, 0755) != 0)
    {
      int saved = errno;
      g_set_error (error, LK_IMPORT_ERROR, LK_IMPORT_ERROR_OUTPUT, "Cannot create %s: %s", thumbs,
                   g_strerror (saved));
      return FALSE;
    }

  ThumbJob job = { source, folder, first_face, order, state, 0, cancellable };
  g_mutex_init (&job.lock);
  job.sink = sink;
  job.problem_photo = G_MAXUINT;
  /* Decoding is CPU-bound; four threads keep a 4-core machine busy and
   * leave a larger one to the user (the import is a one-off). */
  guint n_threads = CLAMP (g_get_num_processors (), 1, 4);
  GThread *threads[4];
  for (guint t = 0; t < n_threads; t++)
    threads[t] = g_thread_new ("lk-import-thumbnails", thumb_worker, &job);
  for (guint t = 0; t < n_threads; t++)
    g_thread_join (threads[t]);
  g_mutex_clear (&job.lock);

  if (sink->summary != NULL && job.problem != NULL && sink->summary->first_problem == NULL)
    sink->summary->first_problem = g_steal_pointer (&job.problem);
  g_free (job.problem);
  if (job.error != NULL)
    {
      g_propagate_error (error, job.error);
      return FALSE;
    }
  if (g_cancellable_set_error_if_cancelled (cancellable, error))
    return FALSE;
  return TRUE;
}

/* --- the manifest ---------------------------------------------------------------------------- */

static void
add_string (JsonBuilder *b, const char *name, const char *value)
{
  json_builder_set_member_name (b, name);
  json_builder_add_string_value (b, value);
}

static void
add_int (JsonBuilder *b, const char *name, gint64 value)
{
  json_builder_set_member_name (b, name);
  json_builder_add_int_value (b, value);
}

static char *
manifest_text (const LkImportSource *source, const guint8 *state, gsize *length)
{
  g_autoptr (JsonBuilder) b = json_builder_new ();

  json_builder_begin_object (b);
  add_string (b, "format", "likeness-library");
  add_int (b, "version", LK_LIBRARY_VERSION);
  json_builder_set_member_name (b, "source");
  json_builder_begin_object (b);
  add_string (b, "kind", source->kind);
  add_string (b, "model", source->model);
  /* The pair model's numbers depend on the embedding model: the prior for
   * this one (lk_calibration_prior_for_model, its evidence in
   * LIBRARY-FORMAT.md), or, for a model with none, the format's default,
   * said here so a reader knows it is not fitted to this model. */
  const LkCalibration *prior = lk_calibration_prior_for_model (source->model);
  add_string (b, "calibration", prior != NULL ? "prior" : "unknown model: the default");
  json_builder_end_object (b);
  if (prior != NULL)
    {
      json_builder_set_member_name (b, "calibration");
      json_builder_begin_object (b);
      json_builder_set_member_name (b, "a");
      json_builder_add_double_value (b, prior->a);
      json_builder_set_member_name (b, "b");
      json_builder_add_double_value (b, prior->b);
      json_builder_set_member_name (b, "w_size");
      json_builder_add_double_value (b, prior->w_size);
      add_int (b, "positive_pairs", 0);
      add_int (b, "negative_pairs", 0);
      json_builder_end_object (b);
    }
  json_builder_set_member_name (b, "embeddings");
  json_builder_begin_object (b);
  add_string (b, "file", "embeddings.f32");
  add_int (b, "dim", source->dim);
  add_int (b, "count", source->faces->len);
  /* The sources store unit vectors, but a text round trip through float32
   * may leave a norm a hair off: the loader normalises. */
  json_builder_set_member_name (b, "normalized");
  json_builder_add_boolean_value (b, FALSE);
  json_builder_end_object (b);

  json_builder_set_member_name (b, "photos");
  json_builder_begin_array (b);
  for (guint k = 0; k < source->photos->len; k++)
    {
      const LkImportPhoto *p = g_ptr_array_index (source->photos, k);
      json_builder_begin_object (b);
      add_int (b, "id", k);
      add_string (b, "source_id", p->source_id);
      if (p->source_path != NULL)
        add_string (b, "source_path", p->source_path);
      if (p->width > 0 && p->height > 0)
        {
          add_int (b, "width", p->width);
          add_int (b, "height", p->height);
        }
      if (p->taken != NULL)
        add_string (b, "taken", p->taken);
      json_builder_end_object (b);
    }
  json_builder_end_array (b);

  json_builder_set_member_name (b, "faces");
  json_builder_begin_array (b);
  for (guint k = 0; k < source->faces->len; k++)
    {
      const LkImportFace *f = &g_array_index (source->faces, LkImportFace, k);
      const LkImportPhoto *p = g_ptr_array_index (source->photos, f->photo);
      /* The box in the original's pixels; without its size, in the
       * fractions of a 1 × 1 image scaled to the longer side of 1000. */
      double w = p->width > 0 && p->height > 0 ? p->width : 1000;
      double h = p->width > 0 && p->height > 0 ? p->height : 1000;
      double box[4] = { f->rel[0] * w, f->rel[1] * h, f->rel[2] * w, f->rel[3] * h };
      json_builder_begin_object (b);
      add_string (b, "id", f->source_id);
      add_int (b, "photo", f->photo);
      json_builder_set_member_name (b, "crop_px");
      json_builder_add_double_value (b, MAX (MAX (box[2], box[3]), 1.0));
      if (f->quality >= 0)
        {
          json_builder_set_member_name (b, "quality");
          json_builder_add_double_value (b, CLAMP (f->quality, 0.0, 1.0));
        }
      if (f->has_score)
        {
          json_builder_set_member_name (b, "score");
          json_builder_add_double_value (b, f->score);
        }
      if (state[k] == THUMB_WRITTEN)
        {
          g_autofree char *name = thumbnail_name (k);
          add_string (b, "thumbnail", name);
        }
      json_builder_set_member_name (b, "box");
      json_builder_begin_array (b);
      for (int c = 0; c < 4; c++)
        json_builder_add_double_value (b, box[c]);
      json_builder_end_array (b);
      json_builder_end_object (b);
    }
  json_builder_end_array (b);

  if (source->people->len > 0)
    {
      json_builder_set_member_name (b, "people");
      json_builder_begin_array (b);
      for (guint k = 0; k < source->people->len; k++)
        {
          const LkImportPerson *person = g_ptr_array_index (source->people, k);
          json_builder_begin_object (b);
          add_string (b, "id", person->source_id);
          if (person->name[0] != '\0')
            add_string (b, "name", person->name);
          if (person->hidden)
            {
              json_builder_set_member_name (b, "hidden");
              json_builder_add_boolean_value (b, TRUE);
            }
          json_builder_set_member_name (b, "faces");
          json_builder_begin_array (b);
          for (guint m = 0; m < person->faces->len; m++)
            json_builder_add_string_value (b, g_ptr_array_index (person->faces, m));
          json_builder_end_array (b);
          json_builder_end_object (b);
        }
      json_builder_end_array (b);
    }
  json_builder_end_object (b);

  g_autoptr (JsonGenerator) gen = json_generator_new ();
  g_autoptr (JsonNode) root = json_builder_get_root (b);
  json_generator_set_root (gen, root);
  json_generator_set_pretty (gen, TRUE);
  return json_generator_to_data (gen, length);
}

static gboolean
write_files (const char *folder, LkImportSource *source, const guint8 *state, GError **error)
{
  gsize length = 0;
  g_autofree char *text = manifest_text (source, state, &length);
  g_autofree char *emb = g_build_filename (folder, "embeddings.f32", NULL);
  g_autofree char *manifest = g_build_filename (folder, "library.json", NULL);
  g_autoptr (GError) local = NULL;
  GArray *floats = source->floats;
  gsize bytes = (gsize) floats->len * sizeof (float);
#if G_BYTE_ORDER == G_BIG_ENDIAN
  for (guint k = 0; k < floats->len; k++)
    {
      guint32 *u = (guint32 *) &g_array_index (floats, float, k);
      *u = GUINT32_TO_LE (*u);
    }
#endif
  if (!g_file_set_contents_full (emb, floats->data, (gssize) bytes, G_FILE_SET_CONTENTS_CONSISTENT,
                                 0644, &local)
      || !g_file_set_contents_full (manifest, text, (gssize) length, G_FILE_SET_CONTENTS_CONSISTENT,
                                    0644, &local))
    {
      g_set_error (error, LK_IMPORT_ERROR, LK_IMPORT_ERROR_OUTPUT, "Cannot write the library: %s",
                   local->message);
      return FALSE;
    }
  return TRUE;
}

/* Removes what lk_import_write put in `folder` (its own names only), then
 * the folder. */
static void
remove_folder (const char *folder, guint n_faces)
{
  const char *names[] = { "library.json", "embeddings.f32" };
  for (gsize k = 0; k < G_N_ELEMENTS (names); k++)
    {
      g_autofree char *path = g_build_filename (folder, names[k], NULL);
      g_remove (path);
    }
  for (guint f = 0; f < n_faces; f++)
    {
      g_autofree char *name = thumbnail_name (f);
      g_autofree char *path = g_build_filename (folder, name, NULL);
      g_remove (path);
    }
  g_autofree char *thumbs = g_build_filename (folder, "thumbs", NULL);
  g_rmdir (thumbs);
  g_rmdir (folder);
}

/* The assignments lk-source-people.c will refuse when the library is
 * opened, counted for the summary by the same rules: a face the source gave
 * two people, or a second face of one photo in one person. */
static gsize
count_refusals (const LkImportSource *source, char **first)
{
  g_autoptr (GHashTable) index = g_hash_table_new (g_str_hash, g_str_equal);
  g_autofree guint8 *taken = g_new0 (guint8, MAX (source->faces->len, 1));
  gsize refused = 0;

  for (guint f = 0; f < source->faces->len; f++)
    g_hash_table_insert (index, g_array_index (source->faces, LkImportFace, f).source_id,
                         GUINT_TO_POINTER (f + 1));
  for (guint k = 0; k < source->people->len; k++)
    {
      const LkImportPerson *person = g_ptr_array_index (source->people, k);
      g_autoptr (GHashTable) photos = g_hash_table_new (NULL, NULL);
      for (guint m = 0; m < person->faces->len; m++)
        {
          const char *id = g_ptr_array_index (person->faces, m);
          guint f = GPOINTER_TO_UINT (g_hash_table_lookup (index, id));
          if (f-- == 0)
            continue;
          guint photo = g_array_index (source->faces, LkImportFace, f).photo;
          if (taken[f] || g_hash_table_contains (photos, GUINT_TO_POINTER (photo + 1)))
            {
              if (refused++ == 0 && first != NULL)
                *first = g_strdup_printf ("person %s%s%s%s: face %s is refused (another face of "
                                          "its photo is that person's, or it is another's)",
                                          person->source_id, person->name[0] ? " “" : "",
                                          person->name, person->name[0] ? "”" : "", id);
              continue;
            }
          taken[f] = 1;
          g_hash_table_add (photos, GUINT_TO_POINTER (photo + 1));
        }
    }
  return refused;
}

gboolean
lk_import_check_dim (const char *what, const char *id, guint n, guint *dim, GError **error)
{
  if (*dim != 0 && n != *dim)
    {
      g_set_error (error, LK_IMPORT_ERROR, LK_IMPORT_ERROR_DATA,
                   "%s %s has a %u-float embedding where %u were expected", what, id, n, *dim);
      return FALSE;
    }
  if (n == 0 || n > LK_LIBRARY_MAX_DIM)
    {
      g_set_error (error, LK_IMPORT_ERROR, LK_IMPORT_ERROR_DATA,
                   "%s %s has a %u-float embedding; a library takes 1 to %u", what, id, n,
                   LK_LIBRARY_MAX_DIM);
      return FALSE;
    }
  *dim = n;
  return TRUE;
}

/* What an import writes in a library folder. Everything else there —
 * review.json, its lock, whatever the user keeps beside — is not the
 * importer's and moves to the new library when it replaces the old. */
static gboolean
is_ours (const char *name)
{
  return strcmp (name, "library.json") == 0 || strcmp (name, "embeddings.f32") == 0
         || strcmp (name, "thumbs") == 0;
}

/* Removes an old library's own files (its thumbs/NNNNNN.png only) and the
 * names in `carried`, then the folder if that leaves it empty. */
static void
remove_old (const char *old, GPtrArray *carried)
{
  for (guint k = 0; k < carried->len; k++)
    {
      g_autofree char *path = g_build_filename (old, g_ptr_array_index (carried, k), NULL);
      g_unlink (path);
    }
  const char *names[] = { "library.json", "embeddings.f32" };
  for (gsize k = 0; k < G_N_ELEMENTS (names); k++)
    {
      g_autofree char *path = g_build_filename (old, names[k], NULL);
      g_remove (path);
    }
  g_autofree char *thumbs = g_build_filename (old, "thumbs", NULL);
  g_autoptr (GDir) dir = g_dir_open (thumbs, 0, NULL);
  const char *name;
  while (dir != NULL && (name = g_dir_read_name (dir)) != NULL)
    {
      guint n = 0;
      char tail[8] = "";
      if (strlen (name) == 10 && sscanf (name, "%6u.%3s", &n, tail) == 2
          && strcmp (tail, "png") == 0)
        {
          g_autofree char *path = g_build_filename (thumbs, name, NULL);
          g_unlink (path);
        }
    }
  g_rmdir (thumbs);
  g_rmdir (old);
}

static int
rename_real (const char *from, const char *to, gboolean exchange)
{
  return exchange ? renameat2 (AT_FDCWD, from, AT_FDCWD, to, RENAME_EXCHANGE) : rename (from, to);
}

LkImportRenameFunc lk_import_rename_func = rename_real;

/* Re-import in place: the new library (`folder`, beside) replaces the old
 * in `outdir`, keeping what is not the importer's — review.json first of
 * all, whose decisions name faces by their source ids and so still apply.
 *
 * Under review.json's own lock (lk-review.c: flock on .review.json.lock,
 * which every Likeness saving this library takes), the user's files are
 * hard-linked into the new folder (the lock file too, so a waiting saver
 * holds the same lock after the swap) and the two folders are exchanged
 * atomically (renameat2 RENAME_EXCHANGE): at every moment `outdir` holds a
 * whole library with its review.json. A file system without the exchange
 * gets two renames, undone if the second fails. */
static gboolean
swap_in (const char *folder, const char *outdir, GError **error)
{
  g_autofree char *lock_path = g_build_filename (outdir, ".review.json.lock", NULL);
  /* As lk-review.c takes it: never through a symbolic link planted in the
   * folder, read-only when the lock file is another user's. A lock that
   * cannot be had where locks exist stops the swap (review.json could change
   * under it); a file system without locks goes on, as a save there does. */
  int lock = open (lock_path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (lock < 0 && errno == EACCES)
    lock = open (lock_path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (lock < 0)
    {
      int saved = errno;
      g_set_error (error, LK_IMPORT_ERROR, LK_IMPORT_ERROR_OUTPUT,
                   "Cannot lock the library in %s: opening %s failed: %s", outdir, lock_path,
                   g_strerror (saved));
      return FALSE;
    }
  while (flock (lock, LOCK_EX) != 0)
    {
      int saved = errno;
      if (saved == EINTR)
        continue;
      if (saved == ENOLCK || saved == EOPNOTSUPP || saved == ENOSYS || saved == EINVAL)
        break;
      close (lock);
      g_set_error (error, LK_IMPORT_ERROR, LK_IMPORT_ERROR_OUTPUT,
                   "Cannot lock the library in %s: locking %s failed: %s", outdir, lock_path,
                   g_strerror (saved));
      return FALSE;
    }

  g_autoptr (GPtrArray) carried = g_ptr_array_new_with_free_func (g_free);
  g_autoptr (GDir) dir = g_dir_open (outdir, 0, NULL);
  const char *name;
  gboolean ok = dir != NULL;
  while (ok && (name = g_dir_read_name (dir)) != NULL)
    {
      if (is_ours (name))
        continue;
      g_autofree char *from = g_build_filename (outdir, name, NULL);
      g_autofree char *to = g_build_filename (folder, name, NULL);
      struct stat st;
      /* A folder of the user's cannot be hard-linked: it is moved, and moved
       * back if the swap fails. */
      gboolean moved = lstat (from, &st) == 0 && S_ISDIR (st.st_mode);
      if ((moved ? rename (from, to) : link (from, to)) != 0)
        {
          int saved = errno;
          g_set_error (error, LK_IMPORT_ERROR, LK_IMPORT_ERROR_OUTPUT,
                       "Cannot carry %s over to the new library: %s", from, g_strerror (saved));
          ok = FALSE;
          break;
        }
      g_ptr_array_add (carried, g_strconcat (moved ? "/" : "", name, NULL));
    }

  gboolean exchanged = FALSE;
  /* Where the old library is once exchanged: `folder`, or `folder`.old when
   * the last of the two-rename fallback's renames failed — the new library
   * is in place by then, so the import has succeeded and the old one is
   * removed from where it stayed. */
  g_autofree char *old_at = NULL;
  if (ok)
    {
      exchanged = lk_import_rename_func (folder, outdir, TRUE) == 0;
      int saved = errno;
      if (!exchanged && (saved == EINVAL || saved == ENOSYS))
        {
          g_autofree char *old = g_strconcat (folder, ".old", NULL);
          if (lk_import_rename_func (outdir, old, FALSE) != 0)
            saved = errno;
          else if (lk_import_rename_func (folder, outdir, FALSE) == 0)
            {
              exchanged = TRUE;
              if (lk_import_rename_func (old, folder, FALSE) != 0)
                old_at = g_steal_pointer (&old);
            }
          else
            {
              saved = errno;
              lk_import_rename_func (old, outdir, FALSE); /* the old library back */
            }
        }
      if (!exchanged)
        {
          g_set_error (error, LK_IMPORT_ERROR, LK_IMPORT_ERROR_OUTPUT,
                       "Cannot replace the library in %s: %s", outdir, g_strerror (saved));
          ok = FALSE;
        }
    }

  /* `folder` (or `old_at`) now names the old library; on failure `folder`
   * is still the new one. */
  g_autoptr (GPtrArray) names = g_ptr_array_new ();
  for (guint k = 0; k < carried->len; k++)
    {
      const char *entry = g_ptr_array_index (carried, k);
      if (entry[0] != '/')
        {
          g_ptr_array_add (names, (gpointer) entry);
          continue;
        }
      if (!exchanged)
        {
          g_autofree char *from = g_build_filename (folder, entry + 1, NULL);
          g_autofree char *to = g_build_filename (outdir, entry + 1, NULL);
          rename (from, to);
        }
    }
  if (lock >= 0)
    close (lock);
  if (exchanged)
    remove_old (old_at != NULL ? old_at : folder, names);
  else
    {
      for (guint k = 0; k < names->len; k++)
        {
          g_autofree char *path = g_build_filename (folder, g_ptr_array_index (names, k), NULL);
          g_unlink (path);
        }
    }
  return ok;
}

gboolean
lk_import_finish (const char *outdir, LkImportSource *source, gboolean read_ok,
                  const LkImportSink *sink, GCancellable *cancellable, GError **error,
                  const char *empty_format, ...)
{
  gboolean ok = read_ok;

  if (ok && source->faces->len == 0)
    {
      va_list args;
      va_start (args, empty_format);
      g_autofree char *message = g_strdup_vprintf (empty_format, args);
      va_end (args);
      g_set_error_literal (error, LK_IMPORT_ERROR, LK_IMPORT_ERROR_DATA, message);
      ok = FALSE;
    }
  if (ok)
    {
      for (guint k = source->people->len; k-- > 0;)
        if (((LkImportPerson *) g_ptr_array_index (source->people, k))->faces->len == 0)
          g_ptr_array_remove_index (source->people, k);
      ok = lk_import_write (outdir, source, sink, cancellable, error);
    }
  lk_import_source_clear (source);
  return ok;
}

gboolean
lk_import_write (const char *outdir, LkImportSource *source, const LkImportSink *sink,
                 GCancellable *cancellable, GError **error)
{
  guint n_faces = source->faces->len;
  g_autofree char *parent = g_path_get_dirname (outdir);
  g_autofree char *base = g_path_get_basename (outdir);
  g_autofree char *folder = g_strdup_printf ("%s/.%s.importing-XXXXXX", parent, base);

  /* Written beside, renamed at the end: an interrupted import leaves the
   * temporary folder (removed here on every error) and never a library
   * that names files it does not have. */
  if (g_mkdtemp (folder) == NULL)
    {
      int saved = errno;
      g_set_error (error, LK_IMPORT_ERROR, LK_IMPORT_ERROR_OUTPUT,
                   "Cannot create a folder in %s: %s", parent, g_strerror (saved));
      return FALSE;
    }
  g_autofree guint8 *state = g_new0 (guint8, MAX (n_faces, 1));
  gboolean ok = cut_thumbnails (source, folder, state, sink, cancellable, error)
                && write_files (folder, source, state, error)
                && !g_cancellable_set_error_if_cancelled (cancellable, error);
  if (ok)
    {
      g_rmdir (outdir); /* an empty OUTDIR: rename() needs it gone */
      if (g_file_test (outdir, G_FILE_TEST_IS_DIR))
        ok = swap_in (folder, outdir, error); /* checked: a library of this source */
      else if (g_rename (folder, outdir) != 0)
        {
          int saved = errno;
          g_set_error (error, LK_IMPORT_ERROR, LK_IMPORT_ERROR_OUTPUT,
                       "Cannot move the imported library to %s: %s", outdir, g_strerror (saved));
          ok = FALSE;
        }
    }
  if (!ok)
    {
      remove_folder (folder, n_faces);
      return FALSE;
    }

  if (sink->summary != NULL)
    {
      LkImportSummary *s = sink->summary;
      s->faces = n_faces;
      s->photos = source->photos->len;
      s->people = source->people->len;
      g_autofree char *refusal = NULL;
      s->refused_assignments = count_refusals (source, &refusal);
      if (s->first_problem == NULL)
        s->first_problem = g_steal_pointer (&refusal);
      g_free (s->model);
      s->model = g_strdup (source->model);
      s->model_known = lk_calibration_prior_for_model (source->model) != NULL;
      for (guint f = 0; f < n_faces; f++)
        {
          s->thumbnails += state[f] == THUMB_WRITTEN;
          s->missing_previews += state[f] == THUMB_MISSING;
          s->undecodable_previews += state[f] == THUMB_UNDECODABLE;
        }
    }
  return TRUE;
}
