/* lk-library.h — the library folder (LIBRARY-FORMAT.md, version 1)
 *
 * A library is loaded once and then read by everything else: the scan reads
 * the embedding rows, crop sizes, photos and gallery flags; the people model
 * reads labels and thumbnails. It is plain data with no signals, so it is a
 * struct with _load/_free rather than a GObject. All fields are read-only for
 * callers.
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

#define LK_LIBRARY_ERROR (lk_library_error_quark ())
GQuark lk_library_error_quark (void);

typedef enum
{
  LK_LIBRARY_ERROR_IO,         /* a file could not be read */
  LK_LIBRARY_ERROR_JSON,       /* library.json is not JSON */
  LK_LIBRARY_ERROR_FORMAT,     /* a field is missing, of the wrong type or out of range */
  LK_LIBRARY_ERROR_VERSION,    /* a version newer than this program understands */
  LK_LIBRARY_ERROR_PATH,       /* a path is absolute or leaves the folder */
  LK_LIBRARY_ERROR_EMBEDDINGS, /* embeddings.f32 has the wrong size or a bad row */
  LK_LIBRARY_ERROR_UNMAPPED,   /* a photo only the source's server knows, and no map for it */
} LkLibraryError;

#define LK_LIBRARY_VERSION 1
#define LK_LIBRARY_MAX_DIM 4096

/* The pair model: probability = sigmoid (a·cos + b + w_size·log2 (min crop)). */
typedef struct
{
  double a;
  double b;
  double w_size;
  gint64 positive_pairs;
  gint64 negative_pairs;
} LkCalibration;

#define LK_CALIBRATION_DEFAULT ((LkCalibration){ 30.0, -10.5, 0.0, 0, 0 })

typedef struct
{
  guint64 id;
  char *path;    /* relative to the library folder, or NULL */
  gint64 width;  /* 0 when absent */
  gint64 height; /* 0 when absent */
  char *taken;   /* as written, or NULL */
  /* The original outside the library: relative to photo_folders[folder]
   * (a library made from a photo folder), or NULL. */
  char *original;
  guint folder;
  char *source_path; /* the source server's path (Immich originalPath), or NULL */
} LkPhoto;

/* A person of the source the library was imported from (the manifest's
 * "people"): lk-source-people.h turns them into the lowest layer of
 * decisions. */
typedef struct
{
  char *id;   /* the source's id of the person */
  char *name; /* NULL when unnamed */
  gboolean hidden;
  guint32 *faces; /* the faces the source assigned, as indices, in the manifest's order */
  gsize n_faces;
} LkSourcePerson;

typedef struct
{
  char *folder;          /* the library folder, absolute */
  char *embeddings_path; /* absolute */
  guint dim;
  gsize count;                 /* faces */
  gboolean normalized_on_disk; /* the manifest's `normalized` */

  /* count × dim unit-norm floats, row-major: the library's own copy, read
   * (never mapped, so a file truncated after the load cannot kill a scan with
   * SIGBUS) and normalised at load time. Aligned to 64 bytes. */
  const float *embeddings;

  LkCalibration calibration;
  /* The manifest has a "calibration" (else `calibration` is the format's
   * default, which fits ArcFace-like models only: a window session
   * estimates one for such a library, lk_session_set_estimate_missing). */
  gboolean calibration_given;
  double min_probability;
  double min_gallery_quality;

  /* Per face, count entries each. gallery[] is decided on the manifest's
   * double values: use it rather than comparing the float quality[] again. */
  guint64 *photo;
  float *crop_px;
  float *quality;
  guint8 *gallery;  /* 1 when quality >= min_gallery_quality */
  char **thumbnail; /* relative path or NULL */
  char **label;     /* ground truth or NULL */
  char **face_id;   /* faces[].id (the source's face id) or NULL */
  gboolean *has_box;
  double (*box)[4]; /* x, y, w, h when has_box[i] */

  LkPhoto *photos;
  gsize n_photos;
  /* The manifest's photo_folders: absolute, as the computer that made the
   * library saw them; only ever read, and written into only to add an XMP
   * sidecar when the user asks (lk-export-xmp). */
  char **photo_folders;
  gsize n_photo_folders;

  LkSourcePerson *source_people;
  gsize n_source_people;
  gsize source_unknown_faces; /* people[].faces keys that no faces[].id has */

  /* Hex SHA-256 over library.json's bytes followed by embeddings.f32's size
   * as 8 little-endian bytes. Informational since review.json names faces by
   * key (lk_library_face_keys): any re-export changes it; it only tells
   * whether an index-based review.json of version 1 can be migrated. */
  char *fingerprint;

  /* NULL, or the one warning for faces whose thumbnail path cannot be
   * resolved (a thumbnail folder that cannot be read; not a reason to refuse
   * the whole library). Those faces have thumbnail[i] == NULL and are
   * shown with a placeholder. */
  char *thumbnail_warning;

  /*< private >*/
  gboolean streamed;       /* manifest read in chunks (lk-library-manifest.c, "Streaming") */
  float *owned;            /* g_aligned_free */
  GHashTable *photo_index; /* id → index into photos */
  GStringChunk *strings;   /* every string above points in here */
} LkLibrary;

LkLibrary *lk_library_load (const char *folder, GError **error);
void lk_library_free (LkLibrary *library);

/* Gives the rows back (embeddings becomes NULL; everything else stays), for
 * a caller done with them: `likeness-cli people` after its scan, where they
 * were 195 MB of the peak at 100,000 faces of 512 floats. */
void lk_library_release_embeddings (LkLibrary *library);

static inline const float *
lk_library_row (const LkLibrary *library, gsize i)
{
  return library->embeddings + i * library->dim;
}

/* A key per face that survives a re-export of the library (faces reordered,
 * photos added, whitespace changed): "id:" + faces[].id when the face has
 * one, else a content key "c:" + 16 hex digits of the FNV-1a 64 hash of its
 * photo id, its box and its embedding row (LIBRARY-FORMAT.md). A key that
 * two faces would share gets "#2", "#3"… on the later ones. review.json
 * names faces by these keys. count strings and a NULL; g_strfreev. */
char **lk_library_face_keys (const LkLibrary *library);

/* The photo with this id, or NULL when the manifest does not list it. */
const LkPhoto *lk_library_find_photo (const LkLibrary *library, guint64 id);

/* Absolute path of face i's thumbnail, or NULL when it has none. */
char *lk_library_thumbnail_path (const LkLibrary *library, gsize i);

/* Resolves a manifest path against the folder and refuses an absolute path,
 * `..`, or a symlink that leads outside. `field` names the field in errors.
 * A path that does not exist is not an error (the caller decides); a dangling
 * symlink is judged by where its text points. Returns folder/relative, with
 * the folder made absolute and symlink-free. */
char *lk_library_resolve_path (const char *folder, const char *relative, const char *field,
                               GError **error);

/* A user's mapping of a folder as the library names it (a photo server's
 * upload folder, a photo folder on the computer that made the library) to
 * where that folder is on this computer. */
typedef struct
{
  char *from; /* absolute, no trailing slash (but "/" itself) */
  char *to;   /* absolute */
} LkPathMap;

/* Parses "PREFIX=DIR" (both absolute; the last '=' splits, so a PREFIX may
 * hold one). DIR is made absolute against the current folder. */
gboolean lk_path_map_parse (const char *text, LkPathMap *map, GError **error);
void lk_path_map_clear (LkPathMap *map);

/* TRUE when `path` may name a file inside a folder as a library path
 * does (photos[].path, photos[].original): not empty, not absolute, at
 * most 4095 bytes, no ".." component. The loader's own rules, for an
 * importer to decide what it writes. */
gboolean lk_library_relative_path_ok (const char *path);

/* Where a photo's file is on this computer, for reading it (the face viewer)
 * or writing a sidecar beside it (lk-export-xmp), in this order:
 * photos[].path inside the library folder (lk_library_resolve_path);
 * photos[].original under photo_folders[folder]; photos[].source_path.
 * The last two go through the first of `maps` whose `from` is a leading
 * part of them (whole path components); a source_path no map covers is
 * never opened (it is the server's, not this computer's): NULL, with
 * LK_LIBRARY_ERROR_UNMAPPED naming it and saying to map its folder. A path given by a map that
 * goes up with ".." is refused. The file may not exist: the caller says
 * where it looked. NULL without an error when the photo names no file. */
char *lk_library_photo_file (const LkLibrary *library, const LkPhoto *photo, const LkPathMap *maps,
                             gsize n_maps, GError **error);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (LkLibrary, lk_library_free)

G_END_DECLS
