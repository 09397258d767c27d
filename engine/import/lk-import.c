/* lk-import.c — the writer every importer shares (lk-import-private.h)
 *
 * Thumbnails are cut from the source's own images, decoded with gdk-pixbuf:
 * it reads JPEG and PNG (Immich's previews and thumbnails, most originals)
 * with its built-in loaders, needs only GIO (no display: the engine stays
 * GTK-free), and is already on every machine that runs the window. It is a
 * dependency of the engine only when an importer is built.
 *
 * One decode per photo, not per face: faces arrive grouped by photo, and
 * decoding a 1440-pixel JPEG preview costs some 25 times what cutting,
 * scaling and PNG-encoding a 128-pixel face does. So a JPEG is decoded by
 * libjpeg at the smallest of 1/2, 1/4 and 1/8 of its size that still gives
 * every face of the photo's thumbnail at least its 128 pixels
 * (lk_import_decode_for_faces), and the photos are cut by a thread per core
 * while the importer still reads its database
 * (lk_import_source_write_early): reading first and cutting after leaves
 * every core but one idle. A face whose thumbnail could
 * not be cut keeps no `thumbnail` field and the window shows its
 * placeholder.
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
#include <stdlib.h>
#include <string.h>

#include "people/lk-calibrate.h"
#include "library/lk-library.h"
#include "library/lk-thumbnail.h"

#ifdef LK_HAVE_IMPORT_THUMBNAILS
#include <gdk-pixbuf/gdk-pixbuf.h>
#endif
#ifdef LK_HAVE_LIBJPEG
#include <setjmp.h>
/* jpeglib.h needs size_t and FILE declared before it. */
#include <jpeglib.h>
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

static void dispatch (LkImportSource *source);
static char *writer_end (LkImportSource *source, gboolean stop, guint8 *state, GError **error);
static void remove_folder (const char *folder, guint n_faces);

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
  g_free (photo->original);
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
  g_free (((LkImportFace *) p)->thumbnail_file);
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
  source->photo_folders = g_ptr_array_new_with_free_func (g_free);
}

void
lk_import_source_clear (LkImportSource *source)
{
  /* An import that failed or was stopped after lk_import_source_write_early:
   * its workers stopped, its folder gone. */
  if (source->writer != NULL)
    {
      g_autofree char *folder = writer_end (source, TRUE, NULL, NULL);
      remove_folder (folder, source->faces->len);
    }
  g_clear_pointer (&source->model, g_free);
  g_clear_pointer (&source->photos, g_ptr_array_unref);
  g_clear_pointer (&source->faces, g_array_unref);
  g_clear_pointer (&source->floats, g_array_unref);
  g_clear_pointer (&source->people, g_ptr_array_unref);
  g_clear_pointer (&source->photo_folders, g_ptr_array_unref);
}

LkImportPhoto *
lk_import_source_add_photo (LkImportSource *source)
{
  /* Faces come grouped by photo: every face read so far is of a photo
   * read whole, whose thumbnails can be cut now. */
  if (source->writer != NULL)
    dispatch (source);
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

/* The faces of one photo the workers cut: a run of consecutive faces of
 * the source with the same photo, copied out of the source, which the
 * importer is still filling (its arrays move as they grow). */
typedef struct
{
  guint photo;
  char *source_id;
  char *image;
  char *fallback;
  guint n;
  guint *face;           /* n indices into the source's faces */
  double (*rel)[4];      /* n boxes */
  char **thumbnail_file; /* n: LkImportFace.thumbnail_file, or NULL */
  guint8 *state;         /* n: ThumbState, set by the worker */
} ThumbTask;

static void
thumb_task_free (gpointer p)
{
  ThumbTask *task = p;
  g_free (task->source_id);
  g_free (task->image);
  g_free (task->fallback);
  g_free (task->face);
  g_free (task->rel);
  for (guint k = 0; k < task->n; k++)
    g_free (task->thumbnail_file[k]);
  g_free (task->thumbnail_file);
  g_free (task->state);
  g_free (task);
}

/* Threads that cut thumbnails while the importer still reads its database
 * (lk_import_source_write_early), and finish them in lk_import_write. */
struct _LkImportWriter
{
  char *folder; /* the temporary library folder beside OUTDIR */
  GCancellable *cancellable;
  const LkImportSink *sink;
  GThread **threads;
  guint n_threads;

  GMutex lock;      /* guards the fields below and the progress callback */
  GCond more;       /* a task was added, or there will be no more */
  GPtrArray *tasks; /* of ThumbTask *, in the order of the faces */
  guint next_task;
  gboolean closed; /* no task will be added */
  gboolean stop;   /* the import failed: take no more tasks */
  gboolean report; /* the read is over: progress goes to the sink */
  gsize done;
  gsize total;
  guint problem_photo; /* the lowest photo with a problem, G_MAXUINT: none */
  char *problem;
  GError *error; /* the first write error */
};

#ifdef LK_HAVE_IMPORT_THUMBNAILS

/* The side of the square cut_face cuts for the face at `rel` from an image
 * of width × height, in its pixels. The image may still have to be turned
 * by its EXIF orientation (a quarter turn swaps the sides the fractions
 * apply to): the smaller of both readings. */
static double
crop_side (int width, int height, const double rel[4])
{
  double side = G_MAXDOUBLE;
  for (int turned = 0; turned < 2; turned++)
    {
      double iw = turned ? height : width, ih = turned ? width : height;
      double s = MIN (THUMBNAIL_MARGIN * MAX (rel[2] * iw, rel[3] * ih), MIN (iw, ih));
      side = MIN (side, s);
    }
  return side;
}

guint
lk_import_decode_denominator (int width, int height, const double (*rel)[4], guint n)
{
  guint d = 8;
  for (guint k = 0; k < n && d > 1; k++)
    {
      double side = crop_side (width, height, rel[k]);
      /* The crop is scaled down to THUMBNAIL_SIDE from no fewer pixels than
       * the full decode would give it, or from the full decode itself. */
      while (d > 1 && side / d < THUMBNAIL_SIDE)
        d /= 2;
    }
  return d;
}

gboolean
lk_import_size_serves_faces (int width, int height, const double (*rel)[4], guint n)
{
  for (guint k = 0; k < n; k++)
    if (crop_side (width, height, rel[k]) < THUMBNAIL_SIDE)
      return FALSE;
  return width > 0 && height > 0;
}

/* The square cut around the face at `rel` in an iw × ih image: x0, y0 and
 * side s in its pixels. THUMBNAIL_MARGIN × the box's longer side, shifted
 * to stay inside the image (and shrunk to fit a small one). */
static void
face_square (int iw, int ih, const double rel[4], int *x0, int *y0, int *s)
{
  double bx = rel[0] * iw, by = rel[1] * ih, bw = rel[2] * iw, bh = rel[3] * ih;
  double side = MIN (THUMBNAIL_MARGIN * MAX (bw, bh), MIN (iw, ih));
  *s = MAX (1, (int) lround (side));
  *x0 = CLAMP ((int) lround (bx + bw / 2 - *s / 2.0), 0, MAX (iw - *s, 0));
  *y0 = CLAMP ((int) lround (by + bh / 2 - *s / 2.0), 0, MAX (ih - *s, 0));
}

typedef struct
{
  const double (*rel)[4];
  guint n;
  guint max_denominator;
  guint denominator; /* chosen: 1 when decoded whole (or not a JPEG) */
  int width;         /* the image's own size, as stored */
  int height;
} DecodeRequest;

/* Kept on an image decoded at 1/denominator (g_object_set_data): the size
 * of the full image, turned as shown, in whose pixels cut_face places the
 * square. */
typedef struct
{
  int width;
  int height;
  guint denominator;
  /* Where the decoded pixels start, in the 1/denominator image's pixels:
   * lk_import_decode_for_faces decodes only the rows and columns the
   * faces' squares need (decode_jpeg_region). */
  int x_offset;
  int y_offset;
} FullSize;
#define FULL_SIZE_KEY "lk-import-full-size"

#ifdef LK_HAVE_LIBJPEG
/* A JPEG decoded by libjpeg(-turbo) itself, not through gdk-pixbuf's
 * loader: only the rows and columns the faces' squares need, at the scale
 * they need. Rows above the region are only entropy-decoded
 * (jpeg_skip_scanlines), rows below not at all, columns outside only
 * entropy-decoded (jpeg_crop_scanline); entropy decoding is what no scale
 * skips, so a region at full size can cost less than the whole image at
 * 1/8. The scales between (3/8, 5/8 to 7/8) cost more than the power of two
 * above them (libjpeg-turbo has SIMD for the 8, 4 and 2-pixel inverse DCTs
 * only), so the scales stay powers of two (and at most
 * LK_IMPORT_MAX_DENOMINATOR). gdk-pixbuf's loader decodes every row and
 * column at the scale asked for and has no way to ask for a region. */
typedef struct
{
  struct jpeg_error_mgr pub;
  jmp_buf jump;
} JpegError;

static void
on_jpeg_error (j_common_ptr cinfo)
{
  longjmp (((JpegError *) cinfo->err)->jump, 1);
}

/* Warnings (a truncated file: "Premature end of JPEG file") are not
 * printed: the rows that are missing come out grey, as gdk-pixbuf's loader
 * gives them. */
static void
on_jpeg_message (j_common_ptr cinfo)
{
  char message[JMSG_LENGTH_MAX];
  cinfo->err->format_message (cinfo, message);
  g_debug ("libjpeg: %s", message);
}

typedef struct
{
  const double (*rel)[4];
  guint n;
  guint max_denominator;
  GdkPixbuf *image; /* the region decoded, or NULL: let gdk-pixbuf decode */
  FullSize full;
} RegionDecode;

/* Inside decode_jpeg_region's setjmp: a libjpeg error jumps out of here. */
static void
read_region (j_decompress_ptr c, RegionDecode *r)
{
  jpeg_save_markers (c, JPEG_APP0 + 1, 0xffff);
  jpeg_read_header (c, TRUE);
  /* An Exif block may turn the photo (its orientation), which gdk-pixbuf
   * reads and applies: such JPEGs (camera originals; previews are stored
   * turned, without one) go that way. So do CMYK ones, which gdk-pixbuf
   * converts. */
  for (jpeg_saved_marker_ptr m = c->marker_list; m != NULL; m = m->next)
    if (m->data_length >= 6 && memcmp (m->data, "Exif\0\0", 6) == 0)
      return;
  if (c->jpeg_color_space != JCS_YCbCr && c->jpeg_color_space != JCS_GRAYSCALE
      && c->jpeg_color_space != JCS_RGB)
    return;
  int width = (int) c->image_width, height = (int) c->image_height;
  guint d = MIN (lk_import_decode_denominator (width, height, r->rel, r->n), r->max_denominator);
  c->scale_num = 1;
  c->scale_denom = d;
  c->out_color_space = JCS_RGB;
  /* At full size, chroma replicated instead of interpolated ("fancy"
   * upsampling), about a tenth cheaper: a crop decoded at 1/1 is then
   * scaled down to 128 pixels from up to twice that, which blurs the
   * difference away (test-import-thumbnails' tolerance holds it). At 1/2
   * and below it saves nothing, so fancy stays there. JDCT_IFAST moved the
   * crops out of that tolerance, so the DCT stays the accurate one. Most
   * faces of an Immich library are on photos decoded at 1/1. */
  c->do_fancy_upsampling = d > 1;
  jpeg_calc_output_dimensions (c);
  /* A photo that large is for gdk-pixbuf's loader at MAX_DECODE_SIDE. */
  if (MAX (c->output_width, c->output_height) > MAX_DECODE_SIDE)
    return;

  /* The squares' union, in the decoded pixels, with two more on every side
   * for the bilinear filter's taps at the squares' edges. */
  double left = G_MAXDOUBLE, top = G_MAXDOUBLE, right = 0, bottom = 0;
  for (guint k = 0; k < r->n; k++)
    {
      int x0, y0, s;
      face_square (width, height, r->rel[k], &x0, &y0, &s);
      left = MIN (left, (double) x0 / d);
      top = MIN (top, (double) y0 / d);
      right = MAX (right, (double) (x0 + s) / d);
      bottom = MAX (bottom, (double) (y0 + s) / d);
    }
  int x_from = MAX (0, (int) floor (left) - 2), y_from = MAX (0, (int) floor (top) - 2);
  int x_to = MIN ((int) c->output_width, (int) ceil (right) + 2);
  int y_to = MIN ((int) c->output_height, (int) ceil (bottom) + 2);
  if (x_to <= x_from || y_to <= y_from)
    return;

  jpeg_start_decompress (c);
  /* libjpeg widens the columns to whole blocks (x_offset moves left). */
  JDIMENSION x_offset = (JDIMENSION) x_from, columns = (JDIMENSION) (x_to - x_from);
  if (columns < c->output_width)
    jpeg_crop_scanline (c, &x_offset, &columns);
  r->image = gdk_pixbuf_new (GDK_COLORSPACE_RGB, FALSE, 8, (int) c->output_width, y_to - y_from);
  if (r->image == NULL)
    return;
  if (y_from > 0)
    jpeg_skip_scanlines (c, (JDIMENSION) y_from);
  guint8 *pixels = gdk_pixbuf_get_pixels (r->image);
  int stride = gdk_pixbuf_get_rowstride (r->image);
  while (c->output_scanline < (JDIMENSION) y_to)
    {
      JSAMPROW row = pixels + (gsize) (c->output_scanline - y_from) * stride;
      if (jpeg_read_scanlines (c, &row, 1) != 1)
        break; /* cannot happen with the whole file in memory */
    }
  /* The rows below the last square are never decoded:
   * jpeg_destroy_decompress drops the rest. */
  r->full = (FullSize){ width, height, d, (int) x_offset, y_from };
}

/* The region of the JPEG in data[0 … length) the faces at rel[0 … n) need
 * (see above), with its FullSize set; NULL when libjpeg cannot decode it or
 * it is one for gdk-pixbuf (then lk_import_decode_for_faces asks that, which
 * also names what is wrong). */
static GdkPixbuf *
decode_jpeg_region (const char *data, gsize length, const double (*rel)[4], guint n,
                    guint max_denominator, guint *denominator)
{
  struct jpeg_decompress_struct c;
  JpegError error;
  RegionDecode r = { rel, n, max_denominator, NULL, { 0 } };
  if (n == 0 || length < 2 || (guint8) data[0] != 0xff || (guint8) data[1] != 0xd8)
    return NULL;
  c.err = jpeg_std_error (&error.pub);
  error.pub.error_exit = on_jpeg_error;
  error.pub.output_message = on_jpeg_message;
  jpeg_create_decompress (&c);
  if (setjmp (error.jump) == 0)
    {
      jpeg_mem_src (&c, (const unsigned char *) data, (unsigned long) length);
      read_region (&c, &r);
    }
  else
    g_clear_object (&r.image);
  jpeg_destroy_decompress (&c);
  if (r.image == NULL)
    return NULL;
  FullSize *full = g_memdup2 (&r.full, sizeof r.full);
  g_object_set_data_full (G_OBJECT (r.image), FULL_SIZE_KEY, full, g_free);
  if (denominator != NULL)
    *denominator = r.full.denominator;
  return r.image;
}
#endif

/* Called by the loader once it knows the image's size, before it decodes:
 * the size asked for here is what libjpeg decodes to. */
static void
on_size_prepared (GdkPixbufLoader *loader, int width, int height, gpointer data)
{
  DecodeRequest *r = data;
  r->width = width;
  r->height = height;
  GdkPixbufFormat *format = gdk_pixbuf_loader_get_format (loader);
  g_autofree char *name = format != NULL ? gdk_pixbuf_format_get_name (format) : NULL;
  guint d = 1;
  /* libjpeg's DCT scaling decodes 1/2, 1/4 or 1/8 of the size for little
   * more than that fraction of the work; gdk-pixbuf's JPEG loader takes the
   * smallest such scale that is still at least the size asked for, and
   * asked for exactly that size it scales nothing after. Another format
   * would be decoded whole and then scaled (more work, not less). */
  if (name != NULL && strcmp (name, "jpeg") == 0 && width > 0 && height > 0)
    d = MIN (lk_import_decode_denominator (width, height, r->rel, r->n), r->max_denominator);
  if (MAX ((width + (int) d - 1) / (int) d, (height + (int) d - 1) / (int) d) > MAX_DECODE_SIDE)
    {
      /* As gdk_pixbuf_new_from_file_at_size (path, MAX_DECODE_SIDE, …). */
      r->denominator = 1;
      if (width >= height)
        gdk_pixbuf_loader_set_size (
            loader, MAX_DECODE_SIDE,
            MAX (1, (int) (0.5 + (double) height * MAX_DECODE_SIDE / width)));
      else
        gdk_pixbuf_loader_set_size (
            loader, MAX (1, (int) (0.5 + (double) width * MAX_DECODE_SIDE / height)),
            MAX_DECODE_SIDE);
      return;
    }
  r->denominator = d;
  if (d > 1)
    gdk_pixbuf_loader_set_size (loader, (width + (int) d - 1) / (int) d,
                                (height + (int) d - 1) / (int) d);
}

GdkPixbuf *
lk_import_decode_for_faces (const char *path, const double (*rel)[4], guint n,
                            guint max_denominator, guint *denominator, GError **error)
{
  g_autofree char *data = NULL;
  gsize length = 0;
  if (!g_file_get_contents (path, &data, &length, error))
    return NULL;
#ifdef LK_HAVE_LIBJPEG
  GdkPixbuf *region
      = decode_jpeg_region (data, length, rel, n, MAX (max_denominator, 1), denominator);
  if (region != NULL)
    return region;
#endif
  DecodeRequest request = { rel, n, MAX (max_denominator, 1), 1, 0, 0 };
  g_autoptr (GdkPixbufLoader) loader = gdk_pixbuf_loader_new ();
  g_signal_connect (loader, "size-prepared", G_CALLBACK (on_size_prepared), &request);
  g_autoptr (GError) local = NULL;
  gboolean ok = gdk_pixbuf_loader_write (loader, (const guchar *) data, length, &local);
  /* Closed even after a failed write: a loader must be, and its error
   * then is the one that says what was wrong. */
  ok = gdk_pixbuf_loader_close (loader, ok ? &local : NULL) && ok;
  GdkPixbuf *raw = ok ? gdk_pixbuf_loader_get_pixbuf (loader) : NULL;
  if (raw == NULL)
    {
      if (local == NULL || g_error_matches (local, GDK_PIXBUF_ERROR, GDK_PIXBUF_ERROR_UNKNOWN_TYPE))
        g_set_error_literal (error, GDK_PIXBUF_ERROR, GDK_PIXBUF_ERROR_UNKNOWN_TYPE,
                             "not in a format gdk-pixbuf reads here (JPEG and PNG are)");
      else
        g_propagate_error (error, g_steal_pointer (&local));
      return NULL;
    }
  if (denominator != NULL)
    *denominator = request.denominator;
  /* Boxes are in the pixels the user sees: the original turned by its EXIF
   * orientation (a preview is stored already turned and has none). */
  const char *orientation = gdk_pixbuf_get_option (raw, "orientation");
  gboolean turned = orientation != NULL && atoi (orientation) >= 5 && atoi (orientation) <= 8;
  GdkPixbuf *image = gdk_pixbuf_apply_embedded_orientation (raw);
  if (image != NULL && request.denominator > 1)
    {
      FullSize *full = g_new (FullSize, 1);
      full->width = turned ? request.height : request.width;
      full->height = turned ? request.width : request.height;
      full->denominator = request.denominator;
      full->x_offset = full->y_offset = 0;
      g_object_set_data_full (G_OBJECT (image), FULL_SIZE_KEY, full, g_free);
    }
  return image;
}

/* The square around the face, THUMBNAIL_MARGIN × its longer side, shifted to
 * stay inside the image (and shrunk to fit a small one), scaled to
 * THUMBNAIL_SIDE; NULL when out of memory. */
static GdkPixbuf *
cut_face (GdkPixbuf *image, const double rel[4])
{
  const FullSize *full = g_object_get_data (G_OBJECT (image), FULL_SIZE_KEY);
  int iw = full != NULL ? full->width : gdk_pixbuf_get_width (image);
  int ih = full != NULL ? full->height : gdk_pixbuf_get_height (image);
  int x0, y0, s;
  face_square (iw, ih, rel, &x0, &y0, &s);

  g_autoptr (GdkPixbuf) scaled = NULL;
  if (full == NULL)
    {
      g_autoptr (GdkPixbuf) square = gdk_pixbuf_new_subpixbuf (image, x0, y0, s, s);
      scaled
          = gdk_pixbuf_scale_simple (square, THUMBNAIL_SIDE, THUMBNAIL_SIDE, GDK_INTERP_BILINEAR);
    }
  else
    {
      /* Decoded at 1/d: the very square the full decode's pixels give
       * (x0, y0, s above), at its fractional place among the coarser
       * pixels (libjpeg's pixel i covers the full image's d·i … d·i + d).
       * Rounded in the coarse pixels instead, the square moved by up to
       * half of one, a third of a thumbnail's pixel at 1/8, and the crops
       * of real photos matched best one pixel off (test-import-thumbnails). */
      double d = full->denominator, scale = (double) THUMBNAIL_SIDE * d / s;
      scaled = gdk_pixbuf_new (GDK_COLORSPACE_RGB, gdk_pixbuf_get_has_alpha (image), 8,
                               THUMBNAIL_SIDE, THUMBNAIL_SIDE);
      if (scaled != NULL)
        gdk_pixbuf_scale (image, scaled, 0, 0, THUMBNAIL_SIDE, THUMBNAIL_SIDE,
                          -(x0 / d - full->x_offset) * scale, -(y0 / d - full->y_offset) * scale,
                          scale, scale, GDK_INTERP_BILINEAR);
    }
  return g_steal_pointer (&scaled);
}

/* PNG as lk_thumbnail_encode_face writes it (RGB, the Up filter;
 * libdeflate at level 1 when the build has it, else zlib level 6 and
 * Z_RLE: lk-thumbnail.c) when the image has no alpha: the same pixels in
 * about a ninth of the time and a little less disk than RGBA with libpng's
 * default filters and strategy (lk-thumbnail.c says why Up, not Paeth).
 * A photo with alpha keeps it. */
GBytes *
lk_import_cut_thumbnail (GdkPixbuf *image, const double rel[4], GError **error)
{
  g_autoptr (GdkPixbuf) scaled = cut_face (image, rel);
  if (scaled == NULL)
    {
      g_set_error_literal (error, LK_IMPORT_ERROR, LK_IMPORT_ERROR_OUTPUT,
                           "Cannot scale a thumbnail: out of memory");
      return NULL;
    }
  int stride = gdk_pixbuf_get_rowstride (scaled);
  const guint8 *pixels = gdk_pixbuf_read_pixels (scaled);
  /* Without alpha (every JPEG), the scaled rows are encoded as they are,
   * not copied into an RGBA LkThumbnail and the alpha dropped again by
   * libpng: the same bytes, without a copy and a filler that cost about 2 %
   * of an import's CPU (bench-import-photoprism; docs/benchmarks.md). */
  if (!gdk_pixbuf_get_has_alpha (scaled))
    return lk_thumbnail_encode_face_rgb (pixels, stride, THUMBNAIL_SIDE, THUMBNAIL_SIDE, error);
  g_autoptr (LkThumbnail) thumbnail = lk_thumbnail_new (THUMBNAIL_SIDE, THUMBNAIL_SIDE);
  for (guint y = 0; y < THUMBNAIL_SIDE; y++)
    memcpy (thumbnail->pixels + y * thumbnail->stride, pixels + (gsize) y * stride,
            THUMBNAIL_SIDE * 4);
  return lk_thumbnail_encode (thumbnail, error);
}

#endif

/* Puts the thumbnail made beforehand at `file` (LkImportFace.thumbnail_file)
 * at `to`: a hard link (the file stays where it was, for a later import), a
 * copy where the file system has none. FALSE when it is gone or unreadable. */
static gboolean
place_thumbnail (const char *file, const char *to)
{
  if (link (file, to) == 0)
    return TRUE;
  g_autofree char *data = NULL;
  gsize length = 0;
  if (!g_file_get_contents (file, &data, &length, NULL))
    return FALSE;
  return g_file_set_contents_full (to, data, (gssize) length, G_FILE_SET_CONTENTS_NONE, 0644, NULL);
}

static char *
thumbnail_name (guint face)
{
  return g_strdup_printf ("thumbs/%06u.png", face);
}

/* Cuts and writes the thumbnails of `task` into `folder`, setting
 * task->state; *problem: what kept them from being cut, or NULL. FALSE
 * only when a thumbnail cannot be written (or scaled: out of memory). */
static gboolean
cut_task (const char *folder, ThumbTask *task, char **problem_out, GError **error)
{
  ThumbState state = THUMB_NONE;
  g_autofree char *problem = NULL;

  /* Thumbnails made beforehand (the photo importer cuts them from the image
   * it searched): no second decode of the photo. */
  guint placed = 0;
  for (guint k = 0; k < task->n; k++)
    {
      if (task->thumbnail_file[k] == NULL)
        continue;
      g_autofree char *name = thumbnail_name (task->face[k]);
      g_autofree char *file = g_build_filename (folder, name, NULL);
      if (place_thumbnail (task->thumbnail_file[k], file))
        {
          task->state[k] = THUMB_WRITTEN;
          placed++;
        }
    }
#ifdef LK_HAVE_IMPORT_THUMBNAILS
  /* The boxes still to cut: the decode's scale serves them all. */
  g_autofree double (*rel)[4] = g_malloc_n (MAX (task->n, 1), sizeof (double[4]));
  guint n_rel = 0;
  for (guint k = 0; k < task->n; k++)
    if (task->state[k] != THUMB_WRITTEN)
      memcpy (rel[n_rel++], task->rel[k], sizeof rel[0]);
  /* The preview first; the original when the preview is missing or cannot
   * be decoded (a WebP preview where gdk-pixbuf has no WebP loader). */
  const char *candidates[2] = { task->image, task->fallback };
  g_autoptr (GdkPixbuf) image = NULL;
  for (int c = 0; c < 2 && image == NULL && n_rel > 0; c++)
    {
      const char *path = candidates[c];
      if (path == NULL || !g_file_test (path, G_FILE_TEST_EXISTS))
        continue;
      g_autoptr (GError) local = NULL;
      image = lk_import_decode_for_faces (path, (const double (*)[4]) rel, n_rel,
                                          LK_IMPORT_MAX_DENOMINATOR, NULL, &local);
      if (image == NULL && problem == NULL)
        {
          state = THUMB_UNDECODABLE;
          problem = g_strdup_printf ("%s cannot be decoded: %s", path, local->message);
        }
    }
  if (image != NULL || n_rel == 0)
    {
      state = THUMB_NONE;
      g_clear_pointer (&problem, g_free);
    }
  else if (state == THUMB_NONE && (task->image != NULL || task->fallback != NULL))
    {
      state = THUMB_MISSING;
      problem = g_strdup_printf ("photo %s has neither its preview (%s) nor its original (%s)",
                                 task->source_id, task->image ? task->image : "none",
                                 task->fallback ? task->fallback : "none");
    }
  for (guint k = 0; k < task->n && image != NULL; k++)
    {
      if (task->state[k] == THUMB_WRITTEN)
        continue;
      g_autoptr (GBytes) png = lk_import_cut_thumbnail (image, task->rel[k], error);
      if (png == NULL)
        return FALSE;
      g_autofree char *name = thumbnail_name (task->face[k]);
      g_autofree char *file = g_build_filename (folder, name, NULL);
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
      task->state[k] = THUMB_WRITTEN;
    }
#endif
  if (state != THUMB_NONE)
    for (guint k = 0; k < task->n; k++)
      if (task->state[k] != THUMB_WRITTEN)
        task->state[k] = state;
  *problem_out = g_steal_pointer (&problem);
  return TRUE;
}

static void
note_problem (LkImportWriter *w, guint photo, char *what)
{
  if (what != NULL && photo < w->problem_photo)
    {
      w->problem_photo = photo;
      g_free (w->problem);
      w->problem = what;
    }
  else
    g_free (what);
}

static gpointer
thumb_worker (gpointer data)
{
  LkImportWriter *w = data;

  g_mutex_lock (&w->lock);
  for (;;)
    {
      while (w->next_task >= w->tasks->len && !w->closed && !w->stop)
        g_cond_wait (&w->more, &w->lock);
      if (w->next_task >= w->tasks->len || w->stop || w->error != NULL
          || g_cancellable_is_cancelled (w->cancellable))
        break;
      ThumbTask *task = g_ptr_array_index (w->tasks, w->next_task++);
      g_mutex_unlock (&w->lock);

      GError *local = NULL;
      char *problem = NULL;
      gboolean ok = cut_task (w->folder, task, &problem, &local);

      g_mutex_lock (&w->lock);
      if (!ok && w->error == NULL)
        w->error = local;
      else if (!ok)
        g_error_free (local);
      w->done += task->n;
      note_problem (w, task->photo, problem);
      /* While the importer reads, its own progress is the one shown (a
       * front end's rate starts again at each phase): the thumbnails' is
       * reported from the end of the read on. */
      if (w->report && w->sink->progress != NULL)
        w->sink->progress (LK_IMPORT_PHASE_THUMBNAILS, w->done, w->total, w->sink->progress_data);
    }
  g_mutex_unlock (&w->lock);
  return NULL;
}

/* The faces read since the last call, in runs of one photo, handed to the
 * workers. */
static void
dispatch (LkImportSource *source)
{
  LkImportWriter *w = source->writer;
  guint n_faces = source->faces->len;
  g_autoptr (GPtrArray) batch = g_ptr_array_new ();

  for (guint start = source->dispatched_faces, end; start < n_faces; start = end)
    {
      guint photo = g_array_index (source->faces, LkImportFace, start).photo;
      for (end = start + 1;
           end < n_faces && g_array_index (source->faces, LkImportFace, end).photo == photo; end++)
        ;
      const LkImportPhoto *p = g_ptr_array_index (source->photos, photo);
      ThumbTask *task = g_new0 (ThumbTask, 1);
      task->photo = photo;
      task->source_id = g_strdup (p->source_id);
      task->image = g_strdup (p->image);
      task->fallback = g_strdup (p->fallback);
      task->n = end - start;
      task->face = g_new (guint, task->n);
      task->rel = g_malloc_n (task->n, sizeof (double[4]));
      task->thumbnail_file = g_new0 (char *, task->n);
      task->state = g_new0 (guint8, task->n);
      for (guint k = 0; k < task->n; k++)
        {
          const LkImportFace *face = &g_array_index (source->faces, LkImportFace, start + k);
          task->face[k] = start + k;
          memcpy (task->rel[k], face->rel, sizeof task->rel[k]);
          task->thumbnail_file[k] = g_strdup (face->thumbnail_file);
        }
      g_ptr_array_add (batch, task);
    }
  source->dispatched_faces = n_faces;
  if (batch->len == 0)
    return;
  g_mutex_lock (&w->lock);
  for (guint k = 0; k < batch->len; k++)
    g_ptr_array_add (w->tasks, g_ptr_array_index (batch, k));
  g_cond_broadcast (&w->more);
  g_mutex_unlock (&w->lock);
}

gboolean
lk_import_source_write_early (LkImportSource *source, const char *outdir, const LkImportSink *sink,
                              GCancellable *cancellable, GError **error)
{
  g_return_val_if_fail (source->writer == NULL, FALSE);
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
  g_autofree char *thumbs = g_build_filename (folder, "thumbs", NULL);
  if (g_mkdir (thumbs, 0755) != 0)
    {
      int saved = errno;
      g_set_error (error, LK_IMPORT_ERROR, LK_IMPORT_ERROR_OUTPUT, "Cannot create %s: %s", thumbs,
                   g_strerror (saved));
      g_rmdir (folder);
      return FALSE;
    }

  LkImportWriter *w = g_new0 (LkImportWriter, 1);
  w->folder = g_steal_pointer (&folder);
  w->cancellable = cancellable != NULL ? g_object_ref (cancellable) : NULL;
  w->sink = sink;
  g_mutex_init (&w->lock);
  g_cond_init (&w->more);
  w->tasks = g_ptr_array_new_with_free_func (thumb_task_free);
  w->problem_photo = G_MAXUINT;
  /* Decoding, cutting and encoding are CPU-bound and independent per
   * photo: a thread per core. The importer's own thread mostly waits on
   * its database meanwhile. */
  w->n_threads = CLAMP (g_get_num_processors (), 1, 64);
  w->threads = g_new0 (GThread *, w->n_threads);
  for (guint t = 0; t < w->n_threads; t++)
    w->threads[t] = g_thread_new ("lk-import-thumbnails", thumb_worker, w);
  source->writer = w;
  source->dispatched_faces = 0;
  return TRUE;
}

/* Waits for the workers (after telling them whether to finish the tasks or
 * stop), and frees the writer; its folder is the caller's. */
static char *
writer_end (LkImportSource *source, gboolean stop, guint8 *state, GError **error)
{
  LkImportWriter *w = g_steal_pointer (&source->writer);

  g_mutex_lock (&w->lock);
  w->closed = TRUE;
  w->stop = stop;
  w->report = TRUE;
  w->total = source->faces->len;
  if (!stop && w->sink->progress != NULL && w->done > 0)
    w->sink->progress (LK_IMPORT_PHASE_THUMBNAILS, w->done, w->total, w->sink->progress_data);
  g_cond_broadcast (&w->more);
  g_mutex_unlock (&w->lock);
  for (guint t = 0; t < w->n_threads; t++)
    g_thread_join (w->threads[t]);

  if (state != NULL)
    for (guint k = 0; k < w->tasks->len; k++)
      {
        const ThumbTask *task = g_ptr_array_index (w->tasks, k);
        for (guint j = 0; j < task->n; j++)
          state[task->face[j]] = task->state[j];
      }
  if (!stop && w->sink->summary != NULL && w->problem != NULL
      && w->sink->summary->first_problem == NULL)
    w->sink->summary->first_problem = g_steal_pointer (&w->problem);
  if (w->error != NULL && error != NULL && *error == NULL)
    g_propagate_error (error, g_steal_pointer (&w->error));
  g_clear_error (&w->error);
  char *folder = w->folder;
  g_free (w->problem);
  g_ptr_array_unref (w->tasks);
  g_free (w->threads);
  g_clear_object (&w->cancellable);
  g_mutex_clear (&w->lock);
  g_cond_clear (&w->more);
  g_free (w);
  return folder;
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

/* The manifest's head: the format, the source and its model, the prior's
 * calibration and the embeddings file. */
static void
add_head (JsonBuilder *b, const LkImportSource *source)
{
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
}

/* The photo folders and the photos. */
static void
add_photos (JsonBuilder *b, const LkImportSource *source)
{
  /* A library made from photo folders names them absolutely (they are
   * outside it) and each photo relative to its folder: moved to another
   * computer, one mapping (export --map) finds every original again. */
  if (source->photo_folders->len > 0)
    {
      json_builder_set_member_name (b, "photo_folders");
      json_builder_begin_array (b);
      for (guint k = 0; k < source->photo_folders->len; k++)
        json_builder_add_string_value (b, g_ptr_array_index (source->photo_folders, k));
      json_builder_end_array (b);
    }
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
      if (p->original != NULL)
        {
          add_string (b, "original", p->original);
          if (p->folder > 0)
            add_int (b, "folder", p->folder);
        }
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
}

/* The faces, with the thumbnails STATE says were written. */
static void
add_faces (JsonBuilder *b, const LkImportSource *source, const guint8 *state)
{
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
}

/* The people, with their names and faces. */
static void
add_people (JsonBuilder *b, const LkImportSource *source)
{
  if (source->people->len == 0)
    return;
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

/* The manifest of SOURCE: its head, photos, faces and people. */
static char *
manifest_text (const LkImportSource *source, const guint8 *state, gsize *length)
{
  g_autoptr (JsonBuilder) b = json_builder_new ();

  json_builder_begin_object (b);
  add_head (b, source);
  add_photos (b, source);
  add_faces (b, source, state);
  add_people (b, source);
  json_builder_end_object (b);

  g_autoptr (JsonGenerator) gen = json_generator_new ();
  g_autoptr (JsonNode) root = json_builder_get_root (b);
  json_generator_set_root (gen, root);
  json_generator_set_pretty (gen, TRUE);
  return json_generator_to_data (gen, length);
}

/* `name` in the library being written, atomically (and synced). */
static gboolean
write_library_file (const char *folder, const char *name, const char *data, gsize length,
                    GError **error)
{
  g_autofree char *path = g_build_filename (folder, name, NULL);
  g_autoptr (GError) local = NULL;
  if (!g_file_set_contents_full (path, data, (gssize) length, G_FILE_SET_CONTENTS_CONSISTENT, 0644,
                                 &local))
    {
      g_set_error (error, LK_IMPORT_ERROR, LK_IMPORT_ERROR_OUTPUT, "Cannot write the library: %s",
                   local->message);
      return FALSE;
    }
  return TRUE;
}

/* Written once every face is read, before the thumbnails are all cut: its
 * fsync takes a noticeable time, and after the cutting every core would sit
 * idle through it; now the workers cut on meanwhile. */
static gboolean
write_embeddings (const char *folder, LkImportSource *source, GError **error)
{
  GArray *floats = source->floats;
  gsize bytes = (gsize) floats->len * sizeof (float);
#if G_BYTE_ORDER == G_BIG_ENDIAN
  for (guint k = 0; k < floats->len; k++)
    {
      guint32 *u = (guint32 *) &g_array_index (floats, float, k);
      *u = GUINT32_TO_LE (*u);
    }
#endif
  return write_library_file (folder, "embeddings.f32", floats->data, bytes, error);
}

static gboolean
write_manifest (const char *folder, LkImportSource *source, const guint8 *state, GError **error)
{
  gsize length = 0;
  g_autofree char *text = manifest_text (source, state, &length);
  return write_library_file (folder, "library.json", text, length, error);
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

/* The library in OUTDIR locked as lk-review.c locks it: never through a
 * symbolic link planted in the folder, read-only when the lock file is
 * another user's. A lock that cannot be had where locks exist stops the swap
 * (review.json could change under it); a file system without locks goes on,
 * as a save there does. Returns the lock's descriptor, or -1. */
static int
lock_library (const char *outdir, GError **error)
{
  g_autofree char *lock_path = g_build_filename (outdir, ".review.json.lock", NULL);
  int lock = open (lock_path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (lock < 0 && errno == EACCES)
    lock = open (lock_path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (lock < 0)
    {
      int saved = errno;
      g_set_error (error, LK_IMPORT_ERROR, LK_IMPORT_ERROR_OUTPUT,
                   "Cannot lock the library in %s: opening %s failed: %s", outdir, lock_path,
                   g_strerror (saved));
      return -1;
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
      return -1;
    }
  return lock;
}

/* The user's files in OUTDIR hard-linked into FOLDER, and the user's folders
 * moved there (they cannot be hard-linked; moved back if the swap fails):
 * each named in CARRIED, a folder's with a leading '/'. */
static gboolean
carry_over (const char *folder, const char *outdir, GPtrArray *carried, GError **error)
{
  g_autoptr (GError) local_error = NULL;
  g_autoptr (GDir) dir = g_dir_open (outdir, 0, &local_error);
  if (dir == NULL)
    {
      g_set_error (error, LK_IMPORT_ERROR, LK_IMPORT_ERROR_OUTPUT,
                   "Cannot read the library folder %s to keep your files in it: %s", outdir,
                   local_error->message);
      return FALSE;
    }
  const char *name;
  while ((name = g_dir_read_name (dir)) != NULL)
    {
      if (is_ours (name))
        continue;
      g_autofree char *from = g_build_filename (outdir, name, NULL);
      g_autofree char *to = g_build_filename (folder, name, NULL);
      struct stat st;
      gboolean moved = lstat (from, &st) == 0 && S_ISDIR (st.st_mode);
      if ((moved ? rename (from, to) : link (from, to)) != 0)
        {
          int saved = errno;
          g_set_error (error, LK_IMPORT_ERROR, LK_IMPORT_ERROR_OUTPUT,
                       "Cannot carry %s over to the new library: %s", from, g_strerror (saved));
          return FALSE;
        }
      g_ptr_array_add (carried, g_strconcat (moved ? "/" : "", name, NULL));
    }
  return TRUE;
}

/* FOLDER and OUTDIR exchanged, atomically where the file system can, else by
 * two renames, the first undone if the second fails. *OLD_AT: where the old
 * library is when the last of the fallback's renames failed (`folder`.old;
 * the new library is in place by then, so the import has succeeded and the
 * old one is removed from where it stayed); NULL when it is in FOLDER. */
static gboolean
exchange (const char *folder, const char *outdir, char **old_at, GError **error)
{
  gboolean exchanged = lk_import_rename_func (folder, outdir, TRUE) == 0;
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
            *old_at = g_steal_pointer (&old);
        }
      else
        {
          saved = errno;
          lk_import_rename_func (old, outdir, FALSE); /* the old library back */
        }
    }
  if (!exchanged)
    g_set_error (error, LK_IMPORT_ERROR, LK_IMPORT_ERROR_OUTPUT,
                 "Cannot replace the library in %s: %s", outdir, g_strerror (saved));
  return exchanged;
}

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
 * gets two renames, undone if the second fails. Then the old library is
 * removed, or, on failure, the user's files are taken back out of the new. */
static gboolean
swap_in (const char *folder, const char *outdir, GError **error)
{
  int lock = lock_library (outdir, error);
  if (lock < 0)
    return FALSE;

  g_autoptr (GPtrArray) carried = g_ptr_array_new_with_free_func (g_free);
  gboolean ok = carry_over (folder, outdir, carried, error);
  gboolean exchanged = FALSE;
  g_autofree char *old_at = NULL;
  if (ok)
    ok = exchanged = exchange (folder, outdir, &old_at, error);

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

  if (source->writer == NULL
      && !lk_import_source_write_early (source, outdir, sink, cancellable, error))
    return FALSE;
  dispatch (source);
  gboolean ok = write_embeddings (source->writer->folder, source, error);
  g_autofree guint8 *state = g_new0 (guint8, MAX (n_faces, 1));
  GError *thumbs_error = NULL;
  g_autofree char *folder = writer_end (source, !ok, state, &thumbs_error);
  if (ok && thumbs_error != NULL)
    {
      g_propagate_error (error, thumbs_error);
      ok = FALSE;
    }
  else
    g_clear_error (&thumbs_error);
  ok = ok && !g_cancellable_set_error_if_cancelled (cancellable, error)
       && write_manifest (folder, source, state, error)
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
