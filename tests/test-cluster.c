/* test-cluster — people from pairs: linkage, hard rules, pins, ids, baselines */
#include "config.h"

#include <math.h>

#include <string.h>

#include "people/lk-cluster.h"

#include "lk-test-pairs.h"

static LkPeople *
run_at (const LkClusterInput *in, const GPtrArray *pins, LkLinkage linkage, double threshold)
{
  g_autoptr (GError) error = NULL;
  LkClusterOptions o = { linkage, threshold, 0 };
  LkPeople *people = lk_cluster (in, pins, &o, &error);
  g_assert_no_error (error);
  g_assert_nonnull (people);
  return people;
}

static LkPeople *
run (const LkClusterInput *in, const GPtrArray *pins, LkLinkage linkage)
{
  return run_at (in, pins, linkage, 0.0);
}

static gboolean
together (const LkPeople *people, guint32 a, guint32 b)
{
  return people->person_of[a] >= 0 && people->person_of[a] == people->person_of[b];
}

/* Two families of five, one look-alike pair between them: connected
 * components makes one person, average linkage keeps two. */
static void
test_bridge_does_not_chain (void)
{
  g_autoptr (GArray) pairs = g_array_new (FALSE, FALSE, sizeof (LkPair));
  lk_test_add_clique (pairs, 0, 5, 0.97f);
  lk_test_add_clique (pairs, 5, 10, 0.96f);
  lk_test_add_pair (pairs, 4, 5, 0.95f);
  LkClusterInput in = lk_test_cluster_input (pairs, 10, NULL);

  g_autoptr (LkPeople) avg = run (&in, NULL, LK_LINKAGE_AVERAGE);
  g_autoptr (LkPeople) single = run (&in, NULL, LK_LINKAGE_SINGLE);
  g_assert_cmpuint (avg->n_people, ==, 2);
  g_assert_cmpuint (single->n_people, ==, 1);
  g_assert_false (together (avg, 4, 5));
  g_assert_cmpstr (avg->people[0].id, ==, "p0");
  g_assert_cmpstr (avg->people[1].id, ==, "p5");
}

static void
test_same_photo_never_one_person (void)
{
  g_autoptr (GArray) pairs = g_array_new (FALSE, FALSE, sizeof (LkPair));
  lk_test_add_clique (pairs, 0, 4, 0.98f);
  guint64 photo[] = { 10, 11, 12, 10 }; /* faces 0 and 3 share a photo */
  /* The scan never returns a same-photo pair, but the rule must hold even
   * through other faces: 0–1–2–3 all look alike. */
  g_autoptr (GArray) cross = g_array_new (FALSE, FALSE, sizeof (LkPair));
  for (guint k = 0; k < pairs->len; k++)
    {
      LkPair p = g_array_index (pairs, LkPair, k);
      if (!(p.i == 0 && p.j == 3))
        g_array_append_val (cross, p);
    }
  LkClusterInput in = lk_test_cluster_input (cross, 4, photo);
  g_autoptr (LkPeople) people = run (&in, NULL, LK_LINKAGE_AVERAGE);
  g_assert_false (together (people, 0, 3));
  g_assert_cmpuint (people->people[0].n_faces, ==, 3);
}

static void
test_lonely_faces_are_unassigned (void)
{
  g_autoptr (GArray) pairs = g_array_new (FALSE, FALSE, sizeof (LkPair));
  lk_test_add_clique (pairs, 1, 3, 0.95f);
  LkClusterInput in = lk_test_cluster_input (pairs, 5, NULL);
  g_autoptr (LkPeople) people = run (&in, NULL, LK_LINKAGE_AVERAGE);
  g_assert_cmpuint (people->n_people, ==, 1);
  g_assert_cmpuint (people->n_unassigned, ==, 3);
  g_assert_cmpuint (people->unassigned[0], ==, 0);
  g_assert_cmpuint (people->unassigned[1], ==, 3);
  g_assert_cmpuint (people->unassigned[2], ==, 4);
  g_assert_cmpint (people->person_of[0], ==, -1);

  /* Named, a lonely face is a person of its own. */
  g_autoptr (GPtrArray) pins = g_ptr_array_new_with_free_func ((GDestroyNotify) lk_pin_free);
  LkPin *pin = lk_pin_new ("p4");
  pin->name = g_strdup ("Ada");
  guint32 f = 4;
  g_array_append_val (pin->faces, f);
  g_ptr_array_add (pins, pin);
  g_autoptr (LkPeople) named = run (&in, pins, LK_LINKAGE_AVERAGE);
  g_assert_cmpuint (named->n_people, ==, 2);
  g_assert_cmpuint (named->n_unassigned, ==, 2);
  const LkPerson *ada = lk_people_find (named, "p4");
  g_assert_nonnull (ada);
  g_assert_cmpstr (ada->name, ==, "Ada");
  g_assert_cmpuint (ada->n_faces, ==, 1);
  g_assert_true (ada->pinned);
}

static void
test_order_ids_and_cover (void)
{
  g_autoptr (GArray) pairs = g_array_new (FALSE, FALSE, sizeof (LkPair));
  lk_test_add_clique (pairs, 0, 2, 0.95f);
  lk_test_add_clique (pairs, 2, 6, 0.95f);
  lk_test_add_clique (pairs, 6, 8, 0.95f);
  float quality[8] = { 1, 1, 0.2f, 0.9f, 0.9f, 0.3f, 1, 1 };
  float crop[8] = { 1, 1, 1, 50, 80, 1, 1, 1 };
  LkClusterInput in = lk_test_cluster_input (pairs, 8, NULL);
  in.quality = quality;
  in.crop_px = crop;
  g_autoptr (LkPeople) people = run (&in, NULL, LK_LINKAGE_AVERAGE);
  g_assert_cmpuint (people->n_people, ==, 3);
  g_assert_cmpstr (people->people[0].id, ==, "p2"); /* largest first */
  g_assert_cmpstr (people->people[1].id, ==, "p0"); /* then by first face */
  g_assert_cmpstr (people->people[2].id, ==, "p6");
  g_assert_cmpuint (people->people[0].cover, ==, 4); /* best quality, then biggest crop */
  for (gsize k = 0; k < people->people[0].n_faces; k++)
    g_assert_cmpuint (people->people[0].faces[k], ==, 2 + k);

  g_autoptr (LkPeople) again = run (&in, NULL, LK_LINKAGE_AVERAGE);
  for (gsize k = 0; k < 8; k++)
    g_assert_cmpint (people->person_of[k], ==, again->person_of[k]);
}

static LkPin *
pin_with (const char *id, const guint32 *faces, gsize n, const guint32 *excluded, gsize n_ex)
{
  LkPin *pin = lk_pin_new (id);
  g_array_append_vals (pin->faces, faces, (guint) n);
  g_array_append_vals (pin->excluded, excluded, (guint) n_ex);
  return pin;
}

static void
test_pins_hold_and_exclude (void)
{
  g_autoptr (GArray) pairs = g_array_new (FALSE, FALSE, sizeof (LkPair));
  lk_test_add_clique (pairs, 3, 7, 0.97f);
  lk_test_add_clique (pairs, 0, 2, 0.97f);
  for (guint32 f = 3; f < 7; f++)
    lk_test_add_pair (pairs, 0, f, 0.97f);
  lk_test_add_pair (pairs, 0, 2, 0.99f);
  LkClusterInput in = lk_test_cluster_input (pairs, 8, NULL);
  g_autoptr (GPtrArray) pins = g_ptr_array_new_with_free_func ((GDestroyNotify) lk_pin_free);
  /* Face 7 has no pair at all but the user said it is 0's person; face 2
   * was removed from it. */
  guint32 held[] = { 0, 7 }, out[] = { 2 };
  g_ptr_array_add (pins, pin_with ("p0", held, 2, out, 1));
  /* Face 1 joins {0, 7} at 0.97 / 2; {3…6} joins {0, 1, 7} at 4 · 0.97 / 12. */
  g_autoptr (LkPeople) people = run_at (&in, pins, LK_LINKAGE_AVERAGE, 0.3);
  const LkPerson *p = lk_people_find (people, "p0");
  g_assert_nonnull (p);
  g_assert_true (together (people, 0, 7));
  g_assert_true (together (people, 0, 5));
  g_assert_false (together (people, 0, 2));
  g_assert_cmpuint (p->n_faces, ==, 7);

  /* Two pinned people never merge on their own, however alike. */
  guint32 other[] = { 3 };
  g_ptr_array_add (pins, pin_with ("q", other, 1, NULL, 0));
  g_autoptr (LkPeople) two = run (&in, pins, LK_LINKAGE_AVERAGE);
  g_assert_false (together (two, 0, 3));
  g_assert_nonnull (lk_people_find (two, "q"));

  /* A face held by two pins is a broken input, refused. */
  guint32 dup[] = { 7 };
  g_ptr_array_add (pins, pin_with ("r", dup, 1, NULL, 0));
  g_autoptr (GError) error = NULL;
  LkPeople *bad = lk_cluster (&in, pins, NULL, &error);
  g_assert_null (bad);
  g_assert_error (error, LK_CLUSTER_ERROR, LK_CLUSTER_ERROR_INVALID);
  g_assert_nonnull (strstr (error->message, "face 7"));
}

static void
test_unpinned_id_does_not_collide (void)
{
  /* Pin "p0" no longer holds face 0; the cluster 0–1 would be "p0" too. */
  g_autoptr (GArray) pairs = g_array_new (FALSE, FALSE, sizeof (LkPair));
  lk_test_add_clique (pairs, 0, 2, 0.97f);
  LkClusterInput in = lk_test_cluster_input (pairs, 4, NULL);
  g_autoptr (GPtrArray) pins = g_ptr_array_new_with_free_func ((GDestroyNotify) lk_pin_free);
  guint32 held[] = { 3 }, out[] = { 0 };
  g_ptr_array_add (pins, pin_with ("p0", held, 1, out, 1));
  g_autoptr (LkPeople) people = run (&in, pins, LK_LINKAGE_AVERAGE);
  g_assert_cmpuint (people->n_people, ==, 2);
  g_assert_cmpstr (people->people[0].id, ==, "p0.1");
  g_assert_cmpstr (people->people[1].id, ==, "p0");
}

static void
test_immich_rule (void)
{
  /* Face 0 has 3 neighbours (core): it starts a person and 1–3 join it.
   * Faces 4–5 are a pair with 1 neighbour each: not core, no person near:
   * unassigned. Face 6 touches only face 3: joins 3's person. */
  g_autoptr (GArray) pairs = g_array_new (FALSE, FALSE, sizeof (LkPair));
  lk_test_add_pair (pairs, 0, 1, 0.95f);
  lk_test_add_pair (pairs, 0, 2, 0.95f);
  lk_test_add_pair (pairs, 0, 3, 0.95f);
  lk_test_add_pair (pairs, 4, 5, 0.95f);
  lk_test_add_pair (pairs, 3, 6, 0.91f);
  LkClusterInput in = lk_test_cluster_input (pairs, 7, NULL);
  g_autoptr (LkPeople) people = run (&in, NULL, LK_LINKAGE_IMMICH);
  g_assert_cmpuint (people->n_people, ==, 1);
  g_assert_cmpuint (people->people[0].n_faces, ==, 5);
  g_assert_true (together (people, 0, 6));
  g_assert_cmpint (people->person_of[4], ==, -1);
  g_assert_cmpint (people->person_of[5], ==, -1);

  g_autoptr (GPtrArray) pins = g_ptr_array_new_with_free_func ((GDestroyNotify) lk_pin_free);
  g_ptr_array_add (pins, lk_pin_new ("x"));
  g_autoptr (GError) error = NULL;
  LkClusterOptions o = { LK_LINKAGE_IMMICH, 0, 0 };
  g_assert_null (lk_cluster (&in, pins, &o, &error));
  g_assert_error (error, LK_CLUSTER_ERROR, LK_CLUSTER_ERROR_INVALID);
}

static void
test_bad_pairs_refused (void)
{
  LkPair bad[][1] = { { { 3, 2, 0.9f } }, { { 1, 5, 0.9f } }, { { 0, 1, 1.5f } } };
  for (gsize k = 0; k < G_N_ELEMENTS (bad); k++)
    {
      g_autoptr (GError) error = NULL;
      LkClusterInput in = { 5, NULL, NULL, NULL, bad[k], 1 };
      g_assert_null (lk_cluster (&in, NULL, NULL, &error));
      g_assert_error (error, LK_CLUSTER_ERROR, LK_CLUSTER_ERROR_INVALID);
      g_assert_nonnull (strstr (error->message, "pair 0"));
    }
}

/* The naive O(n³) average linkage: at every step, merge the allowed cluster
 * pair with the highest mean probability, while it reaches the threshold. */
static void
naive_average (gsize n, const GArray *pairs, const guint64 *photo, double threshold, guint32 *label)
{
  double *w = g_new0 (double, n *n);
  for (guint k = 0; k < pairs->len; k++)
    {
      LkPair p = g_array_index (pairs, LkPair, k);
      w[p.i * n + p.j] = w[p.j * n + p.i] = p.probability;
    }
  for (gsize f = 0; f < n; f++)
    label[f] = (guint32) f;
  for (;;)
    {
      double best = -1;
      guint32 ba = 0, bb = 0;
      for (guint32 a = 0; a < n; a++)
        for (guint32 b = a + 1; b < n; b++)
          {
            gboolean any_a = FALSE, any_b = FALSE, clash = FALSE;
            double sum = 0, na = 0, nb = 0;
            for (gsize f = 0; f < n; f++)
              {
                if (label[f] == a)
                  any_a = TRUE, na++;
                if (label[f] == b)
                  any_b = TRUE, nb++;
              }
            if (!any_a || !any_b)
              continue;
            for (gsize f = 0; f < n; f++)
              for (gsize g = 0; g < n; g++)
                if (label[f] == a && label[g] == b)
                  {
                    sum += w[f * n + g];
                    clash |= photo[f] == photo[g];
                  }
            double link = sum / (na * nb);
            if (!clash && link >= threshold && link > best)
              best = link, ba = a, bb = b;
          }
      if (best < 0)
        break;
      for (gsize f = 0; f < n; f++)
        if (label[f] == bb)
          label[f] = ba;
    }
  g_free (w);
}

static void
test_agrees_with_naive_average_linkage (void)
{
  GRand *rand = g_rand_new_with_seed (42);
  for (int round = 0; round < 30; round++)
    {
      gsize n = 8 + g_rand_int_range (rand, 0, 20);
      g_autoptr (GArray) pairs = g_array_new (FALSE, FALSE, sizeof (LkPair));
      g_autofree guint64 *photo = g_new (guint64, n);
      for (gsize f = 0; f < n; f++)
        photo[f] = g_rand_int_range (rand, 0, (gint32) n);
      for (guint32 i = 0; i < n; i++)
        for (guint32 j = i + 1; j < n; j++)
          if (g_rand_double (rand) < 0.35 && photo[i] != photo[j])
            lk_test_add_pair (pairs, i, j, (float) g_rand_double_range (rand, 0.9, 1.0));
      double threshold = g_rand_double_range (rand, 0.2, 0.8);
      LkClusterInput in = lk_test_cluster_input (pairs, n, photo);
      LkClusterOptions o = { LK_LINKAGE_AVERAGE, threshold, 0, -1.0 };
      g_autoptr (GError) error = NULL;
      g_autoptr (LkPeople) people = lk_cluster (&in, NULL, &o, &error);
      g_assert_no_error (error);
      g_autofree guint32 *label = g_new (guint32, n);
      naive_average (n, pairs, photo, threshold, label);
      for (gsize a = 0; a < n; a++)
        for (gsize b = a + 1; b < n; b++)
          g_assert_cmpint (together (people, a, b), ==, label[a] == label[b]);

      /* The default, approximate linkage: same hard rule, same answer twice. */
      o.epsilon = 0.0;
      g_autoptr (LkPeople) approx = lk_cluster (&in, NULL, &o, NULL);
      g_autoptr (LkPeople) again = lk_cluster (&in, NULL, &o, NULL);
      for (gsize a = 0; a < n; a++)
        {
          g_assert_cmpint (approx->person_of[a], ==, again->person_of[a]);
          for (gsize b = a + 1; b < n; b++)
            g_assert_false (photo[a] == photo[b] && together (approx, a, b));
        }
    }
  g_rand_free (rand);
}

static void
test_similar_and_suggestions (void)
{
  g_autoptr (GArray) pairs = g_array_new (FALSE, FALSE, sizeof (LkPair));
  lk_test_add_clique (pairs, 0, 4, 0.97f);
  lk_test_add_clique (pairs, 4, 8, 0.97f);
  lk_test_add_clique (pairs, 8, 10, 0.97f);
  lk_test_add_pair (pairs, 3, 4, 0.95f);
  lk_test_add_pair (pairs, 2, 4, 0.93f);
  lk_test_add_pair (pairs, 0, 8, 0.92f);
  /* Face 10 touches two faces of person p0: 1.9 / 4 = 0.475, just under 0.5. */
  lk_test_add_pair (pairs, 0, 10, 0.95f);
  lk_test_add_pair (pairs, 1, 10, 0.95f);
  LkClusterInput in = lk_test_cluster_input (pairs, 11, NULL);
  g_autoptr (LkPeople) people = run_at (&in, NULL, LK_LINKAGE_AVERAGE, 0.5);
  g_assert_cmpuint (people->n_people, ==, 3);
  const LkPerson *p0 = lk_people_find (people, "p0");
  gsize i0 = (gsize) (p0 - people->people);
  g_autoptr (GArray) sim = lk_people_similar (people, &in, i0, 0);
  g_assert_cmpuint (sim->len, ==, 2);
  const LkSimilarPerson *first = &g_array_index (sim, LkSimilarPerson, 0);
  g_assert_cmpstr (people->people[first->person].id, ==, "p4");
  g_assert_cmpuint (first->pairs, ==, 2);
  g_assert_cmpfloat_with_epsilon (first->mean, (0.95 + 0.93) / 16, 1e-6);
  g_assert_cmpfloat_with_epsilon (first->max, 0.95, 1e-6);

  g_autoptr (GArray) sug = lk_people_suggestions (people, &in, NULL, 0.5, 0.1, 0);
  g_assert_cmpuint (sug->len, ==, 1);
  const LkSuggestion *s = &g_array_index (sug, LkSuggestion, 0);
  g_assert_cmpuint (s->face, ==, 10);
  g_assert_false (s->member);
  g_assert_cmpstr (people->people[s->person].id, ==, "p0");
  g_assert_cmpfloat_with_epsilon (s->linkage, 1.9 / 4, 1e-6);

  /* The user said no: p0 holds its faces and excludes face 10, which is then
   * never put to the user for p0 again. */
  g_autoptr (GPtrArray) pins = g_ptr_array_new_with_free_func ((GDestroyNotify) lk_pin_free);
  LkPin *pin = lk_pin_new ("p0");
  for (guint32 f = 0; f < 4; f++)
    g_array_append_val (pin->faces, f);
  guint32 ten = 10;
  g_array_append_val (pin->excluded, ten);
  g_ptr_array_add (pins, pin);
  g_autoptr (LkPeople) pinned = run_at (&in, pins, LK_LINKAGE_AVERAGE, 0.5);
  g_assert_cmpint (pinned->person_of[10], ==, -1);
  g_autoptr (GArray) after = lk_people_suggestions (pinned, &in, pins, 0.5, 0.1, 0);
  for (guint k = 0; k < after->len; k++)
    g_assert_cmpuint (g_array_index (after, LkSuggestion, k).face, !=, 10);
}

/* Issue 15: with no pair between people, lk_people_similar knows nothing
 * and the chooser listed the rest by size. lk_people_rank orders them by
 * the cosine between centroids; people linked by pairs stay first. Sizes are
 * chosen so that size order (B, A, C, D) is not the answer (C, D, B). */
static void
test_rank_by_centroid_when_no_pairs_link (void)
{
  enum
  {
    DIM = 4,
    N = 15
  };
  /* A: faces 0–3 near e0; B: 4–9 near e1 (the largest); C: 10–12 near
   * e0 + 0.5 e1 (cos 0.89 with A); D: 13–14 near 0.3 e0 + e2 (cos 0.29). */
  const float base[4][DIM]
      = { { 1, 0, 0, 0 }, { 0, 1, 0, 0 }, { 1, 0.5f, 0, 0 }, { 0.3f, 0, 1, 0 } };
  const guint32 first[5] = { 0, 4, 10, 13, 15 };
  float embeddings[N * DIM];
  for (guint p = 0; p < 4; p++)
    for (guint32 f = first[p]; f < first[p + 1]; f++)
      {
        double norm = 0;
        for (guint d = 0; d < DIM; d++)
          embeddings[f * DIM + d] = base[p][d];
        /* Faces of one person differ a little, along e3. */
        embeddings[f * DIM + 3] = 0.05f * (float) (f - first[p]);
        for (guint d = 0; d < DIM; d++)
          norm += embeddings[f * DIM + d] * embeddings[f * DIM + d];
        for (guint d = 0; d < DIM; d++)
          embeddings[f * DIM + d] /= (float) sqrt (norm);
      }
  g_autoptr (GArray) pairs = g_array_new (FALSE, FALSE, sizeof (LkPair));
  for (guint p = 0; p < 4; p++)
    lk_test_add_clique (pairs, first[p], first[p + 1], 0.97f);
  LkClusterInput in = lk_test_cluster_input (pairs, N, NULL);
  g_autoptr (LkPeople) people = run_at (&in, NULL, LK_LINKAGE_AVERAGE, 0.5);
  g_assert_cmpuint (people->n_people, ==, 4);
  g_assert_cmpstr (people->people[0].id, ==, "p4"); /* B, the largest */

  g_autofree float *centroids = lk_people_centroids (people, embeddings, DIM, N);
  for (gsize k = 0; k < people->n_people; k++)
    {
      double norm = 0;
      for (guint d = 0; d < DIM; d++)
        norm += centroids[k * DIM + d] * centroids[k * DIM + d];
      g_assert_cmpfloat_with_epsilon (norm, 1.0, 1e-5);
    }
  gssize a = lk_people_find (people, "p0") - people->people;
  const char *want[] = { "p10", "p13", "p4" };
  g_autoptr (GArray) ranked
      = lk_people_rank (people, &in, a, centroids, DIM, centroids + (gsize) a * DIM);
  g_assert_cmpuint (ranked->len, ==, 3);
  for (guint k = 0; k < ranked->len; k++)
    {
      const LkSimilarPerson *s = &g_array_index (ranked, LkSimilarPerson, k);
      g_assert_cmpstr (people->people[s->person].id, ==, want[k]);
      g_assert_cmpuint (s->pairs, ==, 0);
    }
  g_assert_cmpfloat (g_array_index (ranked, LkSimilarPerson, 0).cosine, >, 0.85);
  g_assert_cmpfloat (g_array_index (ranked, LkSimilarPerson, 2).cosine, <, 0.05);

  /* One weak pair links A and B: B comes first, the rest by centroid. */
  lk_test_add_pair (pairs, 0, 4, 0.2f);
  LkClusterInput linked = lk_test_cluster_input (pairs, N, NULL);
  g_autoptr (LkPeople) again = run_at (&linked, NULL, LK_LINKAGE_AVERAGE, 0.5);
  g_assert_cmpuint (again->n_people, ==, 4);
  g_autofree float *centroids2 = lk_people_centroids (again, embeddings, DIM, N);
  gssize a2 = lk_people_find (again, "p0") - again->people;
  const char *want2[] = { "p4", "p10", "p13" };
  g_autoptr (GArray) ranked2
      = lk_people_rank (again, &linked, a2, centroids2, DIM, centroids2 + (gsize) a2 * DIM);
  g_assert_cmpuint (ranked2->len, ==, 3);
  for (guint k = 0; k < ranked2->len; k++)
    g_assert_cmpstr (again->people[g_array_index (ranked2, LkSimilarPerson, k).person].id, ==,
                     want2[k]);
  g_assert_cmpuint (g_array_index (ranked2, LkSimilarPerson, 0).pairs, ==, 1);

  /* No person (faces of the unassigned entry): everyone, by centroid. */
  g_autoptr (GArray) all = lk_people_rank (people, &in, -1, centroids, DIM, centroids + 0 * DIM);
  g_assert_cmpuint (all->len, ==, 4);
  g_assert_cmpuint (g_array_index (all, LkSimilarPerson, 0).person, ==, 0);
}

/* Issue 19: a library whose scan found no pair at all reached pointer
 * arithmetic on an empty array's NULL data (UBSan: "applying zero offset to
 * null pointer" at lk-cluster.c:707). Every linkage, with and without pins,
 * and the similar/suggestion queries on the result: every face alone or in
 * its pin, and no report from the ASan+UBSan suite. */
static void
test_zero_pairs_clean (void)
{
  g_autoptr (GArray) pairs = g_array_new (FALSE, FALSE, sizeof (LkPair));
  g_autoptr (GPtrArray) pins = g_ptr_array_new_with_free_func ((GDestroyNotify) lk_pin_free);
  LkPin *pin = lk_pin_new ("p1");
  guint32 members[] = { 1, 2 };
  g_array_append_vals (pin->faces, members, G_N_ELEMENTS (members));
  g_ptr_array_add (pins, pin);

  for (gsize n = 0; n <= 3; n++)
    {
      LkClusterInput in = { n, NULL, NULL, NULL, (const LkPair *) pairs->data, pairs->len };
      g_assert_null (in.pairs);
      LkLinkage linkages[] = { LK_LINKAGE_AVERAGE, LK_LINKAGE_SINGLE, LK_LINKAGE_IMMICH };
      for (gsize k = 0; k < G_N_ELEMENTS (linkages); k++)
        {
          g_autoptr (LkPeople) people = run (&in, NULL, linkages[k]);
          g_assert_cmpuint (people->n_people, ==, 0);
          for (gsize f = 0; f < n; f++)
            g_assert_cmpint (people->person_of[f], ==, -1);
        }
      if (n < 3)
        continue;
      g_autoptr (LkPeople) pinned = run (&in, pins, LK_LINKAGE_AVERAGE);
      g_assert_cmpuint (pinned->n_people, ==, 1);
      g_assert_cmpint (pinned->person_of[0], ==, -1);
      g_assert_true (together (pinned, 1, 2));
      g_autoptr (GArray) similar = lk_people_similar (pinned, &in, 0, 0);
      g_assert_cmpuint (similar->len, ==, 0);
      g_autoptr (GArray) suggestions = lk_people_suggestions (pinned, &in, pins, 0.5, 0.1, 0);
      for (guint s = 0; s < suggestions->len; s++)
        g_assert_cmpuint (g_array_index (suggestions, LkSuggestion, s).face, ==, 0);
    }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/cluster/bridge-does-not-chain", test_bridge_does_not_chain);
  g_test_add_func ("/cluster/same-photo-never-one-person", test_same_photo_never_one_person);
  g_test_add_func ("/cluster/lonely-faces-are-unassigned", test_lonely_faces_are_unassigned);
  g_test_add_func ("/cluster/order-ids-and-cover", test_order_ids_and_cover);
  g_test_add_func ("/cluster/pins-hold-and-exclude", test_pins_hold_and_exclude);
  g_test_add_func ("/cluster/unpinned-id-does-not-collide", test_unpinned_id_does_not_collide);
  g_test_add_func ("/cluster/immich-rule", test_immich_rule);
  g_test_add_func ("/cluster/bad-pairs-refused", test_bad_pairs_refused);
  g_test_add_func ("/cluster/agrees-with-naive-average-linkage",
                   test_agrees_with_naive_average_linkage);
  g_test_add_func ("/cluster/similar-and-suggestions", test_similar_and_suggestions);
  g_test_add_func ("/cluster/zero-pairs-clean", test_zero_pairs_clean);
  g_test_add_func ("/cluster/rank-by-centroid-when-no-pairs-link",
                   test_rank_by_centroid_when_no_pairs_link);
  return g_test_run ();
}
