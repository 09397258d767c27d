/* lk-calibrate-history.c — review.json's "calibration": the choice in force, undo and redo */
#include "config.h"

#include <math.h>

#include "lk-calibrate.h"

/* --- review.json's "calibration" ------------------------------------------------------------ */

typedef struct
{
  LkCalibration calibration;
  char *source;
  char *after; /* the newest decision in effect when it was chosen, or NULL */
} Entry;

struct _LkCalibrationHistory
{
  Entry *current;  /* NULL: the library's own */
  GPtrArray *undo; /* of Entry * (NULL elements: the library's own), oldest first */
  GPtrArray *redo; /* the next redo last */
};

static void
entry_free (gpointer data)
{
  Entry *e = data;
  if (e == NULL)
    return;
  g_free (e->source);
  g_free (e->after);
  g_free (e);
}

static gboolean
read_number (JsonObject *o, const char *member, double *out, GError **error)
{
  JsonNode *n = json_object_get_member (o, member);
  if (n == NULL || !JSON_NODE_HOLDS_VALUE (n)
      || (json_node_get_value_type (n) != G_TYPE_DOUBLE
          && json_node_get_value_type (n) != G_TYPE_INT64)
      || !isfinite (json_node_get_double (n)))
    {
      g_set_error (error, LK_CALIBRATE_ERROR, LK_CALIBRATE_ERROR_CORRUPT,
                   "“calibration” has no finite number “%s”", member);
      return FALSE;
    }
  *out = json_node_get_double (n);
  return TRUE;
}

/* A JSON null is the library's own calibration. */
static gboolean
entry_read (JsonNode *node, Entry **out, GError **error)
{
  *out = NULL;
  if (JSON_NODE_HOLDS_NULL (node))
    return TRUE;
  if (!JSON_NODE_HOLDS_OBJECT (node))
    {
      g_set_error (error, LK_CALIBRATE_ERROR, LK_CALIBRATE_ERROR_CORRUPT,
                   "a “calibration” entry is not an object");
      return FALSE;
    }
  JsonObject *o = json_node_get_object (node);
  Entry e = { LK_CALIBRATION_DEFAULT, NULL };
  if (!read_number (o, "a", &e.calibration.a, error)
      || !read_number (o, "b", &e.calibration.b, error)
      || !read_number (o, "w_size", &e.calibration.w_size, error))
    return FALSE;
  if (!(e.calibration.a > 0))
    {
      g_set_error (error, LK_CALIBRATE_ERROR, LK_CALIBRATE_ERROR_CORRUPT,
                   "“calibration” has a = %g; it must be positive", e.calibration.a);
      return FALSE;
    }
  e.calibration.positive_pairs = json_object_get_int_member_with_default (o, "positive_pairs", 0);
  e.calibration.negative_pairs = json_object_get_int_member_with_default (o, "negative_pairs", 0);
  JsonNode *source = json_object_get_member (o, "source");
  e.source = g_strdup (source && JSON_NODE_HOLDS_VALUE (source)
                               && json_node_get_value_type (source) == G_TYPE_STRING
                           ? json_node_get_string (source)
                           : "unknown");
  JsonNode *after = json_object_get_member (o, "after");
  if (after && JSON_NODE_HOLDS_VALUE (after) && json_node_get_value_type (after) == G_TYPE_STRING)
    e.after = g_strdup (json_node_get_string (after));
  *out = g_memdup2 (&e, sizeof e);
  return TRUE;
}

static JsonNode *
entry_to_json (const Entry *e)
{
  if (e == NULL)
    return json_node_new (JSON_NODE_NULL);
  g_autoptr (JsonBuilder) b = json_builder_new ();
  json_builder_begin_object (b);
  json_builder_set_member_name (b, "a");
  json_builder_add_double_value (b, e->calibration.a);
  json_builder_set_member_name (b, "b");
  json_builder_add_double_value (b, e->calibration.b);
  json_builder_set_member_name (b, "w_size");
  json_builder_add_double_value (b, e->calibration.w_size);
  json_builder_set_member_name (b, "positive_pairs");
  json_builder_add_int_value (b, e->calibration.positive_pairs);
  json_builder_set_member_name (b, "negative_pairs");
  json_builder_add_int_value (b, e->calibration.negative_pairs);
  json_builder_set_member_name (b, "source");
  json_builder_add_string_value (b, e->source);
  if (e->after != NULL)
    {
      json_builder_set_member_name (b, "after");
      json_builder_add_string_value (b, e->after);
    }
  json_builder_end_object (b);
  return json_builder_get_root (b);
}

static gboolean
read_stack (JsonObject *o, const char *member, GPtrArray *out, GError **error)
{
  JsonNode *n = json_object_get_member (o, member);
  if (n == NULL)
    return TRUE;
  if (!JSON_NODE_HOLDS_ARRAY (n))
    {
      g_set_error (error, LK_CALIBRATE_ERROR, LK_CALIBRATE_ERROR_CORRUPT,
                   "“calibration.%s” is not an array", member);
      return FALSE;
    }
  JsonArray *a = json_node_get_array (n);
  for (guint k = 0; k < json_array_get_length (a); k++)
    {
      Entry *e;
      if (!entry_read (json_array_get_element (a, k), &e, error))
        return FALSE;
      g_ptr_array_add (out, e);
    }
  return TRUE;
}

LkCalibrationHistory *
lk_calibration_history_new (JsonNode *node, GError **error)
{
  g_autoptr (LkCalibrationHistory) h = g_new0 (LkCalibrationHistory, 1);
  h->undo = g_ptr_array_new_with_free_func (entry_free);
  h->redo = g_ptr_array_new_with_free_func (entry_free);
  if (node == NULL || JSON_NODE_HOLDS_NULL (node))
    return g_steal_pointer (&h);
  if (!JSON_NODE_HOLDS_OBJECT (node))
    {
      g_set_error (error, LK_CALIBRATE_ERROR, LK_CALIBRATE_ERROR_CORRUPT,
                   "“calibration” is not an object");
      return NULL;
    }
  JsonObject *o = json_node_get_object (node);
  JsonNode *current = json_object_get_member (o, "current");
  if ((current && !entry_read (current, &h->current, error))
      || !read_stack (o, "undo", h->undo, error) || !read_stack (o, "redo", h->redo, error))
    return NULL;
  return g_steal_pointer (&h);
}

void
lk_calibration_history_free (LkCalibrationHistory *h)
{
  if (h == NULL)
    return;
  entry_free (h->current);
  g_ptr_array_unref (h->undo);
  g_ptr_array_unref (h->redo);
  g_free (h);
}

static void
add_stack (JsonBuilder *b, const char *member, const GPtrArray *stack)
{
  json_builder_set_member_name (b, member);
  json_builder_begin_array (b);
  for (guint k = 0; k < stack->len; k++)
    json_builder_add_value (b, entry_to_json (g_ptr_array_index (stack, k)));
  json_builder_end_array (b);
}

JsonNode *
lk_calibration_history_to_json (const LkCalibrationHistory *h)
{
  if (h->current == NULL && h->undo->len == 0 && h->redo->len == 0)
    return NULL;
  g_autoptr (JsonBuilder) b = json_builder_new ();
  json_builder_begin_object (b);
  if (h->current)
    {
      json_builder_set_member_name (b, "current");
      json_builder_add_value (b, entry_to_json (h->current));
    }
  add_stack (b, "undo", h->undo);
  add_stack (b, "redo", h->redo);
  json_builder_end_object (b);
  return json_builder_get_root (b);
}

const LkCalibration *
lk_calibration_history_current (const LkCalibrationHistory *h, const char **source)
{
  if (source)
    *source = h->current ? h->current->source : NULL;
  return h->current ? &h->current->calibration : NULL;
}

void
lk_calibration_history_set (LkCalibrationHistory *h, const LkCalibration *calibration,
                            const char *source)
{
  lk_calibration_history_set_after (h, calibration, source, NULL);
}

void
lk_calibration_history_set_after (LkCalibrationHistory *h, const LkCalibration *calibration,
                                  const char *source, const char *after)
{
  Entry *e = g_new0 (Entry, 1);
  e->calibration = *calibration;
  e->source = g_strdup (source ? source : "unknown");
  e->after = g_strdup (after);
  g_ptr_array_add (h->undo, h->current);
  h->current = e;
  g_ptr_array_set_size (h->redo, 0);
}

gboolean
lk_calibration_history_peek (const LkCalibrationHistory *h, gboolean redo, const char **source,
                             const char **after)
{
  const GPtrArray *stack = redo ? h->redo : h->undo;
  if (stack->len == 0)
    return FALSE;
  /* Undo takes back the current choice; redo makes the last undone one
   * current again. Only the bottom of the undo stack is ever NULL (the
   * library's own, current before the first choice), so an undo always has
   * a current entry; a redo may bring the library's own back. */
  const Entry *e = redo ? g_ptr_array_index (h->redo, h->redo->len - 1) : h->current;
  if (source)
    *source = e ? e->source : "library";
  if (after)
    *after = e ? e->after : NULL;
  return TRUE;
}

gboolean
lk_calibration_history_undo (LkCalibrationHistory *h)
{
  if (h->undo->len == 0)
    return FALSE;
  g_ptr_array_add (h->redo, h->current);
  h->current = g_ptr_array_steal_index (h->undo, h->undo->len - 1);
  return TRUE;
}

gboolean
lk_calibration_history_redo (LkCalibrationHistory *h)
{
  if (h->redo->len == 0)
    return FALSE;
  g_ptr_array_add (h->undo, h->current);
  h->current = g_ptr_array_steal_index (h->redo, h->redo->len - 1);
  return TRUE;
}

LkCalibration
lk_calibration_in_force (const LkLibrary *library, JsonNode *review_calibration,
                         const char **source, GError **error)
{
  g_autoptr (LkCalibrationHistory) h = lk_calibration_history_new (review_calibration, error);
  const char *from = NULL;
  const LkCalibration *chosen = h ? lk_calibration_history_current (h, &from) : NULL;
  if (source)
    *source = g_intern_string (chosen ? from : "library");
  return chosen ? *chosen : library->calibration;
}
