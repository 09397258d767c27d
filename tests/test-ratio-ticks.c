/* test-ratio-ticks — the ratio chart's axis: round ticks that hold the data */
#include "config.h"

#include <math.h>

#include "lk-ratio-ticks.h"

#define MAX_TICKS 7

/* `value` is 1, 2 or 5 times a power of ten, up to rounding. */
static gboolean
is_one_two_five (double value)
{
  double e = floor (log10 (value) + 1e-9);
  double mantissa = value / pow (10.0, e);

  return fabs (mantissa - 1) < 1e-6 || fabs (mantissa - 2) < 1e-6 || fabs (mantissa - 5) < 1e-6;
}

/* Every range: ascending, at most max, the data inside the first and last;
 * either equal 1-2-5 steps or each tick a 1-2-5 value. */
static void
check_range (double lo, double hi, guint max_ticks)
{
  double ticks[64];
  guint n = lk_ratio_ticks (lo, hi, max_ticks, ticks);

  g_test_message ("%g..%g (%u at most): %u ticks, %g..%g", lo, hi, max_ticks, n, ticks[0],
                  ticks[n - 1]);
  g_assert_cmpuint (n, >=, 2);
  g_assert_cmpuint (n, <=, max_ticks);
  g_assert_cmpfloat (ticks[0], <=, lo * (1 + 1e-9));
  g_assert_cmpfloat (ticks[n - 1], >=, hi * (1 - 1e-9));
  g_assert_cmpfloat (ticks[0], >, 0);
  double step = ticks[1] - ticks[0];
  gboolean equal = is_one_two_five (step);
  for (guint k = 1; k < n; k++)
    {
      g_assert_cmpfloat (ticks[k], >, ticks[k - 1]);
      equal = equal && fabs (ticks[k] - ticks[k - 1] - step) < step * 1e-6;
    }
  gboolean ladder = TRUE;
  for (guint k = 0; k < n; k++)
    ladder = ladder && is_one_two_five (ticks[k]);
  g_assert_true (equal || ladder);
}

/* The run of the report: ratios up to ~40 had ticks 1, 4, 11, 30 and the
 * data above 30. Now 1-2-5 values, the last above the data. */
static void
test_wide_range_is_one_two_five_and_covers (void)
{
  double ticks[MAX_TICKS];
  guint n = lk_ratio_ticks (0.9, 41.0, MAX_TICKS, ticks);
  const double expected[] = { 0.5, 1, 2, 5, 10, 20, 50 };

  g_assert_cmpuint (n, ==, G_N_ELEMENTS (expected));
  for (guint k = 0; k < n; k++)
    g_assert_cmpfloat_with_epsilon (ticks[k], expected[k], 1e-9);
}

/* A tight race: equal steps around 1, which is one of them. */
static void
test_short_range_has_equal_steps_through_one (void)
{
  double ticks[MAX_TICKS];
  guint n = lk_ratio_ticks (0.97, 1.06, MAX_TICKS, ticks);
  const double expected[] = { 0.96, 0.98, 1.0, 1.02, 1.04, 1.06 };

  g_assert_cmpuint (n, ==, G_N_ELEMENTS (expected));
  for (guint k = 0; k < n; k++)
    g_assert_cmpfloat_with_epsilon (ticks[k], expected[k], 1e-9);
}

/* Ranges over many decades thin to every n-th power of ten. */
static void
test_huge_range_takes_powers_of_ten (void)
{
  double ticks[4];
  guint n = lk_ratio_ticks (1e-4, 1e5, 4, ticks);

  g_assert_cmpuint (n, <=, 4);
  g_assert_cmpfloat (ticks[0], <=, 1e-4);
  g_assert_cmpfloat (ticks[n - 1], >=, 1e5);
  for (guint k = 0; k < n; k++)
    g_assert_cmpfloat_with_epsilon (log10 (ticks[k]), round (log10 (ticks[k])), 1e-9);
}

/* Many ranges and tick budgets: every answer keeps the promises. */
static void
test_every_range_is_covered (void)
{
  const double los[] = { 1e-3, 0.05, 0.3, 0.5, 0.8, 0.95, 0.99, 0.999, 1.0 };
  const double spans[] = { 1.001, 1.01, 1.05, 1.2, 1.5, 2.0, 2.9, 3.0, 7.0, 41.0, 1e3, 1e6 };

  for (guint max = 2; max <= MAX_TICKS; max++)
    for (gsize l = 0; l < G_N_ELEMENTS (los); l++)
      for (gsize s = 0; s < G_N_ELEMENTS (spans); s++)
        check_range (los[l], los[l] * spans[s], max);
  check_range (1.0, 1.0, 2);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/ratio-ticks/wide-range-is-one-two-five-and-covers",
                   test_wide_range_is_one_two_five_and_covers);
  g_test_add_func ("/ratio-ticks/short-range-has-equal-steps-through-one",
                   test_short_range_has_equal_steps_through_one);
  g_test_add_func ("/ratio-ticks/huge-range-takes-powers-of-ten",
                   test_huge_range_takes_powers_of_ten);
  g_test_add_func ("/ratio-ticks/every-range-is-covered", test_every_range_is_covered);
  return g_test_run ();
}
