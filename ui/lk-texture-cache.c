/* lk-texture-cache.c — face thumbnails as GdkTextures, decoded off the main thread
 *
 * Why it is shaped this way:
 *
 * - Decoding a 96 × 96 PNG takes ~0.1 ms, but a fling through a grid of
 *   100,000 faces binds thousands of tiles a second, so decoding on the main
 *   thread would drop frames. Decodes run on a GThreadPool of
 *   DECODE_THREADS threads, newest request first (a LIFO sort), so the tiles
 *   the user is looking at now load before the ones scrolled past.
 * - The pool never touches the cache: each result goes into a locked list and
 *   at most one idle is pending to move the whole list into the cache, so a
 *   burst of 1,000 decodes costs one main-loop dispatch, not 1,000.
 * - GdkMemoryTexture is built in the worker from the decoder's RGBA8 buffer
 *   (the pixels are handed over, not copied): textures are immutable and
 *   thread-safe to create.
 * - Least recently used textures are dropped beyond `capacity`; failures are
 *   cached like textures, so a corrupt file is read once, not on every bind.
 */
#include "config.h"

#include "lk-texture-cache.h"
#include "library/lk-thumbnail.h"

/* Few enough not to compete with the scan on a small machine, enough to keep
 * up with scrolling (each thread decodes ~10,000 small thumbnails a second). */
#define DECODE_THREADS   2
/* 96 × 96 RGBA8 is 36 KiB: 1,024 textures are ~37 MiB, several screens full. */
#define DEFAULT_CAPACITY 1024

typedef struct
{
  char *path;
  LkTextureState state;
  GdkTexture *texture;
  char *error;
  GList *link; /* in lru, head = most recent */
} Entry;

typedef struct
{
  char *path;
  guint64 seq;
  /* Filled by the worker. */
  LkTextureState state;
  GdkTexture *texture;
  char *error;
} Request;

struct _LkTextureCache
{
  GObject parent_instance;

  guint capacity;
  GHashTable *entries; /* path → Entry */
  GQueue lru;          /* of Entry */
  GThreadPool *pool;
  guint64 next_seq;
  gint closing; /* atomic: queued decodes are dropped, not run */

  GMutex lock;
  GPtrArray *done; /* of Request, under lock */
  guint idle_id;   /* under lock */
};

G_DEFINE_FINAL_TYPE (LkTextureCache, lk_texture_cache, G_TYPE_OBJECT)

enum
{
  SIGNAL_LOADED,
  SIGNAL_BATCH_LOADED,
  N_SIGNALS
};

static guint signals[N_SIGNALS];

static void
entry_free (gpointer data)
{
  Entry *entry = data;

  g_free (entry->path);
  g_clear_object (&entry->texture);
  g_free (entry->error);
  g_free (entry);
}

static void
request_free (gpointer data)
{
  Request *request = data;

  g_free (request->path);
  g_clear_object (&request->texture);
  g_free (request->error);
  g_free (request);
}

/* Names the path a texture was decoded from, for lk_texture_cache_texture_path(). */
static GQuark
texture_path_quark (void)
{
  return g_quark_from_static_string ("lk-texture-cache-path");
}

static void
texture_free_pixels (gpointer data)
{
  g_free (data);
}

static void
decode (Request *request)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (LkThumbnail) thumbnail = lk_thumbnail_load (request->path, &error);

  if (thumbnail == NULL)
    {
      request->state = g_error_matches (error, LK_THUMBNAIL_ERROR, LK_THUMBNAIL_ERROR_MISSING)
                           ? LK_TEXTURE_MISSING
                           : LK_TEXTURE_BROKEN;
      request->error = g_strdup (error->message);
      return;
    }
  g_autoptr (GBytes) bytes
      = g_bytes_new_with_free_func (thumbnail->pixels, thumbnail->stride * thumbnail->height,
                                    texture_free_pixels, thumbnail->pixels);
  thumbnail->pixels = NULL;
  request->texture = gdk_memory_texture_new ((int) thumbnail->width, (int) thumbnail->height,
                                             GDK_MEMORY_R8G8B8A8, bytes, thumbnail->stride);
  g_object_set_qdata_full (G_OBJECT (request->texture), texture_path_quark (),
                           g_strdup (request->path), g_free);
  request->state = LK_TEXTURE_READY;
}

static void
evict (LkTextureCache *self)
{
  GList *link = self->lru.tail;

  while (g_queue_get_length (&self->lru) > self->capacity && link != NULL)
    {
      Entry *entry = link->data;
      GList *prev = link->prev;

      /* A loading entry is still owed a result; it is evicted once it has one. */
      if (entry->state != LK_TEXTURE_LOADING)
        {
          g_queue_delete_link (&self->lru, link);
          g_hash_table_remove (self->entries, entry->path);
        }
      link = prev;
    }
}

static gboolean
on_idle_drain (gpointer user_data)
{
  LkTextureCache *self = user_data;
  g_autoptr (GPtrArray) done = NULL;

  g_mutex_lock (&self->lock);
  done = self->done;
  self->done = g_ptr_array_new_with_free_func (request_free);
  self->idle_id = 0;
  g_mutex_unlock (&self->lock);

  for (guint k = 0; k < done->len; k++)
    {
      Request *request = g_ptr_array_index (done, k);
      Entry *entry = g_hash_table_lookup (self->entries, request->path);

      if (entry == NULL)
        continue;
      entry->state = request->state;
      entry->texture = g_steal_pointer (&request->texture);
      entry->error = g_steal_pointer (&request->error);
    }
  for (guint k = 0; k < done->len; k++)
    {
      Request *request = g_ptr_array_index (done, k);
      g_signal_emit (self, signals[SIGNAL_LOADED], 0, request->path);
    }
  g_signal_emit (self, signals[SIGNAL_BATCH_LOADED], 0);
  evict (self);
  return G_SOURCE_REMOVE;
}

static void
on_pool_request (gpointer data, gpointer user_data)
{
  LkTextureCache *self = user_data;
  Request *request = data;

  if (g_atomic_int_get (&self->closing))
    {
      request_free (request);
      return;
    }
  decode (request);

  g_mutex_lock (&self->lock);
  g_ptr_array_add (self->done, request);
  if (self->idle_id == 0)
    self->idle_id = g_idle_add_full (G_PRIORITY_DEFAULT_IDLE, on_idle_drain, self, NULL);
  g_mutex_unlock (&self->lock);
}

static int
compare_newest_first (gconstpointer a, gconstpointer b, gpointer user_data)
{
  const Request *ra = a;
  const Request *rb = b;

  return ra->seq < rb->seq ? 1 : ra->seq > rb->seq ? -1 : 0;
}

static void
lk_texture_cache_finalize (GObject *object)
{
  LkTextureCache *self = LK_TEXTURE_CACHE (object);

  /* Queued decodes are dropped by the workers (GLib 2.74 did not free them
   * with an immediate shutdown: LeakSanitizer), running ones are waited for. */
  g_atomic_int_set (&self->closing, TRUE);
  g_thread_pool_free (self->pool, FALSE, TRUE);
  if (self->idle_id != 0)
    g_source_remove (self->idle_id);
  g_ptr_array_unref (self->done);
  g_queue_clear (&self->lru);
  g_hash_table_unref (self->entries);
  g_mutex_clear (&self->lock);
  G_OBJECT_CLASS (lk_texture_cache_parent_class)->finalize (object);
}

static void
lk_texture_cache_class_init (LkTextureCacheClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->finalize = lk_texture_cache_finalize;

  /* A path's texture or failure is now known. */
  signals[SIGNAL_LOADED] = g_signal_new ("loaded", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0,
                                         NULL, NULL, NULL, G_TYPE_NONE, 1, G_TYPE_STRING);
  /* After the "loaded" of each path of one batch: a listener waiting for any
   * of many paths looks them up once per batch, not once per path. */
  signals[SIGNAL_BATCH_LOADED]
      = g_signal_new ("batch-loaded", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL,
                      NULL, G_TYPE_NONE, 0);
}

static void
lk_texture_cache_init (LkTextureCache *self)
{
  self->entries = g_hash_table_new_full (g_str_hash, g_str_equal, NULL, entry_free);
  g_queue_init (&self->lru);
  g_mutex_init (&self->lock);
  self->done = g_ptr_array_new_with_free_func (request_free);
  self->pool = g_thread_pool_new (on_pool_request, self, DECODE_THREADS, FALSE, NULL);
  g_thread_pool_set_sort_function (self->pool, compare_newest_first, NULL);
}

LkTextureCache *
lk_texture_cache_new (guint capacity)
{
  LkTextureCache *self = g_object_new (LK_TYPE_TEXTURE_CACHE, NULL);

  self->capacity = capacity > 0 ? capacity : DEFAULT_CAPACITY;
  return self;
}

GdkTexture *
lk_texture_cache_lookup (LkTextureCache *self, const char *path, LkTextureState *state)
{
  g_return_val_if_fail (LK_IS_TEXTURE_CACHE (self), NULL);
  g_return_val_if_fail (state != NULL, NULL);

  if (path == NULL)
    {
      *state = LK_TEXTURE_MISSING;
      return NULL;
    }

  Entry *entry = g_hash_table_lookup (self->entries, path);
  if (entry != NULL)
    {
      g_queue_unlink (&self->lru, entry->link);
      g_queue_push_head_link (&self->lru, entry->link);
      *state = entry->state;
      return entry->texture;
    }

  entry = g_new0 (Entry, 1);
  entry->path = g_strdup (path);
  entry->state = LK_TEXTURE_LOADING;
  g_queue_push_head (&self->lru, entry);
  entry->link = self->lru.head;
  g_hash_table_insert (self->entries, entry->path, entry);

  Request *request = g_new0 (Request, 1);
  request->path = g_strdup (path);
  request->seq = self->next_seq++;
  g_thread_pool_push (self->pool, request, NULL);

  evict (self);
  *state = LK_TEXTURE_LOADING;
  return NULL;
}

gboolean
lk_texture_cache_peek (LkTextureCache *self, const char *path, LkTextureState *state,
                       GdkTexture **texture)
{
  g_return_val_if_fail (LK_IS_TEXTURE_CACHE (self), FALSE);
  g_return_val_if_fail (state != NULL && texture != NULL, FALSE);

  Entry *entry = path != NULL ? g_hash_table_lookup (self->entries, path) : NULL;
  *state = path == NULL ? LK_TEXTURE_MISSING : entry != NULL ? entry->state : LK_TEXTURE_LOADING;
  *texture = entry != NULL ? entry->texture : NULL;
  return path == NULL || entry != NULL;
}

const char *
lk_texture_cache_texture_path (GdkTexture *texture)
{
  g_return_val_if_fail (GDK_IS_TEXTURE (texture), NULL);
  return g_object_get_qdata (G_OBJECT (texture), texture_path_quark ());
}

const char *
lk_texture_cache_get_error (LkTextureCache *self, const char *path)
{
  g_return_val_if_fail (LK_IS_TEXTURE_CACHE (self), NULL);

  Entry *entry = path != NULL ? g_hash_table_lookup (self->entries, path) : NULL;
  return entry != NULL ? entry->error : NULL;
}

guint
lk_texture_cache_get_size (LkTextureCache *self)
{
  g_return_val_if_fail (LK_IS_TEXTURE_CACHE (self), 0);
  return g_queue_get_length (&self->lru);
}

guint
lk_texture_cache_get_n_loading (LkTextureCache *self)
{
  g_return_val_if_fail (LK_IS_TEXTURE_CACHE (self), 0);
  guint n = 0;
  for (GList *link = self->lru.head; link != NULL; link = link->next)
    n += ((Entry *) link->data)->state == LK_TEXTURE_LOADING;
  return n;
}
