/* lk-cluster-components.c — the pair graph's components clustered side by side; the baselines
 *
 * After a decision (lk_cluster_with_memo): a merge reads and writes only
 * the slots, parents and queue entries of one connected component of the
 * pair graph (pins join components: their faces are one cluster first), and
 * the order between entries is a total one (value, then ticket; a ticket
 * numbers pairs in their order, re-queued ones after all first ones, in the
 * order they were queued), so what happens inside a component does not
 * depend on the others. A decision changes the pins of a few people; the
 * components its changed pins reach are clustered again on their own pairs,
 * kept in the pairs' order (the same comparisons, so the same merges and
 * the same sums), and the rest keep the clusters of the memo. At make-sample
 * --faces 100000 bench-people's decision (the two largest people merged and
 * named) clusters 5,004 faces again of 100,000.
 *
 * For the same reason every clustering takes the components one at a time
 * (cluster_components ()): each component of two faces or more is a job,
 * its faces numbered in their order and its pairs copied in theirs, on
 * LkClusterOptions.threads threads, the jobs with the most pairs first.
 * Most of what it buys is not the second thread but the cache: a
 * component's slots, parents, lists and sorted entries take 28 bytes a pair
 * (112 kB for the mean component, 64 MB for the largest), where the whole
 * graph's took hundreds of MB read at random: at 100,000 faces one
 * clustering takes about a third of the CPU it took whole, and the peak
 * falls too, since no component holds a tenth of the pairs there. A graph
 * one component holds more than half the pairs of is clustered whole
 * (copying that component would cost more memory than the clustering it
 * parts with, and its job would leave the second thread idle anyway); it
 * pays only the pass that finds the components (about 1 % of
 * bench-cluster's time).
 */
#include "config.h"

#include "lk-cluster-private.h"

/* --- the pair graph's components, side by side ----------------------------------------------- */

/* A merge reads and writes only the slots, parents and queue entries of one
 * connected component of the pair graph (pins join components: their faces
 * are one cluster first), and the order between queue entries is a total
 * one (value, then ticket; a ticket numbers pairs in their order), so a
 * component clustered on its own pairs, kept in their order, with its faces
 * numbered in their order, makes the merges it makes among all the others
 * (what cluster_again () relies on too). Each component is then one job:
 * jobs share nothing but the input, and each writes only its own faces'
 * roots, so the people do not depend on the threads or the order the jobs
 * run in (test-cluster-identity: 1, 2 and 4 threads). */
typedef struct
{
  const LkClusterInput *input;
  const GPtrArray *pins;
  double threshold;
  double epsilon;
  const guint32 *ifirst; /* the pairs where face f is first: ifirst[f] … ifirst[f + 1] */
  const guint32 *group;  /* per face: its job (G_MAXUINT32: none, a face alone) */
  const guint32 *local;  /* per face: its place among its job's faces */
  const guint32 *start;  /* job j's faces are faces[start[j]] … faces[start[j + 1]], ascending */
  const guint32 *faces;
  const guint32 *pin_start; /* job j's pins (indices, in order): pin_ix[pin_start[j]] … */
  const guint32 *pin_ix;
  const guint32 *order; /* jobs, most pairs first, so the last job to start is a small one */
  guint n_jobs;
  gint next; /* atomic: the next place in order */
  guint32 *root;
} Parts;

static void
cluster_part (Parts *parts, guint32 j)
{
  const LkClusterInput *input = parts->input;
  const guint32 *faces = parts->faces + parts->start[j];
  gsize m = parts->start[j + 1] - parts->start[j], n_pairs = 0;
  for (gsize k = 0; k < m; k++)
    n_pairs += parts->ifirst[faces[k] + 1] - parts->ifirst[faces[k]];
  /* The faces ascend and each one's pairs are a range of the pair list, so
   * this copy keeps the pairs' order. */
  LkPair *pairs = g_new (LkPair, MAX (n_pairs, 1));
  guint64 *photo = input->photo ? g_new (guint64, m) : NULL;
  gsize at = 0;
  for (gsize k = 0; k < m; k++)
    {
      if (photo)
        photo[k] = input->photo[faces[k]];
      for (guint32 e = parts->ifirst[faces[k]]; e < parts->ifirst[faces[k] + 1]; e++)
        pairs[at++] = (LkPair){ .i = (guint32) k,
                                .j = parts->local[input->pairs[e].j],
                                .probability = input->pairs[e].probability };
    }
  LkClusterInput in = { .n_faces = m, .photo = photo, .pairs = pairs, .n_pairs = n_pairs };
  /* The job's pins, in their order, on its faces; an excluded face of
   * another component can never meet the pin. */
  g_autoptr (GPtrArray) pins = NULL;
  if (parts->pin_start[j + 1] > parts->pin_start[j])
    {
      pins = g_ptr_array_new_with_free_func ((GDestroyNotify) lk_pin_free);
      for (guint32 p = parts->pin_start[j]; p < parts->pin_start[j + 1]; p++)
        {
          const LkPin *pin = g_ptr_array_index (parts->pins, parts->pin_ix[p]);
          LkPin *mine = lk_pin_new (pin->id);
          for (guint k = 0; k < pin->faces->len; k++)
            g_array_append_val (mine->faces, parts->local[g_array_index (pin->faces, guint32, k)]);
          for (guint k = 0; k < pin->excluded->len; k++)
            {
              guint32 f = g_array_index (pin->excluded, guint32, k);
              if (parts->group[f] == j)
                g_array_append_val (mine->excluded, parts->local[f]);
            }
          g_ptr_array_add (pins, mine);
        }
    }
  guint32 *root = g_new (guint32, m);
  cluster_average (&in, pins, parts->threshold, parts->epsilon, root);
  for (gsize k = 0; k < m; k++)
    parts->root[faces[k]] = faces[root[k]];
  g_free (root);
  g_free (photo);
  g_free (pairs);
}

static gpointer
parts_worker (gpointer data)
{
  Parts *parts = data;
  for (;;)
    {
      guint k = (guint) g_atomic_int_add (&parts->next, 1);
      if (k >= parts->n_jobs)
        return NULL;
      cluster_part (parts, parts->order[k]);
    }
}

static gint
compare_jobs (gconstpointer x, gconstpointer y, gpointer data)
{
  const guint64 *n_pairs = data;
  guint32 a = *(const guint32 *) x, b = *(const guint32 *) y;
  if (n_pairs[a] != n_pairs[b])
    return n_pairs[a] > n_pairs[b] ? -1 : 1;
  return a < b ? -1 : a > b;
}

/* Components, named by their smallest face: c[f] is face f's, a pin's
 * faces in one. Fills ifirst too: the pairs where face f is first are
 * ifirst[f] … ifirst[f + 1]. */
static void
join_components (const LkClusterInput *input, const GPtrArray *pins, guint32 *c, guint32 *ifirst)
{
  gsize n = input->n_faces;
  for (gsize f = 0; f < n; f++)
    c[f] = (guint32) f;
  for (gsize k = 0; k < input->n_pairs; k++)
    {
      const LkPair *p = &input->pairs[k];
      ifirst[p->i + 1]++;
      guint32 a = lk_cluster_find (c, p->i), b = lk_cluster_find (c, p->j);
      if (a != b)
        c[MAX (a, b)] = MIN (a, b);
    }
  for (guint k = 0; pins && k < pins->len; k++)
    {
      const LkPin *pin = g_ptr_array_index (pins, k);
      for (guint m = 1; m < pin->faces->len; m++)
        {
          guint32 a = lk_cluster_find (c, g_array_index (pin->faces, guint32, 0));
          guint32 b = lk_cluster_find (c, g_array_index (pin->faces, guint32, m));
          if (a != b)
            c[MAX (a, b)] = MIN (a, b);
        }
    }
  for (gsize f = 0; f < n; f++)
    {
      ifirst[f + 1] += ifirst[f];
      c[f] = c[c[f]]; /* c[f] <= f, and c[c[f]] is already a root */
    }
}

/* A job for each component of two faces or more, numbered by its
 * smallest face; a face alone is its own root. Fills group and local (per
 * face: its job, its place among the job's faces), start (job j's faces
 * are faces[start[j]] … faces[start[j + 1]]), n_pairs (per job) and the
 * roots of the faces alone; returns the number of jobs. */
static guint
make_jobs (const LkClusterInput *input, const guint32 *c, const guint32 *ifirst, guint32 *group,
           guint32 *local, GArray *start, GArray *n_pairs, guint32 *faces, guint32 *root)
{
  gsize n = input->n_faces;
  for (gsize f = 0; f < n; f++)
    {
      group[f] = G_MAXUINT32;
      local[f] = 0;
    }
  for (gsize f = 0; f < n; f++)
    local[c[f]]++; /* faces per component, at its root for now */
  for (gsize f = 0; f < n; f++)
    if (c[f] == f && local[f] > 1)
      {
        group[f] = start->len;
        g_array_append_val (start, local[f]);
      }
  guint n_jobs = start->len;
  g_array_set_size (n_pairs, n_jobs);
  {
    guint32 at = 0, zero = 0;
    for (guint j = 0; j < n_jobs; j++)
      {
        guint32 len = g_array_index (start, guint32, j);
        g_array_index (start, guint32, j) = at;
        at += len;
      }
    g_array_append_val (start, zero);
    g_array_index (start, guint32, n_jobs) = at;
  }
  {
    g_autofree guint32 *fill = g_memdup2 (start->data, MAX (n_jobs, 1) * sizeof (guint32));
    for (gsize f = 0; f < n; f++)
      {
        guint32 j = group[c[f]];
        if (j == G_MAXUINT32)
          {
            root[f] = (guint32) f;
            continue;
          }
        group[f] = j;
        local[f] = fill[j] - g_array_index (start, guint32, j);
        faces[fill[j]++] = (guint32) f;
        g_array_index (n_pairs, guint64, j) += ifirst[f + 1] - ifirst[f];
      }
  }
  return n_jobs;
}

/* Each job's pins, in their order: job j's are pin_ix[pin_start[j]] …
 * pin_ix[pin_start[j + 1]]. */
static void
place_pins (const GPtrArray *pins, const guint32 *group, guint n_jobs, guint32 *pin_start,
            guint32 *pin_ix)
{
  for (guint k = 0; pins && k < pins->len; k++)
    {
      const LkPin *pin = g_ptr_array_index (pins, k);
      /* A pin of a face alone (no job) asks nothing of the clustering. */
      if (pin->faces->len > 0 && group[g_array_index (pin->faces, guint32, 0)] != G_MAXUINT32)
        pin_start[group[g_array_index (pin->faces, guint32, 0)] + 1]++;
    }
  for (guint j = 0; j < n_jobs; j++)
    pin_start[j + 1] += pin_start[j];
  {
    g_autofree guint32 *fill = g_memdup2 (pin_start, (n_jobs + 1) * sizeof (guint32));
    for (guint k = 0; pins && k < pins->len; k++)
      {
        const LkPin *pin = g_ptr_array_index (pins, k);
        if (pin->faces->len > 0 && group[g_array_index (pin->faces, guint32, 0)] != G_MAXUINT32)
          pin_ix[fill[group[g_array_index (pin->faces, guint32, 0)]]++] = k;
      }
  }
}

/* The jobs on `threads` threads (0: every core), this one among them. */
static void
run_parts (Parts *parts, guint threads)
{
  if (threads == 0)
    threads = g_get_num_processors ();
  threads = MIN (threads, MAX (parts->n_jobs, 1));
  g_autofree GThread **helpers = g_new0 (GThread *, threads);
  for (guint t = 1; t < threads; t++)
    helpers[t] = g_thread_try_new ("lk-cluster", parts_worker, parts, NULL);
  parts_worker (parts);
  for (guint t = 1; t < threads; t++)
    if (helpers[t])
      g_thread_join (helpers[t]);
}

/* cluster_average (), the same roots, one connected component (joined by
 * pins) at a time on `threads` threads (0: every core). The whole pair
 * graph at once when its pairs are not ordered by their first face (each
 * component's pairs are then no set of ranges) or when one component holds
 * more than half the pairs: its copy would cost as much memory as the
 * clustering it spares, and the others could not keep a second thread
 * busy for long. */
void
cluster_components (const LkClusterInput *input, const GPtrArray *pins, double threshold,
                    double epsilon, guint threads, guint32 *root)
{
  gsize n = input->n_faces;
  gboolean by_first = input->n_pairs > 0;
  for (gsize k = 1; k < input->n_pairs && by_first; k++)
    by_first = input->pairs[k - 1].i <= input->pairs[k].i;
  if (!by_first)
    {
      cluster_average (input, pins, threshold, epsilon, root);
      return;
    }

  g_autofree guint32 *c = g_new (guint32, n);
  g_autofree guint32 *ifirst = g_new0 (guint32, n + 1);
  join_components (input, pins, c, ifirst);

  g_autofree guint32 *group = g_new (guint32, n);
  g_autofree guint32 *local = g_new (guint32, n);
  g_autoptr (GArray) start = g_array_new (FALSE, FALSE, sizeof (guint32));
  g_autoptr (GArray) n_pairs = g_array_new (FALSE, TRUE, sizeof (guint64));
  g_autofree guint32 *faces = g_new (guint32, MAX (n, 1));
  guint n_jobs = make_jobs (input, c, ifirst, group, local, start, n_pairs, faces, root);
  guint64 largest = 0;
  for (guint j = 0; j < n_jobs; j++)
    largest = MAX (largest, g_array_index (n_pairs, guint64, j));
  if (largest > input->n_pairs / 2)
    {
      cluster_average (input, pins, threshold, epsilon, root);
      return;
    }

  g_autofree guint32 *pin_start = g_new0 (guint32, n_jobs + 1);
  g_autofree guint32 *pin_ix = g_new (guint32, MAX (pins ? pins->len : 0, 1));
  place_pins (pins, group, n_jobs, pin_start, pin_ix);
  g_autofree guint32 *order = g_new (guint32, MAX (n_jobs, 1));
  for (guint j = 0; j < n_jobs; j++)
    order[j] = j;
  g_qsort_with_data (order, (gint) n_jobs, sizeof (guint32), compare_jobs, n_pairs->data);

  Parts parts = {
    .input = input,
    .pins = pins,
    .threshold = threshold,
    .epsilon = epsilon,
    .ifirst = ifirst,
    .group = group,
    .local = local,
    .start = (const guint32 *) start->data,
    .faces = faces,
    .pin_start = pin_start,
    .pin_ix = pin_ix,
    .order = order,
    .n_jobs = n_jobs,
    .root = root,
  };
  run_parts (&parts, threads);
}

/* --- baselines ------------------------------------------------------------------------------- */

void
cluster_single (const LkClusterInput *input, guint32 *root)
{
  for (gsize f = 0; f < input->n_faces; f++)
    root[f] = (guint32) f;
  for (gsize k = 0; k < input->n_pairs; k++)
    {
      guint32 a = lk_cluster_find (root, input->pairs[k].i),
              b = lk_cluster_find (root, input->pairs[k].j);
      if (a != b)
        root[MAX (a, b)] = MIN (a, b);
    }
  for (gsize f = 0; f < input->n_faces; f++)
    root[f] = lk_cluster_find (root, (guint32) f);
}

/* Immich's facial recognition, on the same pairs: faces in order; a face with
 * at least min_neighbours neighbours (a "core" face) joins the person of its
 * best neighbour that has one, else starts a person; then every other face
 * joins its best neighbour's person, if any. root[f] is the person's first
 * face; a face that joined nobody is its own root. */
void
cluster_immich (const LkClusterInput *input, guint min_neighbours, guint32 *root)
{
  gsize n = input->n_faces;
  g_autofree gsize *start = g_new0 (gsize, n + 1);
  for (gsize k = 0; k < input->n_pairs; k++)
    {
      start[input->pairs[k].i + 1]++;
      start[input->pairs[k].j + 1]++;
    }
  for (gsize f = 0; f < n; f++)
    start[f + 1] += start[f];
  g_autofree gsize *fill = g_memdup2 (start, (n + 1) * sizeof (gsize));
  g_autofree guint32 *nb = g_new (guint32, MAX (2 * input->n_pairs, 1));
  g_autofree float *nbp = g_new (float, MAX (2 * input->n_pairs, 1));
  for (gsize k = 0; k < input->n_pairs; k++)
    {
      const LkPair *p = &input->pairs[k];
      nb[fill[p->i]] = p->j;
      nbp[fill[p->i]++] = p->probability;
      nb[fill[p->j]] = p->i;
      nbp[fill[p->j]++] = p->probability;
    }

  g_autofree gint64 *person = g_new (gint64, n);
  for (gsize f = 0; f < n; f++)
    person[f] = -1;
  for (int pass = 0; pass < 2; pass++)
    for (gsize f = 0; f < n; f++)
      {
        gboolean core = start[f + 1] - start[f] >= min_neighbours;
        if (person[f] >= 0 || core != (pass == 0))
          continue;
        gint64 best = -1;
        float best_p = -1.0f;
        for (gsize k = start[f]; k < start[f + 1]; k++)
          if (person[nb[k]] >= 0 && nbp[k] > best_p)
            {
              best = person[nb[k]];
              best_p = nbp[k];
            }
        if (best >= 0)
          person[f] = best;
        else if (core)
          person[f] = (gint64) f;
      }
  for (gsize f = 0; f < n; f++)
    root[f] = person[f] >= 0 ? (guint32) person[f] : (guint32) f;
}
