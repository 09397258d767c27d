/* lk-ratio-ticks.c — round ticks for the ratio chart's logarithmic axis
 *
 * Why it is shaped this way:
 *
 * - The ticks cover the data (the first at or below the least ratio, the
 *   last at or above the greatest) and the axis ends on them: a reader never
 *   meets a point above the top label with no value to read it by.
 * - Three ladders, finest first, the first that fits max_ticks wins: equal
 *   steps of 1, 2 or 5 × 10^k while the range is short (under a factor of
 *   three, where equal steps still look even on a log axis); 1, 2, 5 × 10^k;
 *   then powers of ten, n decades apart. Thinning an arbitrary list of "round"
 *   values evenly gave 1, 4, 11, 30.
 */
#include "config.h"

#include <math.h>

#include "lk-ratio-ticks.h"

/* Below a ratio of this, rounding error: 3 × 0.1 is not 0.3. */
#define EPSILON 1e-9

/* Equal steps of `step` from the multiple at or below lo to the one at or
 * above hi; 0 when they do not fit or would reach 0. */
static guint
linear_ticks (double lo, double hi, double step, guint max_ticks, double *ticks)
{
  double first = floor (lo / step + EPSILON);
  double last = ceil (hi / step - EPSILON);

  if (first < 1)
    return 0;
  if (last <= first)
    last = first + 1;
  if (last - first + 1 > max_ticks)
    return 0;
  guint n = 0;
  for (double k = first; k <= last + 0.5; k++)
    ticks[n++] = k * step;
  return n;
}

/* 1, 2 and 5 × 10^e for every e, the one at or below lo to the one at or
 * above hi; 0 when they do not fit. */
static guint
one_two_five_ticks (double lo, double hi, guint max_ticks, double *ticks)
{
  static const double mantissas[] = { 1.0, 2.0, 5.0 };
  int e = (int) floor (log10 (lo) + EPSILON);
  guint n = 0;

  /* The largest of the ladder at or below lo. */
  gsize m = G_N_ELEMENTS (mantissas) - 1;
  while (mantissas[m] * pow (10.0, e) > lo * (1 + EPSILON))
    m--;
  for (;;)
    {
      double value = mantissas[m] * pow (10.0, e);
      if (n == max_ticks)
        return 0;
      ticks[n++] = value;
      if (value >= hi * (1 - EPSILON) && n >= 2)
        return n;
      if (++m == G_N_ELEMENTS (mantissas))
        m = 0, e++;
    }
}

/* Powers of ten `stride` decades apart from the one at or below lo to the
 * first at or above hi; 0 when they do not fit. */
static guint
decade_ticks (double lo, double hi, int stride, guint max_ticks, double *ticks)
{
  int first = (int) floor (log10 (lo) + EPSILON);
  double top = log10 (hi) - EPSILON;
  guint n = 0;

  for (int e = first;; e += stride)
    {
      if (n == max_ticks)
        return 0;
      ticks[n++] = pow (10.0, e);
      if (e >= top && n >= 2)
        return n;
    }
}

guint
lk_ratio_ticks (double lo, double hi, guint max_ticks, double *ticks)
{
  g_return_val_if_fail (lo > 0 && lo <= hi && isfinite (hi), 0);
  g_return_val_if_fail (max_ticks >= 2, 0);

  guint n;
  if (hi / lo < 3.0)
    for (int e = (int) floor (log10 (hi - lo + EPSILON)) - 2; e <= 1; e++)
      for (int m = 0; m < 3; m++)
        {
          static const double mantissas[] = { 1.0, 2.0, 5.0 };
          if ((n = linear_ticks (lo, hi, mantissas[m] * pow (10.0, e), max_ticks, ticks)) > 0)
            return n;
        }
  if ((n = one_two_five_ticks (lo, hi, max_ticks, ticks)) > 0)
    return n;
  for (int stride = 1;; stride++)
    if ((n = decade_ticks (lo, hi, stride, max_ticks, ticks)) > 0)
      return n;
}
