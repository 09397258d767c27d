/* lk-people.h — people: what the clustering makes and the review's decisions act on
 *
 * In a header of its own so lk-review (which checks every decision against
 * the people the user saw) does not include lk-cluster's. A person's id is "p"
 * followed by its anchor face (its smallest face) unless a decision pinned it,
 * in which case the id recorded with the decision is kept (lk-cluster.h).
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef struct
{
  char *id;       /* stable, see lk-cluster.h */
  char *name;     /* NULL when unnamed */
  guint32 *faces; /* ascending */
  gsize n_faces;
  guint32 cover; /* one of faces */
  gboolean hidden;
  gboolean pinned; /* a decision fixed it */
} LkPerson;

typedef struct
{
  LkPerson *people; /* largest first; ties: smallest first face first */
  gsize n_people;
  guint32 *unassigned; /* ascending */
  gsize n_unassigned;
  /* Faces the user dismissed as no face (LkClusterOptions.dismissed), in no
   * person and not unassigned; ascending. */
  guint32 *dismissed;
  gsize n_dismissed;
  gsize n_faces;
  gint32 *person_of; /* n_faces: index into people, or -1 when unassigned */
} LkPeople;

void lk_people_free (LkPeople *people);

/* The person with this id, or NULL. */
const LkPerson *lk_people_find (const LkPeople *people, const char *id);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (LkPeople, lk_people_free)

G_END_DECLS
