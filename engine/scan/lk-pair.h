/* lk-pair.h — one face pair that clears the bar: what the scan finds and the
 * clustering reads, in a header of its own */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* One face pair that clears the bar. i < j always. */
typedef struct
{
  guint32 i;
  guint32 j;
  float probability;
} LkPair;

G_END_DECLS
