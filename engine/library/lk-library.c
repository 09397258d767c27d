/* lk-library.c — loading a library folder (LIBRARY-FORMAT.md, version 1)
 *
 * Why it is shaped this way. Figures: 100 000 faces × 512 (a 17 MB compact
 * manifest, 205 MB of rows), perf samples and CPU seconds on a 2-core VM
 * shared with other builds, so only ratios taken in one run mean much.
 *
 * - json-glib builds the whole tree before we can look at it; that parse
 *   (≈0.67 s of CPU) and freeing the tree (≈0.3 s) are the floor. A standard
 *   manifest is parsed in chunks of faces and photos, so the tree of all of
 *   them never exists at once (see "Streaming"). The rest
 *   must cost less than the parse, so the walk over the tree allocates nothing
 *   per face: numbers go into flat arrays and strings into one GStringChunk,
 *   and field names for messages are only formatted when a message is made.
 * - Three threads: the manifest's SHA-256 (9 % of a load's samples) runs
 *   while json-glib parses; the embedding rows are read and checked
 *   while the main thread walks the faces and frees the tree. A manifest error
 *   is reported before a row error, as a one-thread load would.
 * - Embeddings are read (pread, never mapped: a mapped file truncated by
 *   another process killed a scan with SIGBUS, issue 19) into one 64-byte
 *   aligned buffer, after the size is checked, then every row's norm is
 *   checked (one pass, sums of squares in double so that no float32 value can
 *   overflow them, and a row's sum is finite exactly when all its values are)
 *   and, under `normalized: false`, the buffer is normalised in place: one
 *   copy of the rows, whatever the manifest says. Reading 205 MB into fresh
 *   memory took 0.18 s of CPU, mostly page faults inside read(2);
 *   MADV_HUGEPAGE on the buffer made it slower (0.28–0.33 s, the kernel
 *   compacting memory) and MADV_POPULATE_WRITE saved nothing, so neither is
 *   used. Peak RSS of one load of 50,000 × 512 (102 MB of rows, an 8.5 MB
 *   manifest; bench-library --load under /usr/bin/time, three runs each,
 *   Zen 4, loaded machine): 232 MB mapped and 232 MB read, 2.27× the rows
 *   either way — the rows count once in both (a mapping's touched pages are
 *   resident too); the rest was json-glib's tree, alive while the rows load.
 *   Reading cost 0.06–0.09 s more system time than mapping. Streamed (make-
 *   sample --seed 7 libraries, 7.2 and 14.5 MB manifests, three interleaved
 *   runs, Zen 4, load 7): 50,000 faces peak at 108.3 MiB for 97.7 MiB of rows
 *   (1.11×; the whole tree: 212.6 MiB, 2.18×) in 0.80–0.82 s against
 *   0.78–0.95 s; 100,000 at 211.4 MiB for 195.3 MiB (1.08×; 420.4 MiB) in
 *   1.25–1.67 s against 1.74–1.83 s. What is left above the rows is the
 *   process (4.8 MiB), the per-face arrays (77 bytes a face) and the photos.
 * - Duplicate members: json-glib 1.6 silently keeps the last of two members of
 *   one name and has no hook that sees both. Its "object-member" signal is
 *   emitted after the member is stored, so an object whose size is smaller than
 *   the members announced for it has a duplicate; but connecting to it made the
 *   parse 50 % slower (0.80 s → 1.18 s). So the signals are a slow path: a byte
 *   scan counts the ':' outside strings (one per member in standard JSON) and
 *   compares with the members in the tree, which the walk over the faces adds
 *   up as it goes (a separate recursive count was 5 % of a load's samples).
 *   Equal means no duplicate; otherwise,
 *   and whenever the file uses json-glib's extensions (comments, single-quoted
 *   strings) that the scan does not model, the file is parsed again with the
 *   signals connected, which names the object and the member. The scan also
 *   catches a second top-level value, which json-glib 1.6 drops silently.
 * - Paths: each thumbnail directory is resolved once (realpath) and read once
 *   (readdir gives each entry's type): only a face whose file is a symbolic
 *   link costs a realpath. One lstat per face instead cost 0.3 s (files
 *   missing) to 0.6 s (present) for 100 000 faces on this VM, as much as half
 *   the parse; fstatat relative to the directory saved only a quarter of it.
 */
#include "config.h"

#include "lk-json.h"
#include "lk-library.h"
#include "lk-sandbox.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#ifdef __linux__
#include <sys/mman.h>
#endif
#include <unistd.h>

/* The quark string is written with hyphens, which clang-format would space. */
/* clang-format off */
/* clang-format off */
G_DEFINE_QUARK (lk-library-error-quark, lk_library_error)
/* clang-format on */
/* clang-format on */

#define MANIFEST_NAME  "library.json"
#define FORMAT_NAME    "likeness-library"
/* Photo ids must survive a round trip through a double (JavaScript tools,
 * json-glib's own number handling elsewhere): below 2^53 every integer does. */
#define PHOTO_ID_LIMIT (G_GINT64_CONSTANT (1) << 53)
/* How far a row's L2 norm may be from 1 under `normalized: true`: loose enough
 * for float32 rows written by any tool (their error is ~1e-7), tight enough
 * that a dot product is a cosine to three digits. */
#define NORM_TOLERANCE 1e-3
/* A streamed load's rows are read PACE_PIECE at a time and may exceed the
 * manifest text given back by PACE_SLACK (see "Streaming"). */
#define PACE_PIECE     ((gsize) 4 << 20)
#define PACE_SLACK     ((gsize) 1 << 20)

typedef enum
{
  KIND_INTEGER,
  KIND_NUMBER,
  KIND_STRING,
  KIND_BOOLEAN,
  KIND_OBJECT,
  KIND_ARRAY,
} Kind;

static const char *const kind_names[] = {
  [KIND_INTEGER] = "an integer",    [KIND_NUMBER] = "a number",  [KIND_STRING] = "a string",
  [KIND_BOOLEAN] = "true or false", [KIND_OBJECT] = "an object", [KIND_ARRAY] = "an array",
};

/* Where a member sits, to name it in a message: `parent[index].member`. */
typedef struct
{
  const char *parent; /* NULL at the top level */
  gssize index;       /* -1 when the parent is an object */
} Where;

static const Where top_level = { NULL, -1 };

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
 * time (see "Streaming" below). */
typedef struct
{
  gsize open;  /* offset of its '[' */
  gsize close; /* offset of its ']' */
  gsize count; /* elements */
} Span;

/* How the rows' reader waits for the manifest's pages to go (see
 * "Streaming"). */
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

/* library.json's bytes. */
typedef struct
{
  const guchar *data;
  gsize length;
} Manifest;

/* What the slow path's "object-*" and "array-*" signals saw. */
typedef struct
{
  GArray *seen; /* members announced so far, one per open object */
  guint depth;
  guint roots;
  JsonObject *duplicate_in;
  char *duplicate_name;
} Census;

static gboolean fail (GError **error, LkLibraryError code, const char *file, const char *format,
                      ...) G_GNUC_PRINTF (4, 5);

static gboolean
fail (GError **error, LkLibraryError code, const char *file, const char *format, ...)
{
  va_list args;
  va_start (args, format);
  g_autofree char *message = g_strdup_vprintf (format, args);
  va_end (args);
  g_set_error (error, LK_LIBRARY_ERROR, code, "%s: %s", file, message);
  return FALSE;
}

/* 37156860 → "37 156 860", as the messages print sizes. */
static char *
group_digits (guint64 value)
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

/* The shortest decimal that reads back as `value`; with `as_fraction`, an
 * integral value keeps a ".0" (the JSON 1.0 is not the integer 1). */
static char *
format_double (double value, gboolean as_fraction)
{
  g_autofree char *text = NULL;

  for (int precision = 6; precision <= 17; precision++)
    {
      g_free (text);
      text = g_strdup_printf ("%.*g", precision, value);
      if (g_ascii_strtod (text, NULL) == value)
        break;
    }
  if (as_fraction && isfinite (value) && strpbrk (text, ".e") == NULL)
    return g_strconcat (text, ".0", NULL);
  return g_steal_pointer (&text);
}

static char *
field_name (const Where *where, const char *member)
{
  if (where->parent == NULL)
    return g_strdup (member);
  if (where->index < 0)
    return g_strdup_printf ("%s.%s", where->parent, member);
  return g_strdup_printf ("%s[%" G_GSSIZE_FORMAT "].%s", where->parent, where->index, member);
}

static char *
describe_node (JsonNode *node)
{
  switch (json_node_get_node_type (node))
    {
      case JSON_NODE_OBJECT:
        return g_strdup ("an object");
      case JSON_NODE_ARRAY:
        return g_strdup ("an array");
      case JSON_NODE_NULL:
        return g_strdup ("null");
      case JSON_NODE_VALUE:
        break;
    }
  GType type = json_node_get_value_type (node);
  if (type == G_TYPE_INT64)
    return g_strdup_printf ("%" G_GINT64_FORMAT, json_node_get_int (node));
  if (type == G_TYPE_DOUBLE)
    return format_double (json_node_get_double (node), TRUE);
  if (type == G_TYPE_BOOLEAN)
    return g_strdup (json_node_get_boolean (node) ? "true" : "false");
  if (type == G_TYPE_STRING)
    return g_strdup_printf ("the string “%s”", json_node_get_string (node));
  return g_strdup (g_type_name (type));
}

static gboolean
node_is (JsonNode *node, Kind kind)
{
  JsonNodeType type = json_node_get_node_type (node);
  if (kind == KIND_OBJECT)
    return type == JSON_NODE_OBJECT;
  if (kind == KIND_ARRAY)
    return type == JSON_NODE_ARRAY;
  if (type != JSON_NODE_VALUE)
    return FALSE;
  GType value_type = json_node_get_value_type (node);
  switch (kind)
    {
      case KIND_INTEGER:
        return value_type == G_TYPE_INT64;
      case KIND_NUMBER:
        return value_type == G_TYPE_INT64 || value_type == G_TYPE_DOUBLE;
      case KIND_STRING:
        return value_type == G_TYPE_STRING;
      case KIND_BOOLEAN:
        return value_type == G_TYPE_BOOLEAN;
      case KIND_OBJECT:
      case KIND_ARRAY:
        break;
    }
  return FALSE;
}

/* Sets *node to member `name` of `object`, checked to be of `kind`; to NULL
 * when an optional member is absent or null. */
static gboolean
get_member (Loader *loader, JsonObject *object, const Where *where, const char *name, Kind kind,
            gboolean required, JsonNode **node, GError **error)
{
  JsonNode *found = json_object_get_member (object, name);

  *node = NULL;
  loader->seen += found != NULL;
  if (found == NULL || (!required && JSON_NODE_HOLDS_NULL (found)))
    {
      if (!required)
        return TRUE;
      g_autofree char *field = field_name (where, name);
      return fail (error, LK_LIBRARY_ERROR_FORMAT, loader->manifest, "%s is missing; it must be %s",
                   field, kind_names[kind]);
    }
  if (G_UNLIKELY (!node_is (found, kind)))
    {
      g_autofree char *field = field_name (where, name);
      g_autofree char *what = describe_node (found);
      return fail (error, LK_LIBRARY_ERROR_FORMAT, loader->manifest, "%s must be %s, not %s", field,
                   kind_names[kind], what);
    }
  *node = found;
  return TRUE;
}

/* The get_* helpers leave *value alone when an optional member is absent, so
 * the caller presets the default. */
static gboolean
get_int (Loader *loader, JsonObject *object, const Where *where, const char *name,
         gboolean required, gint64 *value, GError **error)
{
  JsonNode *node;
  if (!get_member (loader, object, where, name, KIND_INTEGER, required, &node, error))
    return FALSE;
  if (node != NULL)
    *value = json_node_get_int (node);
  return TRUE;
}

static gboolean
get_double (Loader *loader, JsonObject *object, const Where *where, const char *name,
            gboolean required, double *value, GError **error)
{
  JsonNode *node;
  if (!get_member (loader, object, where, name, KIND_NUMBER, required, &node, error))
    return FALSE;
  if (node != NULL)
    *value = json_node_get_double (node);
  return TRUE;
}

static gboolean
get_string (Loader *loader, JsonObject *object, const Where *where, const char *name,
            gboolean required, const char **value, GError **error)
{
  JsonNode *node;
  if (!get_member (loader, object, where, name, KIND_STRING, required, &node, error))
    return FALSE;
  if (node != NULL)
    *value = json_node_get_string (node);
  return TRUE;
}

static gboolean
get_boolean (Loader *loader, JsonObject *object, const Where *where, const char *name,
             gboolean required, gboolean *value, GError **error)
{
  JsonNode *node;
  if (!get_member (loader, object, where, name, KIND_BOOLEAN, required, &node, error))
    return FALSE;
  if (node != NULL)
    *value = json_node_get_boolean (node);
  return TRUE;
}

static gboolean
out_of_range (Loader *loader, const Where *where, const char *name, const char *rule, double value,
              GError **error)
{
  g_autofree char *field = field_name (where, name);
  g_autofree char *text = format_double (value, FALSE);
  return fail (error, LK_LIBRARY_ERROR_FORMAT, loader->manifest, "%s must be %s, not %s", field,
               rule, text);
}

static gboolean
out_of_range_int (Loader *loader, const Where *where, const char *name, const char *rule,
                  gint64 value, GError **error)
{
  g_autofree char *field = field_name (where, name);
  return fail (error, LK_LIBRARY_ERROR_FORMAT, loader->manifest,
               "%s must be %s, not %" G_GINT64_FORMAT, field, rule, value);
}

static gboolean
get_photo_id (Loader *loader, JsonObject *object, const Where *where, const char *name, guint64 *id,
              GError **error)
{
  gint64 value = 0;
  if (!get_int (loader, object, where, name, TRUE, &value, error))
    return FALSE;
  if (value < 0 || value >= PHOTO_ID_LIMIT)
    return out_of_range_int (loader, where, name, "a photo id from 0 to 2^53 − 1", value, error);
  *id = (guint64) value;
  return TRUE;
}

/* ── Byte scan and duplicate members ─────────────────────────────────────── */

static void
scan_shape (const char *data, gsize length, Shape *shape)
{
  gboolean in_string = FALSE;
  gboolean closed = FALSE;
  gsize depth = 0;

  shape->colons = 0;
  shape->standard = TRUE;
  shape->trailing = -1;
  for (gsize k = 0; k < length; k++)
    {
      char c = data[k];
      if (in_string)
        {
          if (c == '\\')
            k++;
          else if (c == '"')
            {
              in_string = FALSE;
              closed = depth == 0;
            }
          continue;
        }
      if (c == ' ' || c == '\n' || c == '\r' || c == '\t')
        continue;
      if (c == '/' || c == '\'')
        {
          shape->standard = FALSE;
          return;
        }
      if (closed)
        {
          shape->trailing = (gssize) k;
          return;
        }
      switch (c)
        {
          case '"':
            in_string = TRUE;
            break;
          case ':':
            shape->colons++;
            break;
          case '{':
          case '[':
            depth++;
            break;
          case '}':
          case ']':
            if (depth > 0 && --depth == 0)
              closed = TRUE;
            break;
          default:
            /* A bare number or literal at the top level ends at the next
             * space or structural character. */
            if (depth == 0)
              {
                while (k + 1 < length && strchr (" \t\r\n{}[]\":,'/", data[k + 1]) == NULL)
                  k++;
                closed = TRUE;
              }
            break;
        }
    }
}

static gsize
count_members (JsonNode *node)
{
  gsize n = 0;

  if (JSON_NODE_HOLDS_OBJECT (node))
    {
      JsonObject *object = json_node_get_object (node);
      JsonObjectIter iter;
      JsonNode *child;
      n = json_object_get_size (object);
      json_object_iter_init (&iter, object);
      while (json_object_iter_next (&iter, NULL, &child))
        if (!JSON_NODE_HOLDS_VALUE (child))
          n += count_members (child);
    }
  else if (JSON_NODE_HOLDS_ARRAY (node))
    {
      JsonArray *array = json_node_get_array (node);
      guint length = json_array_get_length (array);
      for (guint k = 0; k < length; k++)
        {
          JsonNode *child = json_array_get_element (array, k);
          if (!JSON_NODE_HOLDS_VALUE (child))
            n += count_members (child);
        }
    }
  return n;
}

static const char *const root_members[] = { "format",      "version",         "embeddings",
                                            "calibration", "min_probability", "min_gallery_quality",
                                            "photos",      "faces",           "photo_folders",
                                            NULL };
static const char *const embeddings_members[] = { "file", "dim", "count", "normalized", NULL };
static const char *const calibration_members[]
    = { "a", "b", "w_size", "positive_pairs", "negative_pairs", NULL };
static const char *const photo_members[]
    = { "id", "path", "width", "height", "taken", "original", "folder", "source_path", NULL };
static const char *const face_members[]
    = { "photo", "crop_px", "quality", "thumbnail", "label", "box", "id", NULL };

/* Adds a walked object's members to loader->members, the count the byte
 * scan's colons are compared with. Known members are scalars or containers
 * the walk visits itself; an unknown one may hold objects of its own, which
 * count_members adds. When all `seen` members of the object were known, there
 * is nothing more to count, which saves iterating 100 000 faces. */
static void
count_object (Loader *loader, JsonObject *object, guint seen, const char *const *known)
{
  guint size = json_object_get_size (object);
  JsonObjectIter iter;
  const char *name;
  JsonNode *child;

  loader->members += size;
  if (size == seen)
    return;
  json_object_iter_init (&iter, object);
  while (json_object_iter_next (&iter, &name, &child))
    if (!JSON_NODE_HOLDS_VALUE (child) && !g_strv_contains (known, name))
      loader->members += count_members (child);
}

static void
on_value_start (JsonParser *parser, gpointer data)
{
  Census *census = data;
  if (census->depth++ == 0)
    census->roots++;
}

static void
on_value_end (JsonParser *parser, gpointer value, gpointer data)
{
  Census *census = data;
  census->depth--;
}

static void
on_object_start (JsonParser *parser, gpointer data)
{
  Census *census = data;
  guint zero = 0;
  g_array_append_val (census->seen, zero);
  on_value_start (parser, data);
}

static void
on_object_member (JsonParser *parser, JsonObject *object, const char *name, gpointer data)
{
  Census *census = data;
  guint *seen = &g_array_index (census->seen, guint, census->seen->len - 1);

  /* json-glib stored the member before announcing it: a repeated name
   * replaced the first one, so the object is smaller than the count. */
  if (++*seen > json_object_get_size (object) && census->duplicate_in == NULL)
    {
      census->duplicate_in = object;
      census->duplicate_name = g_strdup (name);
    }
}

static void
on_object_end (JsonParser *parser, JsonObject *object, gpointer data)
{
  Census *census = data;
  g_array_set_size (census->seen, census->seen->len - 1);
  on_value_end (parser, object, data);
}

static gboolean
find_object (JsonNode *node, JsonObject *target, GString *path)
{
  gsize length = path->len;

  if (JSON_NODE_HOLDS_OBJECT (node))
    {
      JsonObject *object = json_node_get_object (node);
      JsonObjectIter iter;
      const char *name;
      JsonNode *child;
      if (object == target)
        return TRUE;
      json_object_iter_init (&iter, object);
      while (json_object_iter_next (&iter, &name, &child))
        {
          g_string_append_printf (path, "%s%s", length > 0 ? "." : "", name);
          if (find_object (child, target, path))
            return TRUE;
          g_string_truncate (path, length);
        }
    }
  else if (JSON_NODE_HOLDS_ARRAY (node))
    {
      JsonArray *array = json_node_get_array (node);
      for (guint k = 0; k < json_array_get_length (array); k++)
        {
          g_string_append_printf (path, "[%u]", k);
          if (find_object (json_array_get_element (array, k), target, path))
            return TRUE;
          g_string_truncate (path, length);
        }
    }
  return FALSE;
}

/* Parses again with json-glib's signals to find what the byte scan could only
 * suspect: a member given twice, or a second top-level value. */
static gboolean
check_with_signals (Loader *loader, const char *data, gsize length, GError **error)
{
  g_autoptr (JsonParser) parser = json_parser_new ();
  Census census = { g_array_new (FALSE, FALSE, sizeof (guint)), 0, 0, NULL, NULL };
  gboolean ok = TRUE;

  g_signal_connect (parser, "object-start", G_CALLBACK (on_object_start), &census);
  g_signal_connect (parser, "object-member", G_CALLBACK (on_object_member), &census);
  g_signal_connect (parser, "object-end", G_CALLBACK (on_object_end), &census);
  g_signal_connect (parser, "array-start", G_CALLBACK (on_value_start), &census);
  g_signal_connect (parser, "array-end", G_CALLBACK (on_value_end), &census);
  /* The same bytes parsed a moment ago, so this parse succeeds too. */
  json_parser_load_from_data (parser, data, (gssize) length, NULL);
  if (census.duplicate_in != NULL)
    {
      g_autoptr (GString) path = g_string_new (NULL);
      JsonNode *root = json_parser_get_root (parser);
      if (root != NULL && find_object (root, census.duplicate_in, path))
        ok = fail (error, LK_LIBRARY_ERROR_FORMAT, loader->manifest,
                   "%s has the member “%s” more than once",
                   path->len > 0 ? path->str : "the top-level object", census.duplicate_name);
      else
        ok = fail (error, LK_LIBRARY_ERROR_FORMAT, loader->manifest,
                   "an object has the member “%s” more than once", census.duplicate_name);
    }
  else if (census.roots > 1)
    ok = fail (error, LK_LIBRARY_ERROR_JSON, loader->manifest,
               "holds %u JSON values one after the other; it must hold one object", census.roots);

  g_array_unref (census.seen);
  g_free (census.duplicate_name);
  return ok;
}

static JsonParser *
parse_manifest (Loader *loader, const char *data, gsize length, GError **error)
{
  g_autoptr (JsonParser) parser = json_parser_new ();
  g_autoptr (GError) local = NULL;
  Shape shape;

  /* json-glib 1.6 leaks the string it was building on an unpaired surrogate
   * escape (found by fuzz-library): refused before it parses (lk-json.h). */
  gssize bad = lk_json_find_unpaired_surrogate (data, length);
  if (bad >= 0)
    {
      fail (error, LK_LIBRARY_ERROR_JSON, loader->manifest,
            "not valid JSON: line %u has a \\u escape that is not four hex digits or is half of "
            "a UTF-16 surrogate pair",
            lk_json_line_of (data, (gsize) bad));
      return NULL;
    }
  /* json-glib recurses once per level: 200,000 "[" overflowed its stack. */
  bad = lk_json_find_too_deep (data, length, LK_JSON_MAX_DEPTH);
  if (bad >= 0)
    {
      fail (error, LK_LIBRARY_ERROR_JSON, loader->manifest,
            "line %u is nested deeper than %d arrays and objects",
            lk_json_line_of (data, (gsize) bad), LK_JSON_MAX_DEPTH);
      return NULL;
    }
  /* A "\u0000" would cut a C string short, silently. */
  bad = lk_json_find_nul_escape (data, length);
  if (bad >= 0)
    {
      g_autofree char *field = lk_json_path_at (data, length, (gsize) bad);
      fail (error, LK_LIBRARY_ERROR_FORMAT, loader->manifest,
            "%s (line %u) has a \\u0000 (a NUL character) in a string; names and paths cannot "
            "hold one",
            field, lk_json_line_of (data, (gsize) bad));
      return NULL;
    }
  /* json-glib wraps an integer beyond 64 bits: "-18446744073709551613" is 3. */
  bad = lk_json_find_integer_out_of_range (data, length);
  if (bad >= 0)
    {
      gsize end = (gsize) bad + 1;
      while (end < length && g_ascii_isdigit (data[end]))
        end++;
      fail (error, LK_LIBRARY_ERROR_FORMAT, loader->manifest,
            "line %u holds the integer %.*s, which is out of range",
            lk_json_line_of (data, (gsize) bad), (int) MIN (end - (gsize) bad, 40), data + bad);
      return NULL;
    }
  /* json-glib 1.6 leaks every top-level value but the last when a file holds
   * several (found by fuzz-library), so it only sees the first one. */
  scan_shape (data, length, &shape);
  /* The shape's scan stops at json-glib's extensions; this one reads them,
   * and json-glib is given the first value alone: it leaked that value's
   * nodes when a comment after it did not end. */
  gsize parse_length = length;
  if (!shape.standard)
    shape.trailing = lk_json_find_second_value (data, length, &parse_length);
  else if (shape.trailing >= 0)
    parse_length = (gsize) shape.trailing;
  if (!json_parser_load_from_data (parser, data, (gssize) parse_length, &local))
    {
      /* json-glib names the buffer "<data>"; name the file instead. */
      const char *message = local->message;
      if (g_str_has_prefix (message, "<data>:"))
        message += strlen ("<data>:");
      fail (error, LK_LIBRARY_ERROR_JSON, loader->manifest, "not valid JSON: %s", message);
      return NULL;
    }
  JsonNode *root = json_parser_get_root (parser);
  if (root == NULL)
    {
      fail (error, LK_LIBRARY_ERROR_JSON, loader->manifest, "the file is empty");
      return NULL;
    }

  if (shape.trailing >= 0)
    {
      gsize line = 1;
      for (gssize k = 0; k < shape.trailing; k++)
        line += data[k] == '\n';
      fail (error, LK_LIBRARY_ERROR_JSON, loader->manifest,
            "a second JSON value starts on line %" G_GSIZE_FORMAT
            " after the manifest object has ended",
            line);
      return NULL;
    }
  loader->shape = shape;

  if (!JSON_NODE_HOLDS_OBJECT (root))
    {
      g_autofree char *what = describe_node (root);
      fail (error, LK_LIBRARY_ERROR_FORMAT, loader->manifest,
            "the manifest must be a JSON object, not %s", what);
      return NULL;
    }
  return g_steal_pointer (&parser);
}

/* ── Paths ───────────────────────────────────────────────────────────────── */

/* TRUE when `path` (absolute, without symlinks) is `root` or below it. */
static gboolean
is_within (const char *root, const char *path)
{
  gsize n = strlen (root);
  if (n == 1)
    return TRUE; /* the root is "/" */
  return strncmp (path, root, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

/* realpath(3) into GLib memory. */
static char *
real_path (const char *path)
{
  char *real = realpath (path, NULL);
  if (real == NULL)
    return NULL;
  char *copy = g_strdup (real);
  free (real);
  return copy;
}

/* Longer than any path the system can open (PATH_MAX is 4096 with its NUL
 * on Linux; the folder's own path only adds to it). Refused up front: issue
 * 19's thumbnail path of 100 MB of missing folders hung the load, because
 * finding the deepest existing ancestor cost one dirname per level (80,000
 * "a/" took 1.6 s, growing with the square of the length). */
#define PATH_LENGTH_LIMIT 4095

static gboolean
too_long (const char *manifest, gsize length, const char *field, GError **error)
{
  g_autofree char *length_text = group_digits (length);
  return fail (error, LK_LIBRARY_ERROR_PATH, manifest,
               "%s is a path of %s bytes; a path inside the library may be at most %d bytes", field,
               length_text, PATH_LENGTH_LIMIT);
}

/* TRUE when `path` has a ".." component. */
static gboolean
goes_up (const char *path)
{
  for (const char *part = path; part != NULL;)
    {
      const char *slash = strchr (part, '/');
      gsize length = slash != NULL ? (gsize) (slash - part) : strlen (part);
      if (length == 2 && part[0] == '.' && part[1] == '.')
        return TRUE;
      part = slash != NULL ? slash + 1 : NULL;
    }
  return FALSE;
}

/* The checks that need no file system: not too long, not empty, not
 * absolute, no "..". `inside` names the folder the path is relative to. */
static gboolean
check_relative (const char *manifest, const char *relative, const char *field, const char *inside,
                GError **error)
{
  if (strnlen (relative, PATH_LENGTH_LIMIT + 1) > PATH_LENGTH_LIMIT)
    return too_long (manifest, strlen (relative), field, error);
  if (*relative == '\0')
    return fail (error, LK_LIBRARY_ERROR_PATH, manifest, "%s is empty; it must name a file", field);
  if (g_path_is_absolute (relative))
    return fail (error, LK_LIBRARY_ERROR_PATH, manifest,
                 "%s is the absolute path “%s”; paths must be relative to %s", field, relative,
                 inside);
  if (goes_up (relative))
    return fail (error, LK_LIBRARY_ERROR_PATH, manifest,
                 "%s (“%s”) goes up with “..”; paths must stay inside %s", field, relative, inside);
  return TRUE;
}

gboolean
lk_library_relative_path_ok (const char *path)
{
  g_return_val_if_fail (path != NULL, FALSE);
  return check_relative ("", path, "", "", NULL);
}

static gboolean
check_lexically (const char *manifest, const char *relative, const char *field, GError **error)
{
  return check_relative (manifest, relative, field, "the library folder", error);
}

static gboolean
leads_outside (const char *manifest, const char *field, const char *relative, const char *where,
               GError **error)
{
  return fail (error, LK_LIBRARY_ERROR_PATH, manifest,
               "%s (“%s”) leads outside the library folder, to “%s”, through a symbolic link",
               field, relative, where);
}

/* `joined` is root/relative and passed the lexical checks. Follows symlinks:
 * an existing path must end inside `root`; for a missing one, its deepest
 * existing ancestor must, and a dangling symlink must point inside. A path
 * that cannot be resolved at all (a folder that cannot be searched, a loop of
 * symbolic links) is an error, unless `unresolvable` is given: then it gets
 * the errno and the path passes, for the caller never to open it. */
static gboolean
check_symlinks (const char *manifest, const char *root, const char *joined, const char *relative,
                const char *field, int *unresolvable, GError **error)
{
  g_autofree char *real = real_path (joined);
  if (real != NULL)
    return is_within (root, real) || leads_outside (manifest, field, relative, real, error);
  if (errno != ENOENT && errno != ENOTDIR && unresolvable != NULL)
    {
      *unresolvable = errno;
      return TRUE;
    }
  if (errno != ENOENT && errno != ENOTDIR)
    return fail (error, LK_LIBRARY_ERROR_PATH, manifest, "%s (“%s”) cannot be resolved: %s", field,
                 relative, g_strerror (errno));

  g_autofree char *child = g_strdup (joined);
  for (;;)
    {
      g_autofree char *parent = g_path_get_dirname (child);
      g_autofree char *real_parent = real_path (parent);
      if (real_parent == NULL)
        {
          if (errno != ENOENT && errno != ENOTDIR && unresolvable != NULL)
            {
              *unresolvable = errno;
              return TRUE;
            }
          if (errno != ENOENT && errno != ENOTDIR)
            return fail (error, LK_LIBRARY_ERROR_PATH, manifest, "%s (“%s”) cannot be resolved: %s",
                         field, relative, g_strerror (errno));
          g_free (child);
          child = g_steal_pointer (&parent);
          continue;
        }
      if (!is_within (root, real_parent))
        return leads_outside (manifest, field, relative, real_parent, error);
      g_autofree char *target = g_file_read_link (child, NULL);
      if (target != NULL)
        {
          g_autofree char *points_to = g_canonicalize_filename (target, real_parent);
          if (!is_within (root, points_to))
            return leads_outside (manifest, field, relative, points_to, error);
        }
      return TRUE;
    }
}

char *
lk_library_resolve_path (const char *folder, const char *relative, const char *field,
                         GError **error)
{
  g_return_val_if_fail (folder != NULL && relative != NULL && field != NULL, NULL);

  g_autofree char *root = real_path (folder);
  if (root == NULL)
    {
      int saved = errno;
      g_autofree char *hint = saved == ENOENT ? lk_sandbox_hint (folder) : NULL;
      g_set_error (error, LK_LIBRARY_ERROR, LK_LIBRARY_ERROR_IO,
                   "Cannot open the library folder “%s”: %s.%s", folder, g_strerror (saved),
                   hint != NULL ? hint : "");
      return NULL;
    }
  g_autofree char *manifest = g_build_filename (root, MANIFEST_NAME, NULL);
  if (!check_lexically (manifest, relative, field, error))
    return NULL;
  g_autofree char *joined = g_build_filename (root, relative, NULL);
  if (!check_symlinks (manifest, root, joined, relative, field, NULL, error))
    return NULL;
  return g_steal_pointer (&joined);
}

static void
thumb_dir_free (gpointer data)
{
  ThumbDir *dir = data;
  g_clear_pointer (&dir->links, g_hash_table_unref);
  g_free (dir);
}

/* One readdir instead of one lstat per face: the type is in the entry. */
static void
list_symlinks (const char *path, ThumbDir *dir)
{
  DIR *stream = opendir (path);
  struct dirent *entry;

  if (stream == NULL)
    {
      /* A missing directory holds no links; an unreadable one is checked
       * file by file. */
      dir->listed = errno == ENOENT || errno == ENOTDIR;
      return;
    }
  dir->listed = TRUE;
  while ((entry = readdir (stream)) != NULL)
    {
      struct stat st;
      gboolean is_link = entry->d_type == DT_LNK;
      if (entry->d_type == DT_UNKNOWN)
        is_link = fstatat (dirfd (stream), entry->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0
                  && S_ISLNK (st.st_mode);
      if (!is_link)
        continue;
      if (dir->links == NULL)
        dir->links = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
      g_hash_table_add (dir->links, g_strdup (entry->d_name));
    }
  closedir (stream);
}

static ThumbDir *
find_thumb_dir (Loader *loader, const char *relative, gsize dir_length, gsize face, GError **error)
{
  const char *root = loader->library->folder;
  char *key;
  ThumbDir *dir;

  if (loader->last_key != NULL && strncmp (loader->last_key, relative, dir_length) == 0
      && loader->last_key[dir_length] == '\0')
    return loader->last_dir;

  g_string_truncate (loader->path, 0);
  g_string_append_len (loader->path, relative, (gssize) dir_length);
  if (!g_hash_table_lookup_extended (loader->dirs, loader->path->str, (gpointer *) &key,
                                     (gpointer *) &dir))
    {
      g_autofree char *absolute
          = dir_length > 0 ? g_strconcat (root, "/", loader->path->str, NULL) : g_strdup (root);
      if (dir_length > 0)
        {
          g_autofree char *field = g_strdup_printf ("faces[%" G_GSIZE_FORMAT "].thumbnail", face);
          int unreadable = 0;
          if (!check_symlinks (loader->manifest, root, absolute, relative, field, &unreadable,
                               error))
            return NULL;
          dir = g_new0 (ThumbDir, 1);
          dir->unreadable = unreadable;
        }
      else
        dir = g_new0 (ThumbDir, 1);
      if (dir->unreadable == 0)
        list_symlinks (absolute, dir);
      key = g_strdup (loader->path->str);
      g_hash_table_insert (loader->dirs, key, dir);
    }
  loader->last_key = key;
  loader->last_dir = dir;
  return dir;
}

/* Face i's thumbnail cannot be resolved (issue 19: an unreadable thumbnail
 * folder refused the whole library): it is shown with a placeholder, and the
 * library carries one warning for all such faces. */
static void
thumbnail_unreadable (Loader *loader, const char *relative, int saved)
{
  if (loader->unreadable_thumbnails++ == 0)
    {
      loader->unreadable_path = g_string_chunk_insert (loader->library->strings, relative);
      loader->unreadable_errno = saved;
    }
}

static void
set_thumbnail_warning (Loader *loader)
{
  gsize n = loader->unreadable_thumbnails;
  if (n == 0)
    return;
  g_autofree char *count = group_digits (n);
  loader->library->thumbnail_warning = g_strdup_printf (
      "%s face%s shown without %s thumbnail%s: “%s”%s cannot be read (%s)", count,
      n == 1 ? " is" : "s are", n == 1 ? "its" : "their", n == 1 ? "" : "s",
      loader->unreadable_path, n == 1 ? "" : ", the first of them,",
      g_strerror (loader->unreadable_errno));
}

/* lk_library_resolve_path for face i's thumbnail, without a system call or an
 * allocation in the common case: a directory seen before, and a file in it
 * that is not a symbolic link. *usable is FALSE when the path cannot be
 * resolved at all (thumbnail_unreadable). */
static gboolean
check_thumbnail (Loader *loader, const char *relative, gsize face, gboolean *usable, GError **error)
{
  *usable = TRUE;
  const char *slash = strrchr (relative, '/');
  gsize dir_length = slash != NULL ? (gsize) (slash - relative) : 0;
  const char *name = slash != NULL ? slash + 1 : relative;

  if (G_UNLIKELY (*relative == '\0' || relative[0] == '/' || strstr (relative, "..") != NULL
                  || dir_length >= PATH_LENGTH_LIMIT || strlen (name) > PATH_LENGTH_LIMIT))
    {
      g_autofree char *field = g_strdup_printf ("faces[%" G_GSIZE_FORMAT "].thumbnail", face);
      if (!check_lexically (loader->manifest, relative, field, error))
        return FALSE;
    }

  ThumbDir *dir = find_thumb_dir (loader, relative, dir_length, face, error);
  if (dir == NULL)
    return FALSE;
  if (G_LIKELY (dir->listed && (dir->links == NULL || !g_hash_table_contains (dir->links, name))))
    return TRUE;
  int unreadable = dir->unreadable;
  if (unreadable == 0)
    {
      /* A folder that cannot be listed may still open its files by name. */
      g_autofree char *field = g_strdup_printf ("faces[%" G_GSIZE_FORMAT "].thumbnail", face);
      g_autofree char *path = g_build_filename (loader->library->folder, relative, NULL);
      if (!check_symlinks (loader->manifest, loader->library->folder, path, relative, field,
                           &unreadable, error))
        return FALSE;
    }
  if (unreadable != 0)
    {
      thumbnail_unreadable (loader, relative, unreadable);
      *usable = FALSE;
    }
  return TRUE;
}

/* ── Streaming ───────────────────────────────────────────────────────────── */

/* json-glib builds the whole tree before anything can be read from it, and
 * the faces' and photos' objects are most of it: loading 50,000 faces of 512
 * floats peaked at 213 MiB of RSS for 98 MiB of rows, and the tree's freed
 * nodes stayed resident after the load (bench-library --load under
 * /usr/bin/time; 2.2× the rows). So a manifest in standard JSON (no comments
 * or single quotes, one value: what the byte checks and scan_shape read) is
 * parsed in pieces, json-glib still reading every byte of it: the top-level
 * object with the faces' and photos' arrays emptied (the skeleton), then
 * those arrays STREAM_CHUNK elements at a time, each chunk parsed as an array
 * of its own, read like the elements of the whole array, and freed. A byte
 * walk (strings skipped, depth counted, as the checks in lk-json.c do) finds
 * where the arrays and their elements begin and end, and gives up on
 * anything but a top-level object whose names hold no escape, with one
 * "faces" array of objects cleanly separated. Any failure of the streamed
 * load — a chunk json-glib refuses, a field out of range, a duplicate member
 * — runs the whole load again on the whole tree (the path every load took
 * before), so every message is the one it was; only good manifests stream.
 *
 * The pages of the manifest's text that the chunks have been read from are
 * given back (MADV_DONTNEED) as the walk goes, and the rows' reader waits
 * (Pacer) whenever the rows read so far and the manifest still resident would
 * hold more than the rows and PACE_SLACK: the rows are read while the faces
 * are parsed, as before, but never all of them beside all of the text. */
#define STREAM_CHUNK 256

static gsize
skip_space (const char *data, gsize length, gsize k)
{
  while (k < length && (data[k] == ' ' || data[k] == '\t' || data[k] == '\n' || data[k] == '\r'))
    k++;
  return k;
}

/* The end of the standard JSON value at k (a string; an object or array with
 * all it holds; a bare number or literal), or 0 when it does not end. */
static gsize
skip_value (const char *data, gsize length, gsize k)
{
  if (k >= length)
    return 0;
  if (data[k] == '"')
    {
      for (k++; k < length; k++)
        {
          if (data[k] == '\\')
            k++;
          else if (data[k] == '"')
            return k + 1;
        }
      return 0;
    }
  if (data[k] == '{' || data[k] == '[')
    {
      gsize depth = 0;
      for (; k < length; k++)
        {
          char c = data[k];
          if (c == '"')
            {
              gsize end = skip_value (data, length, k);
              if (end == 0)
                return 0;
              k = end - 1;
            }
          else if (c == '{' || c == '[')
            depth++;
          else if ((c == '}' || c == ']') && --depth == 0)
            return k + 1;
        }
      return 0;
    }
  gsize start = k;
  while (k < length && data[k] != '\0' && strchr (" \t\r\n,]}:[{\"", data[k]) == NULL)
    k++;
  return k > start ? k : 0;
}

/* The array at `open`, when it holds objects only, separated by one comma
 * each: its close and its length. */
static gboolean
walk_array (const char *data, gsize length, gsize open, Span *span)
{
  gsize k = skip_space (data, length, open + 1);

  span->open = open;
  span->count = 0;
  if (k < length && data[k] == ']')
    {
      span->close = k;
      return TRUE;
    }
  for (;;)
    {
      if (k >= length || data[k] != '{' || (k = skip_value (data, length, k)) == 0)
        return FALSE;
      span->count++;
      k = skip_space (data, length, k);
      if (k < length && data[k] == ']')
        {
          span->close = k;
          return TRUE;
        }
      if (k >= length || data[k] != ',')
        return FALSE;
      k = skip_space (data, length, k + 1);
    }
}

/* The top-level "faces" and "photos" arrays of objects (*has_* FALSE for one
 * that is absent or not such an array). FALSE when the text is not one
 * object whose member names hold no escape and name neither twice. */
static gboolean
find_arrays (const char *data, gsize length, Span *faces, gboolean *has_faces, Span *photos,
             gboolean *has_photos)
{
  gboolean seen_faces = FALSE, seen_photos = FALSE;
  gsize k = skip_space (data, length, 0);

  *has_faces = *has_photos = FALSE;
  if (k >= length || data[k] != '{')
    return FALSE;
  k = skip_space (data, length, k + 1);
  if (k < length && data[k] == '}')
    return TRUE;
  for (;;)
    {
      if (k >= length || data[k] != '"')
        return FALSE;
      gsize name = k + 1, end = skip_value (data, length, k);
      if (end == 0 || memchr (data + name, '\\', end - 1 - name) != NULL)
        return FALSE;
      gsize name_length = end - 1 - name;
      gboolean is_faces = name_length == 5 && memcmp (data + name, "faces", 5) == 0;
      gboolean is_photos = name_length == 6 && memcmp (data + name, "photos", 6) == 0;
      if ((is_faces && seen_faces) || (is_photos && seen_photos))
        return FALSE;
      seen_faces |= is_faces;
      seen_photos |= is_photos;
      k = skip_space (data, length, end);
      if (k >= length || data[k] != ':')
        return FALSE;
      k = skip_space (data, length, k + 1);
      if ((is_faces || is_photos) && k < length && data[k] == '['
          && walk_array (data, length, k, is_faces ? faces : photos))
        *(is_faces ? has_faces : has_photos) = TRUE;
      if ((end = skip_value (data, length, k)) == 0)
        return FALSE;
      k = skip_space (data, length, end);
      if (k < length && data[k] == '}')
        return TRUE;
      if (k >= length || data[k] != ',')
        return FALSE;
      k = skip_space (data, length, k + 1);
    }
}

/* The text with the streamed arrays emptied: "[" and "]" kept, what was
 * between them left out. */
static GString *
make_skeleton (const char *data, gsize length, const Span *faces, const Span *photos)
{
  const Span *spans[2] = { faces, photos };
  GString *text = g_string_sized_new (256);
  gsize from = 0;

  if (photos != NULL && photos->open < faces->open)
    {
      spans[0] = photos;
      spans[1] = faces;
    }
  for (gsize k = 0; k < 2; k++)
    if (spans[k] != NULL)
      {
        g_string_append_len (text, data + from, (gssize) (spans[k]->open + 1 - from));
        from = spans[k]->close;
      }
  g_string_append_len (text, data + from, (gssize) (length - from));
  return text;
}

/* Gives back the whole pages of the text below `below`, and tells the rows'
 * reader. */
static void
release_text (Loader *loader, gsize below)
{
#ifdef __linux__
  gsize page = (gsize) sysconf (_SC_PAGESIZE);
  guintptr base = (guintptr) loader->text;
  guintptr start = (base + loader->released + page - 1) / page * page;
  guintptr end = (base + MIN (below, loader->text_length)) / page * page;
  /* Only pages wholly inside the text: an allocator's header before it and
   * the bytes after it are untouched; a failure only keeps the pages. */
  if (end > start && madvise ((void *) start, end - start, MADV_DONTNEED) == 0)
    loader->released = end - base;
#endif
  if (loader->pacer != NULL)
    {
      g_mutex_lock (&loader->pacer->lock);
      loader->pacer->manifest_left = loader->text_length - loader->released;
      g_cond_broadcast (&loader->pacer->cond);
      g_mutex_unlock (&loader->pacer->lock);
    }
}

typedef gboolean (*ElementsFunc) (Loader *loader, JsonArray *array, gsize base, GError **error);

/* Reads the elements of `span`, STREAM_CHUNK at a time, with `read`. */
static gboolean
stream_elements (Loader *loader, const Span *span, ElementsFunc read, GError **error)
{
  const char *data = loader->text;
  gsize length = loader->text_length;
  /* The photos come first: the faces' text, where it lies before them, is
   * kept for its turn. */
  gsize limit = span == loader->photos_span && loader->faces_span->open < span->open
                    ? loader->faces_span->open
                    : G_MAXSIZE;
  g_autoptr (JsonParser) parser = json_parser_new ();
  g_autoptr (GString) chunk = g_string_new (NULL);
  gsize k = skip_space (data, length, span->open + 1);

  for (gsize base = 0; base < span->count;)
    {
      gsize n = MIN ((gsize) STREAM_CHUNK, span->count - base), start = k, end = k;
      for (gsize e = 0; e < n; e++)
        {
          end = skip_value (data, length, k); /* walk_array found each one's end */
          k = skip_space (data, length, skip_space (data, length, end) + 1);
        }
      g_string_truncate (chunk, 0);
      g_string_append_c (chunk, '[');
      g_string_append_len (chunk, data + start, (gssize) (end - start));
      g_string_append_c (chunk, ']');
      /* A refusal is said again, with its line, by the whole tree's parse. */
      if (!json_parser_load_from_data (parser, chunk->str, (gssize) chunk->len, NULL))
        return fail (error, LK_LIBRARY_ERROR_JSON, loader->manifest, "not valid JSON");
      if (!read (loader, json_node_get_array (json_parser_get_root (parser)), base, error))
        return FALSE;
      base += n;
      release_text (loader, MIN (end, limit));
    }
  return TRUE;
}

/* ── The manifest's sections ─────────────────────────────────────────────── */

static gboolean
read_calibration (Loader *loader, JsonObject *root, GError **error)
{
  LkCalibration *calibration = &loader->library->calibration;
  const Where where = { "calibration", -1 };
  JsonNode *node;

  *calibration = LK_CALIBRATION_DEFAULT;
  if (!get_member (loader, root, &top_level, "calibration", KIND_OBJECT, FALSE, &node, error))
    return FALSE;
  if (node == NULL)
    return TRUE;
  loader->library->calibration_given = TRUE;

  JsonObject *object = json_node_get_object (node);
  struct
  {
    const char *name;
    double *value;
  } numbers[] = {
    { "a", &calibration->a },
    { "b", &calibration->b },
    { "w_size", &calibration->w_size },
  };
  for (gsize k = 0; k < G_N_ELEMENTS (numbers); k++)
    {
      if (!get_double (loader, object, &where, numbers[k].name, FALSE, numbers[k].value, error))
        return FALSE;
      if (!isfinite (*numbers[k].value))
        return out_of_range (loader, &where, numbers[k].name, "finite", *numbers[k].value, error);
    }
  if (!get_int (loader, object, &where, "positive_pairs", FALSE, &calibration->positive_pairs,
                error)
      || !get_int (loader, object, &where, "negative_pairs", FALSE, &calibration->negative_pairs,
                   error))
    return FALSE;
  if (calibration->positive_pairs < 0)
    return out_of_range_int (loader, &where, "positive_pairs", "0 or more",
                             calibration->positive_pairs, error);
  if (calibration->negative_pairs < 0)
    return out_of_range_int (loader, &where, "negative_pairs", "0 or more",
                             calibration->negative_pairs, error);
  count_object (loader, object, 0, calibration_members);
  return TRUE;
}

static gboolean read_photo_elements (Loader *loader, JsonArray *array, gsize base, GError **error);

static gboolean
read_photos (Loader *loader, JsonObject *root, GError **error)
{
  LkLibrary *library = loader->library;
  JsonNode *node;

  library->photo_index = g_hash_table_new (g_int64_hash, g_int64_equal);
  if (!get_member (loader, root, &top_level, "photos", KIND_ARRAY, FALSE, &node, error))
    return FALSE;
  if (node == NULL)
    return TRUE;

  JsonArray *array = json_node_get_array (node);
  library->n_photos
      = loader->photos_span != NULL ? loader->photos_span->count : json_array_get_length (array);
  library->photos = g_new0 (LkPhoto, library->n_photos);
  if (loader->photos_span != NULL)
    return stream_elements (loader, loader->photos_span, read_photo_elements, error);
  return read_photo_elements (loader, array, 0, error);
}

/* Photos base… of the manifest, the elements of `array`. */
static gboolean
read_photo_elements (Loader *loader, JsonArray *array, gsize base, GError **error)
{
  LkLibrary *library = loader->library;
  guint length = json_array_get_length (array);

  for (gsize k = base; k < base + length; k++)
    {
      const Where where = { "photos", (gssize) k };
      JsonNode *element = json_array_get_element (array, (guint) (k - base));
      LkPhoto *photo = &library->photos[k];
      const char *path = NULL, *taken = NULL, *original = NULL, *source_path = NULL;
      gint64 folder = 0;
      gpointer earlier;

      if (!JSON_NODE_HOLDS_OBJECT (element))
        {
          g_autofree char *what = describe_node (element);
          return fail (error, LK_LIBRARY_ERROR_FORMAT, loader->manifest,
                       "photos[%" G_GSIZE_FORMAT "] must be an object, not %s", k, what);
        }
      JsonObject *object = json_node_get_object (element);
      loader->seen = 0;
      if (!get_photo_id (loader, object, &where, "id", &photo->id, error)
          || !get_string (loader, object, &where, "path", FALSE, &path, error)
          || !get_int (loader, object, &where, "width", FALSE, &photo->width, error)
          || !get_int (loader, object, &where, "height", FALSE, &photo->height, error)
          || !get_string (loader, object, &where, "taken", FALSE, &taken, error)
          || !get_string (loader, object, &where, "original", FALSE, &original, error)
          || !get_int (loader, object, &where, "folder", FALSE, &folder, error)
          || !get_string (loader, object, &where, "source_path", FALSE, &source_path, error))
        return FALSE;
      if (original != NULL)
        {
          char field[64];
          g_snprintf (field, sizeof field, "photos[%" G_GSIZE_FORMAT "].original", k);
          if (library->n_photo_folders == 0)
            return fail (error, LK_LIBRARY_ERROR_FORMAT, loader->manifest,
                         "%s is given, but the library has no photo_folders for it to be in",
                         field);
          if (!check_relative (loader->manifest, original, field, "its photo folder", error))
            return FALSE;
        }
      if (folder < 0 || (guint64) folder >= MAX (library->n_photo_folders, 1))
        {
          g_autofree char *rule
              = g_strdup_printf ("an index into photo_folders, 0 to %" G_GSIZE_FORMAT,
                                 library->n_photo_folders > 0 ? library->n_photo_folders - 1 : 0);
          return out_of_range_int (loader, &where, "folder", rule, folder, error);
        }
      if (path != NULL)
        {
          /* Likeness never opens a photo, so no symbolic link is followed
           * here (one realpath per photo would cost 100,000 on a large
           * library for nothing); the lexical rule holds for every path. */
          char field[64];
          g_snprintf (field, sizeof field, "photos[%" G_GSIZE_FORMAT "].path", k);
          if (!check_lexically (loader->manifest, path, field, error))
            return FALSE;
        }
      if (photo->width < 0)
        return out_of_range_int (loader, &where, "width", "0 or more", photo->width, error);
      if (photo->height < 0)
        return out_of_range_int (loader, &where, "height", "0 or more", photo->height, error);
      if (g_hash_table_lookup_extended (library->photo_index, &photo->id, NULL, &earlier))
        return fail (error, LK_LIBRARY_ERROR_FORMAT, loader->manifest,
                     "photos[%" G_GSIZE_FORMAT "].id %" G_GUINT64_FORMAT
                     " is already the id of photos[%" G_GSIZE_FORMAT "]",
                     k, photo->id, GPOINTER_TO_SIZE (earlier));
      g_hash_table_insert (library->photo_index, &photo->id, GSIZE_TO_POINTER (k));
      count_object (loader, object, loader->seen, photo_members);
      photo->path = path != NULL ? g_string_chunk_insert (library->strings, path) : NULL;
      photo->taken = taken != NULL ? g_string_chunk_insert (library->strings, taken) : NULL;
      photo->original
          = original != NULL ? g_string_chunk_insert (library->strings, original) : NULL;
      photo->folder = (guint) folder;
      photo->source_path
          = source_path != NULL ? g_string_chunk_insert (library->strings, source_path) : NULL;
    }
  return TRUE;
}

/* "photo_folders": where a library made from photo folders found them, as
 * that computer saw them. Absolute, since they are outside the library;
 * nothing is ever written there but an XMP sidecar the user asks for, and
 * lexical checks are all that is needed to read a photo (no ".." hides a
 * folder behind a harmless-looking name in a dialog that shows it). */
static gboolean
read_photo_folders (Loader *loader, JsonObject *root, GError **error)
{
  LkLibrary *library = loader->library;
  JsonNode *node;

  if (!get_member (loader, root, &top_level, "photo_folders", KIND_ARRAY, FALSE, &node, error))
    return FALSE;
  if (node == NULL)
    return TRUE;
  JsonArray *array = json_node_get_array (node);
  library->n_photo_folders = json_array_get_length (array);
  library->photo_folders = g_new0 (char *, library->n_photo_folders + 1);
  for (gsize k = 0; k < library->n_photo_folders; k++)
    {
      JsonNode *element = json_array_get_element (array, (guint) k);
      char field[64];
      g_snprintf (field, sizeof field, "photo_folders[%" G_GSIZE_FORMAT "]", k);
      if (!node_is (element, KIND_STRING))
        {
          g_autofree char *what = describe_node (element);
          return fail (error, LK_LIBRARY_ERROR_FORMAT, loader->manifest,
                       "%s must be a folder's absolute path (a string), not %s", field, what);
        }
      const char *folder = json_node_get_string (element);
      if (strnlen (folder, PATH_LENGTH_LIMIT + 1) > PATH_LENGTH_LIMIT)
        return too_long (loader->manifest, strlen (folder), field, error);
      if (!g_path_is_absolute (folder))
        return fail (error, LK_LIBRARY_ERROR_PATH, loader->manifest,
                     "%s (“%s”) must be an absolute path: the photo folders are outside the "
                     "library",
                     field, folder);
      if (goes_up (folder))
        return fail (error, LK_LIBRARY_ERROR_PATH, loader->manifest,
                     "%s (“%s”) goes up with “..”; it must name the folder itself", field, folder);
      library->photo_folders[k] = g_string_chunk_insert (library->strings, folder);
    }
  return TRUE;
}

static gboolean
read_box (Loader *loader, JsonObject *object, const Where *where, gsize face, GError **error)
{
  LkLibrary *library = loader->library;
  JsonNode *node;

  if (!get_member (loader, object, where, "box", KIND_ARRAY, FALSE, &node, error))
    return FALSE;
  if (node == NULL)
    return TRUE;

  JsonArray *array = json_node_get_array (node);
  guint length = json_array_get_length (array);
  if (length != 4)
    return fail (error, LK_LIBRARY_ERROR_FORMAT, loader->manifest,
                 "faces[%" G_GSIZE_FORMAT "].box must be 4 numbers [x, y, w, h], not %u", face,
                 length);
  for (guint k = 0; k < 4; k++)
    {
      JsonNode *element = json_array_get_element (array, k);
      if (!node_is (element, KIND_NUMBER) || !isfinite (json_node_get_double (element)))
        {
          g_autofree char *what = describe_node (element);
          return fail (error, LK_LIBRARY_ERROR_FORMAT, loader->manifest,
                       "faces[%" G_GSIZE_FORMAT "].box[%u] must be a finite number, not %s", face,
                       k, what);
        }
      library->box[face][k] = json_node_get_double (element);
    }
  library->has_box[face] = TRUE;
  return TRUE;
}

static gboolean read_face_elements (Loader *loader, JsonArray *faces, gsize base, GError **error);

static gboolean
read_faces (Loader *loader, JsonArray *faces, GError **error)
{
  LkLibrary *library = loader->library;
  gsize count = library->count;

  library->photo = g_new (guint64, count);
  library->crop_px = g_new (float, count);
  library->quality = g_new (float, count);
  library->gallery = g_new (guint8, count);
  library->thumbnail = g_new0 (char *, count);
  library->label = g_new0 (char *, count);
  library->face_id = g_new0 (char *, count);
  library->has_box = g_new0 (gboolean, count);
  library->box = g_malloc0_n (count, sizeof *library->box);
  if (loader->faces_span != NULL)
    return stream_elements (loader, loader->faces_span, read_face_elements, error);
  return read_face_elements (loader, faces, 0, error);
}

/* Faces base… of the manifest, the elements of `faces`. */
static gboolean
read_face_elements (Loader *loader, JsonArray *faces, gsize base, GError **error)
{
  LkLibrary *library = loader->library;
  guint length = json_array_get_length (faces);

  for (gsize i = base; i < base + length; i++)
    {
      const Where where = { "faces", (gssize) i };
      JsonNode *element = json_array_get_element (faces, (guint) (i - base));
      double crop_px = 0, quality = 1.0;
      const char *thumbnail = NULL, *label = NULL, *id = NULL;

      if (G_UNLIKELY (!JSON_NODE_HOLDS_OBJECT (element)))
        {
          g_autofree char *what = describe_node (element);
          return fail (error, LK_LIBRARY_ERROR_FORMAT, loader->manifest,
                       "faces[%" G_GSIZE_FORMAT "] must be an object, not %s", i, what);
        }
      JsonObject *object = json_node_get_object (element);
      loader->seen = 0;
      if (!get_photo_id (loader, object, &where, "photo", &library->photo[i], error)
          || !get_double (loader, object, &where, "crop_px", TRUE, &crop_px, error)
          || !get_double (loader, object, &where, "quality", FALSE, &quality, error)
          || !get_string (loader, object, &where, "thumbnail", FALSE, &thumbnail, error)
          || !get_string (loader, object, &where, "label", FALSE, &label, error)
          || !get_string (loader, object, &where, "id", FALSE, &id, error)
          || !read_box (loader, object, &where, i, error))
        return FALSE;

      /* Checked as float, the type it is kept in: 1e39 or 1e-46 would not be
       * finite and > 0 any more. */
      library->crop_px[i] = (float) crop_px;
      if (G_UNLIKELY (!(isfinite (library->crop_px[i]) && library->crop_px[i] > 0)))
        return out_of_range (loader, &where, "crop_px", "a finite number > 0", crop_px, error);
      if (G_UNLIKELY (!(quality >= 0 && quality <= 1)))
        return out_of_range (loader, &where, "quality", "in [0, 1]", quality, error);
      library->quality[i] = (float) quality;
      library->gallery[i] = quality >= library->min_gallery_quality;

      gboolean usable;
      if (thumbnail != NULL)
        {
          if (!check_thumbnail (loader, thumbnail, i, &usable, error))
            return FALSE;
          if (usable)
            library->thumbnail[i] = g_string_chunk_insert (library->strings, thumbnail);
        }
      if (label != NULL)
        library->label[i] = g_string_chunk_insert (library->strings, label);
      /* An empty id names nothing: the face gets a content key instead. */
      if (id != NULL && *id != '\0')
        library->face_id[i] = g_string_chunk_insert (library->strings, id);
      else if (id != NULL)
        loader->empty_id_face = i + 1;
      count_object (loader, object, loader->seen, face_members);
    }
  return TRUE;
}

/* ── The source's people ─────────────────────────────────────────────────── */

/* "people": who the source (Immich, PhotoPrism) said the faces are, each face
 * named by its faces[].id. A key that no face has is dropped and counted, not
 * refused: the people array is the source's word, and lk-source-people.c
 * reports what it could not apply. The member is not in root_members, so
 * count_object walks it for the duplicate-member check like any unknown one. */
static gboolean
read_people (Loader *loader, JsonObject *root, GError **error)
{
  LkLibrary *library = loader->library;
  JsonNode *node;

  if (!get_member (loader, root, &top_level, "people", KIND_ARRAY, FALSE, &node, error))
    return FALSE;
  if (node == NULL)
    return TRUE;

  /* The faces' ids as read (the last face of an id given twice wins, as a
   * hash table of the manifest's ids did), "" too. */
  g_autoptr (GHashTable) by_key = g_hash_table_new (g_str_hash, g_str_equal);
  for (gsize i = 0; i < library->count; i++)
    if (library->face_id[i] != NULL)
      g_hash_table_insert (by_key, library->face_id[i], GSIZE_TO_POINTER (i + 1));
  if (loader->empty_id_face > 0)
    g_hash_table_insert (by_key, (gpointer) "", GSIZE_TO_POINTER (loader->empty_id_face));

  JsonArray *array = json_node_get_array (node);
  library->n_source_people = json_array_get_length (array);
  library->source_people = g_new0 (LkSourcePerson, library->n_source_people);
  for (gsize k = 0; k < library->n_source_people; k++)
    {
      const Where where = { "people", (gssize) k };
      JsonNode *element = json_array_get_element (array, (guint) k);
      LkSourcePerson *person = &library->source_people[k];
      const char *id = NULL, *name = NULL;

      if (!JSON_NODE_HOLDS_OBJECT (element))
        {
          g_autofree char *what = describe_node (element);
          return fail (error, LK_LIBRARY_ERROR_FORMAT, loader->manifest,
                       "people[%" G_GSIZE_FORMAT "] must be an object, not %s", k, what);
        }
      JsonObject *object = json_node_get_object (element);
      if (!get_string (loader, object, &where, "id", TRUE, &id, error)
          || !get_string (loader, object, &where, "name", FALSE, &name, error)
          || !get_boolean (loader, object, &where, "hidden", FALSE, &person->hidden, error)
          || !get_member (loader, object, &where, "faces", KIND_ARRAY, TRUE, &node, error))
        return FALSE;
      person->id = g_string_chunk_insert (library->strings, id);
      person->name
          = name != NULL && name[0] != '\0' ? g_string_chunk_insert (library->strings, name) : NULL;
      JsonArray *keys = json_node_get_array (node);
      guint n = json_array_get_length (keys);
      person->faces = g_new (guint32, MAX (n, 1));
      for (guint m = 0; m < n; m++)
        {
          JsonNode *key = json_array_get_element (keys, m);
          if (!JSON_NODE_HOLDS_VALUE (key) || json_node_get_value_type (key) != G_TYPE_STRING)
            {
              g_autofree char *what = describe_node (key);
              return fail (error, LK_LIBRARY_ERROR_FORMAT, loader->manifest,
                           "people[%" G_GSIZE_FORMAT "].faces[%u] must be a face id (a string), "
                           "not %s",
                           k, m, what);
            }
          gsize face = GPOINTER_TO_SIZE (g_hash_table_lookup (by_key, json_node_get_string (key)));
          if (face == 0)
            library->source_unknown_faces++;
          else
            person->faces[person->n_faces++] = (guint32) (face - 1);
        }
    }
  return TRUE;
}

/* ── Embeddings ──────────────────────────────────────────────────────────── */

static double
sum_of_squares (const float *row, guint dim)
{
  double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  guint j = 0;

  for (; j + 4 <= dim; j += 4)
    {
      s0 += (double) row[j] * row[j];
      s1 += (double) row[j + 1] * row[j + 1];
      s2 += (double) row[j + 2] * row[j + 2];
      s3 += (double) row[j + 3] * row[j + 3];
    }
  for (; j < dim; j++)
    s0 += (double) row[j] * row[j];
  return (s0 + s1) + (s2 + s3);
}

/* Checks every row; normalises them when `writable` (the rows' own memory). */
static gboolean
check_rows (Loader *loader, const float *rows, float *writable, GError **error)
{
  LkLibrary *library = loader->library;
  const double low = (1 - NORM_TOLERANCE) * (1 - NORM_TOLERANCE);
  const double high = (1 + NORM_TOLERANCE) * (1 + NORM_TOLERANCE);
  guint dim = library->dim;

  for (gsize i = 0; i < library->count; i++)
    {
      const float *row = rows + i * dim;
      double sum = sum_of_squares (row, dim);

      if (G_LIKELY (writable == NULL && sum >= low && sum <= high))
        continue;
      if (G_UNLIKELY (!isfinite (sum)))
        for (guint j = 0; j < dim; j++)
          if (!isfinite (row[j]))
            return fail (error, LK_LIBRARY_ERROR_EMBEDDINGS, library->embeddings_path,
                         "face %" G_GSIZE_FORMAT " has %s at value %u of %u (row %" G_GSIZE_FORMAT
                         ", byte offset %" G_GSIZE_FORMAT ")",
                         i, isnan (row[j]) ? "NaN" : "an infinity", j, dim, i,
                         (i * dim + j) * sizeof (float));
      if (G_UNLIKELY (sum == 0))
        return fail (error, LK_LIBRARY_ERROR_EMBEDDINGS, library->embeddings_path,
                     "face %" G_GSIZE_FORMAT " is a row of %u zeros, which has no direction", i,
                     dim);
      if (writable == NULL)
        {
          g_autofree char *norm = g_strdup_printf ("%.6g", sqrt (sum));
          return fail (error, LK_LIBRARY_ERROR_EMBEDDINGS, library->embeddings_path,
                       "face %" G_GSIZE_FORMAT " has norm %s, but library.json says "
                       "“normalized”: true, which needs every row within %g of 1",
                       i, norm, NORM_TOLERANCE);
        }
      double scale = 1 / sqrt (sum);
      float *out = writable + i * dim;
      for (guint j = 0; j < dim; j++)
        out[j] = (float) (row[j] * scale);
    }
  return TRUE;
}

static gboolean
size_mismatch (LkLibrary *library, guint64 have, gsize need, GError **error)
{
  g_autofree char *have_text = group_digits (have);
  g_autofree char *need_text = group_digits (need);
  g_autofree char *count_text = group_digits (library->count);
  g_set_error (error, LK_LIBRARY_ERROR, LK_LIBRARY_ERROR_EMBEDDINGS,
               "%s holds %s bytes; %s faces of %u floats need %s", library->embeddings_path,
               have_text, count_text, library->dim, need_text);
  return FALSE;
}

/* What a file of mode `mode` is, when it is not a regular file. */
static const char *
kind_of (mode_t mode)
{
  if (S_ISDIR (mode))
    return "a folder";
  if (S_ISFIFO (mode))
    return "a FIFO (named pipe)";
  if (S_ISCHR (mode) || S_ISBLK (mode))
    return "a device";
  if (S_ISSOCK (mode))
    return "a socket";
  return "not a regular file";
}

/* Opens `path` for reading only if it is a regular file, with its size in
 * `*size`; else -1 and a G_FILE_ERROR naming what it is. open(2) of a FIFO
 * waits for a writer forever (issue 19: a FIFO as library.json hung the load),
 * and mmap of a folder or a device failed with "Invalid argument": so the path
 * is checked before it is opened (a device is never opened), and the open
 * file again (O_NONBLOCK, so that a FIFO swapped in between cannot block). */
static gboolean
errno_error (GError **error, const char *path, int saved)
{
  g_set_error (error, G_FILE_ERROR, g_file_error_from_errno (saved), "“%s”: %s", path,
               g_strerror (saved));
  return FALSE;
}

static int
open_regular (const char *path, goffset *size, GError **error)
{
  GStatBuf st;
  int fd = -1;

  if (g_stat (path, &st) != 0)
    return errno_error (error, path, errno), -1;
  if (S_ISREG (st.st_mode))
    {
      /* O_NONBLOCK changes nothing for a regular file's reads. */
      fd = g_open (path, O_RDONLY | O_NONBLOCK | O_CLOEXEC, 0);
      if (fd < 0)
        return errno_error (error, path, errno), -1;
      if (fstat (fd, &st) != 0)
        {
          int saved = errno;
          close (fd);
          return errno_error (error, path, saved), -1;
        }
    }
  if (!S_ISREG (st.st_mode))
    {
      if (fd >= 0)
        close (fd);
      g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_INVAL, "“%s” is %s, not a file", path,
                   kind_of (st.st_mode));
      return -1;
    }
  *size = st.st_size;
  return fd;
}

/* What read_whole found: the file's bytes, or how it changed under us. */
typedef enum
{
  READ_OK,
  READ_FAILED, /* errno is set */
  READ_SHRANK, /* *got < need: the file ended early */
  READ_GREW,   /* the file holds more than `need` bytes */
} ReadResult;

/* Reads bytes [0, need) of `fd` into `buffer` with pread(2), and checks that
 * nothing follows them. Never a mapping: a mapped file truncated by another
 * process raises SIGBUS at the next touch of a page past its new end, which
 * killed a scan running on mapped rows (issue 19), and a signal handler cannot
 * tell whose mapping faulted. Chunks of 1 GiB: Linux returns at most 2 GiB - 4
 * KiB per call. */
static ReadResult
read_whole (int fd, void *buffer, gsize need, gsize *got, Pacer *pacer)
{
  *got = 0;
  while (*got < need)
    {
      gsize piece = MIN (need - *got, pacer != NULL ? PACE_PIECE : (gsize) 1 << 30);
      if (pacer != NULL)
        {
          /* Rows read and manifest text left: at most the rows and the slack. */
          g_mutex_lock (&pacer->lock);
          while (pacer->manifest_left > 0
                 && *got + piece + pacer->manifest_left > need + PACE_SLACK)
            g_cond_wait (&pacer->cond, &pacer->lock);
          g_mutex_unlock (&pacer->lock);
        }
      gssize n = pread (fd, (char *) buffer + *got, piece, (off_t) *got);
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        return READ_FAILED;
      if (n == 0)
        return READ_SHRANK;
      *got += (gsize) n;
    }
  char extra;
  gssize n;
  do
    n = pread (fd, &extra, 1, (off_t) need);
  while (n < 0 && errno == EINTR);
  if (n < 0)
    return READ_FAILED;
  return n > 0 ? READ_GREW : READ_OK;
}

/* The rows, read into one buffer of their own (64-byte aligned, a cache line
 * and an AVX-512 register), then checked, and normalised in place when the
 * manifest says `normalized: false`. They used to be mapped in place when
 * normalised on disk; but a mapping dies of SIGBUS when the file is truncated
 * under it (see read_whole), and the copy costs what the mapping cost in
 * memory — one copy of the rows, the page cache's pages not counted — plus
 * the read itself: 0.09 s of CPU at 50,000 × 512, on the rows' own thread while
 * the main thread walks the faces. */
static gboolean
read_embeddings (Loader *loader, gsize need, GError **error)
{
  LkLibrary *library = loader->library;
  g_autoptr (GError) local = NULL;
  goffset size;
  gsize got = 0;

  /* The size first, so that a wrong file is not read whole. */
  int fd = open_regular (library->embeddings_path, &size, &local);
  if (fd < 0)
    return fail (error, LK_LIBRARY_ERROR_IO, loader->manifest, "embeddings.file: %s",
                 local->message);
  if (size < 0 || (guint64) size != need)
    {
      close (fd);
      return size_mismatch (library, (guint64) size, need, error);
    }
  library->owned = g_aligned_alloc (1, MAX (need, 1), 64);
  ReadResult result = read_whole (fd, library->owned, need, &got, loader->pacer);
  int saved = errno;
  close (fd);
  switch (result)
    {
      case READ_OK:
        break;
      case READ_FAILED:
        return fail (error, LK_LIBRARY_ERROR_IO, loader->manifest, "embeddings.file: “%s”: %s",
                     library->embeddings_path, g_strerror (saved));
      case READ_SHRANK:
      case READ_GREW:
        {
          g_autofree char *got_text = group_digits (got);
          g_autofree char *need_text = group_digits (need);
          g_set_error (error, LK_LIBRARY_ERROR, LK_LIBRARY_ERROR_EMBEDDINGS,
                       "%s changed while it was read: %s (after %s bytes of the %s it held when "
                       "opened); load the library again once whatever writes it has finished",
                       library->embeddings_path,
                       result == READ_SHRANK ? "it ended early" : "it grew", got_text, need_text);
          return FALSE;
        }
    }
#if G_BYTE_ORDER == G_BIG_ENDIAN
  guint32 *words = (guint32 *) library->owned;
  for (gsize k = 0; k < need / sizeof (float); k++)
    words[k] = GUINT32_FROM_LE (words[k]);
#endif
  library->embeddings = library->owned;
  return check_rows (loader, library->owned, library->normalized_on_disk ? NULL : library->owned,
                     error);
}

/* ── Loading ─────────────────────────────────────────────────────────────── */

/* Everything the embedding rows depend on: format, version, embeddings.*,
 * and a faces array of embeddings.count entries. */
static gboolean
read_header (Loader *loader, JsonObject *root, JsonArray **faces_out, GError **error)
{
  LkLibrary *library = loader->library;
  const Where in_embeddings = { "embeddings", -1 };
  const char *format = NULL, *file = NULL;
  gint64 version = 0, dim = 0, count = 0;
  JsonNode *node;

  if (!get_string (loader, root, &top_level, "format", TRUE, &format, error))
    return FALSE;
  if (strcmp (format, FORMAT_NAME) != 0)
    return fail (error, LK_LIBRARY_ERROR_FORMAT, loader->manifest,
                 "format is “%s”; a Likeness library says “%s”", format, FORMAT_NAME);
  if (!get_int (loader, root, &top_level, "version", TRUE, &version, error))
    return FALSE;
  if (version > LK_LIBRARY_VERSION)
    return fail (error, LK_LIBRARY_ERROR_VERSION, loader->manifest,
                 "the library is version %" G_GINT64_FORMAT
                 ", but this Likeness reads version %d only; a newer Likeness is needed",
                 version, LK_LIBRARY_VERSION);
  if (version < LK_LIBRARY_VERSION)
    return out_of_range_int (loader, &top_level, "version", "1", version, error);

  if (!get_member (loader, root, &top_level, "embeddings", KIND_OBJECT, TRUE, &node, error))
    return FALSE;
  JsonObject *embeddings = json_node_get_object (node);
  library->normalized_on_disk = TRUE;
  if (!get_string (loader, embeddings, &in_embeddings, "file", TRUE, &file, error)
      || !get_int (loader, embeddings, &in_embeddings, "dim", TRUE, &dim, error)
      || !get_int (loader, embeddings, &in_embeddings, "count", TRUE, &count, error)
      || !get_boolean (loader, embeddings, &in_embeddings, "normalized", FALSE,
                       &library->normalized_on_disk, error))
    return FALSE;
  count_object (loader, embeddings, 0, embeddings_members);
  if (dim < 1 || dim > LK_LIBRARY_MAX_DIM)
    return out_of_range_int (loader, &in_embeddings, "dim", "from 1 to 4096", dim, error);
  if (count < 0)
    return out_of_range_int (loader, &in_embeddings, "count", "0 or more", count, error);
  if ((guint64) count > G_MAXSIZE / sizeof (float) / (guint64) dim)
    {
      g_autofree char *count_text = group_digits ((guint64) count);
      g_autofree char *limit_text = group_digits (G_MAXSIZE);
      return fail (error, LK_LIBRARY_ERROR_FORMAT, loader->manifest,
                   "embeddings.count × embeddings.dim × 4 bytes = %s × %" G_GINT64_FORMAT
                   " × 4, more than the %s bytes this computer can address",
                   count_text, dim, limit_text);
    }
  library->dim = (guint) dim;
  library->count = (gsize) count;

  if (!get_member (loader, root, &top_level, "faces", KIND_ARRAY, TRUE, &node, error))
    return FALSE;
  JsonArray *faces = json_node_get_array (node);
  gsize faces_length
      = loader->faces_span != NULL ? loader->faces_span->count : json_array_get_length (faces);
  if (faces_length != library->count)
    {
      g_autofree char *length_text = group_digits (faces_length);
      g_autofree char *count_text = group_digits (library->count);
      return fail (error, LK_LIBRARY_ERROR_FORMAT, loader->manifest,
                   "faces has %s entries, but embeddings.count is %s; there must be one per "
                   "embedding row",
                   length_text, count_text);
    }
  *faces_out = faces;

  if (!check_lexically (loader->manifest, file, "embeddings.file", error))
    return FALSE;
  library->embeddings_path = g_build_filename (library->folder, file, NULL);
  return check_symlinks (loader->manifest, library->folder, library->embeddings_path, file,
                         "embeddings.file", NULL, error);
}

static gboolean
read_body (Loader *loader, JsonObject *root, JsonArray *faces, GError **error)
{
  LkLibrary *library = loader->library;

  library->min_probability = 0.9;
  library->min_gallery_quality = 0.5;
  if (!read_calibration (loader, root, error)
      || !get_double (loader, root, &top_level, "min_probability", FALSE, &library->min_probability,
                      error)
      || !get_double (loader, root, &top_level, "min_gallery_quality", FALSE,
                      &library->min_gallery_quality, error))
    return FALSE;
  if (!(library->min_probability > 0 && library->min_probability < 1))
    return out_of_range (loader, &top_level, "min_probability", "between 0 and 1, exclusive",
                         library->min_probability, error);
  if (!(library->min_gallery_quality >= 0 && library->min_gallery_quality <= 1))
    return out_of_range (loader, &top_level, "min_gallery_quality", "in [0, 1]",
                         library->min_gallery_quality, error);

  if (!read_photo_folders (loader, root, error) || !read_photos (loader, root, error)
      || !read_faces (loader, faces, error))
    return FALSE;
  set_thumbnail_warning (loader);
  if (!read_people (loader, root, error))
    return FALSE;
  count_object (loader, root, 0, root_members);
  return TRUE;
}

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
  return GINT_TO_POINTER (read_embeddings (job->loader, need, &job->error));
}

/* The manifest's JSON text: its bytes without a UTF-8 byte-order mark, which
 * Windows editors write (json-glib took the file for empty, issue 19; the
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

/* The streamed load (see "Streaming"). FALSE with *retry when the whole
 * tree must be parsed instead: nothing of this attempt is then kept, and no
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
  scan_shape (data, length, &shape);
  if (!shape.standard || shape.trailing >= 0
      || !find_arrays (data, length, &faces, &has_faces, &photos, &has_photos) || !has_faces)
    return FALSE;
  loader->shape = shape;
  g_autoptr (GString) skeleton = make_skeleton (data, length, &faces, has_photos ? &photos : NULL);
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
  if (!read_header (loader, root, &faces_array, &local))
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
  loader->dirs = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, thumb_dir_free);
  gboolean ok = read_body (loader, root, faces_array, &local);
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
  ok = read_header (loader, json_node_get_object (root), &faces, error);
  if (ok)
    {
      reader = g_thread_try_new ("lk-embeddings", load_rows, &rows, NULL);
      loader->path = g_string_new (NULL);
      loader->dirs = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, thumb_dir_free);
      ok = read_body (loader, json_node_get_object (root), faces, error);
      g_string_free (loader->path, TRUE);
      g_hash_table_unref (loader->dirs);
    }

  /* A duplicate member comes first: it may be why a field looked wrong. A
   * walk cut short by an error has not counted every object, so count then. */
  gsize members = ok ? loader->members : count_members (root);
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
  library->folder = real_path (folder);
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
   * with SIGBUS (see read_whole). */
  goffset manifest_size;
  int fd = open_regular (manifest, &manifest_size, &local);
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
      g_autofree char *size_text = group_digits (manifest_length);
      g_set_error (error, LK_LIBRARY_ERROR, LK_LIBRARY_ERROR_IO,
                   "Cannot read the library manifest %s: its %s bytes do not fit in memory",
                   manifest, size_text);
      return NULL;
    }
  gsize got;
  ReadResult read = read_whole (fd, bytes, manifest_length, &got, NULL);
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
 * took 100-218 ms against 445-567 ms for lk_library_load of the same library
 * (5 runs, AMD EPYC Zen 4, a loaded 2-core machine); faces with an id cost
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
 * keep the multiplier busy. The keys of make-sample --faces 100000 (no ids,
 * 512 floats; 5.6 % of the cycles of bench-people --scan-cache) took 0.322,
 * 0.323, 0.329 s of CPU one face at a time and 0.167, 0.155, 0.147 s four
 * at a time (bench-people, old and new binaries alternating, AMD EPYC Zen 4,
 * 2 cores at load 15-20). */
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

/* ── Photos outside the library ──────────────────────────────────────────── */

gboolean
lk_path_map_parse (const char *text, LkPathMap *map, GError **error)
{
  const char *equals = strrchr (text, '=');
  if (equals == NULL || equals == text || equals[1] == '\0')
    {
      g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                   "“%s” is not a mapping: write PREFIX=DIR, the folder as the library names it "
                   "(the server's, say /usr/src/app/upload), then where it is here",
                   text);
      return FALSE;
    }
  g_autofree char *from = g_strndup (text, (gsize) (equals - text));
  if (!g_path_is_absolute (from) || goes_up (from))
    {
      g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                   "In the mapping “%s”, the prefix “%s” must be an absolute path without “..”",
                   text, from);
      return FALSE;
    }
  gsize length = strlen (from);
  while (length > 1 && from[length - 1] == '/')
    from[--length] = '\0';
  map->from = g_steal_pointer (&from);
  map->to = g_canonicalize_filename (equals + 1, NULL);
  return TRUE;
}

void
lk_path_map_clear (LkPathMap *map)
{
  g_clear_pointer (&map->from, g_free);
  g_clear_pointer (&map->to, g_free);
}

/* `path` through the first map whose prefix it starts with (whole
 * components), or NULL when none does. */
static char *
map_path (const char *path, const LkPathMap *maps, gsize n_maps)
{
  for (gsize k = 0; k < n_maps; k++)
    {
      const char *from = maps[k].from;
      gsize length = strlen (from);
      if (strcmp (from, "/") == 0)
        return g_build_filename (maps[k].to, path, NULL);
      if (strncmp (path, from, length) == 0 && (path[length] == '\0' || path[length] == '/'))
        return g_build_filename (maps[k].to, path + length, NULL);
    }
  return NULL;
}

char *
lk_library_photo_file (const LkLibrary *library, const LkPhoto *photo, const LkPathMap *maps,
                       gsize n_maps, GError **error)
{
  g_return_val_if_fail (library != NULL && photo != NULL, NULL);
  if (photo->path != NULL)
    return lk_library_resolve_path (library->folder, photo->path, "photos[].path", error);
  char *mapped = NULL;
  if (photo->original != NULL && photo->folder < library->n_photo_folders)
    {
      g_autofree char *named
          = g_build_filename (library->photo_folders[photo->folder], photo->original, NULL);
      mapped = map_path (named, maps, n_maps);
      if (mapped == NULL)
        return g_steal_pointer (&named);
    }
  else if (photo->source_path != NULL)
    {
      mapped = g_path_is_absolute (photo->source_path) ? map_path (photo->source_path, maps, n_maps)
                                                       : NULL;
      if (mapped == NULL)
        {
          g_set_error (error, LK_LIBRARY_ERROR, LK_LIBRARY_ERROR_UNMAPPED,
                       "The photo is %s on the server the library was imported from; no folder "
                       "mapping covers it (map the server's folder to this computer's: "
                       "--map PREFIX=DIR)",
                       photo->source_path);
          return NULL;
        }
    }
  else
    return NULL;
  /* A mapped path is written beside (a sidecar): one that climbs out of the
   * folder it was mapped to is refused, whatever the manifest says. */
  if (goes_up (mapped))
    {
      g_set_error (error, LK_LIBRARY_ERROR, LK_LIBRARY_ERROR_PATH,
                   "The photo's path %s goes up with “..”; it is not opened", mapped);
      g_free (mapped);
      return NULL;
    }
  return mapped;
}
