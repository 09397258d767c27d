/* lk-library-private.h — what the loader's files (lk-library*.c) share
 *
 * The public face of the library is lk-library.h; this header is for the
 * loader's own rooms: lk-library.c (the load and the public entry points),
 * lk-library-manifest.c (library.json's bytes checked and parsed, whole or
 * in chunks), lk-library-sections.c (its members read into the LkLibrary),
 * lk-library-paths.c (paths and thumbnails checked and resolved, photos
 * outside the library) and lk-library-embeddings.c (the rows read and
 * checked).
 */
#pragma once

#include "lk-library.h"

#include <json-glib/json-glib.h>

G_BEGIN_DECLS

#define MANIFEST_NAME "library.json"

/* Longer than any path the system can open (PATH_MAX is 4096 with its NUL
 * on Linux; the folder's own path only adds to it). Refused up front: issue
 * 19's thumbnail path of 100 MB of missing folders hung the load, because
 * finding the deepest existing ancestor cost one dirname per level (80,000
 * "a/" took 1.6 s, growing with the square of the length). */
#define PATH_LENGTH_LIMIT 4095

/* Members of the top-level value counted by a scan of the bytes. */
typedef struct
{
  gsize colons;      /* ':' outside strings: one per member in standard JSON */
  gboolean standard; /* no comment, no single-quoted string */
  gssize trailing;   /* offset of a second top-level value, or -1 */
} Shape;

/* A directory that thumbnails live in, checked once: it resolves inside the
 * folder, so of its entries only symbolic links can lead out. */
typedef struct
{
  gboolean listed;   /* FALSE when it could not be read: check each file */
  GHashTable *links; /* names of its symbolic links, or NULL for none */
  int unreadable;    /* the errno that made the directory itself unresolvable, or 0 */
} ThumbDir;

/* A top-level array of the manifest that is parsed a chunk of elements at a
 * time (lk-library-manifest.c, "Streaming"). */
typedef struct
{
  gsize open;  /* offset of its '[' */
  gsize close; /* offset of its ']' */
  gsize count; /* elements */
} Span;

/* How the rows' reader waits for the manifest's pages to go
 * (lk-library-manifest.c, "Streaming"). */
typedef struct
{
  GMutex lock;
  GCond cond;
  gsize manifest_left; /* bytes of the manifest still resident */
} Pacer;

typedef struct
{
  const char *manifest; /* library.json's absolute path, for messages */
  LkLibrary *library;
  GString *path;        /* scratch */
  GHashTable *dirs;     /* thumbnail directory (relative) → ThumbDir */
  const char *last_key; /* the directory of the previous thumbnail */
  ThumbDir *last_dir;
  Shape shape; /* of library.json's bytes */
  /* Thumbnails that could not be resolved (an unreadable folder): how many,
   * and the first one's path and errno, for the library's one warning. */
  gsize unreadable_thumbnails;
  const char *unreadable_path;
  int unreadable_errno;
  gsize members;       /* members of every object in the tree, as walked */
  guint seen;          /* known members found in the face or photo being read */
  gsize empty_id_face; /* 1 + the last face whose id is "", or 0 */

  /* Streaming: the manifest's text, its arrays parsed in chunks (NULL
   * spans: the whole tree at once), how much of it was given back. */
  const char *text;
  gsize text_length;
  const Span *faces_span;
  const Span *photos_span;
  gsize released; /* bytes at the start of `text` whose pages were given back */
  Pacer *pacer;   /* NULL: the rows are read without waiting */
} Loader;

/* What lk_library_read_whole found: the file's bytes, or how it changed under us. */
typedef enum
{
  READ_OK,
  READ_FAILED, /* errno is set */
  READ_SHRANK, /* *got < need: the file ended early */
  READ_GREW,   /* the file holds more than `need` bytes */
} ReadResult;

typedef gboolean (*ElementsFunc) (Loader *loader, JsonArray *array, gsize base, GError **error);

/* lk-library.c */
G_GNUC_INTERNAL gboolean lk_library_fail (GError **error, LkLibraryError code, const char *file,
                                          const char *format, ...) G_GNUC_PRINTF (4, 5);
G_GNUC_INTERNAL char *lk_library_group_digits (guint64 value);

/* lk-library-manifest.c */
G_GNUC_INTERNAL void lk_library_scan_shape (const char *data, gsize length, Shape *shape);
G_GNUC_INTERNAL gsize lk_library_count_members (JsonNode *node);
G_GNUC_INTERNAL void lk_library_count_object (Loader *loader, JsonObject *object, guint seen,
                                              const char *const *known);
/* These two keep their names: tests/valgrind.supp names them (fun:) to
 * suppress json-glib 1.6's leak of a trailing top-level value. */
G_GNUC_INTERNAL gboolean check_with_signals (Loader *loader, const char *data, gsize length,
                                             GError **error);
G_GNUC_INTERNAL JsonParser *parse_manifest (Loader *loader, const char *data, gsize length,
                                            GError **error);
G_GNUC_INTERNAL gboolean lk_library_find_arrays (const char *data, gsize length, Span *faces,
                                                 gboolean *has_faces, Span *photos,
                                                 gboolean *has_photos);
G_GNUC_INTERNAL GString *lk_library_make_skeleton (const char *data, gsize length,
                                                   const Span *faces, const Span *photos);
G_GNUC_INTERNAL gboolean lk_library_stream_elements (Loader *loader, const Span *span,
                                                     ElementsFunc read, GError **error);

/* lk-library-sections.c */
G_GNUC_INTERNAL char *lk_library_describe_node (JsonNode *node);
G_GNUC_INTERNAL gboolean lk_library_read_header (Loader *loader, JsonObject *root,
                                                 JsonArray **faces_out, GError **error);
G_GNUC_INTERNAL gboolean lk_library_read_body (Loader *loader, JsonObject *root, JsonArray *faces,
                                               GError **error);

/* lk-library-paths.c */
G_GNUC_INTERNAL char *lk_library_real_path (const char *path);
G_GNUC_INTERNAL gboolean lk_library_too_long (const char *manifest, gsize length, const char *field,
                                              GError **error);
G_GNUC_INTERNAL gboolean lk_library_goes_up (const char *path);
G_GNUC_INTERNAL gboolean lk_library_check_relative (const char *manifest, const char *relative,
                                                    const char *field, const char *inside,
                                                    GError **error);
G_GNUC_INTERNAL gboolean lk_library_check_lexically (const char *manifest, const char *relative,
                                                     const char *field, GError **error);
G_GNUC_INTERNAL gboolean lk_library_check_symlinks (const char *manifest, const char *root,
                                                    const char *joined, const char *relative,
                                                    const char *field, int *unresolvable,
                                                    GError **error);
G_GNUC_INTERNAL void lk_library_thumb_dir_free (gpointer data);
G_GNUC_INTERNAL void lk_library_set_thumbnail_warning (Loader *loader);
G_GNUC_INTERNAL gboolean lk_library_check_thumbnail (Loader *loader, const char *relative,
                                                     gsize face, gboolean *usable, GError **error);

/* lk-library-embeddings.c */
G_GNUC_INTERNAL int lk_library_open_regular (const char *path, goffset *size, GError **error);
G_GNUC_INTERNAL ReadResult lk_library_read_whole (int fd, void *buffer, gsize need, gsize *got,
                                                  Pacer *pacer);
G_GNUC_INTERNAL gboolean lk_library_read_embeddings (Loader *loader, gsize need, GError **error);

G_END_DECLS
