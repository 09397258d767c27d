/* likeness-cli review — every review decision, one command each, saved at once
 *
 * Each run loads review.json, clusters (so the decision is checked against the
 * people the user would see), records one decision or undoes/redoes one, and
 * saves review.json (locked, merged with what other writers saved meanwhile,
 * atomic: lk_review_save). Undo and redo are in the file, so they carry across
 * runs. A save that fails exits 1 saying the decision was not saved.
 */
#include "config.h"

#include <glib/gi18n.h>
#include <stdio.h>
#include <string.h>

#include "lk-cli.h"
#include "lk-session.h"

/* Makes the request (saved before the session returns). *what receives the
 * line that says what was done — also when the save failed, for the message
 * that says it was not saved. */
static gboolean
decide (LkSession *s, const LkReviewRequest *request, char **what, GError **error)
{
  LkReview *review = lk_session_get_review (s);
  gboolean undo = request->action == LK_REVIEW_UNDO;

  if (undo || request->action == LK_REVIEW_REDO)
    {
      g_autofree char *which
          = undo ? lk_review_describe_undo (review) : lk_review_describe_redo (review);
      if (which == NULL)
        {
          g_set_error_literal (error, LK_REVIEW_ERROR, LK_REVIEW_ERROR_INVALID,
                               undo ? _ ("there is nothing to undo")
                                    : _ ("there is nothing to redo"));
          return FALSE;
        }
      *what = g_strdup_printf (undo ? _ ("undid: %s") : _ ("redid: %s"), which);
      return lk_session_apply (s, request, NULL, error);
    }

  g_autofree char *new_id = NULL;
  gboolean ok = lk_session_apply (s, request, &new_id, error);
  /* Recorded (in memory at least): the review's last decision is it. */
  if (ok || lk_session_has_unsaved (s))
    *what = lk_review_describe_undo (review);
  return ok;
}

int
lk_cli_review (int argc, char **argv)
{
  gboolean start_over = FALSE;
  const GOptionEntry entries[] = {
    { "start-over", 0, 0, G_OPTION_ARG_NONE, &start_over,
      N_ ("Replace a corrupt review.json, or one from another library, with a new review"), NULL },
    { NULL },
  };
  if (!lk_cli_parse (
          "review", "LIBRARY ACTION ARGS…",
          N_ ("Record one review decision in LIBRARY/review.json:\n"
              "  name PERSON NAME            name a person (\"\" forgets the name)\n"
              "  merge PERSON OTHER…         OTHER joins PERSON (several: one undo step)\n"
              "  remove PERSON FACE…         not this person: the faces never return\n"
              "  move PERSON TARGET FACE…    PERSON may be “unassigned”, TARGET “new”\n"
              "  cover PERSON FACE           the person's cover face\n"
              "  hide PERSON / unhide PERSON\n"
              "  confirm PERSON FACE         the face stays with the person\n"
              "  reject PERSON FACE…         faces outside PERSON never join it\n"
              "  dismiss FACE…               not a face: out of every person, for good\n"
              "  undismiss FACE…             dismissed faces are faces again\n"
              "  undo / redo                 kept in review.json across runs\n"
              "A read-only library whose decisions the window saved elsewhere (Save\n"
              "Elsewhere…) records them in that review.json instead."),
          entries, &argc, &argv, 2, -1))
    return LK_CLI_USAGE;

  g_autoptr (GError) error = NULL;
  /* The command line as one request (lk-review.h), like the window's actions. */
  g_autoptr (LkReviewRequest) request
      = lk_review_request_parse ((const char *const *) argv + 2, argc - 2, &error);
  if (request == NULL)
    {
      if (g_error_matches (error, LK_REVIEW_ERROR, LK_REVIEW_ERROR_INVALID))
        {
          fprintf (stderr, _ ("likeness-cli review: %s; try “likeness-cli review --help”\n"),
                   error->message);
          return LK_CLI_USAGE;
        }
      return lk_cli_fail (error);
    }
  /* An undo or a redo needs no people, so no scan. */
  g_autoptr (LkSession) session = lk_session_new (argv[1]);
  lk_session_set_start_over (session, start_over);
  gboolean people = request->action != LK_REVIEW_UNDO && request->action != LK_REVIEW_REDO;
  if (!(people ? lk_session_load (session, NULL, &error) : lk_session_open (session, &error)))
    return lk_cli_fail (error);
  if (people)
    lk_cli_warn_guard (session);
  lk_cli_note_gone (session);
  g_autofree char *what = NULL;
  if (!decide (session, request, &what, &error))
    {
      /* This process ends here: a decision that is not in review.json is
       * gone, and the user must be told so plainly. */
      if (lk_session_has_unsaved (session))
        {
          fprintf (stderr, _ ("likeness-cli: the decision was NOT saved (%s): %s\n"), what,
                   error->message);
          return LK_CLI_ERROR;
        }
      return lk_cli_fail (error);
    }
  /* Printed only once saved. */
  printf ("%s\n", what);
  return LK_CLI_OK;
}
