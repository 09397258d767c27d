/* lk-library-sections.c — library.json's members read into the library: header, calibration,
 * photos, faces, people */
#include "config.h"

#include "lk-library-private.h"

#include <math.h>
#include <string.h>

#include <json-glib/json-glib.h>

#define FORMAT_NAME    "likeness-library"
/* Photo ids must survive a round trip through a double (JavaScript tools,
 * json-glib's own number handling elsewhere): below 2^53 every integer does. */
#define PHOTO_ID_LIMIT (G_GINT64_CONSTANT (1) << 53)

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

char *
lk_library_describe_node (JsonNode *node)
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
      return lk_library_fail (error, LK_LIBRARY_ERROR_FORMAT, loader->manifest,
                              "%s is missing; it must be %s", field, kind_names[kind]);
    }
  if (G_UNLIKELY (!node_is (found, kind)))
    {
      g_autofree char *field = field_name (where, name);
      g_autofree char *what = lk_library_describe_node (found);
      return lk_library_fail (error, LK_LIBRARY_ERROR_FORMAT, loader->manifest,
                              "%s must be %s, not %s", field, kind_names[kind], what);
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
  return lk_library_fail (error, LK_LIBRARY_ERROR_FORMAT, loader->manifest, "%s must be %s, not %s",
                          field, rule, text);
}

static gboolean
out_of_range_int (Loader *loader, const Where *where, const char *name, const char *rule,
                  gint64 value, GError **error)
{
  g_autofree char *field = field_name (where, name);
  return lk_library_fail (error, LK_LIBRARY_ERROR_FORMAT, loader->manifest,
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
          g_autofree char *what = lk_library_describe_node (element);
          return lk_library_fail (error, LK_LIBRARY_ERROR_FORMAT, loader->manifest,
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
              g_autofree char *what = lk_library_describe_node (key);
              return lk_library_fail (error, LK_LIBRARY_ERROR_FORMAT, loader->manifest,
                                      "people[%" G_GSIZE_FORMAT
                                      "].faces[%u] must be a face id (a string), "
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
  lk_library_count_object (loader, object, 0, calibration_members);
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
    return lk_library_stream_elements (loader, loader->photos_span, read_photo_elements, error);
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
          g_autofree char *what = lk_library_describe_node (element);
          return lk_library_fail (error, LK_LIBRARY_ERROR_FORMAT, loader->manifest,
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
            return lk_library_fail (
                error, LK_LIBRARY_ERROR_FORMAT, loader->manifest,
                "%s is given, but the library has no photo_folders for it to be in", field);
          if (!lk_library_check_relative (loader->manifest, original, field, "its photo folder",
                                          error))
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
          if (!lk_library_check_lexically (loader->manifest, path, field, error))
            return FALSE;
        }
      if (photo->width < 0)
        return out_of_range_int (loader, &where, "width", "0 or more", photo->width, error);
      if (photo->height < 0)
        return out_of_range_int (loader, &where, "height", "0 or more", photo->height, error);
      if (g_hash_table_lookup_extended (library->photo_index, &photo->id, NULL, &earlier))
        return lk_library_fail (error, LK_LIBRARY_ERROR_FORMAT, loader->manifest,
                                "photos[%" G_GSIZE_FORMAT "].id %" G_GUINT64_FORMAT
                                " is already the id of photos[%" G_GSIZE_FORMAT "]",
                                k, photo->id, GPOINTER_TO_SIZE (earlier));
      g_hash_table_insert (library->photo_index, &photo->id, GSIZE_TO_POINTER (k));
      lk_library_count_object (loader, object, loader->seen, photo_members);
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
          g_autofree char *what = lk_library_describe_node (element);
          return lk_library_fail (error, LK_LIBRARY_ERROR_FORMAT, loader->manifest,
                                  "%s must be a folder's absolute path (a string), not %s", field,
                                  what);
        }
      const char *folder = json_node_get_string (element);
      if (strnlen (folder, PATH_LENGTH_LIMIT + 1) > PATH_LENGTH_LIMIT)
        return lk_library_too_long (loader->manifest, strlen (folder), field, error);
      if (!g_path_is_absolute (folder))
        return lk_library_fail (
            error, LK_LIBRARY_ERROR_PATH, loader->manifest,
            "%s (“%s”) must be an absolute path: the photo folders are outside the "
            "library",
            field, folder);
      if (lk_library_goes_up (folder))
        return lk_library_fail (error, LK_LIBRARY_ERROR_PATH, loader->manifest,
                                "%s (“%s”) goes up with “..”; it must name the folder itself",
                                field, folder);
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
    return lk_library_fail (error, LK_LIBRARY_ERROR_FORMAT, loader->manifest,
                            "faces[%" G_GSIZE_FORMAT "].box must be 4 numbers [x, y, w, h], not %u",
                            face, length);
  for (guint k = 0; k < 4; k++)
    {
      JsonNode *element = json_array_get_element (array, k);
      if (!node_is (element, KIND_NUMBER) || !isfinite (json_node_get_double (element)))
        {
          g_autofree char *what = lk_library_describe_node (element);
          return lk_library_fail (
              error, LK_LIBRARY_ERROR_FORMAT, loader->manifest,
              "faces[%" G_GSIZE_FORMAT "].box[%u] must be a finite number, not %s", face, k, what);
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
    return lk_library_stream_elements (loader, loader->faces_span, read_face_elements, error);
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
          g_autofree char *what = lk_library_describe_node (element);
          return lk_library_fail (error, LK_LIBRARY_ERROR_FORMAT, loader->manifest,
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
          if (!lk_library_check_thumbnail (loader, thumbnail, i, &usable, error))
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
      lk_library_count_object (loader, object, loader->seen, face_members);
    }
  return TRUE;
}

/* Everything the embedding rows depend on: format, version, embeddings.*,
 * and a faces array of embeddings.count entries. */
gboolean
lk_library_read_header (Loader *loader, JsonObject *root, JsonArray **faces_out, GError **error)
{
  LkLibrary *library = loader->library;
  const Where in_embeddings = { "embeddings", -1 };
  const char *format = NULL, *file = NULL;
  gint64 version = 0, dim = 0, count = 0;
  JsonNode *node;

  if (!get_string (loader, root, &top_level, "format", TRUE, &format, error))
    return FALSE;
  if (strcmp (format, FORMAT_NAME) != 0)
    return lk_library_fail (error, LK_LIBRARY_ERROR_FORMAT, loader->manifest,
                            "format is “%s”; a Likeness library says “%s”", format, FORMAT_NAME);
  if (!get_int (loader, root, &top_level, "version", TRUE, &version, error))
    return FALSE;
  if (version > LK_LIBRARY_VERSION)
    return lk_library_fail (error, LK_LIBRARY_ERROR_VERSION, loader->manifest,
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
  lk_library_count_object (loader, embeddings, 0, embeddings_members);
  if (dim < 1 || dim > LK_LIBRARY_MAX_DIM)
    return out_of_range_int (loader, &in_embeddings, "dim", "from 1 to 4096", dim, error);
  if (count < 0)
    return out_of_range_int (loader, &in_embeddings, "count", "0 or more", count, error);
  if ((guint64) count > G_MAXSIZE / sizeof (float) / (guint64) dim)
    {
      g_autofree char *count_text = lk_library_group_digits ((guint64) count);
      g_autofree char *limit_text = lk_library_group_digits (G_MAXSIZE);
      return lk_library_fail (error, LK_LIBRARY_ERROR_FORMAT, loader->manifest,
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
      g_autofree char *length_text = lk_library_group_digits (faces_length);
      g_autofree char *count_text = lk_library_group_digits (library->count);
      return lk_library_fail (
          error, LK_LIBRARY_ERROR_FORMAT, loader->manifest,
          "faces has %s entries, but embeddings.count is %s; there must be one per "
          "embedding row",
          length_text, count_text);
    }
  *faces_out = faces;

  if (!lk_library_check_lexically (loader->manifest, file, "embeddings.file", error))
    return FALSE;
  library->embeddings_path = g_build_filename (library->folder, file, NULL);
  return lk_library_check_symlinks (loader->manifest, library->folder, library->embeddings_path,
                                    file, "embeddings.file", NULL, error);
}

gboolean
lk_library_read_body (Loader *loader, JsonObject *root, JsonArray *faces, GError **error)
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
  lk_library_set_thumbnail_warning (loader);
  if (!read_people (loader, root, error))
    return FALSE;
  lk_library_count_object (loader, root, 0, root_members);
  return TRUE;
}
