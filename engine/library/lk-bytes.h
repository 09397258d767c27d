/* lk-bytes.h — the little-endian fields of the files the engine keeps in
 * the user's cache (the scan, lk-scan-cache.c; the questions' links,
 * lk-questions.c), read and written at any alignment, and doubles compared
 * bit for bit (a kept file is only good for the very calibration and bar
 * it was made with).
 */
#pragma once

#include <glib.h>
#include <string.h>

G_BEGIN_DECLS

static inline void
lk_put_u32 (guint8 *p, guint32 v)
{
  v = GUINT32_TO_LE (v);
  memcpy (p, &v, 4);
}

static inline void
lk_put_u64 (guint8 *p, guint64 v)
{
  v = GUINT64_TO_LE (v);
  memcpy (p, &v, 8);
}

static inline void
lk_put_f64 (guint8 *p, double v)
{
  guint64 bits;
  memcpy (&bits, &v, 8);
  lk_put_u64 (p, bits);
}

static inline guint32
lk_get_u32 (const guint8 *p)
{
  guint32 v;
  memcpy (&v, p, 4);
  return GUINT32_FROM_LE (v);
}

static inline guint64
lk_get_u64 (const guint8 *p)
{
  guint64 v;
  memcpy (&v, p, 8);
  return GUINT64_FROM_LE (v);
}

static inline double
lk_get_f64 (const guint8 *p)
{
  guint64 bits = lk_get_u64 (p);
  double v;
  memcpy (&v, &bits, 8);
  return v;
}

static inline gboolean
lk_same_double (double a, double b)
{
  return memcmp (&a, &b, sizeof a) == 0;
}

G_END_DECLS
