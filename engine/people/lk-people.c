/* lk-people.c — people, as the clustering makes them */
#include "config.h"

#include <string.h>

#include "lk-people.h"

void
lk_people_free (LkPeople *people)
{
  if (people == NULL)
    return;
  for (gsize k = 0; k < people->n_people; k++)
    {
      g_free (people->people[k].id);
      g_free (people->people[k].name);
      g_free (people->people[k].faces);
    }
  g_free (people->people);
  g_free (people->unassigned);
  g_free (people->dismissed);
  g_free (people->person_of);
  g_free (people);
}

const LkPerson *
lk_people_find (const LkPeople *people, const char *id)
{
  for (gsize k = 0; id && k < people->n_people; k++)
    if (strcmp (people->people[k].id, id) == 0)
      return &people->people[k];
  return NULL;
}
