/* likeness-cli review — every review decision, one command each, saved at once
 *
 * Each run loads review.json, clusters (so the decision is checked against the
 * people the user would see), records one decision or undoes/redoes one, and
 * saves review.json (locked, merged with what other writers saved meanwhile,
 * atomic: lk_review_save). Undo and redo are in the file, so they carry across
 * runs. A save that fails exits 1 saying the decision was not saved.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "lk-cli.h"
#include "lk-session.h"

static gboolean
parse_faces (char **args, int n, GArray *out, GError **error)
{
  for (int k = 0; k < n; k++)
    {
      guint64 v;
      if (!g_ascii_string_to_unsigned (args[k], 10, 0, G_MAXUINT32, &v, NULL))
        {
          g_set_error (error, LK_REVIEW_ERROR, LK_REVIEW_ERROR_BAD_FACE,
                       "“%s” is not a face index", args[k]);
          return FALSE;
        }
      guint32 f = (guint32) v;
      g_array_append_val (out, f);
    }
  return TRUE;
}

typedef struct
{
  const char *op;
  int min_args;   /* after the op */
  int max_args;   /* -1: any */
} Shape;

static const Shape shapes[] = {
  { "name", 2, 2 },   { "merge", 2, 2 }, { "remove", 2, -1 }, { "move", 3, -1 },
  { "cover", 2, 2 },  { "hide", 1, 1 },  { "unhide", 1, 1 },  { "confirm", 2, 2 },
  { "reject", 2, 2 }, { "undo", 0, 0 },   { "redo", 0, 0 },
};

/* Records the decision (saved before the session returns). *what receives
 * the line that says what was done — also when the save failed, for the
 * message that says it was not saved. */
static gboolean
decide (LkSession *s, const char *op, char **args, int n, char **what, GError **error)
{
  LkReview *review = lk_session_get_review (s);

  if (strcmp (op, "undo") == 0 || strcmp (op, "redo") == 0)
    {
      gboolean undo = op[0] == 'u';
      g_autofree char *which = undo ? lk_review_describe_undo (review)
                                    : lk_review_describe_redo (review);
      if (which == NULL)
        {
          g_set_error (error, LK_REVIEW_ERROR, LK_REVIEW_ERROR_INVALID, "there is nothing to %s",
                       op);
          return FALSE;
        }
      *what = g_strdup_printf ("%s: %s", undo ? "undid" : "redid", which);
      return undo ? lk_session_undo (s, error) : lk_session_redo (s, error);
    }

  g_autoptr (GArray) faces = g_array_new (FALSE, FALSE, sizeof (guint32));
  gboolean ok = FALSE;
  g_autofree char *new_id = NULL;
  if (strcmp (op, "name") == 0)
    ok = lk_session_rename (s, args[0], args[1], error);
  else if (strcmp (op, "merge") == 0)
    ok = lk_session_merge (s, args[0], args[1], error);
  else if (strcmp (op, "remove") == 0)
    ok = parse_faces (args + 1, n - 1, faces, error)
         && lk_session_remove_faces (s, args[0], (const guint32 *) faces->data, faces->len,
                                     error);
  else if (strcmp (op, "move") == 0)
    ok = parse_faces (args + 2, n - 2, faces, error)
         && lk_session_move_faces (s, strcmp (args[0], "unassigned") == 0 ? NULL : args[0],
                                   (const guint32 *) faces->data, faces->len,
                                   strcmp (args[1], "new") == 0 ? NULL : args[1], &new_id, error);
  else if (strcmp (op, "cover") == 0 || strcmp (op, "confirm") == 0)
    ok = parse_faces (args + 1, 1, faces, error)
         && (op[1] == 'o' ? lk_session_set_cover : lk_session_confirm) (
           s, args[0], g_array_index (faces, guint32, 0), error);
  else if (strcmp (op, "reject") == 0)
    ok = parse_faces (args + 1, 1, faces, error)
         && lk_session_reject (s, args[0], g_array_index (faces, guint32, 0), error);
  else if (strcmp (op, "hide") == 0 || strcmp (op, "unhide") == 0)
    ok = lk_session_set_hidden (s, args[0], op[0] == 'h', error);
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
      "Replace a corrupt review.json, or one from another library, with a new review", NULL },
    { NULL },
  };
  if (!lk_cli_parse ("review", "LIBRARY ACTION ARGS…",
                     "Record one review decision in LIBRARY/review.json:\n"
                     "  name PERSON NAME            name a person (\"\" forgets the name)\n"
                     "  merge PERSON OTHER          OTHER joins PERSON\n"
                     "  remove PERSON FACE…         not this person: the faces never return\n"
                     "  move PERSON TARGET FACE…    PERSON may be “unassigned”, TARGET “new”\n"
                     "  cover PERSON FACE           the person's cover face\n"
                     "  hide PERSON / unhide PERSON\n"
                     "  confirm PERSON FACE         the face stays with the person\n"
                     "  reject PERSON FACE          a face outside PERSON never joins it\n"
                     "  undo / redo                 kept in review.json across runs\n"
                     "A read-only library whose decisions the window saved elsewhere (Save\n"
                     "Elsewhere…) records them in that review.json instead.",
                     entries, &argc, &argv, 2, -1))
    return LK_CLI_USAGE;

  const char *op = argv[2];
  const Shape *shape = NULL;
  for (gsize k = 0; k < G_N_ELEMENTS (shapes); k++)
    if (strcmp (op, shapes[k].op) == 0)
      shape = &shapes[k];
  int n = argc - 3;
  if (shape == NULL || n < shape->min_args || (shape->max_args >= 0 && n > shape->max_args))
    {
      fprintf (stderr, "likeness-cli review: “%s” with %d argument%s is not an action; try "
                       "“likeness-cli review --help”\n",
               op, n, n == 1 ? "" : "s");
      return LK_CLI_USAGE;
    }

  g_autoptr (GError) error = NULL;
  /* An undo or a redo needs no people, so no scan. */
  g_autoptr (LkSession) session = lk_session_new (argv[1]);
  lk_session_set_start_over (session, start_over);
  gboolean people = strcmp (op, "undo") != 0 && strcmp (op, "redo") != 0;
  if (!(people ? lk_session_load (session, NULL, &error) : lk_session_open (session, &error)))
    return lk_cli_fail (error);
  if (people)
    lk_cli_warn_guard (session);
  lk_cli_note_gone (session);
  g_autofree char *what = NULL;
  if (!decide (session, op, argv + 3, n, &what, &error))
    {
      /* This process ends here: a decision that is not in review.json is
       * gone, and the user must be told so plainly. */
      if (lk_session_has_unsaved (session))
        {
          fprintf (stderr, "likeness-cli: the decision was NOT saved (%s): %s\n", what,
                   error->message);
          return LK_CLI_ERROR;
        }
      return lk_cli_fail (error);
    }
  /* Printed only once saved. */
  printf ("%s\n", what);
  return LK_CLI_OK;
}
