/* lk-source-people.c — see lk-source-people.h */
#include "config.h"

#include "lk-source-people.h"

#include "lk-cluster.h"

static int
compare_faces (gconstpointer a, gconstpointer b)
{
  guint32 x = *(const guint32 *) a, y = *(const guint32 *) b;
  return x < y ? -1 : x > y;
}

GPtrArray *
lk_source_people_pins (const LkLibrary *library, GPtrArray *refusals)
{
  GPtrArray *pins = g_ptr_array_new_with_free_func ((GDestroyNotify) lk_pin_free);
  g_autofree gint64 *owner = g_new (gint64, MAX (library->count, 1));
  for (gsize f = 0; f < library->count; f++)
    owner[f] = -1;

  for (gsize k = 0; k < library->n_source_people; k++)
    {
      const LkSourcePerson *person = &library->source_people[k];
      g_autoptr (GHashTable) photos = g_hash_table_new (g_int64_hash, g_int64_equal);
      g_autoptr (LkPin) pin = lk_pin_new (person->id);
      g_autofree char *who = person->name != NULL
                                 ? g_strdup_printf ("people[%zu] “%s”", k, person->name)
                                 : g_strdup_printf ("people[%zu] (id %s)", k, person->id);

      pin->name = g_strdup (person->name);
      pin->hidden = person->hidden;
      for (gsize m = 0; m < person->n_faces; m++)
        {
          guint32 f = person->faces[m];
          const guint64 *photo = &library->photo[f];
          gpointer same = NULL;
          if (owner[f] >= 0)
            {
              if (refusals != NULL)
                g_ptr_array_add (refusals,
                                 g_strdup_printf ("%s: face %u is already people[%" G_GINT64_FORMAT
                                                  "]'s",
                                                  who, f, owner[f]));
              continue;
            }
          if (g_hash_table_lookup_extended (photos, photo, NULL, &same))
            {
              if (refusals != NULL)
                g_ptr_array_add (refusals,
                                 g_strdup_printf ("%s: face %u is in photo %" G_GUINT64_FORMAT
                                                  " with face %u; two faces of one photo are never "
                                                  "one person",
                                                  who, f, *photo, GPOINTER_TO_UINT (same)));
              continue;
            }
          g_hash_table_insert (photos, (gpointer) photo, GUINT_TO_POINTER (f));
          owner[f] = (gint64) k;
          g_array_append_val (pin->faces, f);
        }
      if (pin->faces->len == 0)
        continue;
      g_array_sort (pin->faces, compare_faces);
      g_ptr_array_add (pins, g_steal_pointer (&pin));
    }
  return pins;
}
