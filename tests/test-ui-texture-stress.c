/* test-ui-texture-stress — 2,000 hostile thumbnail files through the texture cache
 *
 * A library folder of thumbnails of every broken kind — truncated PNGs, JPEG
 * bytes named .png, empty files, an IHDR claiming 5000 × 5000, random bytes,
 * a huge sparse file, directories, FIFOs and /dev/zero named like PNGs — mixed
 * with real ones (some at the 1024-pixel limit), requested the way a
 * scrolling grid binds tiles: a batch every frame. Every request must end in
 * exactly the state its kind calls for (a texture for a real PNG, the
 * "missing" placeholder for an absent file, "broken" for everything else),
 * nothing may crash, and the main loop must never be kept busy.
 *
 * "Busy" is measured as the stall probe (ui/dev/lk-stall-probe.c) does: a
 * G_PRIORITY_HIGH timeout every PERIOD_MS notes how late it runs and how much
 * CPU time the main thread spent in between. Wall-clock lateness on a shared,
 * loaded machine measures the scheduler, so it is only reported; the main
 * thread's own CPU time in one gap is what our code costs, and that is held
 * under MAX_BUSY_MS. Needs no display (GdkMemoryTexture is plain data), so it
 * also runs in the ASan build, whose leak check covers the decode paths.
 */
#include "config.h"

#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include <glib/gstdio.h>

#include "library/lk-sample.h"
#include "lk-texture-cache.h"
#include "library/lk-thumbnail.h"

#define FILES       2000
#define BATCH       50
#define PERIOD_MS   5
#define MAX_BUSY_MS 100

typedef enum
{
  KIND_VALID,
  KIND_VALID_LARGEST,
  KIND_TRUNCATED,
  KIND_JPEG,
  KIND_EMPTY,
  KIND_IHDR_BOMB,
  KIND_RANDOM,
  KIND_HUGE_CHUNK,
  KIND_DIRECTORY,
  KIND_MISSING,
  KIND_FIFO,
  KIND_DEV_ZERO,
  KIND_OVERSIZED_FILE,
  N_KINDS
} Kind;

typedef struct
{
  char *dir;
  LkTextureCache *cache;
  GHashTable *expected; /* path → LkTextureState + 1 */
  GHashTable *seen;     /* path → state + 1, from "loaded" */
  guint next;           /* next file to request */
  char **paths;
  gint64 last_dispatch;
  gint64 last_cpu;
  double longest_late_ms;
  double longest_busy_ms;
  guint ready;
} Fixture;

static gint64
thread_cpu_us (void)
{
  struct timespec ts;

  clock_gettime (CLOCK_THREAD_CPUTIME_ID, &ts);
  return (gint64) ts.tv_sec * G_USEC_PER_SEC + ts.tv_nsec / 1000;
}

static GBytes *
encode_png (guint side, guint8 shade)
{
  g_autoptr (LkThumbnail) thumbnail = lk_thumbnail_new (side, side);
  g_autoptr (GError) error = NULL;

  for (gsize k = 0; k < thumbnail->stride * side; k++)
    thumbnail->pixels[k] = (guint8) (shade + k);
  GBytes *bytes = lk_thumbnail_encode (thumbnail, &error);
  g_assert_no_error (error);
  return bytes;
}

/* A signature and an IHDR with a correct CRC for width × height, then an
 * IEND: a decoder that trusts the header allocates 100 MB for nothing. */
static GByteArray *
ihdr_png (guint32 width, guint32 height)
{
  static const guint8 signature[] = { 0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n' };
  static const guint8 iend[] = { 0, 0, 0, 0, 'I', 'E', 'N', 'D', 0xae, 0x42, 0x60, 0x82 };
  guint8 chunk[4 + 4 + 13 + 4] = { 0, 0, 0, 13, 'I', 'H', 'D', 'R' };
  GByteArray *out = g_byte_array_new ();

  chunk[8] = width >> 24, chunk[9] = width >> 16, chunk[10] = width >> 8, chunk[11] = width;
  chunk[12] = height >> 24, chunk[13] = height >> 16, chunk[14] = height >> 8, chunk[15] = height;
  chunk[16] = 8; /* bit depth */
  chunk[17] = 6; /* RGBA */
  guint32 crc = crc32 (0, chunk + 4, 4 + 13);
  chunk[21] = crc >> 24, chunk[22] = crc >> 16, chunk[23] = crc >> 8, chunk[24] = crc;
  g_byte_array_append (out, signature, sizeof signature);
  g_byte_array_append (out, chunk, sizeof chunk);
  g_byte_array_append (out, iend, sizeof iend);
  return out;
}

static void
write_file (const char *path, const void *data, gsize length)
{
  g_autoptr (GError) error = NULL;

  g_assert_true (g_file_set_contents (path, data, (gssize) length, &error));
  g_assert_no_error (error);
}

/* Writes file `k` of kind k % N_KINDS and returns the state it must end in. */
static LkTextureState
write_junk (const char *path, guint k, GBytes *valid, GBytes *largest)
{
  gsize valid_length;
  const guint8 *valid_data = g_bytes_get_data (valid, &valid_length);
  guint8 noise[512];

  for (guint b = 0; b < sizeof noise; b++)
    noise[b] = (guint8) g_test_rand_int ();

  switch ((Kind) (k % N_KINDS))
    {
      case KIND_VALID:
        write_file (path, valid_data, valid_length);
        return LK_TEXTURE_READY;
      case KIND_VALID_LARGEST:
        /* Few of them: 4 MiB of pixels each. */
        if (k < 10 * N_KINDS)
          {
            gsize length;
            const guint8 *data = g_bytes_get_data (largest, &length);
            write_file (path, data, length);
            return LK_TEXTURE_READY;
          }
        write_file (path, valid_data, valid_length);
        return LK_TEXTURE_READY;
      case KIND_TRUNCATED:
        write_file (path, valid_data, (gsize) g_test_rand_int_range (1, (gint32) valid_length));
        return LK_TEXTURE_BROKEN;
      case KIND_JPEG:
        {
          static const guint8 jfif[] = { 0xff, 0xd8, 0xff, 0xe0, 0, 16, 'J', 'F', 'I', 'F', 0 };
          memcpy (noise, jfif, sizeof jfif);
          write_file (path, noise, sizeof noise);
          return LK_TEXTURE_BROKEN;
        }
      case KIND_EMPTY:
        write_file (path, "", 0);
        return LK_TEXTURE_BROKEN;
      case KIND_IHDR_BOMB:
        {
          g_autoptr (GByteArray) bomb = ihdr_png (5000, 5000);
          write_file (path, bomb->data, bomb->len);
          return LK_TEXTURE_BROKEN;
        }
      case KIND_RANDOM:
        write_file (path, noise, (gsize) g_test_rand_int_range (1, sizeof noise));
        return LK_TEXTURE_BROKEN;
      case KIND_HUGE_CHUNK:
        {
          /* A valid header, then a chunk claiming 2 GiB. */
          g_autoptr (GByteArray) png = ihdr_png (64, 64);
          static const guint8 idat[] = { 0x7f, 0xff, 0xff, 0xff, 'I', 'D', 'A', 'T' };
          g_byte_array_set_size (png, png->len - 12);
          g_byte_array_append (png, idat, sizeof idat);
          g_byte_array_append (png, noise, 64);
          write_file (path, png->data, png->len);
          return LK_TEXTURE_BROKEN;
        }
      case KIND_DIRECTORY:
        g_assert_cmpint (g_mkdir (path, 0700), ==, 0);
        return LK_TEXTURE_BROKEN;
      case KIND_MISSING:
        return LK_TEXTURE_MISSING;
      case KIND_FIFO:
        /* Opening a FIFO for reading blocks until a writer comes: never. */
        g_assert_cmpint (mkfifo (path, 0600), ==, 0);
        return LK_TEXTURE_BROKEN;
      case KIND_DEV_ZERO:
        /* Reading it never ends. */
        g_assert_cmpint (symlink ("/dev/zero", path), ==, 0);
        return LK_TEXTURE_BROKEN;
      case KIND_OVERSIZED_FILE:
        {
          /* Sparse: 65 MiB on paper, nothing on disk. */
          write_file (path, valid_data, valid_length);
          g_assert_cmpint (truncate (path, (off_t) LK_THUMBNAIL_MAX_FILE_SIZE + 1), ==, 0);
          return LK_TEXTURE_BROKEN;
        }
      case N_KINDS:
        break;
    }
  g_assert_not_reached ();
}

static void
remove_tree (const char *path)
{
  g_autoptr (GDir) dir = g_dir_open (path, 0, NULL);
  const char *name;

  if (dir == NULL)
    {
      g_unlink (path);
      return;
    }
  while ((name = g_dir_read_name (dir)) != NULL)
    {
      g_autofree char *child = g_build_filename (path, name, NULL);
      remove_tree (child);
    }
  g_rmdir (path);
}

static void
on_loaded (LkTextureCache *cache, const char *path, gpointer user_data)
{
  Fixture *f = user_data;
  LkTextureState state;
  GdkTexture *texture = lk_texture_cache_lookup (cache, path, &state);
  gpointer want = g_hash_table_lookup (f->expected, path);

  g_assert_nonnull (want);
  g_assert_false (g_hash_table_contains (f->seen, path));
  if (GPOINTER_TO_INT (want) - 1 != (int) state)
    g_error ("%s ended %d, not %d (%s)", path, state, GPOINTER_TO_INT (want) - 1,
             lk_texture_cache_get_error (cache, path));
  g_assert_true ((texture != NULL) == (state == LK_TEXTURE_READY));
  if (state == LK_TEXTURE_BROKEN)
    g_assert_nonnull (strstr (lk_texture_cache_get_error (cache, path), path));
  if (state == LK_TEXTURE_READY)
    f->ready++;
  g_hash_table_insert (f->seen, g_strdup (path), GINT_TO_POINTER (state + 1));
}

/* The stall probe's measure: lateness of a high-priority timeout, and the
 * main thread's CPU time since its last run. */
static gboolean
on_probe (gpointer user_data)
{
  Fixture *f = user_data;
  gint64 now = g_get_monotonic_time ();
  gint64 cpu = thread_cpu_us ();

  f->longest_late_ms = MAX (f->longest_late_ms, (now - f->last_dispatch) / 1000.0 - PERIOD_MS);
  f->longest_busy_ms = MAX (f->longest_busy_ms, (cpu - f->last_cpu) / 1000.0);
  f->last_dispatch = now;
  f->last_cpu = cpu;
  return G_SOURCE_CONTINUE;
}

/* A frame's worth of tiles bound, as a scrolling grid does. */
static gboolean
on_frame (gpointer user_data)
{
  Fixture *f = user_data;
  LkTextureState state;

  for (guint k = 0; k < BATCH && f->next < FILES; k++, f->next++)
    {
      g_assert_null (lk_texture_cache_lookup (f->cache, f->paths[f->next], &state));
      g_assert_cmpint (state, ==, LK_TEXTURE_LOADING);
    }
  return f->next < FILES ? G_SOURCE_CONTINUE : G_SOURCE_REMOVE;
}

static void
test_hostile_folder (void)
{
  Fixture f = { 0 };
  g_autoptr (GBytes) valid = encode_png (LK_SAMPLE_THUMBNAIL_SIDE, 40);
  g_autoptr (GBytes) largest = encode_png (LK_THUMBNAIL_MAX_SIDE, 90);
  guint counts[N_KINDS] = { 0 };

  f.dir = g_dir_make_tmp ("lk-texture-stress-XXXXXX", NULL);
  g_assert_nonnull (f.dir);
  f.expected = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  f.seen = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  f.paths = g_new0 (char *, FILES + 1);
  for (guint k = 0; k < FILES; k++)
    {
      f.paths[k] = g_strdup_printf ("%s/thumbs/%06u.png", f.dir, k);
      if (k == 0)
        {
          g_autofree char *thumbs = g_path_get_dirname (f.paths[k]);
          g_assert_cmpint (g_mkdir (thumbs, 0700), ==, 0);
        }
      LkTextureState state = write_junk (f.paths[k], k, valid, largest);
      g_hash_table_insert (f.expected, g_strdup (f.paths[k]), GINT_TO_POINTER (state + 1));
      counts[k % N_KINDS]++;
    }

  f.cache = lk_texture_cache_new (0);
  g_signal_connect (f.cache, "loaded", G_CALLBACK (on_loaded), &f);
  f.last_dispatch = g_get_monotonic_time ();
  f.last_cpu = thread_cpu_us ();
  guint probe = g_timeout_add_full (G_PRIORITY_HIGH, PERIOD_MS, on_probe, &f, NULL);
  g_timeout_add (16, on_frame, &f);

  while (g_hash_table_size (f.seen) < FILES)
    g_main_context_iteration (NULL, TRUE);
  g_source_remove (probe);

  g_test_message ("%u files of %d kinds, %u textures; main loop: longest lateness %.1f ms, "
                  "longest busy %.1f ms of main-thread CPU",
                  FILES, N_KINDS, f.ready, f.longest_late_ms, f.longest_busy_ms);
  for (guint kind = 0; kind < N_KINDS; kind++)
    g_assert_cmpuint (counts[kind], >, 0);
  g_assert_cmpuint (f.ready, ==, counts[KIND_VALID] + counts[KIND_VALID_LARGEST]);
  g_assert_cmpfloat (f.longest_busy_ms, <, MAX_BUSY_MS);

  g_clear_object (&f.cache);
  g_hash_table_unref (f.expected);
  g_hash_table_unref (f.seen);
  g_strfreev (f.paths);
  remove_tree (f.dir);
  g_free (f.dir);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/ui-texture-stress/hostile-folder", test_hostile_folder);
  return g_test_run ();
}
