/* lk-pin.h — a person as the user's decisions fixed it
 *
 * The one type lk-review produces and lk-cluster honours, in a header of its
 * own so neither of them includes the other's.
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* A person as the user's decisions fixed it: these faces stay together, the
 * excluded faces never join it, and it never merges with another pinned
 * person on its own. Built by lk-review from the decision log. */
typedef struct
{
  char *id;
  char *name;       /* NULL when unnamed */
  GArray *faces;    /* guint32, ascending: must stay together */
  GArray *excluded; /* guint32, ascending: never in this person */
  gint64 cover;     /* the user's cover face, or -1 */
  gboolean hidden;
} LkPin;

LkPin *lk_pin_new (const char *id);
LkPin *lk_pin_copy (const LkPin *pin);
void lk_pin_free (LkPin *pin);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (LkPin, lk_pin_free)

G_END_DECLS
