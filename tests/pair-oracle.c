/* pair-oracle — how many "same or different person?" answers a library needs
 *
 *   pair-oracle [--no-calibration] LIBRARY [CHECKPOINT…]   (checkpoints: 5 10 20 30)
 *
 * --no-calibration drops library.json's calibration from the copy, as for a
 * library of a model Likeness has no prior for: the window then estimates
 * one on opening (make-family writes a calibration no pair reaches).
 * Plays the user of the window's "Help Likeness tell people apart" with the
 * library's labels (faces[].label) as the answers: the library is opened as
 * the window opens it (estimated when it has no calibration), the pairs of
 * lk_session_pair_questions are answered a round of LK_PAIR_QUESTIONS at a
 * time, and at each checkpoint the calibration is fitted from the decisions
 * and the people scored (BCubed) against the labels. The labels' own fit is
 * the reference: a checkpoint is "within" when its F1 is at most 0.02 below
 * it. A checkpoint inside a round does not change the round's pairs (the
 * window asks the round it chose); the next round is chosen with the
 * calibration fitted at the end of the last one, as the window would.
 * Works on copies of library.json and embeddings.f32 in a temporary folder;
 * the library is never written.
 */
#include "config.h"

#include <json-glib/json-glib.h>

#include <glib/gstdio.h>
#include <stdio.h>
#include <stdlib.h>

#include "lk-session.h"
#include "people/lk-evaluate.h"

#include "lk-test-util.h"

static char *
copy_library (const char *from, const char *tmp, const char *name)
{
  g_autoptr (GError) error = NULL;
  char *to = g_build_filename (tmp, name, NULL);
  g_mkdir_with_parents (to, 0700);
  const char *files[] = { "library.json", "embeddings.f32" };
  for (guint k = 0; k < G_N_ELEMENTS (files); k++)
    {
      g_autofree char *src = g_build_filename (from, files[k], NULL);
      g_autofree char *dst = g_build_filename (to, files[k], NULL);
      g_autoptr (GFile) s = g_file_new_for_path (src);
      g_autoptr (GFile) d = g_file_new_for_path (dst);
      if (!g_file_copy (s, d, G_FILE_COPY_OVERWRITE, NULL, NULL, NULL, &error))
        {
          fprintf (stderr, "pair-oracle: %s\n", error->message);
          exit (1);
        }
    }
  return to;
}

static void
drop_calibration (const char *folder)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *manifest = g_build_filename (folder, "library.json", NULL);
  g_autoptr (JsonParser) parser = json_parser_new ();
  g_autoptr (JsonGenerator) generator = json_generator_new ();
  if (!json_parser_load_from_file (parser, manifest, &error)
      || (json_object_remove_member (json_node_get_object (json_parser_get_root (parser)),
                                     "calibration"),
          json_generator_set_root (generator, json_parser_get_root (parser)),
          !json_generator_to_file (generator, manifest, &error)))
    {
      fprintf (stderr, "pair-oracle: %s: %s\n", manifest, error->message);
      exit (1);
    }
}

static void
load (LkSession *session)
{
  g_autoptr (GError) error = NULL;
  if (!lk_session_load (session, NULL, &error))
    {
      fprintf (stderr, "pair-oracle: %s: %s\n", lk_session_get_folder (session), error->message);
      exit (1);
    }
}

static LkScore
score (LkSession *session)
{
  g_autoptr (GError) error = NULL;
  LkScore s = { 0 };
  if (!lk_evaluate (lk_session_peek_people (session),
                    (const char *const *) lk_session_get_library (session)->label, &s, &error))
    {
      fprintf (stderr, "pair-oracle: %s\n", error->message);
      exit (1);
    }
  return s;
}

static void
row (const char *what, LkSession *session, double reference)
{
  LkScore s = score (session);
  const char *source = NULL;
  const LkCalibration *c = lk_session_get_calibration (session, &source);
  printf ("%-22s %-10s F1 %.3f  precision %.3f  recall %.3f  people %4zu  a %.1f b %.1f w %.2f%s\n",
          what, source, s.bcubed.f1, s.bcubed.precision, s.bcubed.recall, s.people, c->a, c->b,
          c->w_size,
          reference < 0                     ? ""
          : s.bcubed.f1 >= reference - 0.02 ? "  within 0.02"
                                            : "");
}

int
main (int argc, char **argv)
{
  gboolean bare = argc > 1 && g_strcmp0 (argv[1], "--no-calibration") == 0;
  if (bare)
    {
      argv++;
      argc--;
    }
  if (argc < 2)
    {
      fprintf (stderr, "usage: pair-oracle [--no-calibration] LIBRARY [CHECKPOINT…]\n");
      return 2;
    }
  g_autoptr (GArray) checkpoints = g_array_new (FALSE, FALSE, sizeof (guint));
  for (int k = 2; k < argc; k++)
    {
      guint n = (guint) strtoul (argv[k], NULL, 10);
      g_array_append_val (checkpoints, n);
    }
  if (checkpoints->len == 0)
    {
      const guint defaults[] = { 5, 10, 20, 30 };
      g_array_append_vals (checkpoints, defaults, G_N_ELEMENTS (defaults));
    }
  guint most = g_array_index (checkpoints, guint, checkpoints->len - 1);
  g_autoptr (GError) error = NULL;
  g_autofree char *tmp = g_dir_make_tmp ("pair-oracle-XXXXXX", &error);
  g_assert_no_error (error);

  g_autofree char *labelled = copy_library (argv[1], tmp, "labels");
  g_autoptr (LkSession) reference = lk_session_new (labelled);
  lk_session_set_calibration_change (reference, LK_CALIBRATION_CHANGE_FIT,
                                     LK_CALIBRATION_FROM_LABELS);
  load (reference);
  double labels_f1 = score (reference).bcubed.f1;
  printf ("%s\n", argv[1]);
  row ("labels' fit", reference, -1);

  g_autofree char *asked = copy_library (argv[1], tmp, "oracle");
  if (bare)
    drop_calibration (asked);
  g_autoptr (LkSession) session = lk_session_new (asked);
  lk_session_set_estimate_missing (session, TRUE);
  load (session);
  if (lk_session_get_estimate_failure (session))
    printf ("%-22s refused: %s\n", "estimate", lk_session_get_estimate_failure (session));
  row ("on opening", session, labels_f1);

  guint answered = 0, next = 0;
  while (answered < most && next < checkpoints->len)
    {
      g_autoptr (GArray) round = lk_session_pair_questions (session, LK_PAIR_QUESTIONS);
      if (round->len == 0)
        break;
      for (guint k = 0; k < round->len && answered < most; k++)
        {
          const LkPairQuestion *q = &g_array_index (round, LkPairQuestion, k);
          /* A fit reloads the library: asked for again every time. */
          const LkLibrary *library = lk_session_get_library (session);
          if (library->label[q->a] == NULL || library->label[q->b] == NULL)
            continue; /* the oracle would skip */
          gboolean same = g_strcmp0 (library->label[q->a], library->label[q->b]) == 0;
          if (!lk_session_answer_pair (session, q->a, q->b, same, NULL))
            continue;
          if (g_getenv ("PAIR_ORACLE_VERBOSE"))
            printf ("  %2u: faces %u, %u  cos %.3f  p %.3f  %s\n", answered + 1, q->a, q->b, q->cos,
                    q->p, same ? "same" : "different");
          answered++;
          if (next < checkpoints->len && answered == g_array_index (checkpoints, guint, next))
            {
              next++;
              g_autofree char *what = g_strdup_printf ("after %u answers", answered);
              double pairs = 0;
              gsize taken_out = 0;
              if (!lk_session_can_fit_decisions (session, &pairs, &taken_out))
                {
                  printf ("%-22s too few to fit from (%.0f pairs kept together, %zu faces taken "
                          "out)\n",
                          what, pairs, taken_out);
                  continue;
                }
              lk_session_set_calibration_change (session, LK_CALIBRATION_CHANGE_FIT,
                                                 LK_CALIBRATION_FROM_DECISIONS);
              load (session);
              row (what, session, labels_f1);
            }
        }
    }
  if (answered < most)
    printf ("%-22s no more pairs to ask after %u answers\n", "", answered);
  g_clear_object (&session);
  g_clear_object (&reference);
  lk_test_remove_tree (tmp);
  return 0;
}
