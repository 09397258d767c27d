/* lk-pin.c — a person as the user's decisions fixed it */
#include "config.h"

#include "lk-pin.h"

LkPin *
lk_pin_new (const char *id)
{
  LkPin *pin = g_new0 (LkPin, 1);
  pin->id = g_strdup (id);
  pin->faces = g_array_new (FALSE, FALSE, sizeof (guint32));
  pin->excluded = g_array_new (FALSE, FALSE, sizeof (guint32));
  pin->cover = -1;
  return pin;
}

LkPin *
lk_pin_copy (const LkPin *pin)
{
  LkPin *copy = lk_pin_new (pin->id);
  copy->name = g_strdup (pin->name);
  g_array_append_vals (copy->faces, pin->faces->data, pin->faces->len);
  g_array_append_vals (copy->excluded, pin->excluded->data, pin->excluded->len);
  copy->cover = pin->cover;
  copy->hidden = pin->hidden;
  return copy;
}

void
lk_pin_free (LkPin *pin)
{
  if (pin == NULL)
    return;
  g_free (pin->id);
  g_free (pin->name);
  g_array_unref (pin->faces);
  g_array_unref (pin->excluded);
  g_free (pin);
}
