/* lk-library.c — loading a library folder (LIBRARY-FORMAT.md, version 1)
 *
 * Why it is shaped this way. Figures: 100 000 faces × 512 (a 17 MB compact
 * manifest, 205 MB of rows); only ratios taken in one run mean much
 * (docs/benchmarks.md, bench-library).
 *
 * - json-glib builds the whole tree before we can look at it; that parse
 *   (≈0.67 s of CPU) and freeing the tree (≈0.3 s) are the floor. A standard
 *   manifest is parsed in chunks of faces and photos, so the tree of all of
 *   them never exists at once (lk-library-manifest.c, "Streaming"). The rest
 *   must cost less than the parse, so the walk over the tree allocates nothing
 *   per face: numbers go into flat arrays and strings into one GStringChunk,
 *   and field names for messages are only formatted when a message is made
 *   (lk-library-sections.c).
 * - Three threads: the manifest's SHA-256 (9 % of a load's samples) runs
 *   while json-glib parses; the embedding rows are read and checked
 *   while the main thread walks the faces and frees the tree. A manifest error
 *   is reported before a row error, as a one-thread load would.
 * - How the rows are read: lk-library-embeddings.c; how duplicate members
 *   are caught: lk-library-manifest.c; how paths are resolved:
 *   lk-library-paths.c.
 */

#include "config.h"

#include "lk-json.h"
#include "lk-library-private.h"
#include "lk-sandbox.h"

#include <errno.h>
#include <stdarg.h>
#include <string.h>
#include <unistd.h>

#include <json-glib/json-glib.h>

/* The quark string is written with hyphens, which clang-format would space. */
/* clang-format off */
/* clang-format off */
G_DEFINE_QUARK (lk-library-error-quark, lk_library_error)
/* clang-format on */
/* clang-format on */

/* library.json's bytes. */
typedef struct
{
  const guchar *data;
  gsize length;
} Manifest;

gboolean
lk_library_fail (GError **error, LkLibraryError code, const char *file, const char *format, ...)
{
  va_list args;
  va_start (args, format);
  g_autofree char *message = g_strdup_vprintf (format, args);
  va_end (args);
  g_set_error (error, LK_LIBRARY_ERROR, code, "%s: %s", file, message);
  return FALSE;
}

/* 37156860 → "37 156 860", as the messages print sizes. */
char *
lk_library_group_digits (guint64 value)
{
  char digits[32];
  g_snprintf (digits, sizeof digits, "%" G_GUINT64_FORMAT, value);
  gsize n = strlen (digits);
  GString *out = g_string_sized_new (n + n / 3);
  for (gsize k = 0; k < n; k++)
    {
      if (k > 0 && (n - k) % 3 == 0)
        g_string_append_c (out, ' ');
      g_string_append_c (out, digits[k]);
    }
  return g_string_free (out, FALSE);
}

/* ── Loading ─────────────────────────────────────────────────────────────── */

/* The SHA-256 of the manifest's bytes, on a thread of its own while the main
 * thread parses them. */
static gpointer
hash_manifest (gpointer data)
{
  const Manifest *manifest = data;
  GChecksum *checksum = g_checksum_new (G_CHECKSUM_SHA256);
  g_checksum_update (checksum, manifest->data, (gssize) manifest->length);
  return checksum;
}

/* The embedding rows are read, and checked, on a thread of their
 * own while the main thread walks the faces and frees the tree. */
typedef struct
{
  Loader *loader;
  GError *error;
} RowsJob;

static gpointer
load_rows (gpointer data)
{
  RowsJob *job = data;
  LkLibrary *library = job->loader->library;
  gsize need = library->count * library->dim * sizeof (float);
  return GINT_TO_POINTER (lk_library_read_embeddings (job->loader, need, &job->error));
}

/* The manifest's JSON text: its bytes without a UTF-8 byte-order mark, which
 * Windows editors write (json-glib takes the file for empty; the
 * fingerprint still hashes it). */
static const char *
manifest_text (const Manifest *manifest, gsize *length)
{
  const char *data = (const char *) manifest->data;
  *length = manifest->length;
  if (*length >= 3 && memcmp (data, "\xEF\xBB\xBF", 3) == 0)
    {
      *length -= 3;
      return data + 3;
    }
  return data;
}

/* The streamed load (lk-library-manifest.c, "Streaming"). FALSE with *retry
 * when the whole tree must be parsed instead: nothing of this attempt is then kept, and no
 * error is set. The fingerprint's hash is taken here, before any page of the
 * text is given back. */
static gboolean
read_manifest_streamed (Loader *loader, const Manifest *manifest, GThread **hasher,
                        GChecksum **checksum, gboolean *retry, GError **error)
{
  gsize length;
  const char *data = manifest_text (manifest, &length);
  Span faces, photos;
  gboolean has_faces, has_photos;
  Shape shape;

  *retry = TRUE;
  if (lk_json_find_unpaired_surrogate (data, length) >= 0
      || lk_json_find_too_deep (data, length, LK_JSON_MAX_DEPTH) >= 0
      || lk_json_find_nul_escape (data, length) >= 0
      || lk_json_find_integer_out_of_range (data, length) >= 0)
    return FALSE;
  lk_library_scan_shape (data, length, &shape);
  if (!shape.standard || shape.trailing >= 0
      || !lk_library_find_arrays (data, length, &faces, &has_faces, &photos, &has_photos)
      || !has_faces)
    return FALSE;
  loader->shape = shape;
  g_autoptr (GString) skeleton
      = lk_library_make_skeleton (data, length, &faces, has_photos ? &photos : NULL);
  g_autoptr (JsonParser) parser = json_parser_new ();
  if (!json_parser_load_from_data (parser, skeleton->str, (gssize) skeleton->len, NULL)
      || json_parser_get_root (parser) == NULL
      || !JSON_NODE_HOLDS_OBJECT (json_parser_get_root (parser)))
    return FALSE;
  JsonObject *root = json_node_get_object (json_parser_get_root (parser));
  g_autoptr (GError) local = NULL;
  JsonArray *faces_array = NULL;
  loader->text = data;
  loader->text_length = length;
  loader->faces_span = &faces;
  loader->photos_span = has_photos ? &photos : NULL;
  if (!lk_library_read_header (loader, root, &faces_array, &local))
    return FALSE;

  *checksum = *hasher != NULL ? g_thread_join (g_steal_pointer (hasher))
                              : hash_manifest ((gpointer) manifest);
  Pacer pacer = { .manifest_left = length };
  g_mutex_init (&pacer.lock);
  g_cond_init (&pacer.cond);
  loader->pacer = &pacer;
  RowsJob rows = { loader, NULL };
  GThread *reader = g_thread_try_new ("lk-embeddings", load_rows, &rows, NULL);
  loader->path = g_string_new (NULL);
  loader->dirs = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, lk_library_thumb_dir_free);
  gboolean ok = lk_library_read_body (loader, root, faces_array, &local);
  g_string_free (loader->path, TRUE);
  g_hash_table_unref (loader->dirs);
  /* A duplicate member: the whole tree's parse names it. */
  ok = ok && loader->shape.colons == loader->members;
  g_clear_object (&parser);

  g_mutex_lock (&pacer.lock);
  pacer.manifest_left = 0;
  g_cond_broadcast (&pacer.cond);
  g_mutex_unlock (&pacer.lock);
  gboolean rows_ok = TRUE;
  if (reader != NULL)
    rows_ok = GPOINTER_TO_INT (g_thread_join (reader));
  else if (ok)
    rows_ok = GPOINTER_TO_INT (load_rows (&rows));
  loader->pacer = NULL;
  g_mutex_clear (&pacer.lock);
  g_cond_clear (&pacer.cond);
  if (!ok)
    {
      g_clear_error (&rows.error);
      return FALSE;
    }
  *retry = FALSE;
  if (!rows_ok)
    {
      g_propagate_error (error, g_steal_pointer (&rows.error));
      return FALSE;
    }
  loader->library->streamed = TRUE;
  return TRUE;
}

static gboolean
read_manifest_file (Loader *loader, const Manifest *manifest, GError **error)
{
  gsize length;
  const char *data = manifest_text (manifest, &length);
  JsonParser *parser = parse_manifest (loader, data, length, error);
  JsonArray *faces = NULL;
  RowsJob rows = { loader, NULL };
  GThread *reader = NULL;
  gboolean ok, rows_ok = TRUE;

  if (parser == NULL)
    return FALSE;
  JsonNode *root = json_parser_get_root (parser);
  ok = lk_library_read_header (loader, json_node_get_object (root), &faces, error);
  if (ok)
    {
      reader = g_thread_try_new ("lk-embeddings", load_rows, &rows, NULL);
      loader->path = g_string_new (NULL);
      loader->dirs
          = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, lk_library_thumb_dir_free);
      ok = lk_library_read_body (loader, json_node_get_object (root), faces, error);
      g_string_free (loader->path, TRUE);
      g_hash_table_unref (loader->dirs);
    }

  /* A duplicate member comes first: it may be why a field looked wrong. A
   * walk cut short by an error has not counted every object, so count then. */
  gsize members = ok ? loader->members : lk_library_count_members (root);
  if (!loader->shape.standard || loader->shape.colons != members)
    {
      GError *duplicate = NULL;
      if (!check_with_signals (loader, data, length, &duplicate))
        {
          g_clear_error (error);
          g_propagate_error (error, duplicate);
          ok = FALSE;
        }
    }
  g_object_unref (parser);

  if (reader != NULL)
    rows_ok = GPOINTER_TO_INT (g_thread_join (reader));
  else if (ok)
    rows_ok = GPOINTER_TO_INT (load_rows (&rows));
  /* A manifest error comes before a row error: it may be why the rows look
   * wrong. */
  if (ok && !rows_ok)
    g_propagate_error (error, g_steal_pointer (&rows.error));
  g_clear_error (&rows.error);
  return ok && rows_ok;
}

/* One load: streamed (*retry set when it must run again on the whole tree)
 * or, with `retry` NULL, on the whole tree. */
static LkLibrary *
load_library (const char *folder, gboolean *retry, GError **error)
{
  g_autoptr (LkLibrary) library = g_new0 (LkLibrary, 1);
  g_autoptr (GError) local = NULL;
  g_autofree char *bytes = NULL;
  g_autofree char *manifest = NULL;
  Loader loader = { .manifest = NULL, .library = library };
  gboolean ok;

  library->strings = g_string_chunk_new (64 * 1024);
  library->folder = lk_library_real_path (folder);
  if (library->folder == NULL)
    {
      int saved = errno;
      g_autofree char *hint = saved == ENOENT ? lk_sandbox_hint (folder) : NULL;
      g_set_error (error, LK_LIBRARY_ERROR, LK_LIBRARY_ERROR_IO,
                   "Cannot open the library folder “%s”: %s.%s", folder, g_strerror (saved),
                   hint != NULL ? hint : "");
      return NULL;
    }
  manifest = g_build_filename (library->folder, MANIFEST_NAME, NULL);
  loader.manifest = manifest;

  /* Read, not mapped: another process truncating it would kill the load
   * with SIGBUS (see lk_library_read_whole). */
  goffset manifest_size;
  int fd = lk_library_open_regular (manifest, &manifest_size, &local);
  if (fd < 0)
    {
      g_set_error (error, LK_LIBRARY_ERROR, LK_LIBRARY_ERROR_IO,
                   "Cannot read the library manifest: %s", local->message);
      return NULL;
    }
  gsize manifest_length = (gsize) MAX (manifest_size, 0);
  bytes = g_try_malloc (manifest_length + 1);
  if (bytes == NULL)
    {
      close (fd);
      g_autofree char *size_text = lk_library_group_digits (manifest_length);
      g_set_error (error, LK_LIBRARY_ERROR, LK_LIBRARY_ERROR_IO,
                   "Cannot read the library manifest %s: its %s bytes do not fit in memory",
                   manifest, size_text);
      return NULL;
    }
  gsize got;
  ReadResult read = lk_library_read_whole (fd, bytes, manifest_length, &got, NULL);
  int saved = errno;
  close (fd);
  if (read != READ_OK)
    {
      g_set_error (error, LK_LIBRARY_ERROR, LK_LIBRARY_ERROR_IO,
                   "Cannot read the library manifest %s: %s", manifest,
                   read == READ_FAILED ? g_strerror (saved)
                                       : "it changed while it was read; load the library again "
                                         "once whatever writes it has finished");
      return NULL;
    }
  bytes[manifest_length] = '\0';
  Manifest job = { (const guchar *) bytes, manifest_length };
  GThread *hasher = g_thread_try_new ("lk-fingerprint", hash_manifest, &job, NULL);
  g_autoptr (GChecksum) checksum = NULL;
  if (retry != NULL)
    ok = read_manifest_streamed (&loader, &job, &hasher, &checksum, retry, error);
  else
    ok = read_manifest_file (&loader, &job, error);
  if (hasher != NULL)
    checksum = g_thread_join (hasher);
  else if (checksum == NULL)
    checksum = hash_manifest (&job);
  if (!ok)
    return NULL;

  gsize need = library->count * library->dim * sizeof (float);
  guint64 size_le = GUINT64_TO_LE ((guint64) need);
  g_checksum_update (checksum, (const guchar *) &size_le, sizeof size_le);
  library->fingerprint = g_strdup (g_checksum_get_string (checksum));

  return g_steal_pointer (&library);
}

LkLibrary *
lk_library_load (const char *folder, GError **error)
{
  g_return_val_if_fail (folder != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  gboolean retry = FALSE;
  LkLibrary *library = load_library (folder, &retry, error);
  if (library == NULL && retry)
    library = load_library (folder, NULL, error);
  return library;
}

void
lk_library_release_embeddings (LkLibrary *library)
{
  g_return_if_fail (library != NULL);
  library->embeddings = NULL;
  g_clear_pointer (&library->owned, g_aligned_free);
}

void
lk_library_free (LkLibrary *library)
{
  if (library == NULL)
    return;
  g_free (library->folder);
  g_free (library->embeddings_path);
  g_free (library->photo);
  g_free (library->crop_px);
  g_free (library->quality);
  g_free (library->gallery);
  g_free (library->thumbnail);
  g_free (library->label);
  g_free (library->face_id);
  g_free (library->has_box);
  g_free (library->box);
  g_free (library->photos);
  g_free (library->photo_folders);
  for (gsize k = 0; k < library->n_source_people; k++)
    g_free (library->source_people[k].faces);
  g_free (library->source_people);
  g_free (library->fingerprint);
  g_free (library->thumbnail_warning);
  g_aligned_free (library->owned);
  g_clear_pointer (&library->photo_index, g_hash_table_unref);
  if (library->strings != NULL)
    g_string_chunk_free (library->strings);
  g_free (library);
}

const LkPhoto *
lk_library_find_photo (const LkLibrary *library, guint64 id)
{
  gpointer index;

  g_return_val_if_fail (library != NULL, NULL);
  if (!g_hash_table_lookup_extended (library->photo_index, &id, NULL, &index))
    return NULL;
  return &library->photos[GPOINTER_TO_SIZE (index)];
}

char *
lk_library_thumbnail_path (const LkLibrary *library, gsize i)
{
  g_return_val_if_fail (library != NULL && i < library->count, NULL);
  if (library->thumbnail[i] == NULL)
    return NULL;
  return g_build_filename (library->folder, library->thumbnail[i], NULL);
}

/* ── Face keys ───────────────────────────────────────────────────────────── */

/* FNV-1a, 64 bits: defined byte by byte, so the key of a face is the same on
 * every host and in every version (LIBRARY-FORMAT.md). Its cost is one
 * multiply per byte: the keys of 18,143 faces of 512 floats without an id
 * take about a third of lk_library_load's time for the same library
 * (docs/benchmarks.md); faces with an id cost
 * nothing, and the keys are made once per review load, on the session's
 * worker thread. */
#define FNV_OFFSET G_GUINT64_CONSTANT (0xcbf29ce484222325)
#define FNV_PRIME  G_GUINT64_CONSTANT (0x100000001b3)

static guint64
fnv1a (guint64 hash, const void *data, gsize length)
{
  const guint8 *bytes = data;
  for (gsize k = 0; k < length; k++)
    hash = (hash ^ bytes[k]) * FNV_PRIME;
  return hash;
}

/* The hash of a content key's head: the photo and the box (when there is
 * one), with its closing NUL. */
static guint64
head_hash (const LkLibrary *library, gsize i)
{
  g_autofree char *head
      = library->has_box[i]
            ? g_strdup_printf ("%" G_GUINT64_FORMAT " %.17g %.17g %.17g %.17g", library->photo[i],
                               library->box[i][0], library->box[i][1], library->box[i][2],
                               library->box[i][3])
            : g_strdup_printf ("%" G_GUINT64_FORMAT, library->photo[i]);
  return fnv1a (FNV_OFFSET, head, strlen (head) + 1);
}

/* Carries hash[l] on over the embedding row of face faces[l] as
 * little-endian float32 bytes, the way embeddings.f32 holds it (once
 * normalised), for n <= KEY_LANES faces. FNV-1a is one chain of multiplies
 * per face, each waiting for the last: four faces' chains side by side
 * keep the multiplier busy: four at a time halve the keys' CPU time
 * (bench-people on make-sample --faces 100000, no ids; docs/benchmarks.md). */
#define KEY_LANES 4
static void
row_hashes (const LkLibrary *library, const gsize *faces, guint n, guint64 *hash)
{
  gsize length = (gsize) library->dim * sizeof (float);
#if G_BYTE_ORDER == G_LITTLE_ENDIAN
  if (n == KEY_LANES)
    {
      const guint8 *b0 = (const guint8 *) lk_library_row (library, faces[0]),
                   *b1 = (const guint8 *) lk_library_row (library, faces[1]),
                   *b2 = (const guint8 *) lk_library_row (library, faces[2]),
                   *b3 = (const guint8 *) lk_library_row (library, faces[3]);
      guint64 h0 = hash[0], h1 = hash[1], h2 = hash[2], h3 = hash[3];
      for (gsize k = 0; k < length; k++)
        {
          h0 = (h0 ^ b0[k]) * FNV_PRIME;
          h1 = (h1 ^ b1[k]) * FNV_PRIME;
          h2 = (h2 ^ b2[k]) * FNV_PRIME;
          h3 = (h3 ^ b3[k]) * FNV_PRIME;
        }
      hash[0] = h0;
      hash[1] = h1;
      hash[2] = h2;
      hash[3] = h3;
      return;
    }
#endif
  for (guint l = 0; l < n; l++)
    {
      const float *row = lk_library_row (library, faces[l]);
      for (guint d = 0; d < library->dim; d++)
        {
          guint32 bits;
          memcpy (&bits, &row[d], sizeof bits);
          bits = GUINT32_TO_LE (bits);
          hash[l] = fnv1a (hash[l], &bits, sizeof bits);
        }
    }
  (void) length;
}

char **
lk_library_face_keys (const LkLibrary *library)
{
  g_return_val_if_fail (library != NULL, NULL);

  /* A face without an id is keyed by its content: the photo, the box (when
   * there is one) and the embedding row, what a re-export of the same face
   * writes again, whatever its place in the manifest. Hashed KEY_LANES
   * faces at a time. */
  g_autofree guint64 *content = g_new (guint64, MAX (library->count, 1));
  gsize batch[KEY_LANES];
  guint64 lanes[KEY_LANES];
  guint n_batch = 0;
  for (gsize i = 0; i <= library->count; i++)
    {
      if (i < library->count && library->face_id[i] == NULL)
        {
          batch[n_batch] = i;
          lanes[n_batch++] = head_hash (library, i);
        }
      if (n_batch == KEY_LANES || (i == library->count && n_batch > 0))
        {
          row_hashes (library, batch, n_batch, lanes);
          for (guint l = 0; l < n_batch; l++)
            content[batch[l]] = lanes[l];
          n_batch = 0;
        }
    }

  char **keys = g_new0 (char *, library->count + 1);
  g_autoptr (GHashTable) used = g_hash_table_new (g_str_hash, g_str_equal);
  for (gsize i = 0; i < library->count; i++)
    {
      g_autofree char *base = library->face_id[i] != NULL
                                  ? g_strdup_printf ("id:%s", library->face_id[i])
                                  : g_strdup_printf ("c:%016" G_GINT64_MODIFIER "x", content[i]);
      char *key = g_strdup (base);
      /* Two faces with one key (a face listed twice, one id given twice):
       * the later ones are told apart by their rank among the namesakes. */
      for (guint n = 2; g_hash_table_contains (used, key); n++)
        {
          g_free (key);
          key = g_strdup_printf ("%s#%u", base, n);
        }
      keys[i] = key;
      g_hash_table_add (used, key);
    }
  return keys;
}
