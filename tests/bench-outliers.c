/* bench-outliers — how many wrongly assigned faces the first screenful shows
 *
 *   bench-outliers LIBRARY [SCREENFUL] [MIN_FACES] [BAR] [PLANT]
 *
 * Loads LIBRARY as the window does (its review.json, the scan, the people),
 * and for every person of at least MIN_FACES faces (default 1) counts its
 * wrongly assigned faces — faces whose label is not the person's most
 * common label — and how many of them fall among the first SCREENFUL faces
 * (default 40: the tiles the person page shows whole at 1280 × 720, see README
 * "Outliers first") in the person page's two orders: today's (ascending
 * face) and outliers first (lk_outliers_first). Needs labels
 * (faces[].label). Not a timing: a count, the same on every machine.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "lk-session.h"
#include "people/lk-outliers.h"

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

int
main (int argc, char **argv)
{
  if (argc < 2)
    {
      g_printerr ("usage: %s LIBRARY [SCREENFUL] [MIN_FACES] [BAR]\n", argv[0]);
      return 2;
    }
  gsize screen = argc > 2 ? (gsize) atoi (argv[2]) : 40;
  gsize min_faces = argc > 3 ? (gsize) atoi (argv[3]) : 1;
  g_autoptr (LkSession) session = lk_session_new (argv[1]);
  g_autoptr (GError) error = NULL;
  if (argc > 4 && g_ascii_strtod (argv[4], NULL) > 0)
    lk_session_set_probability_bar (session, g_ascii_strtod (argv[4], NULL));
  guint plant = argc > 5 ? (guint) atoi (argv[5]) : 0;
  if (!lk_session_load (session, NULL, &error))
    {
      g_printerr ("%s\n", error->message);
      return 1;
    }
  const LkLibrary *library = lk_session_get_library (session);
  const LkPeople *people = lk_session_peek_people (session);
  if (plant > 0)
    {
      /* Who gets whose faces, from the people as first clustered; then the
       * moves, each against the people the previous one left, by id. */
      g_autoptr (GPtrArray) targets = g_ptr_array_new_with_free_func (g_free);
      g_autoptr (GPtrArray) sources = g_ptr_array_new_with_free_func (g_free);
      g_autofree float *centroids
          = lk_people_centroids (people, library->embeddings, library->dim, library->count);
      for (gsize p = 0; p < people->n_people && people->people[p].n_faces >= min_faces; p++)
        {
          gssize best = -1;
          double best_cos = -2.0;
          for (gsize q = 0; q < people->n_people; q++)
            {
              if (q == p || people->people[q].n_faces < plant + 1)
                continue;
              double dot = 0.0;
              for (guint d = 0; d < library->dim; d++)
                dot += (double) centroids[p * library->dim + d] * centroids[q * library->dim + d];
              if (dot > best_cos)
                {
                  best_cos = dot;
                  best = (gssize) q;
                }
            }
          if (best < 0)
            continue;
          g_ptr_array_add (targets, g_strdup (people->people[p].id));
          g_ptr_array_add (sources, g_strdup (people->people[best].id));
        }
      for (guint k = 0; k < targets->len; k++)
        {
          const LkPeople *now = lk_session_peek_people (session);
          const LkPerson *source = lk_people_find (now, g_ptr_array_index (sources, k));
          if (source == NULL || source->n_faces < plant + 1
              || lk_people_find (now, g_ptr_array_index (targets, k)) == NULL)
            continue;
          /* Spread over the source's faces: its first faces have the lowest
           * indices, which today's order shows first. */
          g_autofree guint32 *chosen = g_new (guint32, plant);
          for (guint m = 0; m < plant; m++)
            chosen[m] = source->faces[(gsize) (m + 1) * source->n_faces / (plant + 1)];
          g_autoptr (GError) move_error = NULL;
          if (!lk_session_move_faces (session, source->id, chosen, plant,
                                      g_ptr_array_index (targets, k), NULL, &move_error))
            g_printerr ("not planted in %s: %s\n", (char *) g_ptr_array_index (targets, k),
                        move_error->message);
        }
    }
  people = lk_session_peek_people (session);
  if (library->label == NULL)
    {
      g_printerr ("%s has no labels\n", argv[1]);
      return 1;
    }
  gsize persons = 0, with_wrong = 0, wrong = 0, found_index = 0, found_outliers = 0;
  gsize first_row_index = 0, first_row_outliers = 0;
  double rank_index = 0, rank_outliers = 0;
  for (gsize p = 0; p < people->n_people; p++)
    {
      const LkPerson *person = &people->people[p];
      if (person->n_faces < min_faces)
        continue;
      persons++;
      const char *label = majority (library, person->faces, person->n_faces);
      g_autofree guint32 *order = g_memdup2 (person->faces, person->n_faces * sizeof (guint32));
      lk_outliers_first (library->embeddings, library->dim, library->count, order, person->n_faces,
                         NULL);
      gsize here = 0;
      for (gsize k = 0; k < person->n_faces; k++)
        {
          const char *l = library->label[person->faces[k]] ? library->label[person->faces[k]] : "";
          if (strcmp (l, label) != 0)
            {
              here++;
              found_index += k < screen;
              first_row_index += k < 8;
              rank_index += (double) k / (double) person->n_faces;
            }
          const char *o = library->label[order[k]] ? library->label[order[k]] : "";
          if (strcmp (o, label) != 0)
            {
              found_outliers += k < screen;
              first_row_outliers += k < 8;
              rank_outliers += (double) k / (double) person->n_faces;
            }
        }
      wrong += here;
      with_wrong += here > 0;
    }
  g_print ("%s: %zu faces, %zu people of >= %zu faces, %zu with wrongly assigned faces, %zu "
           "wrongly assigned faces\n",
           argv[1], library->count, persons, min_faces, with_wrong, wrong);
  if (wrong == 0)
    return 0;
  g_print ("in the first %zu (a screenful): today's order %zu (%.1f %%), outliers first %zu "
           "(%.1f %%)\n",
           screen, found_index, 100.0 * found_index / wrong, found_outliers,
           100.0 * found_outliers / wrong);
  g_print ("in the first 8 (a row): today's order %zu (%.1f %%), outliers first %zu (%.1f %%)\n",
           first_row_index, 100.0 * first_row_index / wrong, first_row_outliers,
           100.0 * first_row_outliers / wrong);
  g_print ("mean place in the person (0 first, 1 last): today's order %.3f, outliers first %.3f\n",
           rank_index / wrong, rank_outliers / wrong);
  return 0;
}
