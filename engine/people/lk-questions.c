/* lk-questions.c — "Is this Ada?" (lk-questions.h)
 *
 * One pass over the pairs collects, for each face of a candidate (an
 * unassigned face, or a face of a small unnamed person) and each named person
 * it pairs with, the best pair probability; a sort by (candidate, person)
 * sums them into the candidate's score for that person. The pairs are the
 * pair model's own word: the scan's (each at or above the clustering's bar)
 * or lk_people_question_links' (down to the question bar).
 *
 * lk_people_question_links is the scan itself on two sets of rows, not a
 * kernel of its own: the candidates' rows then the named faces' rows, copied
 * into one LkFaces, scanned with row_range (the candidates) and column_begin
 * (the named faces), which is the rectangle candidates × named faces and
 * nothing of either triangle. So it has the scan's exactness (the canonical
 * float32 dot decides every pair; a first pass only rejects what is provably
 * below the bar), its measured kernel and first pass, its threads and its
 * cancellation. The copy is (candidates + named faces) rows: at most the
 * embeddings once more, given back when the pass ends.
 *
 * The links kept for the next opening (lk_question_links_keep), every
 * number little-endian, every section padded with zeros to 8 bytes:
 *
 *   "LKLINKS\0", u32 version, u32 0, u64 faces (LkScanReuse.faces),
 *   u64 n_faces, u64 links, f64 a, b, w_size, bar              (72 bytes)
 *   n_faces × u8 role (what the pass found them for)
 *   links × (u32 i, u32 j, f32 probability)
 *   u64 checksum of everything before it (lk_scan_cache_checksum)
 *
 * They are exactly a pass's output, roles included, so an opening hands
 * them to lk_people_question_links as `previous` as a decision hands the
 * last ones: the faces whose roles changed since are compared again, and
 * nothing else; unchanged, nothing is.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "lk-questions.h"

#include "library/lk-bytes.h"
#include "scan/lk-scan-cache.h"

typedef struct
{
  gint64 unit;   /* a person's index, or n_people + the face for an unassigned face */
  gint32 person; /* the named person */
  guint32 face;  /* the candidate's face */
  float probability;
} Link;

static int
compare_links (gconstpointer x, gconstpointer y)
{
  const Link *a = x, *b = y;
  if (a->unit != b->unit)
    return a->unit < b->unit ? -1 : 1;
  if (a->person != b->person)
    return a->person < b->person ? -1 : 1;
  if (a->face != b->face)
    return a->face < b->face ? -1 : 1;
  return a->probability > b->probability ? -1 : a->probability < b->probability;
}

static int
compare_questions (gconstpointer x, gconstpointer y)
{
  const LkQuestion *a = x, *b = y;
  if (a->score != b->score)
    return a->score > b->score ? -1 : 1;
  return a->face < b->face ? -1 : a->face > b->face;
}

static gboolean
sorted_has (const GArray *faces, guint32 face)
{
  guint lo = 0, hi = faces->len;
  while (lo < hi)
    {
      guint mid = (lo + hi) / 2;
      guint32 v = g_array_index (faces, guint32, mid);
      if (v == face)
        return TRUE;
      if (v < face)
        lo = mid + 1;
      else
        hi = mid;
    }
  return FALSE;
}

/* The candidate's faces: the person's, or the one unassigned face. */
static const guint32 *
unit_faces (const LkPeople *people, gint64 unit, guint32 *one, gsize *n)
{
  if (unit < (gint64) people->n_people)
    {
      *n = people->people[unit].n_faces;
      return people->people[unit].faces;
    }
  *one = (guint32) (unit - (gint64) people->n_people);
  *n = 1;
  return one;
}

/* Whether the candidate may be asked about `person`: no face of it excluded
 * by the person's pin, none of a photo the person has a face in. */
static gboolean
askable (const LkPeople *people, const LkClusterInput *input, GHashTable *pin_of, gint64 unit,
         gint32 person)
{
  guint32 one;
  gsize n;
  const guint32 *faces = unit_faces (people, unit, &one, &n);
  const LkPerson *p = &people->people[person];
  const LkPin *pin = g_hash_table_lookup (pin_of, p->id);
  for (gsize k = 0; pin != NULL && k < n; k++)
    if (sorted_has (pin->excluded, faces[k]))
      return FALSE;
  if (input->photo == NULL)
    return TRUE;
  for (gsize k = 0; k < n; k++)
    for (gsize m = 0; m < p->n_faces; m++)
      if (input->photo[faces[k]] == input->photo[p->faces[m]])
        return FALSE;
  return TRUE;
}

/* Per face: the candidate it belongs to (-1: none): n_people + the face for
 * an unassigned face, the person's index for a face of a small unnamed one. */
static gint64 *
candidates_of (const LkPeople *people)
{
  gsize n = people->n_faces;
  gint64 *unit_of = g_new (gint64, MAX (n, 1));
  for (gsize f = 0; f < n; f++)
    unit_of[f] = -1;
  for (gsize k = 0; k < people->n_unassigned; k++)
    unit_of[people->unassigned[k]] = (gint64) people->n_people + people->unassigned[k];
  for (gsize p = 0; p < people->n_people; p++)
    {
      const LkPerson *person = &people->people[p];
      if (person->name == NULL && !person->hidden && person->n_faces <= LK_QUESTION_SMALL_PERSON)
        for (gsize m = 0; m < person->n_faces; m++)
          unit_of[person->faces[m]] = (gint64) p;
    }
  return unit_of;
}

static gboolean
is_named (const LkPeople *people, gint32 person)
{
  return person >= 0 && people->people[person].name != NULL && !people->people[person].hidden;
}

/* Appends the links of rows × columns (the library's face indices) to
 * `links`: lk_scan over the two sets' rows, copied rows-first into one
 * LkFaces, with row_range over the rows and column_begin at the columns. */
static gboolean
rectangle (const LkFaces *faces, const GArray *rows, const GArray *columns,
           const LkCalibration *calibration, double bar, gboolean background,
           GCancellable *cancellable, GArray *links, GError **error)
{
  if (rows->len == 0 || columns->len == 0)
    return TRUE;
  gsize n = rows->len + columns->len;
  guint dim = faces->dim;
  gsize row_bytes = (gsize) dim * sizeof (float);
  float *embeddings = g_aligned_alloc (n, row_bytes, 64);
  g_autofree float *crop_px = g_new (float, n);
  g_autofree guint64 *photo = g_new (guint64, n);
  g_autofree guint8 *gallery = g_new (guint8, n);
  for (gsize k = 0; k < n; k++)
    {
      guint32 f = k < rows->len ? g_array_index (rows, guint32, k)
                                : g_array_index (columns, guint32, k - rows->len);
      memcpy (embeddings + k * dim, faces->embeddings + (gsize) f * dim, row_bytes);
      crop_px[k] = faces->crop_px[f];
      photo[k] = faces->photo[f];
      gallery[k] = faces->gallery[f];
    }
  LkFaces both = { embeddings, n, dim, crop_px, photo, gallery };
  LkScanOptions options = { .row_range = TRUE,
                            .row_begin = 0,
                            .row_end = rows->len,
                            .column_begin = rows->len,
                            .background = background };
  g_autoptr (LkScanResult) scan = lk_scan (&both, calibration, bar, &options, cancellable, error);
  g_aligned_free (embeddings);
  if (scan == NULL)
    return FALSE;
  for (guint k = 0; k < scan->pairs->len; k++)
    {
      const LkPair *p = &g_array_index (scan->pairs, LkPair, k);
      guint32 x = g_array_index (rows, guint32, p->i);
      guint32 y = g_array_index (columns, guint32, p->j - rows->len);
      g_array_append_val (links, ((LkPair){ MIN (x, y), MAX (x, y), p->probability }));
    }
  return TRUE;
}

enum
{
  ROLE_NONE = 0,
  ROLE_CANDIDATE,
  ROLE_NAMED,
};

static gboolean
same_model (const LkQuestionLinks *previous, gsize n_faces, const LkCalibration *calibration,
            double bar)
{
  return previous != NULL && previous->n_faces == n_faces && previous->bar == bar
         && previous->calibration.a == calibration->a && previous->calibration.b == calibration->b
         && previous->calibration.w_size == calibration->w_size;
}

LkQuestionLinks *
lk_people_question_links (const LkPeople *people, const LkFaces *faces,
                          const LkCalibration *calibration, double bar,
                          const LkQuestionLinks *previous, gboolean background,
                          GCancellable *cancellable, GError **error)
{
  if (faces->n != people->n_faces || (faces->n > 0 && faces->embeddings == NULL))
    {
      g_set_error (error, LK_SCAN_ERROR, LK_SCAN_ERROR_INVALID,
                   "The questions' pass needs the embeddings of the %" G_GSIZE_FORMAT
                   " faces grouped; it was given %s of %" G_GSIZE_FORMAT,
                   people->n_faces, faces->embeddings == NULL ? "no embeddings" : "the rows",
                   faces->n);
      return NULL;
    }
  gsize n = people->n_faces;
  g_autoptr (LkQuestionLinks) out = g_new0 (LkQuestionLinks, 1);
  out->n_faces = n;
  out->bar = bar;
  out->calibration = *calibration;
  out->role = g_new0 (guint8, MAX (n, 1));
  out->links = g_array_new (FALSE, FALSE, sizeof (LkPair));
  g_autofree gint64 *unit_of = candidates_of (people);
  for (gsize f = 0; f < n; f++)
    out->role[f] = unit_of[f] >= 0                           ? ROLE_CANDIDATE
                   : is_named (people, people->person_of[f]) ? ROLE_NAMED
                                                             : ROLE_NONE;

  /* The pairs (candidate c, named n) whose roles were the same last time
   * were compared then: their links are kept. The rest is c new × every
   * named face, and c kept × n new: disjoint, and together with the kept
   * ones the whole rectangle. */
  const guint8 *before = same_model (previous, n, calibration, bar) ? previous->role : NULL;
  if (before != NULL)
    for (guint k = 0; k < previous->links->len; k++)
      {
        const LkPair *p = &g_array_index (previous->links, LkPair, k);
        if (out->role[p->i] == before[p->i] && out->role[p->j] == before[p->j])
          g_array_append_val (out->links, *p);
      }
  g_autoptr (GArray) rows = g_array_new (FALSE, FALSE, sizeof (guint32));
  g_autoptr (GArray) kept_rows = g_array_new (FALSE, FALSE, sizeof (guint32));
  g_autoptr (GArray) columns = g_array_new (FALSE, FALSE, sizeof (guint32));
  g_autoptr (GArray) new_columns = g_array_new (FALSE, FALSE, sizeof (guint32));
  for (guint32 f = 0; f < n; f++)
    if (out->role[f] == ROLE_CANDIDATE)
      g_array_append_val (before != NULL && before[f] == ROLE_CANDIDATE ? kept_rows : rows, f);
    else if (out->role[f] == ROLE_NAMED)
      {
        g_array_append_val (columns, f);
        if (before != NULL && before[f] != ROLE_NAMED)
          g_array_append_val (new_columns, f);
      }
  if (!rectangle (faces, rows, columns, calibration, bar, background, cancellable, out->links,
                  error)
      || !rectangle (faces, kept_rows, new_columns, calibration, bar, background, cancellable,
                     out->links, error))
    return NULL;
  out->compared = (guint64) rows->len * columns->len + (guint64) kept_rows->len * new_columns->len;
  return g_steal_pointer (&out);
}

#define LINKS_MAGIC   "LKLINKS\0"
#define LINKS_VERSION 1
#define LINKS_HEADER  72

static gsize
pad8 (gsize n)
{
  return (n + 7) / 8 * 8;
}

char *
lk_question_links_path (const char *folder)
{
  g_autofree char *scan = lk_scan_cache_path (folder);
  gsize stem = g_str_has_suffix (scan, ".scan") ? strlen (scan) - strlen (".scan") : strlen (scan);
  return g_strdup_printf ("%.*s.links", (int) stem, scan);
}

gboolean
lk_question_links_keep (const LkQuestionLinks *links, guint64 faces, const char *path)
{
  gsize n = links->n_faces, n_links = links->links->len;
  gsize roles_at = LINKS_HEADER, links_at = roles_at + pad8 (n);
  gsize sum_at = links_at + pad8 (n_links * sizeof (LkPair)), size = sum_at + 8;
  g_autofree guint8 *data = g_malloc0 (size);

  memcpy (data, LINKS_MAGIC, 8);
  lk_put_u32 (data + 8, LINKS_VERSION);
  lk_put_u64 (data + 16, faces);
  lk_put_u64 (data + 24, n);
  lk_put_u64 (data + 32, n_links);
  lk_put_f64 (data + 40, links->calibration.a);
  lk_put_f64 (data + 48, links->calibration.b);
  lk_put_f64 (data + 56, links->calibration.w_size);
  lk_put_f64 (data + 64, links->bar);
  memcpy (data + roles_at, links->role, n);
  for (gsize k = 0; k < n_links; k++)
    {
      const LkPair *p = &g_array_index (links->links, LkPair, k);
      guint8 *at = data + links_at + k * sizeof (LkPair);
      guint32 bits;
      memcpy (&bits, &p->probability, 4);
      lk_put_u32 (at, p->i);
      lk_put_u32 (at + 4, p->j);
      lk_put_u32 (at + 8, bits);
    }
  lk_put_u64 (data + sum_at, lk_scan_cache_checksum (data, sum_at));

  g_autofree char *dir = g_path_get_dirname (path);
  /* g_file_set_contents_full: a temporary file renamed over the last. */
  return g_mkdir_with_parents (dir, 0700) == 0
         && g_file_set_contents_full (path, (const char *) data, (gssize) size,
                                      G_FILE_SET_CONTENTS_CONSISTENT, 0600, NULL);
}

LkQuestionLinks *
lk_question_links_kept (const char *path, guint64 faces, gsize n_faces,
                        const LkCalibration *calibration, double bar, char **why)
{
  g_autofree char *local = NULL;
  g_autofree guint8 *data = NULL;
  gsize size = 0;
  g_autoptr (GError) error = NULL;

  if (why == NULL)
    why = &local;
  if (!g_file_get_contents (path, (char **) &data, &size, &error))
    {
      *why = g_strdup_printf ("no links were kept (%s)", error->message);
      return NULL;
    }
  if (size < LINKS_HEADER + 8 || memcmp (data, LINKS_MAGIC, 8) != 0
      || lk_get_u32 (data + 8) != LINKS_VERSION)
    {
      *why = g_strdup ("the kept links are not ones this version wrote");
      return NULL;
    }
  guint64 n = lk_get_u64 (data + 24), n_links = lk_get_u64 (data + 32);
  /* The sizes must add up to the file's before anything is read. */
  if (n > size || n_links > size / sizeof (LkPair)
      || LINKS_HEADER + pad8 (n) + pad8 (n_links * sizeof (LkPair)) + 8 != size)
    {
      *why = g_strdup ("the kept links are damaged (their sizes do not add up)");
      return NULL;
    }
  gsize links_at = LINKS_HEADER + pad8 (n), sum_at = size - 8;
  if (lk_get_u64 (data + sum_at) != lk_scan_cache_checksum (data, sum_at))
    {
      *why = g_strdup ("the kept links are damaged (their checksum)");
      return NULL;
    }
  if (lk_get_u64 (data + 16) != faces || n != n_faces)
    {
      *why = g_strdup ("the kept links are of other faces");
      return NULL;
    }
  if (!lk_same_double (lk_get_f64 (data + 40), calibration->a)
      || !lk_same_double (lk_get_f64 (data + 48), calibration->b)
      || !lk_same_double (lk_get_f64 (data + 56), calibration->w_size)
      || !lk_same_double (lk_get_f64 (data + 64), bar))
    {
      *why = g_strdup ("the kept links were found with another calibration or bar");
      return NULL;
    }

  g_autoptr (LkQuestionLinks) out = g_new0 (LkQuestionLinks, 1);
  out->n_faces = n;
  out->bar = bar;
  out->calibration = *calibration;
  out->role = g_memdup2 (data + LINKS_HEADER, MAX (n, 1));
  out->links = g_array_sized_new (FALSE, FALSE, sizeof (LkPair), (guint) n_links);
  for (gsize f = 0; f < n; f++)
    if (out->role[f] > ROLE_NAMED)
      {
        *why = g_strdup ("the kept links are damaged (a face's role)");
        return NULL;
      }
  for (gsize k = 0; k < n_links; k++)
    {
      const guint8 *at = data + links_at + k * sizeof (LkPair);
      guint32 bits = lk_get_u32 (at + 8);
      LkPair p = { lk_get_u32 (at), lk_get_u32 (at + 4), 0 };
      memcpy (&p.probability, &bits, 4);
      if (!(p.i < p.j && p.j < n))
        {
          *why = g_strdup ("the kept links are damaged (a face out of range)");
          return NULL;
        }
      g_array_append_val (out->links, p);
    }
  return g_steal_pointer (&out);
}

void
lk_question_links_free (LkQuestionLinks *links)
{
  if (links == NULL)
    return;
  g_free (links->role);
  g_clear_pointer (&links->links, g_array_unref);
  g_free (links);
}

GArray *
lk_people_questions_from_links (const LkPeople *people, const LkClusterInput *input,
                                const LkQuestionLinks *links, const GPtrArray *pins, gsize limit)
{
  LkClusterInput below = *input;
  below.pairs = (const LkPair *) links->links->data;
  below.n_pairs = links->links->len;
  return lk_people_questions (people, &below, pins, limit);
}

GArray *
lk_people_questions (const LkPeople *people, const LkClusterInput *input, const GPtrArray *pins,
                     gsize limit)
{
  gsize n = people->n_faces;
  GArray *out = g_array_new (FALSE, FALSE, sizeof (LkQuestion));
  g_return_val_if_fail (input->n_faces == n, out);

  g_autofree gint64 *unit_of = candidates_of (people);

  g_autoptr (GArray) links = g_array_new (FALSE, FALSE, sizeof (Link));
  for (gsize k = 0; k < input->n_pairs; k++)
    {
      guint32 ends[2] = { input->pairs[k].i, input->pairs[k].j };
      for (int e = 0; e < 2; e++)
        {
          gint64 unit = unit_of[ends[e]];
          gint32 q = people->person_of[ends[1 - e]];
          if (unit < 0 || !is_named (people, q))
            continue;
          g_array_append_val (links, ((Link){ unit, q, ends[e], input->pairs[k].probability }));
        }
    }
  g_array_sort (links, compare_links);

  g_autoptr (GHashTable) pin_of = g_hash_table_new (g_str_hash, g_str_equal);
  for (guint k = 0; pins != NULL && k < pins->len; k++)
    {
      const LkPin *pin = g_ptr_array_index (pins, k);
      g_hash_table_insert (pin_of, pin->id, (gpointer) pin);
    }

  for (guint k = 0; k < links->len;)
    {
      gint64 unit = g_array_index (links, Link, k).unit;
      LkQuestion best = { -1, -1, 0, 0.0 };
      while (k < links->len && g_array_index (links, Link, k).unit == unit)
        {
          gint32 q = g_array_index (links, Link, k).person;
          double sum = 0.0;
          while (k < links->len && g_array_index (links, Link, k).unit == unit
                 && g_array_index (links, Link, k).person == q)
            {
              /* Sorted best first within a face: its first link is its best. */
              guint32 face = g_array_index (links, Link, k).face;
              sum += g_array_index (links, Link, k).probability;
              while (k < links->len && g_array_index (links, Link, k).unit == unit
                     && g_array_index (links, Link, k).person == q
                     && g_array_index (links, Link, k).face == face)
                k++;
            }
          guint32 one;
          gsize size;
          unit_faces (people, unit, &one, &size);
          double score = sum / (double) size;
          if (score > best.score && askable (people, input, pin_of, unit, q))
            {
              best.score = score;
              best.person = q;
            }
        }
      if (best.person < 0 || best.score < LK_QUESTION_MIN_SCORE)
        continue;
      if (unit < (gint64) people->n_people)
        {
          best.candidate = (gint32) unit;
          best.face = people->people[unit].cover;
        }
      else
        best.face = (guint32) (unit - (gint64) people->n_people);
      g_array_append_val (out, best);
    }
  g_array_sort (out, compare_questions);
  if (limit > 0 && out->len > limit)
    g_array_set_size (out, (guint) limit);
  return out;
}
