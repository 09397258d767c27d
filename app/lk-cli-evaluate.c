/* likeness-cli evaluate — Likeness's people against two baselines, on the same pairs */
#include "config.h"

#include <json-glib/json-glib.h>
#include <stdio.h>

#include "lk-cli.h"
#include "lk-evaluate.h"
#include "lk-session.h"

static const struct
{
  const char *name;
  LkLinkage linkage;
} methods[] = {
  { "likeness", LK_LINKAGE_AVERAGE },
  { "connected_components", LK_LINKAGE_SINGLE },
  { "immich_rule", LK_LINKAGE_IMMICH },
};

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

int
lk_cli_evaluate (int argc, char **argv)
{
  gboolean json = FALSE;
  double threshold = 0.0;
  const GOptionEntry entries[] = {
    { "json", 0, 0, G_OPTION_ARG_NONE, &json, "Print JSON", NULL },
    { "threshold", 0, 0, G_OPTION_ARG_DOUBLE, &threshold,
      "Likeness's average-linkage bar (default " G_STRINGIFY (LK_CLUSTER_DEFAULT_THRESHOLD) ")",
      "T" },
    { NULL },
  };
  if (!lk_cli_parse ("evaluate", "LIBRARY",
                     "Score Likeness's clustering, connected components and Immich's rule "
                     "against the faces' labels, on the same pairs: BCubed and pairwise "
                     "precision/recall, people vs identities, identities split, people mixed. "
                     "Review decisions are not applied.",
                     entries, &argc, &argv, 1, 1))
    return LK_CLI_USAGE;
  if (threshold < 0 || threshold > 1)
    {
      fprintf (stderr, "likeness-cli evaluate: --threshold %g is not in (0, 1]\n", threshold);
      return LK_CLI_USAGE;
    }

  g_autoptr (GError) error = NULL;
  /* The review is not applied, so a corrupt one does not stop the scores. */
  g_autoptr (LkSession) session = lk_session_new (argv[1]);
  lk_session_set_start_over (session, TRUE);
  if (!lk_session_load (session, NULL, &error))
    return lk_cli_fail (error);
  const LkLibrary *library = lk_session_get_library (session);

  LkScore scores[G_N_ELEMENTS (methods)];
  double seconds[G_N_ELEMENTS (methods)];
  for (gsize m = 0; m < G_N_ELEMENTS (methods); m++)
    {
      LkClusterOptions options = { methods[m].linkage, threshold, 0 };
      gint64 start = g_get_monotonic_time ();
      g_autoptr (LkPeople) people
          = lk_cluster (lk_session_get_cluster_input (session), NULL, &options, &error);
      seconds[m] = (g_get_monotonic_time () - start) / 1e6;
      if (people == NULL
          || !lk_evaluate (people, (const char *const *) library->label, &scores[m],
                           &error))
        return lk_cli_fail (error);
    }

  if (json)
    {
      g_autoptr (JsonBuilder) b = json_builder_new ();
      json_builder_begin_object (b);
      for (gsize m = 0; m < G_N_ELEMENTS (methods); m++)
        {
          const LkScore *s = &scores[m];
          json_builder_set_member_name (b, methods[m].name);
          json_builder_begin_object (b);
          add_pr (b, "bcubed", &s->bcubed, TRUE);
          add_pr (b, "pairwise", &s->pairwise, FALSE);
          add_count (b, "people", s->people);
          add_count (b, "identities", s->identities);
          add_count (b, "split", s->split);
          add_count (b, "mixed", s->mixed);
          json_builder_end_object (b);
        }
      json_builder_end_object (b);
      g_autoptr (JsonGenerator) gen = json_generator_new ();
      g_autoptr (JsonNode) root = json_builder_get_root (b);
      json_generator_set_root (gen, root);
      json_generator_set_pretty (gen, TRUE);
      g_autofree char *text = json_generator_to_data (gen, NULL);
      printf ("%s\n", text);
      return LK_CLI_OK;
    }

  printf ("%zu faces (%zu labelled), %u pairs\n\n", library->count, scores[0].labelled,
          (guint) lk_session_get_n_pairs (session));
  printf ("%-22s %9s %9s %9s %9s %9s %7s %10s %6s %6s %9s\n", "method", "BCubed P", "BCubed R",
          "BCubed F1", "pair P", "pair R", "people", "identities", "split", "mixed", "seconds");
  for (gsize m = 0; m < G_N_ELEMENTS (methods); m++)
    {
      const LkScore *s = &scores[m];
      printf ("%-22s %9.4f %9.4f %9.4f %9.4f %9.4f %7zu %10zu %6zu %6zu %9.3f\n",
              methods[m].name, s->bcubed.precision, s->bcubed.recall, s->bcubed.f1,
              s->pairwise.precision, s->pairwise.recall, s->people, s->identities, s->split,
              s->mixed, seconds[m]);
    }
  return LK_CLI_OK;
}
