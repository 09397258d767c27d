/* test-import.c — what every importer shares (lk-import.c): the progress
 * figures the CLI and the window show, and the password kept out of
 * messages. The importers themselves are tested against their databases in
 * test-import-immich.c and test-import-photoprism.c. */
#include "config.h"

#include <string.h>

#include "import/lk-import.h"

#define SECOND G_USEC_PER_SEC

static void
test_rate_waits_for_history (void)
{
  LkImportRate rate;

  lk_import_rate_init (&rate, 1000);
  g_assert_cmpint (rate.phase, ==, LK_IMPORT_PHASE_READ);
  /* A tenth of a second in: no rate yet, however many faces arrived. */
  lk_import_rate_update (&rate, LK_IMPORT_PHASE_READ, 2000, 20000, 1000 + SECOND / 10);
  g_assert_cmpuint (rate.done, ==, 2000);
  g_assert_cmpuint (rate.total, ==, 20000);
  g_assert_cmpfloat (rate.per_second, ==, 0.0);
  g_assert_cmpfloat (rate.seconds_left, <, 0.0);
  /* Two seconds in, 4,000 of 20,000: 2,000 per second, 8 s left. */
  lk_import_rate_update (&rate, LK_IMPORT_PHASE_READ, 4000, 20000, 1000 + 2 * SECOND);
  g_assert_cmpfloat_with_epsilon (rate.per_second, 2000.0, 1e-9);
  g_assert_cmpfloat_with_epsilon (rate.seconds_left, 8.0, 1e-9);
}

static void
test_rate_restarts_with_each_phase (void)
{
  LkImportRate rate;

  lk_import_rate_init (&rate, 0);
  lk_import_rate_update (&rate, LK_IMPORT_PHASE_READ, 20000, 20000, 10 * SECOND);
  g_assert_cmpfloat_with_epsilon (rate.seconds_left, 0.0, 1e-9);
  /* The thumbnails' clock starts at their first report, not the import's. */
  lk_import_rate_update (&rate, LK_IMPORT_PHASE_THUMBNAILS, 10, 20000, 11 * SECOND);
  g_assert_cmpint (rate.phase, ==, LK_IMPORT_PHASE_THUMBNAILS);
  g_assert_cmpint (rate.phase_start, ==, 11 * SECOND);
  g_assert_cmpfloat (rate.per_second, ==, 0.0);
  lk_import_rate_update (&rate, LK_IMPORT_PHASE_THUMBNAILS, 5000, 20000, 16 * SECOND);
  g_assert_cmpfloat_with_epsilon (rate.per_second, 1000.0, 1e-9);
  g_assert_cmpfloat_with_epsilon (rate.seconds_left, 15.0, 1e-9);
}

static void
test_redact_hides_password (void)
{
  const char *cases[][2] = {
    { "postgresql://immich:s3cret@db:5432/immich", "postgresql://immich:***@db:5432/immich" },
    { "host=db password=s3cret dbname=immich", "host=db password=*** dbname=immich" },
    { "postgresql://db/immich?user=u&password=s3cret",
      "postgresql://db/immich?user=u&password=***" },
    { "postgresql://immich@db/immich", "postgresql://immich@db/immich" },
  };
  for (gsize k = 0; k < G_N_ELEMENTS (cases); k++)
    {
      g_autofree char *redacted = lk_import_redact_uri (cases[k][0]);
      g_assert_cmpstr (redacted, ==, cases[k][1]);
    }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/import/rate-waits-for-history", test_rate_waits_for_history);
  g_test_add_func ("/import/rate-restarts-with-each-phase", test_rate_restarts_with_each_phase);
  g_test_add_func ("/import/redact-hides-password", test_redact_hides_password);
  return g_test_run ();
}
