/* test-tune — "auto" is the measured choice: the pick, the cache key, the
 * cache's distrust of bad files, and forcing through the environment */
#include "config.h"

#include <glib/gstdio.h>
#include <math.h>

#include "lk-kernels-config.h"
#include "scan/lk-kernels.h"
#include "scan/lk-prefilter.h"
#include "lk-test-util.h"
#include "scan/lk-tune.h"

/* Injected timings: the highest ratio wins, eliminated candidates never do,
 * and a tie keeps the earlier (wider) candidate. */
static void
test_pick_takes_the_highest_ratio_and_skips_eliminated (void)
{
  LkTuneCandidate c[4] = {
    { .name = "avx512", .ratio = 1.0 },
    { .name = "avx512+bf16", .ratio = 1.25 },
    { .name = "avx2", .ratio = NAN },
    { .name = "avx2+bf16", .ratio = 1.25 },
  };

  g_assert_cmpuint (lk_tune_pick (c, 4), ==, 1);
  c[2].ratio = 3.0;
  g_assert_cmpuint (lk_tune_pick (c, 4), ==, 2);
  c[2].ratio = NAN;
  c[1].ratio = NAN;
  c[3].ratio = NAN;
  g_assert_cmpuint (lk_tune_pick (c, 4), ==, 0);
}

static gboolean
has_candidate (GArray *cands, const char *name)
{
  for (guint k = 0; k < cands->len; k++)
    if (g_str_equal (g_array_index (cands, LkTuneCandidate, k).name, name))
      return TRUE;
  return FALSE;
}

/* The race holds only what the CPU runs: the AVX-VNNI int8 pass (ymm
 * vpdpbusd, VEX-encoded) on a CPU with AVX-VNNI and no AVX-512 — an Alder
 * Lake — and never on this project's Zen 4, which has AVX-512 VNNI but not
 * AVX-VNNI, where it would fault. And here: a candidate only where
 * lk_cpu_features() says it runs. */
static void
test_candidates_only_what_the_cpu_runs (void)
{
  const LkCpuFeatures alder_lake = LK_CPU_AVX2 | LK_CPU_FMA | LK_CPU_AVX_VNNI;
  const LkCpuFeatures zen4 = LK_CPU_AVX2 | LK_CPU_FMA | LK_CPU_AVX512F | LK_CPU_AVX512BW
                             | LK_CPU_AVX512VL | LK_CPU_AVX512_BF16 | LK_CPU_AVX512_VNNI;
  g_autoptr (GArray) adl = lk_tune_candidates_for (alder_lake);
  g_autoptr (GArray) z4 = lk_tune_candidates_for (zen4);
  g_autoptr (GArray) here = lk_tune_candidates ();
  const LkPrefilterPass *pass;

#if LK_HAVE_PREFILTER_INT8_AVXVNNI
  g_assert_true (has_candidate (adl, "avx2+int8-avxvnni"));
#endif
  for (guint k = 0; k < adl->len; k++)
    {
      const char *name = g_array_index (adl, LkTuneCandidate, k).name;
      g_assert_null (strstr (name, "avx512"));
    }
  g_assert_false (has_candidate (z4, "avx2+int8-avxvnni"));
  g_assert_false (has_candidate (z4, "avx512+int8-avxvnni"));
#if LK_HAVE_PREFILTER_INT8_AVX512VNNI
  g_assert_true (has_candidate (z4, "avx2+int8-avx512vnni"));
#endif
#if LK_HAVE_PREFILTER_INT7_AVX2
  /* On a Zen 4 the AVX2 int7 pass races the int8 VNNI pass: the measured
   * choice takes whichever wins. */
  g_assert_true (has_candidate (z4, "avx2+int7-avx2"));
  g_assert_true (has_candidate (z4, "avx512+int7-avx2"));
#endif
  gboolean runs = lk_prefilter_pass_get (LK_PREFILTER_INT8_AVXVNNI, &pass, NULL);
  g_assert_cmpint (runs, ==, (lk_cpu_features () & LK_CPU_AVX_VNNI) && pass != NULL);
  for (guint k = 0; k < here->len; k++)
    {
      const char *name = g_array_index (here, LkTuneCandidate, k).name;
      if (strstr (name, "int8-avxvnni") != NULL)
        g_assert_true (runs);
    }
  if (!runs)
    g_test_message ("this CPU has no AVX-VNNI: the int8-avxvnni pass is no candidate here");
}

/* The AMX pass races only where the CPU has AMX: on a Sapphire Rapids
 * (AVX-512 with VNNI and BF16, plus the tiles the kernel granted) it is a
 * candidate beside the AVX-512 VNNI pass, on this project's Zen 4 (the
 * same AVX-512, no tiles) and on an AVX2-only CPU it is not — nor on a CPU
 * whose cpuid has the tiles but whose kernel refused them (lk-cpu reports
 * no AMX bits then: tests/test-cpu.c). And here: a candidate only where
 * lk_cpu_features() has AMX. */
static void
test_the_amx_pass_races_only_where_the_cpu_has_amx (void)
{
  const LkCpuFeatures zen4 = LK_CPU_AVX2 | LK_CPU_FMA | LK_CPU_AVX512F | LK_CPU_AVX512BW
                             | LK_CPU_AVX512VL | LK_CPU_AVX512_BF16 | LK_CPU_AVX512_VNNI;
  const LkCpuFeatures sapphire_rapids = zen4 | LK_CPU_AMX;
  const LkCpuFeatures avx2_only = LK_CPU_AVX2 | LK_CPU_FMA;
  g_autoptr (GArray) spr = lk_tune_candidates_for (sapphire_rapids);
  g_autoptr (GArray) z4 = lk_tune_candidates_for (zen4);
  g_autoptr (GArray) old = lk_tune_candidates_for (avx2_only);
  g_autoptr (GArray) here = lk_tune_candidates ();
  GArray *without[] = { z4, old };

#if LK_HAVE_PREFILTER_INT8_AMX
  g_assert_true (has_candidate (spr, "avx512+int8-amx"));
  g_assert_true (has_candidate (spr, "avx2+int8-amx"));
#endif
#if LK_HAVE_PREFILTER_INT8_AVX512VNNI
  g_assert_true (has_candidate (spr, "avx2+int8-avx512vnni"));
#endif
  for (gsize w = 0; w < G_N_ELEMENTS (without); w++)
    for (guint k = 0; k < without[w]->len; k++)
      g_assert_null (strstr (g_array_index (without[w], LkTuneCandidate, k).name, "amx"));
  /* The emulated tiles are never a candidate, AMX or not. */
  for (guint k = 0; k < spr->len; k++)
    g_assert_null (strstr (g_array_index (spr, LkTuneCandidate, k).name, "emulated"));
  gboolean amx_here = (lk_cpu_features () & (LK_CPU_AMX_TILE | LK_CPU_AMX_INT8))
                      == (LK_CPU_AMX_TILE | LK_CPU_AMX_INT8);
  for (guint k = 0; k < here->len; k++)
    if (strstr (g_array_index (here, LkTuneCandidate, k).name, "int8-amx") != NULL)
      g_assert_true (amx_here);
  if (!amx_here)
    g_test_message ("%s: the int8-amx pass is no candidate here", lk_cpu_amx_note ());
}

/* On an AVX2-only CPU (a Haswell … Zen 3) the measured choice races the
 * register-blocked int16 and int7 passes beside the avx2 kernel alone, and
 * nothing that needs more than AVX2 + FMA. */
static void
test_an_avx2_only_cpu_races_the_int16_and_int7_passes (void)
{
#if !LK_HAVE_KERNEL_AVX2
  /* A build for another ISA (the aarch64 CI build) has no AVX2 code: the
   * only candidates an "AVX2" CPU could get there are the portable ones. */
  g_test_skip ("no AVX2 kernel in this build");
  return;
#else
  g_autoptr (GArray) cands = lk_tune_candidates_for (LK_CPU_AVX2 | LK_CPU_FMA);

  g_assert_true (has_candidate (cands, "avx2"));
#if LK_HAVE_PREFILTER_INT16_AVX2
  g_assert_true (has_candidate (cands, "avx2+int16-avx2"));
#endif
#if LK_HAVE_PREFILTER_INT7_AVX2
  g_assert_true (has_candidate (cands, "avx2+int7-avx2"));
#endif
  for (guint k = 0; k < cands->len; k++)
    {
      const char *name = g_array_index (cands, LkTuneCandidate, k).name;
      g_assert_null (strstr (name, "avx512"));
      g_assert_null (strstr (name, "avxvnni"));
      g_assert_null (strstr (name, "portable"));
    }
#endif
}

static void
test_cache_key_changes_with_each_field (void)
{
  g_autofree char *base = lk_tune_cache_key ("AMD EPYC", "avx2 fma", "abc", 512);
  g_autofree char *model = lk_tune_cache_key ("Intel Xeon", "avx2 fma", "abc", 512);
  g_autofree char *features = lk_tune_cache_key ("AMD EPYC", "avx2 fma avx512f", "abc", 512);
  g_autofree char *build = lk_tune_cache_key ("AMD EPYC", "avx2 fma", "abd", 512);
  g_autofree char *dim = lk_tune_cache_key ("AMD EPYC", "avx2 fma", "abc", 128);
  g_autofree char *here = lk_tune_cache_key_here (512);

  g_assert_cmpstr (base, !=, model);
  g_assert_cmpstr (base, !=, features);
  g_assert_cmpstr (base, !=, build);
  g_assert_cmpstr (base, !=, dim);
  g_assert_nonnull (strstr (here, lk_cpu_model_name ()));
  g_assert_nonnull (strstr (here, lk_tune_build_id ()));
  g_assert_cmpuint (strlen (lk_tune_build_id ()), >, 0);
}

static char *
temp_dir (void)
{
  g_autoptr (GError) error = NULL;
  char *dir = g_dir_make_tmp ("lk-tune-XXXXXX", &error);
  g_assert_no_error (error);
  return dir;
}

static void
test_cache_round_trip_keeps_other_keys (void)
{
  g_autofree char *dir = temp_dir ();
  g_autofree char *path = g_build_filename (dir, "sub", "kernel-choice.ini", NULL);
  g_autoptr (GError) error = NULL;
  LkKernelId k;
  LkPrefilterId p;

  g_assert_false (lk_tune_cache_lookup (path, "one", &k, &p));
  g_assert_true (lk_tune_cache_store (path, "one", LK_KERNEL_PORTABLE, LK_PREFILTER_OFF, &error));
  g_assert_no_error (error);
  g_assert_true (
      lk_tune_cache_store (path, "two [odd|key]", LK_KERNEL_PORTABLE, LK_PREFILTER_OFF, &error));
  g_assert_no_error (error);
  k = LK_KERNEL_AUTO;
  p = LK_PREFILTER_AUTO;
  g_assert_true (lk_tune_cache_lookup (path, "one", &k, &p));
  g_assert_cmpint (k, ==, LK_KERNEL_PORTABLE);
  g_assert_cmpint (p, ==, LK_PREFILTER_OFF);
  g_assert_true (lk_tune_cache_lookup (path, "two [odd|key]", &k, &p));
  g_assert_false (lk_tune_cache_lookup (path, "three", &k, &p));
  lk_test_remove_tree (dir);
}

/* A corrupt file, a foreign entry and one naming a kernel this binary lacks
 * are all ignored; storing over a corrupt file rewrites it. */
static void
test_cache_never_trusts_a_bad_file (void)
{
  g_autofree char *dir = temp_dir ();
  g_autofree char *path = g_build_filename (dir, "kernel-choice.ini", NULL);
  g_autoptr (GError) error = NULL;
  LkKernelId k;
  LkPrefilterId p;

  g_assert_true (g_file_set_contents (path, "\x01\x02 not [ a key file\n=\n", -1, NULL));
  g_assert_false (lk_tune_cache_lookup (path, "one", &k, &p));
  g_assert_true (lk_tune_cache_store (path, "one", LK_KERNEL_PORTABLE, LK_PREFILTER_OFF, &error));
  g_assert_no_error (error);
  g_assert_true (lk_tune_cache_lookup (path, "one", &k, &p));

  /* The group of key "one" holding another key: foreign, ignored. */
  g_autoptr (GKeyFile) file = g_key_file_new ();
  g_assert_true (g_key_file_load_from_file (file, path, G_KEY_FILE_NONE, NULL));
  g_auto (GStrv) groups = g_key_file_get_groups (file, NULL);
  g_assert_cmpuint (g_strv_length (groups), ==, 1);
  g_key_file_set_string (file, groups[0], "key", "another machine");
  g_assert_true (g_key_file_save_to_file (file, path, NULL));
  g_assert_false (lk_tune_cache_lookup (path, "one", &k, &p));

  /* The right key naming a kernel no processor has. */
  g_key_file_set_string (file, groups[0], "key", "one");
  g_key_file_set_string (file, groups[0], "kernel", "quantum");
  g_assert_true (g_key_file_save_to_file (file, path, NULL));
  g_assert_false (lk_tune_cache_lookup (path, "one", &k, &p));
  g_key_file_set_string (file, groups[0], "kernel", "portable");
  g_key_file_set_string (file, groups[0], "first-pass", "int3");
  g_assert_true (g_key_file_save_to_file (file, path, NULL));
  g_assert_false (lk_tune_cache_lookup (path, "one", &k, &p));
  lk_test_remove_tree (dir);
}

/* A cache path that is a folder can be neither read nor written: lookup
 * says no, store says why, and a scan still runs (the fallback). */
static void
test_unreadable_cache_falls_back (void)
{
  g_autofree char *dir = temp_dir ();
  g_autoptr (GError) error = NULL;
  LkKernelId k;
  LkPrefilterId p;

  g_assert_false (lk_tune_cache_lookup (dir, "one", &k, &p));
  g_assert_false (lk_tune_cache_store (dir, "one", LK_KERNEL_PORTABLE, LK_PREFILTER_OFF, &error));
  g_assert_nonnull (error);
  lk_test_remove_tree (dir);
}

static LkFaces
random_faces (gsize n, guint dim, float **rows, float **crop, guint64 **photo, guint8 **gallery)
{
  g_autoptr (GRand) rand = g_rand_new_with_seed (7);

  *rows = g_new (float, n *dim);
  *crop = g_new (float, n);
  *photo = g_new (guint64, n);
  *gallery = g_new (guint8, n);
  for (gsize i = 0; i < n; i++)
    {
      double norm = 0;
      for (guint d = 0; d < dim; d++)
        {
          float v = (float) g_rand_double_range (rand, -1, 1);
          (*rows)[i * dim + d] = v;
          norm += (double) v * v;
        }
      for (guint d = 0; d < dim; d++)
        (*rows)[i * dim + d] = (float) ((*rows)[i * dim + d] / sqrt (norm));
      (*crop)[i] = 120;
      (*photo)[i] = i;
      (*gallery)[i] = 1;
    }
  return (LkFaces){ *rows, n, dim, *crop, *photo, *gallery };
}

/* The race measures every candidate that runs here, chooses one of them and
 * remembers it where lk_tune_cache_path() says (this test's own
 * XDG_CACHE_HOME). */
static void
test_measure_chooses_a_runnable_candidate_and_remembers_it (void)
{
  g_autofree float *rows = NULL, *crop = NULL;
  g_autofree guint64 *photo = NULL;
  g_autofree guint8 *gallery = NULL;
  LkFaces faces = random_faces (600, 64, &rows, &crop, &photo, &gallery);
  g_autoptr (LkTuneChoice) c = lk_tune_measure (&faces, 0.3f);
  guint chosen = 0;

  g_assert_nonnull (c->candidates);
  g_assert_cmpuint (c->candidates->len, >=, 1);
  for (guint k = 0; k < c->candidates->len; k++)
    {
      const LkTuneCandidate *t = &g_array_index (c->candidates, LkTuneCandidate, k);
      g_assert_cmpfloat (t->screen_ns, >, 0);
      g_assert_nonnull (lk_kernel_get (t->kernel, NULL));
      chosen += t->kernel == c->kernel && t->prefilter == c->prefilter;
    }
  g_assert_cmpuint (chosen, ==, 1);
  g_assert_cmpint (c->source, ==, LK_TUNE_MEASURED);

  LkKernelId k;
  LkPrefilterId p;
  g_autofree char *key = lk_tune_cache_key_here (64);
  g_assert_true (lk_tune_cache_lookup (c->cache_path, key, &k, &p));
  g_assert_cmpint (k, ==, c->kernel);
  g_assert_cmpint (p, ==, c->prefilter);

  /* And a scan of the same dimension now runs the remembered choice. */
  g_autoptr (LkTuneChoice) again = lk_tune_for_scan (&faces, 0.3f);
  g_assert_cmpint (again->source, ==, LK_TUNE_CACHED);
  g_assert_cmpint (again->kernel, ==, c->kernel);
}

/* Small scans with nothing remembered run the widest kernel alone, without
 * spending the tuning budget; LIKENESS_KERNEL forces a kernel. */
static void
test_small_scan_defaults_and_environment_forces (void)
{
  g_autofree float *rows = NULL, *crop = NULL;
  g_autofree guint64 *photo = NULL;
  g_autofree guint8 *gallery = NULL;
  LkFaces faces = random_faces (300, 40, &rows, &crop, &photo, &gallery);

  g_autoptr (LkTuneChoice) d = lk_tune_for_scan (&faces, 0.3f);
  g_assert_cmpint (d->source, ==, LK_TUNE_DEFAULT);
  g_assert_cmpint (d->kernel, ==, lk_kernel_get (LK_KERNEL_AUTO, NULL)->id);
  g_assert_cmpint (d->prefilter, ==, LK_PREFILTER_OFF);
  g_assert_null (d->candidates);

  g_setenv ("LIKENESS_KERNEL", "portable", TRUE);
  g_autoptr (LkTuneChoice) f = lk_tune_for_scan (&faces, 0.3f);
  g_assert_cmpint (f->source, ==, LK_TUNE_FORCED);
  g_assert_cmpint (f->kernel, ==, LK_KERNEL_PORTABLE);

  LkCalibration cal = LK_CALIBRATION_DEFAULT;
  g_autoptr (GError) error = NULL;
  g_autoptr (LkScanResult) r = lk_scan (&faces, &cal, 0.5, NULL, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (r->kernel, ==, "portable");
  g_assert_nonnull (strstr (r->choice, "LIKENESS_KERNEL"));
  g_unsetenv ("LIKENESS_KERNEL");
}

int
main (int argc, char **argv)
{
  /* This test's own cache, never the user's. */
  g_autofree char *cache = g_dir_make_tmp ("lk-tune-cache-XXXXXX", NULL);
  g_setenv ("XDG_CACHE_HOME", cache, TRUE);
  g_unsetenv ("LIKENESS_KERNEL");
  g_unsetenv ("LIKENESS_FIRST_PASS");
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/tune/an-avx2-only-cpu-races-the-int16-and-int7-passes",
                   test_an_avx2_only_cpu_races_the_int16_and_int7_passes);
  g_test_add_func ("/tune/pick-takes-the-highest-ratio-and-skips-eliminated",
                   test_pick_takes_the_highest_ratio_and_skips_eliminated);
  g_test_add_func ("/tune/the-amx-pass-races-only-where-the-cpu-has-amx",
                   test_the_amx_pass_races_only_where_the_cpu_has_amx);
  g_test_add_func ("/tune/candidates-only-what-the-cpu-runs",
                   test_candidates_only_what_the_cpu_runs);
  g_test_add_func ("/tune/cache-key-changes-with-each-field",
                   test_cache_key_changes_with_each_field);
  g_test_add_func ("/tune/cache-round-trip-keeps-other-keys",
                   test_cache_round_trip_keeps_other_keys);
  g_test_add_func ("/tune/cache-never-trusts-a-bad-file", test_cache_never_trusts_a_bad_file);
  g_test_add_func ("/tune/unreadable-cache-falls-back", test_unreadable_cache_falls_back);
  g_test_add_func ("/tune/measure-chooses-a-runnable-candidate-and-remembers-it",
                   test_measure_chooses_a_runnable_candidate_and_remembers_it);
  g_test_add_func ("/tune/small-scan-defaults-and-environment-forces",
                   test_small_scan_defaults_and_environment_forces);
  int rc = g_test_run ();
  lk_test_remove_tree (cache);
  return rc;
}
