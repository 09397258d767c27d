/* lk-review-load.c — review.json read: checked, parsed, migrated; its calibration kept whole */
#include "config.h"

#include <json-glib/json-glib.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "library/lk-json.h"
#include "lk-review-private.h"

/* --- review.json: reading -------------------------------------------------------------------- */

static gboolean corrupt (GError **error, const char *path, const char *format, ...)
    G_GNUC_PRINTF (3, 4);

static gboolean
corrupt (GError **error, const char *path, const char *format, ...)
{
  va_list args;
  va_start (args, format);
  g_autofree char *what = g_strdup_vprintf (format, args);
  va_end (args);
  g_set_error (error, LK_REVIEW_ERROR, LK_REVIEW_ERROR_CORRUPT,
               "%s is not a review file Likeness can read: %s", path, what);
  return FALSE;
}

/* One face of a decision: in version 1 the face's index in the library the
 * file was made for (the fingerprint matched, so the index is this
 * library's); from version 2 its key (lk_library_face_keys), which may name a
 * face that is no longer in the library. */
static gboolean
read_face (LkReview *review, JsonNode *e, guint version, guint32 *slot)
{
  if (!JSON_NODE_HOLDS_VALUE (e))
    return FALSE;
  if (version == 1)
    {
      if (json_node_get_value_type (e) != G_TYPE_INT64 || json_node_get_int (e) < 0
          || (guint64) json_node_get_int (e) >= review->n_faces)
        return FALSE;
      *slot = (guint32) json_node_get_int (e);
      return TRUE;
    }
  if (json_node_get_value_type (e) != G_TYPE_STRING)
    return FALSE;
  const char *key = json_node_get_string (e);
  if (*key == '\0' || !g_utf8_validate (key, -1, NULL))
    return FALSE;
  *slot = lk_review_slot_of (review, key);
  return TRUE;
}

static char *
face_kind (const LkReview *review, guint version)
{
  if (version != 1)
    return g_strdup ("face key (a non-empty string)");
  return g_strdup_printf ("face index below %" G_GSIZE_FORMAT, review->n_faces);
}

static gboolean
read_faces (LkReview *review, JsonObject *o, const char *member, GArray *out, guint version,
            const char *path, const char *where, GError **error)
{
  JsonNode *node = json_object_get_member (o, member);
  if (node == NULL)
    return TRUE;
  if (!JSON_NODE_HOLDS_ARRAY (node))
    return corrupt (error, path, "%s: “%s” is not a list of faces", where, member);
  JsonArray *a = json_node_get_array (node);
  for (guint k = 0; k < json_array_get_length (a); k++)
    {
      guint32 slot;
      if (!read_face (review, json_array_get_element (a, k), version, &slot))
        {
          g_autofree char *expected = face_kind (review, version);
          return corrupt (error, path, "%s: “%s”[%u] is not a %s", where, member, k, expected);
        }
      g_array_append_val (out, slot);
    }
  g_array_sort (out, lk_review_compare_faces);
  return TRUE;
}

/* The string `member` of `o` in *out (NULL when absent). FALSE when it is
 * there but is no string: a value of the wrong type is refused, never read
 * as if it were absent (a "name": 5 would silently forget the name). */
static gboolean
member_string (JsonObject *o, const char *member, const char **out)
{
  JsonNode *node = json_object_get_member (o, member);
  *out = NULL;
  if (node == NULL)
    return TRUE;
  /* json-glib hands back escapes it decoded into invalid UTF-8 (the fuzzer's
   * "p3\u0010\601…"), which the next save could not write as JSON: such a
   * string is no string. */
  if (JSON_NODE_HOLDS_VALUE (node) && json_node_get_value_type (node) == G_TYPE_STRING
      && g_utf8_validate (json_node_get_string (node), -1, NULL))
    {
      *out = json_node_get_string (node);
      return TRUE;
    }
  return FALSE;
}

static Decision *
read_decision (LkReview *review, JsonNode *node, guint version, const char *path, const char *log,
               guint index, GError **error)
{
  g_autofree char *where = g_strdup_printf ("“%s”[%u]", log, index);
  if (!JSON_NODE_HOLDS_OBJECT (node))
    {
      corrupt (error, path, "%s is not an object", where);
      return NULL;
    }
  JsonObject *o = json_node_get_object (node);
  static const char *const strings[] = { "id", "op", "person", "name", "other", "group" };
  const char *value[G_N_ELEMENTS (strings)];
  for (gsize k = 0; k < G_N_ELEMENTS (strings); k++)
    if (!member_string (o, strings[k], &value[k]))
      {
        corrupt (error, path, "%s: “%s” is not a string", where, strings[k]);
        return NULL;
      }
  const char *id = value[0], *op = value[1], *person = value[2];
  Op kind = N_OPS;
  for (int k = 0; op && k < N_OPS; k++)
    if (strcmp (op, lk_review_op_names[k]) == 0)
      kind = k;
  if (kind == N_OPS)
    {
      corrupt (error, path, "%s has no known “op”", where);
      return NULL;
    }
  gboolean personless
      = kind == LK_REVIEW_MOVE || kind == LK_REVIEW_DISMISS || kind == LK_REVIEW_UNDISMISS;
  if (person == NULL && !personless)
    {
      corrupt (error, path, "%s (%s) has no “person”", where, op);
      return NULL;
    }
  if (id != NULL && *id == '\0')
    {
      corrupt (error, path, "%s has an empty “id”", where);
      return NULL;
    }
  g_autoptr (GPtrArray) keep
      = g_ptr_array_new_with_free_func ((GDestroyNotify) lk_review_decision_free);
  Decision *d = lk_review_decision_new (kind, person);
  g_ptr_array_add (keep, d);
  /* A file written before decisions had ids: the same id for the same
   * place in the same file, so every writer that reads it agrees. */
  d->id = id ? g_strdup (id) : g_strdup_printf ("legacy-%s-%u", log, index);
  d->name = g_strdup (value[3]);
  d->other = g_strdup (value[4]);
  d->group = g_strdup (value[5]);
  if (!read_faces (review, o, "faces", d->faces, version, path, where, error)
      || !read_faces (review, o, "selected", d->selected, version, path, where, error)
      || !read_faces (review, o, "other_faces", d->other_faces, version, path, where, error))
    return NULL;
  if ((kind == LK_REVIEW_MERGE || kind == LK_REVIEW_MOVE) && d->other == NULL)
    {
      corrupt (error, path, "%s (%s) has no “other”", where, op);
      return NULL;
    }
  if (kind == LK_REVIEW_MERGE && strcmp (d->other, person) == 0)
    {
      corrupt (error, path, "%s (merge) merges “%s” with itself", where, person);
      return NULL;
    }
  if ((kind == LK_REVIEW_REMOVE || kind == LK_REVIEW_MOVE || kind == LK_REVIEW_DISMISS
       || kind == LK_REVIEW_UNDISMISS)
      && d->selected->len == 0)
    {
      corrupt (error, path, "%s (%s) has no “selected” faces", where, op);
      return NULL;
    }
  if (kind == LK_REVIEW_COVER || kind == LK_REVIEW_CONFIRM)
    {
      JsonNode *f = json_object_get_member (o, "face");
      guint32 slot;
      if (f == NULL || !read_face (review, f, version, &slot))
        {
          g_autofree char *expected = face_kind (review, version);
          corrupt (error, path, "%s (%s): “face” is not a %s", where, op, expected);
          return NULL;
        }
      d->face = slot;
    }
  return g_ptr_array_steal_index (keep, 0);
}

/* Whether every string under `node` (values and member names) is UTF-8.
 * json-glib 1.6 reads some escapes (an octal "\200") into bytes that are not
 * UTF-8 and would write them back as text no JSON reader takes: a member this
 * version does not know is kept and saved as it is, so it must be text the
 * next load can read (the 10-minute fuzz-review run saved such a file). */
/* What a member this version does not know (or the calibration, kept
 * whole) must hold to be written back as it was read: text that is UTF-8
 * and numbers that are finite. json-glib reads a number beyond a double's
 * range (1e999) as infinity, and would write it back as "inf", which is not
 * JSON (found by fuzz-review). */
typedef enum
{
  NODE_WRITABLE,
  NODE_NOT_UTF8,
  NODE_NOT_FINITE,
} NodeCheck;

static NodeCheck
node_check (JsonNode *node)
{
  if (JSON_NODE_HOLDS_VALUE (node))
    {
      GType type = json_node_get_value_type (node);
      if (type == G_TYPE_STRING && !g_utf8_validate (json_node_get_string (node), -1, NULL))
        return NODE_NOT_UTF8;
      if (type == G_TYPE_DOUBLE && !isfinite (json_node_get_double (node)))
        return NODE_NOT_FINITE;
      return NODE_WRITABLE;
    }
  if (JSON_NODE_HOLDS_ARRAY (node))
    {
      JsonArray *a = json_node_get_array (node);
      for (guint k = 0; k < json_array_get_length (a); k++)
        {
          NodeCheck c = node_check (json_array_get_element (a, k));
          if (c != NODE_WRITABLE)
            return c;
        }
      return NODE_WRITABLE;
    }
  if (JSON_NODE_HOLDS_OBJECT (node))
    {
      JsonObject *o = json_node_get_object (node);
      GList *members = json_object_get_members (o);
      NodeCheck c = NODE_WRITABLE;
      for (GList *l = members; c == NODE_WRITABLE && l != NULL; l = l->next)
        c = g_utf8_validate (l->data, -1, NULL) ? node_check (json_object_get_member (o, l->data))
                                                : NODE_NOT_UTF8;
      g_list_free (members);
      return c;
    }
  return NODE_WRITABLE;
}

static gboolean
read_log (JsonObject *root, const char *member, LkReview *review, Sync sync, guint version,
          const char *path, GError **error)
{
  GPtrArray *out = sync == SYNC_DONE ? review->done : review->undone;
  JsonNode *node = json_object_get_member (root, member);
  if (node == NULL)
    return TRUE;
  if (!JSON_NODE_HOLDS_ARRAY (node))
    return corrupt (error, path, "“%s” is not a list", member);
  JsonArray *a = json_node_get_array (node);
  for (guint k = 0; k < json_array_get_length (a); k++)
    {
      Decision *d
          = read_decision (review, json_array_get_element (a, k), version, path, member, k, error);
      if (d == NULL)
        return FALSE;
      g_ptr_array_add (out, d);
      if (!g_hash_table_insert (review->synced, g_strdup (d->id), GINT_TO_POINTER (sync)))
        return corrupt (error, path, "“%s”[%u] has the id “%s” of another decision", member, k,
                        d->id);
    }
  return TRUE;
}

/* json-glib keeps the last of two members with one name and drops the other
 * without a word: a review.json with two "decisions" lists would lose one.
 * The parser's "object-member" signal comes after each member is stored; an
 * object that holds fewer members than were stored in it had one replaced. */
typedef struct
{
  GHashTable *stored; /* JsonObject * → members stored so far */
  char *name;         /* the first duplicate, or NULL */
  guint line;
} Duplicates;

static void
on_object_member (JsonParser *parser, JsonObject *object, const char *name, gpointer user_data)
{
  Duplicates *dup = user_data;
  guint n = GPOINTER_TO_UINT (g_hash_table_lookup (dup->stored, object)) + 1;

  g_hash_table_insert (dup->stored, object, GUINT_TO_POINTER (n));
  if (dup->name == NULL && n > json_object_get_size (object))
    {
      dup->name = g_strdup (name);
      dup->line = json_parser_get_current_line (parser);
    }
}

/* The members of review.json this version reads itself; any other is kept. */
static const char *const known_members[]
    = { "format", "version", "fingerprint", "faces", "decisions", "redo" };

/* --- review.json: the calibration ----------------------------------------------------------- */

/* The user's calibration (lk-calibrate.h) is a top-level object of its own,
 * kept here whole and read and written by lk-calibrate, so the decision log
 * and the calibration never reach into each other. */
static void
read_calibration (LkReview *review, JsonObject *root)
{
  JsonNode *node = json_object_get_member (root, "calibration");
  if (node != NULL && JSON_NODE_HOLDS_OBJECT (node))
    review->calibration = json_node_copy (node);
}

void
lk_review_set_photo_path (LkReview *review, guint64 photo, const char *path)
{
  if (review->photo_paths == NULL)
    review->photo_paths = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, g_free);
  g_hash_table_replace (review->photo_paths, g_memdup2 (&photo, sizeof photo), g_strdup (path));
}

JsonNode *
lk_review_get_calibration (const LkReview *review)
{
  return review->calibration;
}

void
lk_review_set_calibration (LkReview *review, JsonNode *calibration)
{
  g_clear_pointer (&review->calibration, json_node_unref);
  if (calibration != NULL)
    review->calibration = json_node_copy (calibration);
  review->calibration_set = TRUE;
}

/* Parse's first phase: refuses, before json-glib sees them, inputs it
 * mishandles. */
static gboolean
check_bytes (const char *data, gsize length, const char *path, GError **error)
{
  /* Inputs on which json-glib 1.6 leaks are refused before it sees them
   * (lk-json.h). */
  gssize bad = lk_json_find_unpaired_surrogate (data, length);
  if (bad >= 0)
    {
      corrupt (error, path,
               "line %u has a \\u escape that is not four hex digits or is half of a UTF-16 "
               "surrogate pair",
               lk_json_line_of (data, (gsize) bad));
      return FALSE;
    }
  /* json-glib recurses once per level: 80,000 "[" overflowed its stack. */
  bad = lk_json_find_too_deep (data, length, LK_JSON_MAX_DEPTH);
  if (bad >= 0)
    {
      corrupt (error, path, "line %u is nested deeper than %d arrays and objects",
               lk_json_line_of (data, (gsize) bad), LK_JSON_MAX_DEPTH);
      return FALSE;
    }
  /* A "\u0000" would cut a C string short, silently. */
  bad = lk_json_find_nul_escape (data, length);
  if (bad >= 0)
    {
      g_autofree char *field = lk_json_path_at (data, length, (gsize) bad);
      corrupt (error, path,
               "%s (line %u) has a \\u0000 (a NUL character) in a string; names cannot hold one",
               field, lk_json_line_of (data, (gsize) bad));
      return FALSE;
    }
  /* json-glib wraps an integer beyond 64 bits: "-18446744073709551613" is 3. */
  bad = lk_json_find_integer_out_of_range (data, length);
  if (bad >= 0)
    {
      gsize end = (gsize) bad + 1;
      while (end < length && g_ascii_isdigit (data[end]))
        end++;
      corrupt (error, path, "line %u holds the integer %.*s, which is out of range",
               lk_json_line_of (data, (gsize) bad), (int) MIN (end - (gsize) bad, 40), data + bad);
      return FALSE;
    }
  bad = lk_json_find_unopened_close (data, length);
  if (bad >= 0)
    {
      corrupt (error, path, "line %u closes a “%c” that was never opened",
               lk_json_line_of (data, (gsize) bad), data[bad] == ']' ? '[' : '{');
      return FALSE;
    }
  return TRUE;
}

/* Parse's second phase: the JSON parsed by `parser`, refused when a member
 * is named twice in one object. Returns the top-level object (`parser`'s),
 * or NULL. */
static JsonObject *
parse_json (JsonParser *parser, const char *data, gsize length, const char *path, GError **error)
{
  g_autoptr (GError) json_error = NULL;
  /* Parsed as the one element of an array: json-glib 1.6 would otherwise
   * accept several top-level values, keep one and leak the others (found by
   * fuzz-review); inside [ ] a second value is a syntax error, and the check
   * above makes sure the file cannot close that [ itself. The "[" shares the
   * file's first line, so json-glib's line numbers are the file's. */
  g_autoptr (GString) wrapped = g_string_sized_new (length + 3);
  g_string_append_c (wrapped, '[');
  g_string_append_len (wrapped, data, (gssize) length);
  g_string_append (wrapped, "\n]");
  Duplicates dup = { g_hash_table_new (NULL, NULL), NULL, 0 };
  g_signal_connect (parser, "object-member", G_CALLBACK (on_object_member), &dup);
  gboolean parsed
      = json_parser_load_from_data (parser, wrapped->str, (gssize) wrapped->len, &json_error);
  g_hash_table_unref (dup.stored);
  g_autofree char *duplicate = dup.name;
  if (!parsed)
    {
      /* An error on the line of the closing "]" means the file ended early. */
      guint line = 0;
      guint lines = 1;
      for (gsize k = 0; k < length; k++)
        lines += data[k] == '\n';
      if (sscanf (json_error->message, "<data>:%u:", &line) == 1 && line > lines)
        corrupt (error, path, "it ends before its JSON is complete");
      else
        corrupt (error, path, "%s", json_error->message);
      return NULL;
    }
  if (duplicate != NULL)
    {
      corrupt (error, path,
               "line %u names “%s” a second time in one object; which one is meant is "
               "ambiguous, so neither is read",
               dup.line, duplicate);
      return NULL;
    }
  JsonArray *values = json_node_get_array (json_parser_get_root (parser));
  JsonNode *root_node
      = json_array_get_length (values) == 1 ? json_array_get_element (values, 0) : NULL;
  if (root_node == NULL || !JSON_NODE_HOLDS_OBJECT (root_node))
    {
      corrupt (error, path, "it is not a JSON object");
      return NULL;
    }
  return json_node_get_object (root_node);
}

/* Parse's third phase: checks format, version and (for version 1)
 * fingerprint; the file's version in *out_version. */
static gboolean
check_header (JsonObject *root, const char *path, const char *fingerprint, guint *out_version,
              GError **error)
{
  const char *format = NULL;
  if (!member_string (root, "format", &format) || g_strcmp0 (format, REVIEW_FORMAT) != 0)
    {
      corrupt (error, path, "“format” is not “%s”", REVIEW_FORMAT);
      return FALSE;
    }
  JsonNode *version = json_object_get_member (root, "version");
  if (version == NULL || !JSON_NODE_HOLDS_VALUE (version)
      || json_node_get_value_type (version) != G_TYPE_INT64 || json_node_get_int (version) < 1)
    {
      corrupt (error, path, "“version” is missing or not a positive integer");
      return FALSE;
    }
  if (json_node_get_int (version) > LK_REVIEW_VERSION)
    {
      g_set_error (error, LK_REVIEW_ERROR, LK_REVIEW_ERROR_VERSION,
                   "%s is review format version %" G_GINT64_FORMAT
                   "; this Likeness reads version %d. Update Likeness to open it",
                   path, json_node_get_int (version), LK_REVIEW_VERSION);
      return FALSE;
    }
  guint file_version = (guint) json_node_get_int (version);
  const char *theirs = NULL;
  if (!member_string (root, "fingerprint", &theirs) || (theirs == NULL && file_version == 1))
    {
      corrupt (error, path, "it has no “fingerprint”");
      return FALSE;
    }
  /* Version 1 named faces by index, which only mean something in the
   * library the file was made for: migrated when the fingerprint says it is
   * this one. From version 2 faces are named by key and the fingerprint is
   * only informational: a re-exported library is the same library. */
  if (file_version == 1 && strcmp (theirs, fingerprint) != 0)
    {
      g_set_error (error, LK_REVIEW_ERROR, LK_REVIEW_ERROR_FOREIGN,
                   "%s belongs to another library (fingerprint %.12s…, this library is %.12s…) "
                   "and names faces by their place in it (review format version 1), so it "
                   "cannot be applied; it will not be overwritten unless you start over",
                   path, theirs, fingerprint);
      return FALSE;
    }
  *out_version = file_version;
  return TRUE;
}

/* Parse's last phase: the members of `root` this version does not know,
 * kept in review->unknown to be written back as they are; refused when one
 * could not be. */
static gboolean
keep_unknown (LkReview *review, JsonObject *root, const char *path, GError **error)
{
  review->unknown = json_object_new ();
  GList *members = json_object_get_members (root);
  for (GList *l = members; l != NULL; l = l->next)
    {
      gboolean known = FALSE;
      for (gsize k = 0; k < G_N_ELEMENTS (known_members); k++)
        known = known || strcmp (l->data, known_members[k]) == 0;
      if (known)
        continue;
      JsonNode *member = json_object_get_member (root, l->data);
      NodeCheck c = g_utf8_validate (l->data, -1, NULL) ? node_check (member) : NODE_NOT_UTF8;
      if (c == NODE_NOT_UTF8)
        {
          g_list_free (members);
          corrupt (error, path, "a member Likeness keeps as it is holds text that is not UTF-8");
          return FALSE;
        }
      if (c == NODE_NOT_FINITE)
        {
          corrupt (error, path,
                   "“%s” holds a number beyond the range of a double, which Likeness could "
                   "not write back as it was",
                   (const char *) l->data);
          g_list_free (members);
          return FALSE;
        }
      /* The calibration, kept whole and written back like the members this
       * version does not know, was checked with them. One that is not an
       * object is not the one lk-calibrate reads: kept as it is, like any
       * other member. */
      if (strcmp (l->data, "calibration") == 0 && review->calibration != NULL)
        continue;
      json_object_set_member (review->unknown, l->data, json_node_copy (member));
    }
  g_list_free (members);
  return TRUE;
}

/* Parses `data`, in phases: its bytes (check_bytes), its JSON (parse_json),
 * format, version and (for version 1) fingerprint (check_header), the two
 * logs and the calibration, and the members this version does not know
 * (keep_unknown). */
static LkReview *
parse (const char *data, gsize length, const char *path, FaceKeys *keys, const char *fingerprint,
       const guint64 *photo, GError **error)
{
  g_autoptr (JsonParser) parser = json_parser_new ();
  if (!check_bytes (data, length, path, error))
    return NULL;
  JsonObject *root = parse_json (parser, data, length, path, error);
  guint file_version = 0;
  if (root == NULL || !check_header (root, path, fingerprint, &file_version, error))
    return NULL;
  g_autoptr (LkReview) review = lk_review_new_with_keys (keys, fingerprint, photo);
  review->version = file_version;
  if (!read_log (root, "decisions", review, SYNC_DONE, file_version, path, error)
      || !read_log (root, "redo", review, SYNC_UNDONE, file_version, path, error))
    return NULL;
  read_calibration (review, root);
  if (!keep_unknown (review, root, path, error))
    return NULL;
  return g_steal_pointer (&review);
}

LkReview *
lk_review_load_with_keys (const char *path, FaceKeys *keys, const char *fingerprint,
                          const guint64 *photo, GError **error)
{
  g_autofree char *data = NULL;
  gsize length = 0;
  g_autoptr (GError) io_error = NULL;
  if (!g_file_get_contents (path, &data, &length, &io_error))
    {
      if (g_error_matches (io_error, G_FILE_ERROR, G_FILE_ERROR_NOENT))
        return lk_review_new_with_keys (keys, fingerprint, photo);
      g_set_error (error, LK_REVIEW_ERROR, LK_REVIEW_ERROR_IO, "%s", io_error->message);
      return NULL;
    }
  return parse (data, length, path, keys, fingerprint, photo, error);
}

LkReview *
lk_review_load (const char *path, gsize n_faces, const char *fingerprint, const guint64 *photo,
                GError **error)
{
  g_return_val_if_fail (path != NULL && fingerprint != NULL, NULL);
  FaceKeys *keys = lk_review_face_keys_new (n_faces, NULL);
  LkReview *review = lk_review_load_with_keys (path, keys, fingerprint, photo, error);
  lk_review_face_keys_unref (keys);
  return review;
}

LkReview *
lk_review_load_for_library (const char *path, const LkLibrary *library, GError **error)
{
  g_return_val_if_fail (path != NULL && library != NULL, NULL);
  FaceKeys *keys = lk_review_face_keys_new (library->count, lk_library_face_keys (library));
  LkReview *review
      = lk_review_load_with_keys (path, keys, library->fingerprint, library->photo, error);
  lk_review_face_keys_unref (keys);
  /* Migrated once: written again at once in version 2, by key, so the
   * decisions survive the next re-export of the library, which would make a
   * version-1 file unreadable (its indices name this library's order only).
   * Best effort — a read-only folder keeps the old file, and the next save
   * that works converts it. */
  if (review != NULL && review->version == 1)
    {
      g_autoptr (GError) local = NULL;
      if (!lk_review_save (review, path, LK_REVIEW_SAVE_DEFAULT, &local))
        g_debug ("review.json stays in version 1 for now: %s", local->message);
    }
  return review;
}
