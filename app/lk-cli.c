#include "config.h"

#include "lk-cli.h"
#include "lk-session.h"

#include <glib/gi18n.h>
#include <stdio.h>
#include <string.h>

/* One example per command, under its --help and in the man page (help2man
 * reads `likeness-cli --help`, which lists them all). */
static const struct
{
  const char *name;
  const char *example;
} examples[] = {
  { "cpu", N_ ("likeness-cli cpu --tune") },
  { "gates", N_ ("likeness-cli gates --gate scan --reps 25 --json gates.json") },
  { "race", N_ ("likeness-cli race --reps 21 -- ./old/likeness-cli scan LIB -- ./new/likeness-cli "
                "scan LIB") },
  { "scan", N_ ("likeness-cli scan ~/Pictures/Likeness --pairs pairs.tsv") },
  { "make-sample", N_ ("likeness-cli make-sample /tmp/sample --faces 2000 --family lookalikes") },
  { "people", N_ ("likeness-cli people ~/Pictures/Likeness --json") },
  { "review", N_ ("likeness-cli review ~/Pictures/Likeness name p3 \"Ada Lovelace\"") },
  { "calibrate", N_ ("likeness-cli calibrate ~/Pictures/Likeness --from estimate --dry-run") },
  { "evaluate", N_ ("likeness-cli evaluate /tmp/sample --calibrations") },
  { "info", N_ ("likeness-cli info ~/Pictures/Likeness") },
  { "import", N_ ("likeness-cli import photos ~/Pictures/Likeness --photos ~/Pictures") },
  { "export", N_ ("likeness-cli export ~/Pictures/Likeness --xmp --dry-run") },
};

const char *
lk_cli_example (const char *name)
{
  for (gsize k = 0; k < G_N_ELEMENTS (examples); k++)
    if (strcmp (examples[k].name, name) == 0)
      return _ (examples[k].example);
  return NULL;
}

gboolean
lk_cli_parse (const char *name, const char *parameter_string, const char *description,
              const GOptionEntry *entries, int *argc, char ***argv, int min_args, int max_args)
{
  g_autoptr (GOptionContext) context = g_option_context_new (parameter_string);
  g_autoptr (GError) error = NULL;
  g_autofree char *prgname = g_strdup_printf ("likeness-cli %s", name);

  g_set_prgname (prgname);
  /* GOption translates the summary, the description and every entry's
   * text in this domain; the callers mark them with N_(). */
  g_option_context_set_translation_domain (context, GETTEXT_PACKAGE);
  g_option_context_set_summary (context, description);
  const char *example = lk_cli_example (name);
  g_autofree char *example_text = example ? g_strdup_printf (_ ("Example:\n  %s"), example) : NULL;
  if (example_text != NULL)
    g_option_context_set_description (context, example_text);
  if (entries != NULL)
    g_option_context_add_main_entries (context, entries, GETTEXT_PACKAGE);

  if (!g_option_context_parse (context, argc, argv, &error))
    {
      fprintf (stderr, "likeness-cli %s: %s\n", name, error->message);
      fprintf (stderr, _ ("Try “likeness-cli %s --help”.\n"), name);
      return FALSE;
    }

  int positional = *argc - 1;
  if (positional < min_args || (max_args >= 0 && positional > max_args))
    {
      g_autofree char *help = g_option_context_get_help (context, TRUE, NULL);
      fprintf (stderr, _ ("likeness-cli %s: expected %s\n\n%s"), name, parameter_string, help);
      return FALSE;
    }
  return TRUE;
}

int
lk_cli_fail (const GError *error)
{
  fprintf (stderr, "likeness-cli: %s\n", error->message);
  return LK_CLI_ERROR;
}

void
lk_cli_note_gone (LkSession *session)
{
  LkReview *review = lk_session_get_review (session);
  guint n = review != NULL ? lk_review_n_gone (review) : 0;
  if (n == 0)
    return;
  fprintf (stderr,
           ngettext ("likeness-cli: note: %u decision names faces that are no longer in the "
                     "library; kept in %s, it applies to the faces that remain\n",
                     "likeness-cli: note: %u decisions name faces that are no longer in the "
                     "library; kept in %s, they apply to the faces that remain\n",
                     n),
           n, lk_session_get_review_path (session));
}

void
lk_cli_warn_guard (LkSession *session)
{
  const LkCalibrationGuard *guard = lk_session_get_guard (session);
  const char *source = NULL;
  const LkCalibration *c = lk_session_get_calibration (session, &source);
  g_autofree char *warning = NULL;
  if (c == NULL || !lk_calibration_guard_fails (guard, &warning))
    return;
  fprintf (stderr,
           _ ("likeness-cli: warning: %s (%u of %u random pairs with the %s calibration, a = %g, "
              "b = %g) — try likeness-cli calibrate --from estimate %s\n"),
           warning, guard->candidates, guard->sampled, source, c->a, c->b,
           lk_session_get_folder (session));
}
