/* lk-scan-cache.c — the last scan kept in the user's cache (see lk-scan-cache.h)
 *
 * The file, every number little-endian, every section padded with zeros to
 * a multiple of 8 bytes:
 *
 *   "LKSCAN\0\1", u32 version, u32 dim, u64 faces, u64 pairs, u64 near,
 *   f64 a, b, w_size, min_probability, u64 key bytes            (80 bytes)
 *   faces × u64 content hash (what a pair's answer reads about the face)
 *   the faces' keys, each followed by a NUL                     (key bytes)
 *   pairs × (u32 i, u32 j, f32 probability), in (i, j) order
 *   near × the same, the near-boundary pairs
 *   u64 checksum of every word before it
 *
 * Both hashes are 64-bit mixes of 64-bit words (mix() below), not a
 * cryptographic digest: they guard against a changed face and a damaged
 * file, not against an adversary who can write the user's cache anyway. A
 * changed row that kept its hash would need a 2^-64 coincidence. Words, not
 * bytes: 18,143 rows of 512 floats hash in about 20 ms where a byte-wise
 * FNV took 100–200 (lk_library_face_keys' measurement).
 *
 * The re-scan. Faces are matched by key; a face present in both with another
 * content hash means a full scan (its pairs with every kept face would need
 * computing again anyway). The kept faces' pairs are read and renumbered;
 * the added ones are scanned with LkScanOptions.column_begin over the faces
 * in the order [kept…, added…] — the library itself when the added faces
 * already come last (a re-import appends), else a copy in that order — which
 * computes exactly the pairs with an added face: rows of kept faces against
 * the added columns, and the added faces' own triangle. Then one list in
 * (i, j) order: a merge from the back when the renumbering kept the order
 * (nothing but appends and removals), a sort otherwise.
 */
#include "config.h"

#include "lk-scan-cache.h"

#include <errno.h>
#include <stdio.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <glib/gstdio.h>

#include "library/lk-bytes.h"

#define MAGIC        "LKSCAN\0\1"
#define VERSION      1
#define HEADER_BYTES 80
/* Pairs read or written at a time: a multiple of 2 pairs, so a multiple of
 * 8 bytes, and small beside the list. */
#define CHUNK_PAIRS  8192

/* ── Hashing ─────────────────────────────────────────────────────────────── */

static inline guint64
mix (guint64 h, guint64 w)
{
  h ^= w * G_GUINT64_CONSTANT (0x9E3779B97F4A7C15);
  h = (h << 29 | h >> 35) * G_GUINT64_CONSTANT (0xBF58476D1CE4E5B9);
  return h;
}

static inline guint64
finish (guint64 h)
{
  h ^= h >> 31;
  h *= G_GUINT64_CONSTANT (0x94D049BB133111EB);
  return h ^ (h >> 29);
}

/* `bytes` (a multiple of 8) as little-endian words. */
static guint64
mix_words (guint64 h, const void *data, gsize bytes)
{
  const guint8 *p = data;
  for (gsize k = 0; k < bytes; k += 8)
    {
      guint64 w;
      memcpy (&w, p + k, 8);
      h = mix (h, GUINT64_FROM_LE (w));
    }
  return h;
}

/* Everything the pair decision reads about face i. */
static guint64
content_hash (const LkLibrary *library, gsize i)
{
  const float *row = lk_library_row (library, i);
  guint64 h = G_GUINT64_CONSTANT (0x6C696B656E657373); /* "likeness" */
  guint d = 0;

  for (; d + 2 <= library->dim; d += 2)
    {
      guint32 lo, hi;
      memcpy (&lo, &row[d], 4);
      memcpy (&hi, &row[d + 1], 4);
      h = mix (h, (guint64) lo | (guint64) hi << 32);
    }
  if (d < library->dim)
    {
      guint32 lo;
      memcpy (&lo, &row[d], 4);
      h = mix (h, lo);
    }
  guint32 crop;
  memcpy (&crop, &library->crop_px[i], 4);
  h = mix (h, crop);
  h = mix (h, library->photo[i]);
  h = mix (h, library->gallery[i] != 0);
  return finish (h);
}

static gsize
pad8 (gsize n)
{
  return (n + 7) / 8 * 8;
}

/* `bytes` (any number) as little-endian words, zeros padding the last. */
static guint64
mix_bytes (guint64 h, const void *data, gsize bytes)
{
  h = mix_words (h, data, bytes - bytes % 8);
  if (bytes % 8 != 0)
    {
      guint8 last[8] = { 0 };
      memcpy (last, (const guint8 *) data + bytes - bytes % 8, bytes % 8);
      h = mix_words (h, last, 8);
    }
  return h;
}

guint64
lk_scan_cache_checksum (const void *data, gsize bytes)
{
  return finish (mix_bytes (0, data, bytes));
}

/* LkScanReuse.faces: the dimension, then each face's content hash and key
 * (with its NUL, so that keys cannot run into each other). */
static guint64
faces_hash (const LkLibrary *library, char **keys, const guint64 *content)
{
  guint64 h = mix (G_GUINT64_CONSTANT (0x6C6B2D6661636573), library->dim); /* "lk-faces" */
  h = mix (h, library->count);
  for (gsize i = 0; i < library->count; i++)
    h = mix_bytes (mix (h, content[i]), keys[i], strlen (keys[i]) + 1);
  return finish (h);
}

/* ── Reading ─────────────────────────────────────────────────────────────── */

typedef struct
{
  int fd;
  guint64 offset;
  guint64 size;
  guint64 hash;
} Reader;

/* `bytes` (a multiple of 8) into `out`, hashed. FALSE at the end of the file
 * or on an error. */
static gboolean
read_words (Reader *r, void *out, gsize bytes)
{
  gsize got = 0;

  if (r->size - r->offset < bytes)
    return FALSE;
  while (got < bytes)
    {
      gssize n = pread (r->fd, (char *) out + got, bytes - got, (off_t) (r->offset + got));
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        return FALSE;
      got += (gsize) n;
    }
  r->offset += bytes;
  r->hash = mix_words (r->hash, out, bytes);
  return TRUE;
}

static LkPair
get_pair (const guint8 *p)
{
  LkPair pair;
  guint32 bits = lk_get_u32 (p + 8);
  pair.i = lk_get_u32 (p);
  pair.j = lk_get_u32 (p + 4);
  memcpy (&pair.probability, &bits, 4);
  return pair;
}

/* What the cache holds that a re-scan can use. */
typedef struct
{
  guint32 *new_index; /* per cached face: its index in the library, or G_MAXUINT32 (gone) */
  gsize n_old;
  GArray *pairs;     /* the kept faces' pairs, renumbered; not yet in order */
  GArray *near;      /* likewise */
  gboolean ordered;  /* renumbering kept the cached order: pairs are in (i, j) order */
  gboolean identity; /* the library is the cached faces, in the cached order */
  gsize kept;
  gsize removed;
} Cached;

static void
cached_clear (Cached *c)
{
  g_clear_pointer (&c->new_index, g_free);
  g_clear_pointer (&c->pairs, g_array_unref);
  g_clear_pointer (&c->near, g_array_unref);
}

/* Reads `count` pairs of the section at r's offset, keeping those whose faces
 * are both kept, renumbered (i < j). FALSE on a short file or an index out of
 * range. */
static gboolean
read_pairs (Reader *r, guint64 count, Cached *c, GArray *into, gboolean *ordered)
{
  g_autofree guint8 *buffer = g_malloc (CHUNK_PAIRS * sizeof (LkPair));
  guint64 done = 0;
  LkPair last = { 0, 0, 0 };
  gboolean any = FALSE;

  while (done < count)
    {
      gsize n = (gsize) MIN (count - done, (guint64) CHUNK_PAIRS);
      if (!read_words (r, buffer, pad8 (n * sizeof (LkPair))))
        return FALSE;
      for (gsize k = 0; k < n; k++)
        {
          LkPair p = get_pair (buffer + k * sizeof (LkPair));
          if (!(p.i < p.j && p.j < c->n_old))
            return FALSE;
          guint32 i = c->new_index[p.i], j = c->new_index[p.j];
          if (i == G_MAXUINT32 || j == G_MAXUINT32)
            continue;
          LkPair q = { MIN (i, j), MAX (i, j), p.probability };
          if (any && (q.i < last.i || (q.i == last.i && q.j <= last.j)))
            *ordered = FALSE;
          last = q;
          any = TRUE;
          g_array_append_val (into, q);
        }
      done += n;
    }
  return TRUE;
}

/* The header read from R: this version's, made with this calibration, bar
 * and dimension, and sizes that add up to the file's before anything is
 * allocated. */
static gboolean
read_header (Reader *r, const LkLibrary *library, const LkCalibration *cal, double min_probability,
             guint64 *n_old, guint64 *n_pairs, guint64 *n_near, guint64 *key_bytes, char **why)
{
  guint8 header[HEADER_BYTES];
  if (!read_words (r, header, HEADER_BYTES) || memcmp (header, MAGIC, 8) != 0
      || lk_get_u32 (header + 8) != VERSION)
    {
      *why = g_strdup ("the kept scan is not one this version wrote");
      return FALSE;
    }
  guint32 dim = lk_get_u32 (header + 12);
  *n_old = lk_get_u64 (header + 16);
  *n_pairs = lk_get_u64 (header + 24);
  *n_near = lk_get_u64 (header + 32);
  *key_bytes = lk_get_u64 (header + 72);
  if (dim != library->dim || !lk_same_double (lk_get_f64 (header + 40), cal->a)
      || !lk_same_double (lk_get_f64 (header + 48), cal->b)
      || !lk_same_double (lk_get_f64 (header + 56), cal->w_size)
      || !lk_same_double (lk_get_f64 (header + 64), min_probability))
    {
      *why = g_strdup ("the kept scan was made with another calibration, bar or dimension");
      return FALSE;
    }
  if (*n_old > G_MAXUINT32 || *n_pairs > r->size / sizeof (LkPair)
      || *n_near > r->size / sizeof (LkPair) || *key_bytes > r->size || *key_bytes % 8 != 0
      || HEADER_BYTES + 8 * *n_old + *key_bytes + pad8 (*n_pairs * sizeof (LkPair))
                 + pad8 (*n_near * sizeof (LkPair)) + 8
             != r->size)
    {
      *why = g_strdup ("the kept scan is damaged (its sizes do not add up)");
      return FALSE;
    }
  return TRUE;
}

/* Each of the N_OLD cached faces (their keys NAMES, KEY_BYTES long, their
 * content HASHES) found in the library by key: c->new_index, and what was
 * kept and removed; FALSE when the keys are damaged or a kept face changed. */
static gboolean
map_faces (Cached *c, const LkLibrary *library, char **keys, const guint64 *content,
           const guint64 *hashes, const char *names, guint64 n_old, guint64 key_bytes, char **why)
{
  g_autoptr (GHashTable) by_key = g_hash_table_new (g_str_hash, g_str_equal);
  const char *name = names;
  for (gsize k = 0; k < n_old; k++)
    {
      gsize length = strnlen (name, (gsize) (names + key_bytes - name));
      if (name + length >= names + key_bytes || g_hash_table_contains (by_key, name))
        {
          *why = g_strdup ("the kept scan is damaged (its face keys)");
          return FALSE;
        }
      g_hash_table_insert (by_key, (gpointer) name, GSIZE_TO_POINTER (k + 1));
      name += length + 1;
    }

  c->new_index = g_new (guint32, MAX (n_old, 1));
  for (gsize k = 0; k < n_old; k++)
    c->new_index[k] = G_MAXUINT32;
  for (gsize i = 0; i < library->count; i++)
    {
      gsize k = GPOINTER_TO_SIZE (g_hash_table_lookup (by_key, keys[i]));
      if (k == 0)
        continue;
      if (GUINT64_FROM_LE (hashes[k - 1]) != content[i])
        {
          *why = g_strdup_printf ("face %" G_GSIZE_FORMAT " (%s) changed since the kept scan", i,
                                  keys[i]);
          return FALSE;
        }
      c->new_index[k - 1] = (guint32) i;
      c->kept++;
    }
  c->removed = n_old - c->kept;
  c->identity = c->kept == n_old && n_old == library->count;
  for (gsize k = 0; k < n_old && c->identity; k++)
    c->identity = c->new_index[k] == k;
  return TRUE;
}

/* Reads the cache at `path` against the library's keys and content hashes:
 * the header, the faces' keys mapped to the library's, the pairs and the
 * checksum. FALSE with *why set when it cannot be used as it is. */
static gboolean
read_cache (const char *path, const LkLibrary *library, char **keys, const guint64 *content,
            const LkCalibration *cal, double min_probability, Cached *c, char **why)
{
  GStatBuf st;
  int fd = g_open (path, O_RDONLY | O_CLOEXEC | O_NONBLOCK, 0);

  if (fd < 0)
    {
      *why = g_strdup_printf ("no scan was kept (%s)", g_strerror (errno));
      return FALSE;
    }
  if (fstat (fd, &st) != 0 || !S_ISREG (st.st_mode))
    {
      close (fd);
      *why = g_strdup ("the kept scan is not a file");
      return FALSE;
    }
  Reader r = { fd, 0, (guint64) st.st_size, 0 };
  gboolean ok = FALSE;
  g_autofree guint64 *hashes = NULL;
  g_autofree char *names = NULL;
  guint64 n_old, n_pairs, n_near, key_bytes;

  if (!read_header (&r, library, cal, min_probability, &n_old, &n_pairs, &n_near, &key_bytes, why))
    goto out;
  c->n_old = n_old;
  hashes = g_new (guint64, MAX (n_old, 1));
  names = g_malloc (key_bytes + 1);
  if (!read_words (&r, hashes, 8 * n_old) || !read_words (&r, names, key_bytes))
    {
      *why = g_strdup ("the kept scan could not be read");
      goto out;
    }
  names[key_bytes] = '\0';
  if (!map_faces (c, library, keys, content, hashes, names, n_old, key_bytes, why))
    goto out;

  c->pairs = g_array_sized_new (FALSE, FALSE, sizeof (LkPair), (guint) MIN (n_pairs, G_MAXUINT));
  c->near = g_array_new (FALSE, FALSE, sizeof (LkPair));
  gboolean near_ordered = TRUE;
  c->ordered = TRUE;
  guint8 tail[8];
  if (!read_pairs (&r, n_pairs, c, c->pairs, &c->ordered)
      || !read_pairs (&r, n_near, c, c->near, &near_ordered))
    {
      *why = g_strdup ("the kept scan is damaged (its pairs)");
      goto out;
    }
  guint64 expected = finish (r.hash);
  if (!read_words (&r, tail, 8) || lk_get_u64 (tail) != expected)
    {
      *why = g_strdup ("the kept scan is damaged (its checksum)");
      goto out;
    }
  ok = TRUE;

out:
  close (fd);
  if (!ok)
    cached_clear (c);
  return ok;
}

/* ── Writing ─────────────────────────────────────────────────────────────── */

typedef struct
{
  FILE *file;
  guint64 hash;
  gboolean failed;
} Writer;

static void
write_words (Writer *w, const void *data, gsize bytes)
{
  static const guint8 zeros[8] = { 0 };
  gsize padded = pad8 (bytes);

  w->hash = mix_bytes (w->hash, data, bytes);
  if (fwrite (data, 1, bytes, w->file) != bytes
      || (padded > bytes && fwrite (zeros, 1, padded - bytes, w->file) != padded - bytes))
    w->failed = TRUE;
}

static void
write_pairs (Writer *w, const GArray *pairs)
{
  g_autofree guint8 *buffer = g_malloc (CHUNK_PAIRS * sizeof (LkPair));

  for (guint done = 0; done < pairs->len;)
    {
      guint n = MIN (pairs->len - done, CHUNK_PAIRS);
      for (guint k = 0; k < n; k++)
        {
          const LkPair *p = &g_array_index (pairs, LkPair, done + k);
          guint32 bits;
          memcpy (&bits, &p->probability, 4);
          lk_put_u32 (buffer + k * sizeof (LkPair), p->i);
          lk_put_u32 (buffer + k * sizeof (LkPair) + 4, p->j);
          lk_put_u32 (buffer + k * sizeof (LkPair) + 8, bits);
        }
      /* Only the last chunk may be odd: CHUNK_PAIRS is even. */
      write_words (w, buffer, n * sizeof (LkPair));
      done += n;
    }
}

static gboolean
write_cache (const char *path, const LkLibrary *library, char **keys, const guint64 *content,
             const LkCalibration *cal, double min_probability, const LkScanResult *result)
{
  g_autofree char *dir = g_path_get_dirname (path);
  if (g_mkdir_with_parents (dir, 0700) != 0)
    return FALSE;
  g_autofree char *temp = g_strconcat (path, ".XXXXXX", NULL);
  int fd = g_mkstemp_full (temp, O_WRONLY | O_CLOEXEC, 0600);
  if (fd < 0)
    return FALSE;
  Writer w = { fdopen (fd, "wb"), 0, FALSE };
  if (w.file == NULL)
    {
      close (fd);
      g_unlink (temp);
      return FALSE;
    }
  setvbuf (w.file, NULL, _IOFBF, 1 << 20);

  gsize key_bytes = 0;
  for (gsize i = 0; i < library->count; i++)
    key_bytes += strlen (keys[i]) + 1;
  guint8 header[HEADER_BYTES] = { 0 };
  memcpy (header, MAGIC, 8);
  lk_put_u32 (header + 8, VERSION);
  lk_put_u32 (header + 12, library->dim);
  lk_put_u64 (header + 16, library->count);
  lk_put_u64 (header + 24, result->pairs->len);
  lk_put_u64 (header + 32, result->near_pairs->len);
  lk_put_f64 (header + 40, cal->a);
  lk_put_f64 (header + 48, cal->b);
  lk_put_f64 (header + 56, cal->w_size);
  lk_put_f64 (header + 64, min_probability);
  lk_put_u64 (header + 72, pad8 (key_bytes));
  write_words (&w, header, HEADER_BYTES);
  g_autofree guint64 *le = g_new (guint64, MAX (library->count, 1));
  for (gsize i = 0; i < library->count; i++)
    le[i] = GUINT64_TO_LE (content[i]);
  write_words (&w, le, 8 * library->count);
  /* The keys as one section: gathered, so that its padding is at its end. */
  g_autoptr (GString) names = g_string_sized_new (pad8 (key_bytes));
  for (gsize i = 0; i < library->count; i++)
    g_string_append_len (names, keys[i], (gssize) strlen (keys[i]) + 1);
  write_words (&w, names->str, names->len);
  write_pairs (&w, result->pairs);
  write_pairs (&w, result->near_pairs);
  guint8 tail[8];
  lk_put_u64 (tail, finish (w.hash));
  if (fwrite (tail, 1, 8, w.file) != 8)
    w.failed = TRUE;
  if (fclose (w.file) != 0)
    w.failed = TRUE;
  if (w.failed || g_rename (temp, path) != 0)
    {
      g_unlink (temp);
      return FALSE;
    }
  return TRUE;
}

/* ── The re-scan ─────────────────────────────────────────────────────────── */

static int
compare_pairs (const void *a, const void *b)
{
  const LkPair *x = a, *y = b;
  if (x->i != y->i)
    return x->i < y->i ? -1 : 1;
  return x->j < y->j ? -1 : x->j > y->j;
}

static void
sort_pairs (GArray *pairs)
{
  if (pairs->len > 1) /* an empty GArray's data may be NULL, which qsort must not get */
    qsort (pairs->data, pairs->len, sizeof (LkPair), compare_pairs);
}

/* Adds the sorted `more` to `into` (sorted when `ordered`), leaving `into`
 * in (i, j) order: a merge from the back in place when both are sorted. */
static void
merge_pairs (GArray *into, gboolean ordered, const GArray *more)
{
  guint a = into->len, b = more->len;

  if (!ordered)
    {
      g_array_append_vals (into, more->data, more->len);
      sort_pairs (into);
      return;
    }
  g_array_set_size (into, a + b);
  if (b == 0)
    return;
  LkPair *out = (LkPair *) (void *) into->data;
  const LkPair *m = (const LkPair *) (const void *) more->data;
  for (guint k = a + b; b > 0;)
    {
      if (a > 0 && compare_pairs (&out[a - 1], &m[b - 1]) > 0)
        out[--k] = out[--a];
      else
        out[--k] = m[--b];
    }
}

/* The pairs of the `added` faces (indices into the library, ascending) with
 * every face, numbered as in the library. */
static LkScanResult *
scan_added (const LkLibrary *library, const guint32 *kept, gsize n_kept, const guint32 *added,
            gsize n_added, const LkCalibration *cal, double min_probability,
            const LkScanOptions *options, GCancellable *cancellable, GError **error)
{
  gsize n = library->count, dim = library->dim;
  LkScanOptions partial = *options;
  LkFaces faces;
  gboolean in_place = n_added > 0 && added[0] == n_kept; /* the added faces come last */

  partial.column_begin = n_kept;
  lk_faces_from_library (&faces, library);
  if (in_place)
    return lk_scan (&faces, cal, min_probability, &partial, cancellable, error);

  /* The faces in the order [kept…, added…]: a copy. */
  g_autofree guint32 *order = g_new (guint32, MAX (n, 1));
  memcpy (order, kept, n_kept * sizeof *order);
  memcpy (order + n_kept, added, n_added * sizeof *order);
  float *rows = g_aligned_alloc (MAX (n * dim, 1), sizeof (float), 64);
  g_autofree float *crop = g_new (float, MAX (n, 1));
  g_autofree guint64 *photo = g_new (guint64, MAX (n, 1));
  g_autofree guint8 *gallery = g_new (guint8, MAX (n, 1));
  for (gsize t = 0; t < n; t++)
    {
      memcpy (rows + t * dim, lk_library_row (library, order[t]), dim * sizeof (float));
      crop[t] = library->crop_px[order[t]];
      photo[t] = library->photo[order[t]];
      gallery[t] = library->gallery[order[t]];
    }
  LkFaces copy = { rows, n, (guint) dim, crop, photo, gallery };
  LkScanResult *result = lk_scan (&copy, cal, min_probability, &partial, cancellable, error);
  g_aligned_free (rows);
  if (result == NULL)
    return NULL;

  GArray *lists[] = { result->pairs, result->near_pairs };
  for (gsize l = 0; l < G_N_ELEMENTS (lists); l++)
    {
      LkPair *p = (LkPair *) (void *) lists[l]->data;
      for (guint k = 0; k < lists[l]->len; k++)
        {
          guint32 i = order[p[k].i], j = order[p[k].j];
          p[k].i = MIN (i, j);
          p[k].j = MAX (i, j);
        }
      sort_pairs (lists[l]);
    }
  return result;
}

void
lk_scan_reuse_clear (LkScanReuse *reuse)
{
  g_clear_pointer (&reuse->why_full, g_free);
}

char *
lk_scan_cache_path (const char *folder)
{
  g_autofree char *hash = g_compute_checksum_for_string (G_CHECKSUM_SHA256, folder, -1);
  g_autofree char *name = g_strdup_printf ("%.32s.scan", hash);
  return g_build_filename (g_get_user_cache_dir (), "likeness", "scans", name, NULL);
}

LkScanResult *
lk_scan_cached (const LkLibrary *library, const LkCalibration *calibration, double min_probability,
                const LkScanOptions *options, const char *cache_path, LkScanReuse *reuse,
                GCancellable *cancellable, GError **error)
{
  static const LkScanOptions defaults = { 0 };
  LkScanReuse local = { 0 };
  gint64 started = g_get_monotonic_time ();

  g_return_val_if_fail (library != NULL && calibration != NULL && cache_path != NULL, NULL);
  if (options == NULL)
    options = &defaults;
  g_return_val_if_fail (!options->row_range && options->column_begin == 0, NULL);
  if (reuse == NULL)
    reuse = &local;
  memset (reuse, 0, sizeof *reuse);

  gsize n = library->count;
  g_auto (GStrv) keys = lk_library_face_keys (library);
  g_autofree guint64 *content = g_new (guint64, MAX (n, 1));
  for (gsize i = 0; i < n; i++)
    content[i] = content_hash (library, i);
  reuse->faces = faces_hash (library, keys, content);

  Cached cached = { 0 };
  LkScanResult *result = NULL;
  if (read_cache (cache_path, library, keys, content, calibration, min_probability, &cached,
                  &reuse->why_full))
    {
      /* Faces the cache does not know, and the kept ones, in library order. */
      g_autofree guint8 *is_kept = g_new0 (guint8, MAX (n, 1));
      for (gsize k = 0; k < cached.n_old; k++)
        if (cached.new_index[k] != G_MAXUINT32)
          is_kept[cached.new_index[k]] = 1;
      g_autofree guint32 *kept = g_new (guint32, MAX (n, 1));
      g_autofree guint32 *added = g_new (guint32, MAX (n, 1));
      gsize n_kept = 0, n_added = 0;
      for (gsize i = 0; i < n; i++)
        {
          if (is_kept[i])
            kept[n_kept++] = (guint32) i;
          else
            added[n_added++] = (guint32) i;
        }

      LkScanResult *partial = NULL;
      if (n_added > 0)
        {
          partial = scan_added (library, kept, n_kept, added, n_added, calibration, min_probability,
                                options, cancellable, error);
          if (partial == NULL)
            {
              cached_clear (&cached);
              return NULL;
            }
        }
      else
        {
          partial = g_new0 (LkScanResult, 1);
          partial->pairs = g_array_new (FALSE, FALSE, sizeof (LkPair));
          partial->near_pairs = g_array_new (FALSE, FALSE, sizeof (LkPair));
          partial->kernel = "none";
          partial->prefilter = "off";
          partial->choice = g_intern_static_string ("every pair was in the kept scan");
          if (options->progress != NULL)
            options->progress (1.0, options->progress_data);
        }
      merge_pairs (cached.pairs, cached.ordered, partial->pairs);
      g_array_append_vals (cached.near, partial->near_pairs->data, partial->near_pairs->len);
      sort_pairs (cached.near);

      result = partial;
      g_array_unref (result->pairs);
      g_array_unref (result->near_pairs);
      result->pairs = g_steal_pointer (&cached.pairs);
      result->near_pairs = g_steal_pointer (&cached.near);
      result->near_boundary = result->near_pairs->len;
      result->reused_faces = cached.kept;
      reuse->reused = TRUE;
      reuse->kept = cached.kept;
      reuse->added = n_added;
      reuse->removed = cached.removed;
      /* The same faces in the same order: the file already holds this. */
      reuse->saved = cached.identity;
      cached_clear (&cached);
    }
  else
    {
      result = lk_scan (&(LkFaces){ library->embeddings, n, library->dim, library->crop_px,
                                    library->photo, library->gallery },
                        calibration, min_probability, options, cancellable, error);
      if (result == NULL)
        return NULL;
      reuse->added = n;
    }
  result->seconds = (g_get_monotonic_time () - started) / (double) G_USEC_PER_SEC;
  if (!reuse->saved)
    reuse->saved
        = write_cache (cache_path, library, keys, content, calibration, min_probability, result);
  return result;
}
