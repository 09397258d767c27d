/* lk-library-manifest.c — library.json's bytes: checked, parsed whole or in chunks
 *
 * Duplicate members: json-glib 1.6 silently keeps the last of two members of
 * one name and has no hook that sees both. Its "object-member" signal is
 * emitted after the member is stored, so an object whose size is smaller than
 * the members announced for it has a duplicate; but connecting to it makes
 * the parse 50 % slower. So the signals are a slow path: a byte scan counts
 * the ':' outside strings (one per member in standard JSON) and compares with
 * the members in the tree, which the walk over the faces adds up as it goes
 * (a separate recursive count was 5 % of a load's samples). Equal means no
 * duplicate; otherwise, and whenever the file uses json-glib's extensions
 * (comments, single-quoted strings) that the scan does not model, the file is
 * parsed again with the signals connected, which names the object and the
 * member. The scan also catches a second top-level value, which json-glib 1.6
 * drops silently. */
#include "config.h"

#include "lk-json.h"
#include "lk-library-private.h"

#include <string.h>

#include <json-glib/json-glib.h>
#ifdef __linux__
#include <sys/mman.h>
#endif
#include <unistd.h>

/* What the slow path's "object-*" and "array-*" signals saw. */
typedef struct
{
  GArray *seen; /* members announced so far, one per open object */
  guint depth;
  guint roots;
  JsonObject *duplicate_in;
  char *duplicate_name;
} Census;

/* ── Byte scan and duplicate members ─────────────────────────────────────── */

void
lk_library_scan_shape (const char *data, gsize length, Shape *shape)
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

gsize
lk_library_count_members (JsonNode *node)
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
          n += lk_library_count_members (child);
    }
  else if (JSON_NODE_HOLDS_ARRAY (node))
    {
      JsonArray *array = json_node_get_array (node);
      guint length = json_array_get_length (array);
      for (guint k = 0; k < length; k++)
        {
          JsonNode *child = json_array_get_element (array, k);
          if (!JSON_NODE_HOLDS_VALUE (child))
            n += lk_library_count_members (child);
        }
    }
  return n;
}

/* Adds a walked object's members to loader->members, the count the byte
 * scan's colons are compared with. Known members are scalars or containers
 * the walk visits itself; an unknown one may hold objects of its own, which
 * count_members adds. When all `seen` members of the object were known, there
 * is nothing more to count, which saves iterating 100 000 faces. */
void
lk_library_count_object (Loader *loader, JsonObject *object, guint seen, const char *const *known)
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
      loader->members += lk_library_count_members (child);
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
gboolean
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
        ok = lk_library_fail (error, LK_LIBRARY_ERROR_FORMAT, loader->manifest,
                              "%s has the member “%s” more than once",
                              path->len > 0 ? path->str : "the top-level object",
                              census.duplicate_name);
      else
        ok = lk_library_fail (error, LK_LIBRARY_ERROR_FORMAT, loader->manifest,
                              "an object has the member “%s” more than once",
                              census.duplicate_name);
    }
  else if (census.roots > 1)
    ok = lk_library_fail (error, LK_LIBRARY_ERROR_JSON, loader->manifest,
                          "holds %u JSON values one after the other; it must hold one object",
                          census.roots);

  g_array_unref (census.seen);
  g_free (census.duplicate_name);
  return ok;
}

JsonParser *
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
      lk_library_fail (
          error, LK_LIBRARY_ERROR_JSON, loader->manifest,
          "not valid JSON: line %u has a \\u escape that is not four hex digits or is half of "
          "a UTF-16 surrogate pair",
          lk_json_line_of (data, (gsize) bad));
      return NULL;
    }
  /* json-glib recurses once per level: 200,000 "[" overflowed its stack. */
  bad = lk_json_find_too_deep (data, length, LK_JSON_MAX_DEPTH);
  if (bad >= 0)
    {
      lk_library_fail (error, LK_LIBRARY_ERROR_JSON, loader->manifest,
                       "line %u is nested deeper than %d arrays and objects",
                       lk_json_line_of (data, (gsize) bad), LK_JSON_MAX_DEPTH);
      return NULL;
    }
  /* A "\u0000" would cut a C string short, silently. */
  bad = lk_json_find_nul_escape (data, length);
  if (bad >= 0)
    {
      g_autofree char *field = lk_json_path_at (data, length, (gsize) bad);
      lk_library_fail (
          error, LK_LIBRARY_ERROR_FORMAT, loader->manifest,
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
      lk_library_fail (error, LK_LIBRARY_ERROR_FORMAT, loader->manifest,
                       "line %u holds the integer %.*s, which is out of range",
                       lk_json_line_of (data, (gsize) bad), (int) MIN (end - (gsize) bad, 40),
                       data + bad);
      return NULL;
    }
  /* json-glib 1.6 leaks every top-level value but the last when a file holds
   * several (found by fuzz-library), so it only sees the first one. */
  lk_library_scan_shape (data, length, &shape);
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
      lk_library_fail (error, LK_LIBRARY_ERROR_JSON, loader->manifest, "not valid JSON: %s",
                       message);
      return NULL;
    }
  JsonNode *root = json_parser_get_root (parser);
  if (root == NULL)
    {
      lk_library_fail (error, LK_LIBRARY_ERROR_JSON, loader->manifest, "the file is empty");
      return NULL;
    }

  if (shape.trailing >= 0)
    {
      gsize line = 1;
      for (gssize k = 0; k < shape.trailing; k++)
        line += data[k] == '\n';
      lk_library_fail (error, LK_LIBRARY_ERROR_JSON, loader->manifest,
                       "a second JSON value starts on line %" G_GSIZE_FORMAT
                       " after the manifest object has ended",
                       line);
      return NULL;
    }
  loader->shape = shape;

  if (!JSON_NODE_HOLDS_OBJECT (root))
    {
      g_autofree char *what = lk_library_describe_node (root);
      lk_library_fail (error, LK_LIBRARY_ERROR_FORMAT, loader->manifest,
                       "the manifest must be a JSON object, not %s", what);
      return NULL;
    }
  return g_steal_pointer (&parser);
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
gboolean
lk_library_find_arrays (const char *data, gsize length, Span *faces, gboolean *has_faces,
                        Span *photos, gboolean *has_photos)
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
GString *
lk_library_make_skeleton (const char *data, gsize length, const Span *faces, const Span *photos)
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

/* Reads the elements of `span`, STREAM_CHUNK at a time, with `read`. */
gboolean
lk_library_stream_elements (Loader *loader, const Span *span, ElementsFunc read, GError **error)
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
        return lk_library_fail (error, LK_LIBRARY_ERROR_JSON, loader->manifest, "not valid JSON");
      if (!read (loader, json_node_get_array (json_parser_get_root (parser)), base, error))
        return FALSE;
      base += n;
      release_text (loader, MIN (end, limit));
    }
  return TRUE;
}
