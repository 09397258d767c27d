/* likeness-cli evaluate — Likeness's people against two baselines, on the same pairs */
#include "config.h"

#include <glib/gi18n.h>
#include <json-glib/json-glib.h>
#include <stdio.h>

#include "people/lk-calibrate.h"
#include "lk-cli.h"
#include "lk-session.h"
#include "people/lk-evaluate.h"

/* One row of the table: a clustering of one set of pairs. */
typedef struct
{
  const char *name;
  LkLinkage linkage;
  const GArray *pairs; /* of LkPair */
  LkScore score;
  gsize same_photo;
  double seconds;
} Row;
static void
add_pr (JsonBuilder *b, const char *member, const LkPrecisionRecall *pr, gboolean f1)
{
  json_builder_set_member_name (b, member);
  json_builder_begin_object (b);
  json_builder_set_member_name (b, "precision");
  json_builder_add_double_value (b, pr->precision);
  json_builder_set_member_name (b, "recall");
  json_builder_add_double_value (b, pr->recall);
  if (f1)
    {
      json_builder_set_member_name (b, "f1");
      json_builder_add_double_value (b, pr->f1);
    }
  json_builder_end_object (b);
}

static void
add_count (JsonBuilder *b, const char *member, gsize value)
{
  json_builder_set_member_name (b, member);
  json_builder_add_int_value (b, (gint64) value);
}

static GArray *
scan_with (const LkLibrary *library, const LkCalibration *calibration, double min_probability,
           GError **error)
{
  LkFaces faces;
  lk_faces_from_library (&faces, library);
  g_autoptr (LkScanResult) r = lk_scan (&faces, calibration, min_probability, NULL, NULL, error);
  return r ? g_array_ref (r->pairs) : NULL;
}

static gboolean
score_row (Row *row, const LkLibrary *library, double threshold, GError **error)
{
  LkClusterInput input;
  lk_cluster_input_init (&input, library, row->pairs);
  LkClusterOptions options = { row->linkage, threshold, 0 };
  gint64 start = g_get_monotonic_time ();
  g_autoptr (LkPeople) people = lk_cluster (&input, NULL, &options, error);
  row->seconds = (g_get_monotonic_time () - start) / 1e6;
  if (people == NULL
      || !lk_evaluate (people, (const char *const *) library->label, &row->score, error))
    return FALSE;
  row->same_photo = lk_evaluate_same_photo (people, library->photo);
  return TRUE;
}

/* --calibrations: the two other calibrations and their pairs. A failed
 * estimate is a result too: said, and the other rows still scored. */
typedef struct
{
  LkCalibrationFit *estimated, *fitted;
  GArray *estimated_pairs, *fitted_pairs; /* of LkPair */
  char *estimate_failed;
} Calibrations;

static void
calibrations_clear (Calibrations *c)
{
  g_clear_pointer (&c->estimated, lk_calibration_fit_free);
  g_clear_pointer (&c->fitted, lk_calibration_fit_free);
  g_clear_pointer (&c->estimated_pairs, g_array_unref);
  g_clear_pointer (&c->fitted_pairs, g_array_unref);
  g_clear_pointer (&c->estimate_failed, g_free);
}
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (Calibrations, calibrations_clear)

static gboolean
fit_calibrations (const LkLibrary *library, Calibrations *c, GError **error)
{
  GError *local = NULL;
  c->estimated = lk_calibrate (library, LK_CALIBRATION_FROM_ESTIMATE, NULL, NULL, NULL, &local);
  if (c->estimated == NULL
      && g_error_matches (local, LK_CALIBRATE_ERROR, LK_CALIBRATE_ERROR_NO_FIT))
    {
      c->estimate_failed = g_strdup (local->message);
      fprintf (stderr, _ ("likeness-cli evaluate: %s\n"), c->estimate_failed);
      g_clear_error (&local);
    }
  else if (c->estimated == NULL
           || (c->estimated_pairs
               = scan_with (library, &c->estimated->calibration, library->min_probability, &local))
                  == NULL)
    {
      g_propagate_error (error, local);
      return FALSE;
    }
  c->fitted = lk_calibrate (library, LK_CALIBRATION_FROM_LABELS, NULL, NULL, NULL, error);
  return c->fitted != NULL
         && (c->fitted_pairs
             = scan_with (library, &c->fitted->calibration, library->min_probability, error))
                != NULL;
}

/* The table's rows, Likeness's first; each calibration's rows only when it
 * was fitted. Returns how many. */
static gsize
make_rows (Row rows[7], const GArray *pairs, const GArray *immich_pairs, const Calibrations *c,
           gboolean calibrations)
{
  gsize n_rows = 0;
  rows[n_rows++] = (Row){ "likeness", LK_LINKAGE_AVERAGE, pairs };
  if (c->estimated_pairs)
    rows[n_rows++] = (Row){ "likeness_estimated", LK_LINKAGE_AVERAGE, c->estimated_pairs };
  if (calibrations)
    rows[n_rows++] = (Row){ "likeness_fitted", LK_LINKAGE_AVERAGE, c->fitted_pairs };
  rows[n_rows++] = (Row){ "connected_components", LK_LINKAGE_SINGLE, pairs };
  if (c->estimated_pairs)
    rows[n_rows++]
        = (Row){ "connected_components_estimated", LK_LINKAGE_SINGLE, c->estimated_pairs };
  if (calibrations)
    rows[n_rows++] = (Row){ "connected_components_fitted", LK_LINKAGE_SINGLE, c->fitted_pairs };
  rows[n_rows++] = (Row){ "immich_rule", LK_LINKAGE_IMMICH, immich_pairs };
  return n_rows;
}

static void
print_json (const Row *rows, gsize n_rows, const Calibrations *c, gboolean calibrations)
{
  g_autoptr (JsonBuilder) b = json_builder_new ();
  json_builder_begin_object (b);
  for (gsize m = 0; m < n_rows; m++)
    {
      const LkScore *s = &rows[m].score;
      json_builder_set_member_name (b, rows[m].name);
      json_builder_begin_object (b);
      add_pr (b, "bcubed", &s->bcubed, TRUE);
      add_pr (b, "pairwise", &s->pairwise, FALSE);
      add_count (b, "people", s->people);
      add_count (b, "identities", s->identities);
      add_count (b, "split", s->split);
      add_count (b, "mixed", s->mixed);
      add_count (b, "same_photo", rows[m].same_photo);
      add_count (b, "pairs", rows[m].pairs->len);
      json_builder_end_object (b);
    }
  if (calibrations)
    {
      const LkCalibrationFit *fits[] = { c->estimated, c->fitted };
      const char *names[] = { "estimated", "fitted" };
      for (int k = 0; k < 2; k++)
        {
          json_builder_set_member_name (b, names[k]);
          json_builder_begin_object (b);
          if (fits[k] == NULL)
            {
              json_builder_set_member_name (b, "failed");
              json_builder_add_string_value (b, c->estimate_failed);
              json_builder_end_object (b);
              continue;
            }
          json_builder_set_member_name (b, "a");
          json_builder_add_double_value (b, fits[k]->calibration.a);
          json_builder_set_member_name (b, "b");
          json_builder_add_double_value (b, fits[k]->calibration.b);
          json_builder_set_member_name (b, "w_size");
          json_builder_add_double_value (b, fits[k]->calibration.w_size);
          json_builder_set_member_name (b, "cos_at_bar");
          json_builder_add_double_value (b, fits[k]->cos_at_bar);
          json_builder_end_object (b);
        }
    }
  json_builder_end_object (b);
  g_autoptr (JsonGenerator) gen = json_generator_new ();
  g_autoptr (JsonNode) root = json_builder_get_root (b);
  json_generator_set_root (gen, root);
  json_generator_set_pretty (gen, TRUE);
  g_autofree char *text = json_generator_to_data (gen, NULL);
  printf ("%s\n", text);
}

static void
print_table (const LkLibrary *library, const char *source, const LkCalibration *calibration,
             const GArray *pairs, const Row *rows, gsize n_rows, const Calibrations *c,
             gboolean calibrations)
{
  g_autofree char *faces = g_strdup_printf (
      ngettext ("%zu face (%zu labelled)", "%zu faces (%zu labelled)", library->count),
      library->count, rows[0].score.labelled);
  g_autofree char *n_pairs
      = g_strdup_printf (ngettext ("%u pair", "%u pairs", pairs->len), pairs->len);
  /* TRANSLATORS: "2000 faces (2000 labelled), 5321 pairs (library calibration a = …)" */
  printf (_ ("%s, %s (%s calibration a = %g, b = %g, w_size = %g)\n"), faces, n_pairs, source,
          calibration->a, calibration->b, calibration->w_size);
  if (calibrations)
    {
      if (c->estimated == NULL)
        printf ("estimated: failed (%s)\n", c->estimate_failed);
      else
        printf ("estimated: a = %g, b = %g, p = %g at cosine %.4f\n", c->estimated->calibration.a,
                c->estimated->calibration.b, c->estimated->min_probability,
                c->estimated->cos_at_bar);
      printf ("fitted:    a = %g, b = %g, w_size = %g, p = %g at cosine %.4f\n",
              c->fitted->calibration.a, c->fitted->calibration.b, c->fitted->calibration.w_size,
              c->fitted->min_probability, c->fitted->cos_at_bar);
    }
  printf ("\n%-28s %9s %9s %9s %9s %9s %7s %10s %6s %6s %10s %9s %9s\n", "method", "BCubed P",
          "BCubed R", "BCubed F1", "pair P", "pair R", "people", "identities", "split", "mixed",
          "same-photo", "pairs", "seconds");
  for (gsize m = 0; m < n_rows; m++)
    {
      const LkScore *s = &rows[m].score;
      printf ("%-28s %9.4f %9.4f %9.4f %9.4f %9.4f %7zu %10zu %6zu %6zu %10zu %9u %9.3f\n",
              rows[m].name, s->bcubed.precision, s->bcubed.recall, s->bcubed.f1,
              s->pairwise.precision, s->pairwise.recall, s->people, s->identities, s->split,
              s->mixed, rows[m].same_photo, rows[m].pairs->len, rows[m].seconds);
    }
}

int
lk_cli_evaluate (int argc, char **argv)
{
  gboolean json = FALSE, calibrations = FALSE;
  double threshold = 0.0;
  g_autofree char *threshold_help
      = g_strdup_printf (_ ("Likeness's average-linkage bar (default %s)"),
                         G_STRINGIFY (LK_CLUSTER_DEFAULT_THRESHOLD));
  const GOptionEntry entries[] = {
    { "json", 0, 0, G_OPTION_ARG_NONE, &json, N_ ("Print JSON"), NULL },
    { "threshold", 0, 0, G_OPTION_ARG_DOUBLE, &threshold, threshold_help, "T" },
    { "calibrations", 0, 0, G_OPTION_ARG_NONE, &calibrations,
      N_ ("Also cluster with the calibration estimated without labels and the one fitted to the "
          "labels (likeness-cli calibrate), each on its own pairs; nothing is saved"),
      NULL },
    { NULL },
  };
  if (!lk_cli_parse (
          "evaluate", "LIBRARY",
          N_ ("Score Likeness's clustering against the faces' labels beside two "
              "baselines: connected components of the same pairs, and Immich's rule "
              "(pairs at cosine distance < 0.5, a person needs 3 faces). BCubed and "
              "pairwise precision/recall, people vs identities, identities split, people "
              "mixed, people with two faces of one photo. Review decisions are not "
              "applied; the calibration is the one every scan uses (review.json's, else "
              "the library's)."),
          entries, &argc, &argv, 1, 1))
    return LK_CLI_USAGE;
  if (threshold < 0 || threshold > 1)
    {
      fprintf (stderr, _ ("likeness-cli evaluate: --threshold %g is not in (0, 1]\n"), threshold);
      return LK_CLI_USAGE;
    }

  g_autoptr (GError) error = NULL;
  /* The review is not applied, so a corrupt one does not stop the scores. */
  g_autoptr (LkSession) session = lk_session_new (argv[1]);
  lk_session_set_start_over (session, TRUE);
  if (!lk_session_load (session, NULL, &error))
    return lk_cli_fail (error);
  lk_cli_warn_guard (session);
  const LkLibrary *library = lk_session_get_library (session);
  const char *source = NULL;
  const LkCalibration *calibration = lk_session_get_calibration (session, &source);
  GArray *pairs = lk_session_get_scan (session)->pairs;

  /* Immich links two faces at cosine distance < maxDistance = 0.5 (its
   * default), i.e. cosine > 0.5: sigmoid (16 (cos − 0.5)) > 0.5. */
  LkCalibration immich = { 16, -8, 0, 0, 0 };
  g_autoptr (GArray) immich_pairs = scan_with (library, &immich, 0.5, &error);
  if (immich_pairs == NULL)
    return lk_cli_fail (error);
  g_auto (Calibrations) c = { 0 };
  if (calibrations && !fit_calibrations (library, &c, &error))
    return lk_cli_fail (error);

  Row rows[7];
  gsize n_rows = make_rows (rows, pairs, immich_pairs, &c, calibrations);
  for (gsize m = 0; m < n_rows; m++)
    if (!score_row (&rows[m], library, threshold, &error))
      return lk_cli_fail (error);

  if (json)
    print_json (rows, n_rows, &c, calibrations);
  else
    print_table (library, source, calibration, pairs, rows, n_rows, &c, calibrations);
  return LK_CLI_OK;
}
