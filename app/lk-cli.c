#include "config.h"

#include "lk-cli.h"
#include "lk-session.h"

#include <stdio.h>

gboolean
lk_cli_parse (const char *name, const char *parameter_string, const char *description,
              const GOptionEntry *entries, int *argc, char ***argv, int min_args, int max_args)
{
  g_autoptr (GOptionContext) context = g_option_context_new (parameter_string);
  g_autoptr (GError) error = NULL;
  g_autofree char *prgname = g_strdup_printf ("likeness-cli %s", name);

  g_set_prgname (prgname);
  g_option_context_set_summary (context, description);
  if (entries != NULL)
    g_option_context_add_main_entries (context, entries, GETTEXT_PACKAGE);

  if (!g_option_context_parse (context, argc, argv, &error))
    {
      fprintf (stderr, "likeness-cli %s: %s\n", name, error->message);
      fprintf (stderr, "Try “likeness-cli %s --help”.\n", name);
      return FALSE;
    }

  int positional = *argc - 1;
  if (positional < min_args || (max_args >= 0 && positional > max_args))
    {
      g_autofree char *help = g_option_context_get_help (context, TRUE, NULL);
      fprintf (stderr, "likeness-cli %s: expected %s\n\n%s", name, parameter_string, help);
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
           "likeness-cli: note: %u decision%s name%s faces that are no longer in the library; "
           "kept in %s, they apply to the faces that remain\n",
           n, n == 1 ? "" : "s", n == 1 ? "s" : "", lk_session_get_review_path (session));
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
           "likeness-cli: warning: %s (%u of %u random pairs with the %s calibration, a = %g, "
           "b = %g) — try likeness-cli calibrate --from estimate %s\n",
           warning, guard->candidates, guard->sampled, source, c->a, c->b,
           lk_session_get_folder (session));
}
