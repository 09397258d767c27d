/* make-family — a random family of faces whose very structure is drawn per seed
 *
 *   make-family [--faces N] SEED FOLDER
 *
 * writes FOLDER/library.json and embeddings.f32 (data/LIBRARY-FORMAT.md) with
 * every face labelled. Unlike lk-sample.c, whose families are four fixed
 * recipes, here the seed draws the recipe itself, so a calibration judged on
 * many seeds is judged on kinds of faces nobody tuned it for
 * (tests/people-grid.py):
 *
 *   dimension         64 … 1024, log-uniform
 *   one person        faces at cosine r ≈ 0.35 … 0.85 of each other, each
 *                     person's r and each face's distance to its centre varying
 *   strangers         centres at mean cosine s = 0 … 0.6 (a direction all
 *                     share), spread by the centres' own dimension, and skewed
 *                     by a trait some people carry much more of than others
 *   look-alikes       0 … 30 % of people have one, their centres at cosine
 *                     0.3 … 0.9 of their twin's
 *   faces per person  Pareto: tail index 0.8 … 2, at least 1 or 2 faces
 *   group photos      0 … 60 % of faces share a photo with 1 … 7 others,
 *                     each of another person
 *   low quality       0 … 25 % of faces are small, blurred crops: further
 *                     from their centre, crop_px 24 … 60, quality < 0.5
 *
 * The recipe is written into library.json as "family" (a member the loader
 * ignores). A seed gives the same files with the same libm: log, exp, cos and
 * pow are not correctly rounded everywhere, so another C library may draw
 * slightly other faces (lk-sample.c, which must not, uses only + − × ÷ √).
 * The library's own calibration puts the bar above every cosine, so a scan
 * with it (likeness-cli evaluate's first row) costs nothing: the
 * calibrations that matter are the ones estimated or fitted on it.
 */
#include <glib.h>
#include <glib/gstdio.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct
{
  guint dim, centre_dim;
  double r, face_sd, s, skew, lookalike_share, closeness, tail, group_share, low_share;
  guint min_faces;
} Recipe;

typedef struct
{
  guint person;
  gboolean low;
  double crop, quality;
  guint photo;
} Face;

static double
uniform (GRand *g, double lo, double hi)
{
  return g_rand_double_range (g, lo, hi);
}

static double
gauss (GRand *g)
{
  double u = 1 - g_rand_double (g), v = g_rand_double (g);
  return sqrt (-2 * log (u)) * cos (2 * G_PI * v);
}

static void
normalize (double *v, guint dim)
{
  double n = 0;
  for (guint d = 0; d < dim; d++)
    n += v[d] * v[d];
  n = sqrt (n);
  for (guint d = 0; d < dim; d++)
    v[d] /= n;
}

/* A random unit vector in the first `used` of `dim` coordinates. */
static void
random_unit (GRand *g, double *v, guint dim, guint used)
{
  for (guint d = 0; d < dim; d++)
    v[d] = d < used ? gauss (g) : 0;
  normalize (v, dim);
}

/* A random unit vector orthogonal to the unit vector c. */
static void
orthogonal_unit (GRand *g, double *v, const double *c, guint dim)
{
  random_unit (g, v, dim, dim);
  double p = 0;
  for (guint d = 0; d < dim; d++)
    p += v[d] * c[d];
  for (guint d = 0; d < dim; d++)
    v[d] -= p * c[d];
  normalize (v, dim);
}

static void
draw_recipe (GRand *g, Recipe *r)
{
  r->dim = (guint) lround (64 * pow (2, uniform (g, 0, 4)));
  /* Strangers' cosines spread about 1/√centre_dim around their mean. */
  double spread = uniform (g, 0.03, 0.15);
  r->centre_dim = MIN (r->dim, (guint) lround (1 / (spread * spread)));
  r->r = uniform (g, 0.35, 0.85);
  r->face_sd = uniform (g, 0.02, 0.12);
  r->s = uniform (g, 0, 0.6);
  r->skew = uniform (g, 0, 1);
  r->lookalike_share = uniform (g, 0, 0.3);
  r->closeness = uniform (g, 0.3, 0.9);
  r->tail = uniform (g, 0.8, 2);
  r->min_faces = g_rand_int_range (g, 1, 3);
  r->group_share = uniform (g, 0, 0.6);
  r->low_share = uniform (g, 0, 0.25);
}

int
main (int argc, char **argv)
{
  gint64 target = 1500;
  const GOptionEntry entries[] = {
    { "faces", 0, 0, G_OPTION_ARG_INT64, &target, "About this many faces (default 1500)", "N" },
    { NULL },
  };
  g_autoptr (GOptionContext) context = g_option_context_new ("SEED FOLDER");
  g_option_context_add_main_entries (context, entries, NULL);
  g_autoptr (GError) error = NULL;
  if (!g_option_context_parse (context, &argc, &argv, &error) || argc != 3 || target < 10
      || target > 1000000)
    {
      fprintf (stderr, "make-family: %s\n",
               error ? error->message : "usage: make-family [--faces N] SEED FOLDER (N ≥ 10)");
      return 2;
    }
  guint64 seed = g_ascii_strtoull (argv[1], NULL, 10);
  const char *folder = argv[2];
  g_autoptr (GRand) g = g_rand_new_with_seed ((guint32) (seed * 2654435761u + 12345));
  Recipe rec;
  draw_recipe (g, &rec);
  const guint dim = rec.dim;

  /* People and their numbers of faces, until the target is reached. */
  g_autoptr (GArray) counts = g_array_new (FALSE, FALSE, sizeof (guint));
  gint64 total = 0;
  while (total < target)
    {
      double n = rec.min_faces * pow (1 - g_rand_double (g), -1 / rec.tail);
      guint k = (guint) MIN (ceil (n), MAX (target / 5, 2));
      g_array_append_val (counts, k);
      total += k;
    }
  const guint people = counts->len;

  /* Centres: a shared direction (mean s), a trait carried in heavy-tailed
   * measure (skew), the rest the person's own in centre_dim coordinates. */
  g_autofree double *shared = g_new (double, dim);
  g_autofree double *trait = g_new (double, dim);
  random_unit (g, shared, dim, dim);
  random_unit (g, trait, dim, dim);
  g_autofree double *centres = g_new (double, (gsize) people *dim);
  g_autofree double *own = g_new (double, dim);
  g_autofree int *twin = g_new (int, people);
  for (guint p = 0; p < people; p++)
    {
      double *c = centres + (gsize) p * dim;
      random_unit (g, own, dim, rec.centre_dim);
      double t = rec.skew * -log (1 - g_rand_double (g)) * 0.5;
      for (guint d = 0; d < dim; d++)
        c[d] = sqrt (rec.s) * shared[d] + t * trait[d] + sqrt (1 - rec.s) * own[d];
      normalize (c, dim);
      twin[p] = -1;
    }
  /* Look-alikes: a share of the people lean towards another person. */
  for (guint p = 0; p + 1 < people; p++)
    {
      if (twin[p] >= 0 || g_rand_double (g) >= rec.lookalike_share)
        continue;
      guint q = g_rand_int_range (g, 0, (gint32) people);
      if (q == p || twin[q] >= 0)
        continue;
      double *a = centres + (gsize) p * dim, *b = centres + (gsize) q * dim;
      g_autofree double *o = g_new (double, dim);
      orthogonal_unit (g, o, a, dim);
      for (guint d = 0; d < dim; d++)
        b[d] = rec.closeness * a[d] + sqrt (1 - rec.closeness * rec.closeness) * o[d];
      twin[p] = (int) q;
      twin[q] = (int) p;
    }

  /* Faces: each at its own distance from its centre. */
  g_autoptr (GArray) faces = g_array_new (FALSE, FALSE, sizeof (Face));
  g_autofree float *rows = g_new (float, (gsize) total *dim);
  g_autofree double *v = g_new (double, dim), *n = g_new (double, dim);
  for (guint p = 0; p < people; p++)
    {
      const double *c = centres + (gsize) p * dim;
      double r_person = CLAMP (rec.r * uniform (g, 0.9, 1.1), 0.1, 0.95);
      for (guint k = 0; k < g_array_index (counts, guint, p); k++)
        {
          Face f = { p, g_rand_double (g) < rec.low_share, 0, 0, 0 };
          double rho = sqrt (r_person) * (1 + rec.face_sd * gauss (g));
          if (f.low)
            {
              rho *= uniform (g, 0.5, 0.85);
              f.crop = uniform (g, 24, 60);
              f.quality = uniform (g, 0.1, 0.45);
            }
          else
            {
              f.crop = 140 * exp (0.4 * gauss (g));
              f.quality = uniform (g, 0.55, 1);
            }
          rho = CLAMP (rho, 0.05, 0.99);
          orthogonal_unit (g, n, c, dim);
          for (guint d = 0; d < dim; d++)
            v[d] = rho * c[d] + sqrt (1 - rho * rho) * n[d];
          normalize (v, dim);
          float *row = rows + (gsize) faces->len * dim;
          for (guint d = 0; d < dim; d++)
            row[d] = (float) v[d];
          g_array_append_val (faces, f);
        }
    }

  /* Photos: a share of the faces, in random order, fill group photos of 2–8
   * faces of different people; every other face is a photo of its own. */
  g_autofree guint *order = g_new (guint, faces->len);
  for (guint i = 0; i < faces->len; i++)
    order[i] = i;
  for (guint i = faces->len; i > 1; i--)
    {
      guint j = g_rand_int_range (g, 0, (gint32) i), t = order[i - 1];
      order[i - 1] = order[j];
      order[j] = t;
    }
  guint photos = 0, in_group = 0;
  gsize grouped = (gsize) (rec.group_share * faces->len);
  for (guint i = 0; i < faces->len;)
    {
      if (in_group < grouped)
        {
          guint size = g_rand_int_range (g, 2, 9), taken = 0;
          for (guint j = i; j < faces->len && taken < size; j++)
            {
              Face *f = &g_array_index (faces, Face, order[j]);
              gboolean clash = FALSE;
              for (guint m = i; m < i + taken; m++)
                clash |= g_array_index (faces, Face, order[m]).person == f->person;
              if (clash)
                continue;
              guint t = order[i + taken];
              order[i + taken] = order[j];
              order[j] = t;
              g_array_index (faces, Face, order[i + taken]).photo = photos;
              taken++;
            }
          in_group += taken;
          i += taken;
        }
      else
        g_array_index (faces, Face, order[i++]).photo = photos;
      photos++;
    }

  if (g_mkdir_with_parents (folder, 0755) != 0)
    {
      fprintf (stderr, "make-family: cannot make %s: %s\n", folder, g_strerror (errno));
      return 1;
    }
  g_autofree char *emb = g_build_filename (folder, "embeddings.f32", NULL);
  if (G_BYTE_ORDER != G_LITTLE_ENDIAN)
    for (gsize i = 0; i < (gsize) faces->len * dim; i++)
      {
        guint32 u;
        memcpy (&u, &rows[i], 4);
        u = GUINT32_TO_LE (u);
        memcpy (&rows[i], &u, 4);
      }
  if (!g_file_set_contents (emb, (const char *) rows, (gssize) faces->len * dim * 4, &error))
    {
      fprintf (stderr, "make-family: %s\n", error->message);
      return 1;
    }
  g_autoptr (GString) j = g_string_new ("{\n  \"format\": \"likeness-library\", \"version\": 1,\n");
  g_string_append_printf (j,
                          "  \"embeddings\": { \"file\": \"embeddings.f32\", \"dim\": %u, "
                          "\"count\": %u, \"normalized\": true },\n",
                          dim, faces->len);
  g_string_append (j, "  \"calibration\": { \"a\": 30, \"b\": -40, \"w_size\": 0 },\n");
  char b[12][G_ASCII_DTOSTR_BUF_SIZE];
  double values[]
      = { rec.r,         rec.face_sd, rec.s,           rec.skew,     rec.lookalike_share,
          rec.closeness, rec.tail,    rec.group_share, rec.low_share };
  for (guint i = 0; i < G_N_ELEMENTS (values); i++)
    g_ascii_formatd (b[i], sizeof b[i], "%.4f", values[i]);
  g_string_append_printf (j,
                          "  \"family\": { \"seed\": %" G_GUINT64_FORMAT ", \"dim\": %u, "
                          "\"centre_dim\": %u, \"people\": %u, \"photos\": %u, \"one_person\": %s, "
                          "\"face_sd\": %s, \"strangers_mean\": %s, \"skew\": %s, "
                          "\"lookalike_share\": %s, \"closeness\": %s, \"tail\": %s, "
                          "\"min_faces\": %u, \"group_share\": %s, \"low_share\": %s },\n",
                          seed, dim, rec.centre_dim, people, photos, b[0], b[1], b[2], b[3], b[4],
                          b[5], b[6], rec.min_faces, b[7], b[8]);
  g_string_append (j, "  \"faces\": [\n");
  for (guint i = 0; i < faces->len; i++)
    {
      const Face *f = &g_array_index (faces, Face, i);
      char crop[G_ASCII_DTOSTR_BUF_SIZE], quality[G_ASCII_DTOSTR_BUF_SIZE];
      g_ascii_formatd (crop, sizeof crop, "%.1f", f->crop);
      g_ascii_formatd (quality, sizeof quality, "%.3f", f->quality);
      g_string_append_printf (j,
                              "    { \"photo\": %u, \"crop_px\": %s, \"quality\": %s, "
                              "\"label\": \"p%05u\" }%s\n",
                              f->photo, crop, quality, f->person, i + 1 < faces->len ? "," : "");
    }
  g_string_append (j, "  ]\n}\n");
  g_autofree char *manifest = g_build_filename (folder, "library.json", NULL);
  if (!g_file_set_contents (manifest, j->str, (gssize) j->len, &error))
    {
      fprintf (stderr, "make-family: %s\n", error->message);
      return 1;
    }
  printf ("%s: %u faces of %u people in %u photos, dim %u\n", folder, faces->len, people, photos,
          dim);
  return 0;
}
