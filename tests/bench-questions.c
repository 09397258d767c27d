/* bench-questions — how right the "Is this Ada?" questions are, and how many;
 * what finding them costs
 *
 *   bench-questions LIBRARY [MIN_NAMED] [BAR]
 *   bench-questions --cost LIBRARY [MIN_NAMED]
 *
 * Loads LIBRARY as the window does (its review.json, the scan, the people),
 * names every person of at least MIN_NAMED faces (default 2) by its most
 * common label, as a user who named the people the clustering found would,
 * and lists the questions the window asks (lk_session_questions: links down
 * to LK_QUESTION_BAR) beside the ones it asked before issue 30's pass, from
 * the scan's pairs alone (lk_people_questions on them). A question is right
 * when the candidate's most common label is the named person's: its right
 * answer is Yes. The second table asks what another question bar Q would
 * ask: each candidate (an unassigned face, an unnamed person of at most
 * LK_QUESTION_SMALL_PERSON faces) against each named person it may be asked
 * about (no photo in common), scored as the mean over its faces of the best
 * pair probability from every pair's cosine (the library's calibration,
 * lk_scan_probability; no floor), asked when the score reaches Q. Prints the
 * questions asked and their precision (the share whose answer is Yes).
 * Needs labels (faces[].label). WRITES review.json: run it on a copy. Not a
 * timing: a count, the same on every machine (README "Is this Ada?").
 *
 * --cost: what the questions' pass (lk_people_question_links) costs beside
 * the work a decision already does, in one run: the library loaded and
 * scanned by a session, then its clustering (lk_cluster, what every decision
 * re-runs), the people of at least MIN_NAMED faces but the largest (default
 * 2: the most named faces, the dearest case) named, and the pass at
 * LK_QUESTION_BAR in full (a load's); then the largest named too and the
 * pass from the links before (a decision's); then those links kept as the
 * session keeps them (lk_question_links_keep, in a temporary folder) and a
 * second opening's pass: the kept links read back and checked
 * (lk_question_links_kept) and the pass from them; each timed in wall and
 * CPU seconds (the process's, all threads); and the full scan of the
 * library (lk_scan at its bar) as the opponent. Prints the pairs each pass
 * compared and the links found. Needs no labels; writes nothing in the
 * library.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include <glib/gstdio.h>

#include "lk-session-private.h"
#include "lk-session.h"
#include "people/lk-questions.h"
#include "scan/lk-scan.h"

static const char *
majority (const LkLibrary *library, const guint32 *faces, gsize n)
{
  g_autoptr (GHashTable) count = g_hash_table_new (g_str_hash, g_str_equal);
  const char *best = NULL;
  guint best_n = 0;
  for (gsize k = 0; k < n; k++)
    {
      const char *label = library->label[faces[k]] ? library->label[faces[k]] : "";
      guint c = GPOINTER_TO_UINT (g_hash_table_lookup (count, label)) + 1;
      g_hash_table_insert (count, (gpointer) label, GUINT_TO_POINTER (c));
      if (c > best_n || (c == best_n && strcmp (label, best) < 0))
        {
          best = label;
          best_n = c;
        }
    }
  return best;
}

/* The label of the question's candidate: its person's, or its one face's. */
static const char *
candidate_label (const LkLibrary *library, const LkPeople *people, const LkQuestion *q)
{
  if (q->candidate < 0)
    return library->label[q->face] ? library->label[q->face] : "";
  const LkPerson *c = &people->people[q->candidate];
  return majority (library, c->faces, c->n_faces);
}

/* The candidate's score for `named` from the embeddings: the mean over its
 * faces of the best pair probability to the named person's faces; -1 when a
 * face of it shares a photo with the named person (never askable). */
static double
embedded_score (const LkLibrary *library, const guint32 *faces, gsize n, const LkPerson *named)
{
  double sum = 0.0;
  for (gsize k = 0; k < n; k++)
    {
      double best = 0.0;
      for (gsize m = 0; m < named->n_faces; m++)
        {
          if (library->photo[faces[k]] == library->photo[named->faces[m]])
            return -1.0;
          const float *x = lk_library_row (library, faces[k]);
          const float *y = lk_library_row (library, named->faces[m]);
          double cos = 0.0;
          for (guint d = 0; d < library->dim; d++)
            cos += (double) x[d] * y[d];
          double p = lk_scan_probability (
              &library->calibration, cos,
              MIN (library->crop_px[faces[k]], library->crop_px[named->faces[m]]));
          best = MAX (best, p);
        }
      sum += best;
    }
  return sum / (double) n;
}

static double
cpu_seconds (void)
{
  struct rusage u;
  getrusage (RUSAGE_SELF, &u);
  return (double) u.ru_utime.tv_sec + (double) u.ru_stime.tv_sec
         + 1e-6 * (double) (u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

typedef struct
{
  gint64 wall;
  double cpu;
} Clock;

static Clock
clock_start (void)
{
  return (Clock){ g_get_monotonic_time (), cpu_seconds () };
}

static void
clock_print (const char *what, Clock c)
{
  g_print ("%s: %.3f s wall, %.3f s CPU\n", what,
           1e-6 * (double) (g_get_monotonic_time () - c.wall), cpu_seconds () - c.cpu);
}

static int
cost (const char *folder, gsize min_named)
{
  g_autoptr (LkSession) session = lk_session_new (folder);
  g_autoptr (GError) error = NULL;
  if (!lk_session_load (session, NULL, &error))
    {
      g_printerr ("%s\n", error->message);
      return 1;
    }
  const LkLibrary *library = lk_session_get_library (session);
  const LkClusterInput *input = lk_session_get_cluster_input (session);
  LkCalibration calibration = *lk_session_get_calibration (session, NULL);
  LkFaces faces;
  lk_faces_from_library (&faces, library);

  Clock c = clock_start ();
  g_autoptr (LkPeople) people = lk_cluster (input, NULL, NULL, &error);
  if (people == NULL)
    {
      g_printerr ("%s\n", error->message);
      return 1;
    }
  clock_print ("the clustering (lk_cluster, what a decision re-runs)", c);
  /* Every person of MIN_NAMED faces or more named but the largest: naming
   * it is then the decision whose pass is timed against the first one. */
  gsize named_people = 0, named_faces = 0, candidates = people->n_unassigned;
  for (gsize p = 1; p < people->n_people; p++)
    if (people->people[p].n_faces >= min_named)
      {
        people->people[p].name = g_strdup_printf ("person %zu", p);
        named_people++;
        named_faces += people->people[p].n_faces;
      }
    else if (people->people[p].n_faces <= LK_QUESTION_SMALL_PERSON)
      candidates += people->people[p].n_faces;
  g_print ("%s: %zu faces, %zu pairs at the bar %g, %zu people (%zu of %zu faces or more named: "
           "%zu faces), %zu candidate faces\n",
           folder, library->count, input->n_pairs, lk_session_get_probability_bar (session),
           people->n_people, named_people, min_named, named_faces, candidates);

  c = clock_start ();
  g_autoptr (LkQuestionLinks) links = lk_people_question_links (
      people, &faces, &calibration, LK_QUESTION_BAR, NULL, FALSE, NULL, &error);
  if (links == NULL)
    {
      g_printerr ("%s\n", error->message);
      return 1;
    }
  clock_print ("the questions' pass, in full (lk_people_question_links: a load)", c);
  g_print ("compared %" G_GUINT64_FORMAT " pairs (%zu x %zu), %u links at %g\n", links->compared,
           candidates, named_faces, links->links->len, LK_QUESTION_BAR);

  people->people[0].name = g_strdup ("the largest");
  c = clock_start ();
  g_autoptr (LkQuestionLinks) after = lk_people_question_links (
      people, &faces, &calibration, LK_QUESTION_BAR, links, FALSE, NULL, &error);
  if (after == NULL)
    {
      g_printerr ("%s\n", error->message);
      return 1;
    }
  clock_print ("the pass after a decision that names the largest person (from the last links)", c);
  g_print ("compared %" G_GUINT64_FORMAT " pairs (%zu x %zu), %u links\n", after->compared,
           candidates, people->people[0].n_faces, after->links->len);

  /* The second opening: the links the last pass kept (the session keeps
   * them after every pass that compared something), read back and checked
   * against the faces, calibration and bar, then the pass from them. */
  g_autofree char *tmp = g_dir_make_tmp ("bench-questions-XXXXXX", NULL);
  g_autofree char *path = g_build_filename (tmp, "kept.links", NULL);
  guint64 kept_faces = lk_session_peek_faces (session);
  c = clock_start ();
  gboolean kept_ok = lk_question_links_keep (after, kept_faces, path);
  clock_print ("keeping the links (lk_question_links_keep: written, renamed)", c);
  GStatBuf st;
  g_print ("kept: %s, %.1f MB\n", kept_ok ? "yes" : "NO",
           g_stat (path, &st) == 0 ? st.st_size / 1e6 : 0.0);
  c = clock_start ();
  g_autofree char *why = NULL;
  g_autoptr (LkQuestionLinks) kept = lk_question_links_kept (path, kept_faces, library->count,
                                                             &calibration, LK_QUESTION_BAR, &why);
  if (kept == NULL)
    {
      g_printerr ("the kept links were not taken: %s\n", why);
      return 1;
    }
  g_autoptr (LkQuestionLinks) opened = lk_people_question_links (
      people, &faces, &calibration, LK_QUESTION_BAR, kept, FALSE, NULL, &error);
  if (opened == NULL)
    {
      g_printerr ("%s\n", error->message);
      return 1;
    }
  clock_print ("an opening with the links kept (read, checked, and the pass from them)", c);
  g_print ("compared %" G_GUINT64_FORMAT " pairs, %u links (the decision's: %u)\n",
           opened->compared, opened->links->len, after->links->len);
  g_unlink (path);
  g_rmdir (tmp);

  c = clock_start ();
  g_autoptr (LkScanResult) scan = lk_scan (
      &faces, &calibration, lk_session_get_probability_bar (session), NULL, NULL, &error);
  if (scan == NULL)
    {
      g_printerr ("%s\n", error->message);
      return 1;
    }
  clock_print ("the full scan (lk_scan), the opponent", c);
  g_print ("full scan: %.3g pairs compared, %u found; kernel %s, first pass %s, %u threads\n",
           (double) library->count * (double) (library->count - 1) / 2, scan->pairs->len,
           scan->kernel, scan->prefilter, scan->threads);
  return 0;
}

int
main (int argc, char **argv)
{
  if (argc > 2 && strcmp (argv[1], "--cost") == 0)
    return cost (argv[2], argc > 3 ? (gsize) atoi (argv[3]) : 2);
  if (argc < 2)
    {
      g_printerr ("usage: %s LIBRARY [MIN_NAMED] [BAR]\n"
                  "       %s --cost LIBRARY [MIN_NAMED]\n",
                  argv[0], argv[0]);
      return 2;
    }
  gsize min_named = argc > 2 ? (gsize) atoi (argv[2]) : 2;
  g_autoptr (LkSession) session = lk_session_new (argv[1]);
  g_autoptr (GError) error = NULL;
  if (argc > 3 && g_ascii_strtod (argv[3], NULL) > 0)
    lk_session_set_probability_bar (session, g_ascii_strtod (argv[3], NULL));
  if (!lk_session_load (session, NULL, &error))
    {
      g_printerr ("%s\n", error->message);
      return 1;
    }
  const LkLibrary *library = lk_session_get_library (session);
  if (library->label == NULL)
    {
      g_printerr ("%s has no labels\n", argv[1]);
      return 1;
    }

  /* Name the people by id: each rename re-clusters. */
  const LkPeople *people = lk_session_peek_people (session);
  g_autoptr (GPtrArray) ids = g_ptr_array_new_with_free_func (g_free);
  g_autoptr (GPtrArray) names = g_ptr_array_new_with_free_func (g_free);
  g_autoptr (GHashTable) used = g_hash_table_new (g_str_hash, g_str_equal);
  for (gsize p = 0; p < people->n_people; p++)
    {
      const LkPerson *person = &people->people[p];
      if (person->n_faces < min_named || person->name != NULL)
        continue;
      const char *label = majority (library, person->faces, person->n_faces);
      /* Two people of one label (a person the clustering split) get "label",
       * "label #2": both are that person. */
      guint seen = GPOINTER_TO_UINT (g_hash_table_lookup (used, label)) + 1;
      g_hash_table_insert (used, (gpointer) label, GUINT_TO_POINTER (seen));
      g_ptr_array_add (ids, g_strdup (person->id));
      g_ptr_array_add (names,
                       seen == 1 ? g_strdup (label) : g_strdup_printf ("%s #%u", label, seen));
    }
  for (guint k = 0; k < ids->len; k++)
    if (!lk_session_rename (session, g_ptr_array_index (ids, k), g_ptr_array_index (names, k),
                            &error))
      {
        g_printerr ("rename: %s\n", error->message);
        return 1;
      }
  people = lk_session_peek_people (session);
  const LkClusterInput *input = lk_session_get_cluster_input (session);
  gsize unassigned = people->n_unassigned, small_unnamed = 0;
  for (gsize p = 0; p < people->n_people; p++)
    small_unnamed += people->people[p].name == NULL;
  g_print ("%s: %zu faces, %zu people (%u named, of %zu faces or more), %zu unnamed people, "
           "%zu unassigned faces, %zu pairs\n",
           argv[1], library->count, people->n_people, ids->len, min_named, small_unnamed,
           unassigned, input->n_pairs);

  g_autoptr (GArray) before
      = lk_people_questions (people, input, lk_review_pins (lk_session_get_review (session)), 0);
  g_autoptr (GArray) today = lk_session_questions (session, 0);
  guint right_of[2] = { 0, 0 };
  GArray *lists[2] = { before, today };
  for (int l = 0; l < 2; l++)
    for (guint k = 0; k < lists[l]->len; k++)
      {
        const LkQuestion *question = &g_array_index (lists[l], LkQuestion, k);
        const LkPerson *named = &people->people[question->person];
        const char *c = candidate_label (library, people, question);
        const char *n = majority (library, named->faces, named->n_faces);
        right_of[l] += strcmp (c, n) == 0;
        g_print ("%s: %.4f %s -> %s %s\n", l == 0 ? "asked from the scan's pairs" : "asked",
                 question->score, c, n, strcmp (c, n) == 0 ? "yes" : "NO");
      }
  g_print ("before issue 30's pass (the scan's pairs, at the bar): %u asked, %u right\n",
           before->len, right_of[0]);
  g_print ("the window's questions (links down to LK_QUESTION_BAR %.2f, LK_QUESTION_SMALL_PERSON "
           "%u, LK_QUESTION_MIN_SCORE %.2f): %u asked, %u right\n",
           LK_QUESTION_BAR, LK_QUESTION_SMALL_PERSON, LK_QUESTION_MIN_SCORE, today->len,
           right_of[1]);

  /* Below the bar: every unassigned face and unnamed person of at most
   * LK_QUESTION_SMALL_PERSON faces against every named person. */
  g_autoptr (GArray) embedded = g_array_new (FALSE, FALSE, sizeof (double));
  g_autoptr (GArray) rights = g_array_new (FALSE, FALSE, sizeof (gboolean));
  gsize n_units = people->n_unassigned + people->n_people;
  for (gsize u = 0; u < n_units; u++)
    {
      const guint32 *faces;
      gsize n;
      const char *label;
      if (u < people->n_unassigned)
        {
          faces = &people->unassigned[u];
          n = 1;
          label = library->label[*faces] ? library->label[*faces] : "";
        }
      else
        {
          const LkPerson *c = &people->people[u - people->n_unassigned];
          if (c->name != NULL || c->hidden || c->n_faces > LK_QUESTION_SMALL_PERSON)
            continue;
          faces = c->faces;
          n = c->n_faces;
          label = majority (library, faces, n);
        }
      double best = -1.0;
      const char *best_label = NULL;
      for (gsize p = 0; p < people->n_people; p++)
        {
          const LkPerson *named = &people->people[p];
          if (named->name == NULL || named->hidden)
            continue;
          double score = embedded_score (library, faces, n, named);
          if (score > best)
            {
              best = score;
              best_label = majority (library, named->faces, named->n_faces);
            }
        }
      if (best_label == NULL || best < 0)
        continue;
      gboolean right = strcmp (label, best_label) == 0;
      g_array_append_val (embedded, best);
      g_array_append_val (rights, right);
      if (best >= 0.01)
        g_print ("below the bar: %.4f %s -> %s %s\n", best, label, best_label,
                 right ? "yes" : "NO");
    }
  static const double bars[] = { 0.9, 0.5, 0.2, 0.1, 0.05, 0.01, 0.001, 0.0001 };
  g_print ("question bar Q (embeddings, %u candidates): Q asked right precision\n", embedded->len);
  for (gsize b = 0; b < G_N_ELEMENTS (bars); b++)
    {
      guint asked = 0, right = 0;
      for (guint k = 0; k < embedded->len; k++)
        if (g_array_index (embedded, double, k) >= bars[b])
          {
            asked++;
            right += g_array_index (rights, gboolean, k);
          }
      if (asked > 0)
        g_print ("%g %u %u %.3f\n", bars[b], asked, right, (double) right / asked);
      else
        g_print ("%g 0 0 -\n", bars[b]);
    }

  return 0;
}
