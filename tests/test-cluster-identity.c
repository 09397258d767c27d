/* test-cluster-identity — the lean clustering gives exactly the people the
 * old one gave: same ids, same order, same faces, same covers, same
 * unassigned faces. The old one is kept as an oracle (lk-cluster-oracle.c,
 * lk-cluster.c as of commit e1e2c0a); both run on the same input.
 *
 * Inputs: scanned sample libraries at the sizes the suite can afford (500
 * and 2,000 faces; 20,000 with -m slow), with and without pins, and random
 * pair graphs whose probabilities repeat (ties decide the order of merges),
 * whose faces share photos, and whose pins grow clusters before the first
 * linkages are taken (linkages a float cannot hold, which start in the heap).
 *
 * lk_cluster_with_memo, which clusters again only the components of the
 * pair graph a decision's pins reach, gives the oracle's people too, after
 * every step of a series of decisions (pins added, changed, reordered,
 * taken away), and lk_cluster's with faces dismissed (which the oracle
 * predates); and the series shows it re-using.
 *
 * The components clustered side by side give the oracle's people on 1, 2
 * and 4 threads, and a graph of one component, clustered whole, too.
 */
#include "config.h"

#include <math.h>
#include <string.h>
/* Guarded as in test-cpu.c: the Flatpak's SDK stand-in (and any machine
 * without valgrind's headers) builds this test too. */
#if HAVE_VALGRIND_H
#include <valgrind/valgrind.h>
#else
#define RUNNING_ON_VALGRIND 0
#endif

#include "lk-cluster-oracle.h"
#include "lk-session.h"
#include "lk-test-pairs.h"
#include "lk-test-util.h"
#include "library/lk-sample.h"
#include "people/lk-cluster.h"

static void
assert_same_people (const LkPeople *want, const LkPeople *got)
{
  g_assert_cmpuint (got->n_faces, ==, want->n_faces);
  g_assert_cmpuint (got->n_people, ==, want->n_people);
  for (gsize k = 0; k < want->n_people; k++)
    {
      const LkPerson *w = &want->people[k], *g = &got->people[k];
      g_assert_cmpstr (g->id, ==, w->id);
      g_assert_cmpstr (g->name, ==, w->name);
      g_assert_cmpuint (g->n_faces, ==, w->n_faces);
      g_assert_cmpmem (g->faces, g->n_faces * sizeof (guint32), w->faces,
                       w->n_faces * sizeof (guint32));
      g_assert_cmpuint (g->cover, ==, w->cover);
      g_assert_cmpint (g->hidden, ==, w->hidden);
      g_assert_cmpint (g->pinned, ==, w->pinned);
    }
  g_assert_cmpmem (got->unassigned, got->n_unassigned * sizeof (guint32), want->unassigned,
                   want->n_unassigned * sizeof (guint32));
  g_assert_cmpmem (got->person_of, got->n_faces * sizeof (gint32), want->person_of,
                   want->n_faces * sizeof (gint32));
}

static void
assert_same (const LkClusterInput *input, const GPtrArray *pins, const LkClusterOptions *options)
{
  g_autoptr (GError) error = NULL;
  LkPeople *want = lk_cluster_oracle (input, pins, options, &error);
  g_assert_no_error (error);
  LkPeople *got = lk_cluster (input, pins, options, &error);
  g_assert_no_error (error);
  assert_same_people (want, got);
  lk_people_free (want);
  lk_people_free (got);
}

/* Pins as a user makes them: the first few people kept (one named, one with
 * a chosen cover), two of them merged into one, and a face taken out of one. */
static GPtrArray *
pins_from (const LkPeople *people)
{
  GPtrArray *pins = g_ptr_array_new_with_free_func ((GDestroyNotify) lk_pin_free);
  for (gsize k = 0; k + 1 < people->n_people && pins->len < 4; k += 2)
    {
      const LkPerson *a = &people->people[k], *b = &people->people[k + 1];
      g_autofree char *id = g_strdup_printf ("named%zu", k);
      LkPin *pin = lk_pin_new (id);
      pin->name = g_strdup_printf ("Person %zu", k);
      /* Every face of a but its last (taken out), and the first of b. */
      g_array_append_vals (pin->faces, a->faces, (guint) (a->n_faces - 1));
      if (a->n_faces > 1)
        g_array_append_val (pin->excluded, a->faces[a->n_faces - 1]);
      if (k == 2)
        {
          guint32 extra = b->faces[0];
          g_array_append_val (pin->faces, extra); /* sort_pin_faces () sorts */
        }
      pin->cover = pin->faces->len > 1 ? (gint64) g_array_index (pin->faces, guint32, 1) : -1;
      g_ptr_array_add (pins, pin);
    }
  return pins;
}

static int
compare_u32 (gconstpointer x, gconstpointer y)
{
  guint32 a = *(const guint32 *) x, b = *(const guint32 *) y;
  return a < b ? -1 : a > b;
}

static void
sort_pin_faces (GPtrArray *pins)
{
  for (guint k = 0; k < pins->len; k++)
    {
      LkPin *pin = g_ptr_array_index (pins, k);
      g_array_sort (pin->faces, compare_u32);
      g_array_sort (pin->excluded, compare_u32);
    }
}

/* Each of `steps` (pin sets, NULL: none) through one memo, in order, then
 * back to the first: the people are the oracle's at every step. Returns how
 * many steps re-used the memo and clustered fewer than all faces. */
static guint
assert_same_again (const LkClusterInput *input, GPtrArray **steps, guint n_steps,
                   const LkClusterOptions *options)
{
  g_autoptr (LkClusterMemo) memo = NULL;
  guint partial = 0;
  for (guint s = 0; s <= n_steps; s++)
    {
      const GPtrArray *pins = steps[s % n_steps];
      g_autoptr (GError) error = NULL;
      /* The oracle predates dismissed faces: lk_cluster with no memo, whose
       * dismissal is a copy of the pairs without theirs, is the reference. */
      LkPeople *want = options && options->dismissed
                           ? lk_cluster (input, pins, options, &error)
                           : lk_cluster_oracle (input, pins, options, &error);
      g_assert_no_error (error);
      LkPeople *got = lk_cluster_with_memo (input, pins, options, &memo, &error);
      g_assert_no_error (error);
      assert_same_people (want, got);
      lk_people_free (want);
      lk_people_free (got);
      gsize faces;
      gboolean reused = lk_cluster_memo_last (memo, &faces, NULL);
      /* A new memo clusters everything. */
      if (s == 0)
        g_assert_false (reused);
      if (reused && faces < input->n_faces)
        partial++;
    }
  return partial;
}

/* A copy of pins with pin k's constraint changed: its last face let go. */
static GPtrArray *
pins_changed (const GPtrArray *pins, guint k)
{
  GPtrArray *out = g_ptr_array_new_with_free_func ((GDestroyNotify) lk_pin_free);
  for (guint m = 0; m < pins->len; m++)
    {
      LkPin *pin = lk_pin_copy (g_ptr_array_index (pins, m));
      if (m == k && pin->faces->len > 1)
        g_array_set_size (pin->faces, pin->faces->len - 1);
      g_ptr_array_add (out, pin);
    }
  return out;
}

/* The same pins in the opposite order: a component's pins are merged in
 * their order, so one whose pins swap places is clustered again. */
static GPtrArray *
pins_reversed (const GPtrArray *pins)
{
  GPtrArray *out = g_ptr_array_new_with_free_func ((GDestroyNotify) lk_pin_free);
  for (guint m = pins->len; m-- > 0;)
    g_ptr_array_add (out, lk_pin_copy (g_ptr_array_index (pins, m)));
  return out;
}

/* The first `count` pins. */
static GPtrArray *
pins_first (const GPtrArray *pins, guint count)
{
  GPtrArray *out = g_ptr_array_new_with_free_func ((GDestroyNotify) lk_pin_free);
  for (guint m = 0; m < MIN (count, pins->len); m++)
    g_ptr_array_add (out, lk_pin_copy (g_ptr_array_index (pins, m)));
  return out;
}

/* A series of decisions from `pins`; returns the partial re-uses. */
static guint
check_series (const LkClusterInput *input, const GPtrArray *pins, const LkClusterOptions *options)
{
  g_autoptr (GPtrArray) one = pins_first (pins, 1);
  g_autoptr (GPtrArray) changed = pins_changed (pins, 0);
  g_autoptr (GPtrArray) reversed = pins_reversed (pins);
  g_autoptr (GPtrArray) all = pins_first (pins, pins->len);
  GPtrArray *steps[] = { NULL, one, all, changed, all, reversed, NULL };
  return assert_same_again (input, steps, G_N_ELEMENTS (steps), options);
}

static void
check_sample (gsize faces)
{
  g_autofree char *dir = g_dir_make_tmp ("lk-identity-XXXXXX", NULL);
  g_assert_nonnull (dir);
  g_autoptr (GError) error = NULL;
  LkSampleOptions options = LK_SAMPLE_OPTIONS_DEFAULT;
  options.faces = faces;
  options.seed = 3;
  options.thumbnails = FALSE;
  options.photos = FALSE;
  g_assert_true (lk_sample_write (dir, &options, &error));
  g_assert_no_error (error);

  g_autoptr (LkSession) session = lk_session_new (dir);
  g_assert_true (lk_session_load (session, NULL, &error));
  g_assert_no_error (error);
  const LkClusterInput *input = lk_session_get_cluster_input (session);
  g_assert_cmpuint (input->n_faces, ==, faces);
  g_assert_cmpuint (input->n_pairs, >, faces);

  /* The session's own people are lk_cluster's, with no decisions. */
  g_autoptr (GError) oracle_error = NULL;
  LkPeople *want = lk_cluster_oracle (input, NULL, NULL, &oracle_error);
  g_assert_no_error (oracle_error);
  assert_same_people (want, lk_session_peek_people (session));

  LkClusterOptions exact = { .linkage = LK_LINKAGE_AVERAGE, .epsilon = -1 };
  assert_same (input, NULL, &exact);
  LkClusterOptions loose = { .linkage = LK_LINKAGE_AVERAGE, .threshold = 0.3, .epsilon = 0.5 };
  assert_same (input, NULL, &loose);

  g_autoptr (GPtrArray) pins = pins_from (want);
  sort_pin_faces (pins);
  g_assert_cmpuint (pins->len, >, 0);
  assert_same (input, pins, NULL);
  assert_same (input, pins, &exact);
  /* The sample's people are nearly its pair graph's components: every
   * decision of the series but the first clusters a few of them again. */
  g_assert_cmpuint (check_series (input, pins, NULL), >=, 4);
  check_series (input, pins, &exact);
  lk_people_free (want);

  g_clear_object (&session);
  lk_test_remove_tree (dir);
}

static void
test_sample_500 (void)
{
  check_sample (500);
}

static void
test_sample_2000 (void)
{
  /* Its scan takes minutes under memcheck (.ci/check); the ASan build and
   * the default one run it, and 500 faces and the random graphs run here. */
  if (RUNNING_ON_VALGRIND)
    {
      g_test_skip ("2,000 faces not under valgrind (minutes of scan)");
      return;
    }
  check_sample (2000);
}

static void
test_sample_20000 (void)
{
  if (!g_test_slow ())
    {
      g_test_skip ("20,000 faces only with -m slow");
      return;
    }
  check_sample (20000);
}

/* Random graphs: people of 1–40 faces with dense, tied pairs inside and
 * sparse pairs across; faces share photos; pins merge people, exclude faces
 * and start clusters large enough that their first linkages are not floats. */
static guint
check_random (guint32 seed, gboolean near, double across)
{
  g_autoptr (GRand) rand = g_rand_new_with_seed (seed);
  float ties[] = { 0.25f, 0.5f, 0.75f, 1.0f, 0.3f, 0.9f };
  /* Near ties: neighbouring floats, whose sums and linkages differ in a
   * double but round to one float — lk_cluster compares queued values as
   * floats first and must read the exact ones then. */
  if (near)
    for (guint k = 0; k < G_N_ELEMENTS (ties); k++)
      ties[k] = k == 0 ? 0.6f : nextafterf (ties[k - 1], 1.0f);
  guint32 n = (guint32) g_rand_int_range (rand, 50, 1500);
  g_autoptr (GArray) pairs = g_array_new (FALSE, FALSE, sizeof (LkPair));
  g_autofree guint64 *photo = g_new (guint64, n);
  for (guint32 f = 0; f < n; f++)
    photo[f] = g_rand_int_range (rand, 0, 3) == 0 && f > 0 ? photo[f - 1] : f;
  g_autoptr (GArray) starts = g_array_new (FALSE, FALSE, sizeof (guint32));
  for (guint32 f = 0; f < n; f += (guint32) g_rand_int_range (rand, 1, 40))
    g_array_append_val (starts, f);
  guint32 end = n;
  g_array_append_val (starts, end);
  for (guint32 i = 0; i < n; i++)
    for (guint32 j = i + 1; j < n; j++)
      {
        /* Same person: the last start at or below i is below or at j's. */
        gboolean same = FALSE;
        for (guint k = 0; k + 1 < starts->len; k++)
          if (g_array_index (starts, guint32, k) <= i && i < g_array_index (starts, guint32, k + 1))
            {
              same = j < g_array_index (starts, guint32, k + 1);
              break;
            }
        double chance = same ? 0.7 : across;
        if (g_rand_double (rand) >= chance)
          continue;
        float p = g_rand_boolean (rand) || near
                      ? ties[g_rand_int_range (rand, 0, G_N_ELEMENTS (ties))]
                      : (float) g_rand_double_range (rand, 0.05, 1.0);
        g_array_append_val (pairs, ((LkPair){ i, j, p }));
      }
  /* The scan's order is not sorted: shuffle, so slots are numbered at random. */
  for (guint k = pairs->len; k > 1; k--)
    {
      guint m = (guint) g_rand_int_range (rand, 0, (gint32) k);
      LkPair t = g_array_index (pairs, LkPair, k - 1);
      g_array_index (pairs, LkPair, k - 1) = g_array_index (pairs, LkPair, m);
      g_array_index (pairs, LkPair, m) = t;
    }
  LkClusterInput input = { n, photo, NULL, NULL, (const LkPair *) pairs->data, pairs->len };

  g_autoptr (GPtrArray) pins = g_ptr_array_new_with_free_func ((GDestroyNotify) lk_pin_free);
  g_autofree guint8 *used = g_new0 (guint8, n);
  for (int k = 0; k < 5; k++)
    {
      g_autofree char *id = g_strdup_printf ("pin%d", k);
      LkPin *pin = lk_pin_new (id);
      guint32 from = (guint32) g_rand_int_range (rand, 0, (gint32) n);
      for (guint32 f = from; f < MIN (n, from + 12); f++)
        if (!used[f] && g_rand_boolean (rand))
          {
            used[f] = 1;
            g_array_append_val (pin->faces, f);
          }
      guint32 ex = (guint32) g_rand_int_range (rand, 0, (gint32) n);
      if (!used[ex])
        g_array_append_val (pin->excluded, ex);
      g_ptr_array_add (pins, pin);
    }

  guint partial = 0;
  /* Memcheck runs the series on two seeds (a 30th of the speed). */
  gboolean series = !RUNNING_ON_VALGRIND || seed <= 2;
  LkClusterOptions defaults = { 0 };
  LkClusterOptions exact = { .linkage = LK_LINKAGE_AVERAGE, .epsilon = -1 };
  LkClusterOptions loose = { .linkage = LK_LINKAGE_AVERAGE, .threshold = 0.2, .epsilon = 0.5 };
  /* Below every probability: with no pin, every pair's first entry is its
   * probability (lk_cluster keeps no copy of them). */
  LkClusterOptions low = { .linkage = LK_LINKAGE_AVERAGE, .threshold = 0.04 };
  LkClusterOptions low_exact = { .linkage = LK_LINKAGE_AVERAGE, .threshold = 0.04, .epsilon = -1 };
  const LkClusterOptions *all[] = { &defaults, &exact, &loose, &low, &low_exact };
  for (guint k = 0; k < G_N_ELEMENTS (all); k++)
    {
      assert_same (&input, NULL, all[k]);
      assert_same (&input, pins, all[k]);
      /* The series under the default options and exact linkage: the rest
       * take the same paths (and the suite's time). */
      if (k < 2 && series)
        partial += check_series (&input, pins, all[k]);
    }
  /* Faces dismissed: their pairs are left out of the components too. */
  g_autoptr (GArray) dismissed = g_array_new (FALSE, FALSE, sizeof (guint32));
  for (guint32 f = 3; f < n; f += 17)
    g_array_append_val (dismissed, f);
  LkClusterOptions dismissing = { .linkage = LK_LINKAGE_AVERAGE, .dismissed = dismissed };
  if (series)
    partial += check_series (&input, pins, &dismissing);
  /* In the scan's order (by first face), which lk_cluster lists in half
   * the memory. */
  g_array_sort (pairs, lk_test_compare_pairs);
  input.pairs = (const LkPair *) pairs->data;
  for (guint k = 0; k < G_N_ELEMENTS (all); k++)
    {
      assert_same (&input, NULL, all[k]);
      assert_same (&input, pins, all[k]);
      if (k < 2 && series)
        partial += check_series (&input, pins, all[k]);
    }
  return partial;
}

static void
test_random_graphs (void)
{
  for (guint32 seed = 1; seed <= 12; seed++)
    check_random (seed, FALSE, 0.004);
}

/* Few pairs across people: the pair graph falls into components, and a
 * decision's series re-uses the memo for those its pins do not reach. */
static void
test_random_components (void)
{
  guint partial = 0;
  guint32 seeds = RUNNING_ON_VALGRIND ? 2 : 6;
  for (guint32 seed = 1; seed <= seeds; seed++)
    {
      partial += check_random (seed, FALSE, 0.0002);
      partial += check_random (seed, TRUE, 0.0002);
    }
  g_assert_cmpuint (partial, >, 10 * seeds);
}

static void
test_random_near_ties (void)
{
  for (guint32 seed = 1; seed <= 12; seed++)
    check_random (seed, TRUE, 0.004);
}

/* The components of a pair graph (pairs and pins' faces joined), for the
 * tests to know which path they take: how many have two faces or more, and
 * the most pairs one holds. */
static guint
components_of (const LkClusterInput *input, const GPtrArray *pins, gsize *largest)
{
  g_autofree guint32 *c = g_new (guint32, input->n_faces);
  for (gsize f = 0; f < input->n_faces; f++)
    c[f] = (guint32) f;
  for (gsize k = 0; k < input->n_pairs + (pins ? pins->len : 0); k++)
    {
      guint32 a, b;
      if (k < input->n_pairs)
        a = input->pairs[k].i, b = input->pairs[k].j;
      else
        {
          const LkPin *pin = g_ptr_array_index (pins, k - input->n_pairs);
          if (pin->faces->len < 2)
            continue;
          a = g_array_index (pin->faces, guint32, 0);
          b = g_array_index (pin->faces, guint32, pin->faces->len - 1);
          for (guint m = 1; m + 1 < pin->faces->len; m++)
            {
              guint32 x = g_array_index (pin->faces, guint32, m), y = a;
              while (c[x] != x)
                x = c[x];
              while (c[y] != y)
                y = c[y];
              c[MAX (x, y)] = MIN (x, y);
            }
        }
      while (c[a] != a)
        a = c[a];
      while (c[b] != b)
        b = c[b];
      c[MAX (a, b)] = MIN (a, b);
    }
  g_autofree gsize *faces = g_new0 (gsize, input->n_faces);
  g_autofree gsize *pairs = g_new0 (gsize, input->n_faces);
  guint n = 0;
  *largest = 0;
  for (gsize f = 0; f < input->n_faces; f++)
    {
      guint32 r = (guint32) f;
      while (c[r] != r)
        r = c[r];
      c[f] = r;
      n += ++faces[r] == 2;
    }
  for (gsize k = 0; k < input->n_pairs; k++)
    {
      gsize in_it = ++pairs[c[input->pairs[k].i]];
      *largest = MAX (*largest, in_it);
    }
  return n;
}

/* lk_cluster clusters the pair graph's components on LkClusterOptions.threads
 * threads, one component a job, largest first: 1, 2 and 4 threads give the
 * oracle's people, with and without pins (which join components, and whose
 * excluded faces may lie in another component), with faces dismissed, and
 * through a memo's series of decisions. The graphs are in the scan's order
 * (by first face), as the components path needs, and split into many
 * components, none holding half the pairs (checked: else it clusters the
 * graph whole). */
static void
check_threads (guint32 seed, double across)
{
  g_autoptr (GRand) rand = g_rand_new_with_seed (seed);
  guint32 n = (guint32) g_rand_int_range (rand, 300, 1500);
  g_autofree guint64 *photo = g_new (guint64, n);
  for (guint32 f = 0; f < n; f++)
    photo[f] = g_rand_int_range (rand, 0, 4) == 0 && f > 0 ? photo[f - 1] : f;
  g_autofree guint32 *person = g_new (guint32, n);
  for (guint32 f = 0, p = 0; f < n; f++)
    person[f] = p += g_rand_int_range (rand, 0, 12) == 0;
  const float ties[] = { 0.25f, 0.5f, 0.75f, 1.0f, 0.3f, 0.9f };
  g_autoptr (GArray) pairs = g_array_new (FALSE, FALSE, sizeof (LkPair));
  for (guint32 i = 0; i < n; i++)
    for (guint32 j = i + 1; j < n; j++)
      if (g_rand_double (rand) < (person[i] == person[j] ? 0.7 : across))
        {
          float p = g_rand_boolean (rand) ? ties[g_rand_int_range (rand, 0, G_N_ELEMENTS (ties))]
                                          : (float) g_rand_double_range (rand, 0.05, 1.0);
          g_array_append_val (pairs, ((LkPair){ i, j, p }));
        }
  LkClusterInput input = { n, photo, NULL, NULL, (const LkPair *) pairs->data, pairs->len };

  g_autoptr (GPtrArray) pins = g_ptr_array_new_with_free_func ((GDestroyNotify) lk_pin_free);
  g_autofree guint8 *used = g_new0 (guint8, n);
  for (int k = 0; k < 6; k++)
    {
      g_autofree char *id = g_strdup_printf ("pin%d", k);
      LkPin *pin = lk_pin_new (id);
      /* Runs of 30 faces: most pins span two people, so join components. */
      guint32 from = (guint32) g_rand_int_range (rand, 0, (gint32) n);
      for (guint32 f = from; f < MIN (n, from + 30); f += 3)
        if (!used[f] && g_rand_boolean (rand))
          {
            used[f] = 1;
            g_array_append_val (pin->faces, f);
          }
      for (int e = 0; e < 3; e++)
        {
          guint32 ex = (guint32) g_rand_int_range (rand, 0, (gint32) n);
          if (!used[ex]
              && (pin->excluded->len == 0
                  || ex > g_array_index (pin->excluded, guint32, pin->excluded->len - 1)))
            g_array_append_val (pin->excluded, ex);
        }
      g_ptr_array_add (pins, pin);
    }
  gsize largest;
  g_assert_cmpuint (components_of (&input, pins, &largest), >, 8);
  g_assert_cmpuint (largest, <=, input.n_pairs / 2);

  g_autoptr (GArray) dismissed = g_array_new (FALSE, FALSE, sizeof (guint32));
  for (guint32 f = 5; f < n; f += 23)
    g_array_append_val (dismissed, f);
  const guint threads[] = { 1, 2, 4 };
  for (guint t = 0; t < G_N_ELEMENTS (threads); t++)
    {
      LkClusterOptions defaults = { .threads = threads[t] };
      LkClusterOptions exact = { .epsilon = -1, .threads = threads[t] };
      LkClusterOptions low = { .threshold = 0.04, .threads = threads[t] };
      const LkClusterOptions *all[] = { &defaults, &exact, &low };
      for (guint k = 0; k < G_N_ELEMENTS (all); k++)
        {
          assert_same (&input, NULL, all[k]);
          assert_same (&input, pins, all[k]);
        }
      if (!RUNNING_ON_VALGRIND || seed == 1)
        {
          g_assert_cmpuint (check_series (&input, pins, &defaults), >, 0);
          LkClusterOptions dismissing = { .dismissed = dismissed, .threads = threads[t] };
          check_series (&input, pins, &dismissing);
        }
    }
}

static void
test_threads (void)
{
  /* Memcheck: one seed (55 s of the 600 it has for the whole test with two). */
  guint32 seeds = RUNNING_ON_VALGRIND ? 1 : 8;
  for (guint32 seed = 1; seed <= seeds; seed++)
    check_threads (seed, 0.00002);
}

/* A pair graph of one component (every person linked to the next): no
 * component to share out, so it is clustered whole, on one thread, whatever
 * the threads asked for; the people are the oracle's. */
static void
test_one_component (void)
{
  g_autoptr (GRand) rand = g_rand_new_with_seed (7);
  guint32 n = 800;
  g_autoptr (GArray) pairs = g_array_new (FALSE, FALSE, sizeof (LkPair));
  for (guint32 i = 0; i < n; i++)
    for (guint32 j = i + 1; j < n; j++)
      if ((j / 10 == i / 10 && g_rand_double (rand) < 0.8) || (j == i + 1 && j % 10 == 0))
        g_array_append_val (pairs,
                            ((LkPair){ i, j, (float) g_rand_double_range (rand, 0.05, 1.0) }));
  LkClusterInput input = { n, NULL, NULL, NULL, (const LkPair *) pairs->data, pairs->len };
  gsize largest;
  g_assert_cmpuint (components_of (&input, NULL, &largest), ==, 1);
  g_assert_cmpuint (largest, ==, input.n_pairs);
  for (guint t = 1; t <= 4; t *= 2)
    {
      LkClusterOptions options = { .threads = t };
      assert_same (&input, NULL, &options);
    }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/cluster-identity/sample-500", test_sample_500);
  g_test_add_func ("/cluster-identity/sample-2000", test_sample_2000);
  g_test_add_func ("/cluster-identity/sample-20000", test_sample_20000);
  g_test_add_func ("/cluster-identity/random-graphs", test_random_graphs);
  g_test_add_func ("/cluster-identity/random-near-ties", test_random_near_ties);
  g_test_add_func ("/cluster-identity/random-components-again", test_random_components);
  g_test_add_func ("/cluster-identity/threads", test_threads);
  g_test_add_func ("/cluster-identity/one-component", test_one_component);
  return g_test_run ();
}
