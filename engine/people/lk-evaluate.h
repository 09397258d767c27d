/* lk-evaluate.h — how right the people are, against ground-truth labels
 *
 * BCubed precision/recall/F1 (per face: how much of its person shares its
 * label, and how much of its label its person holds, averaged over labelled
 * faces), pairwise precision/recall (over face pairs put together vs truly
 * together), people found vs identities, identities split over more than one
 * group, people mixing identities. An unassigned face is a group of its own.
 * Faces without a label are left out of every figure except `people`.
 */
#pragma once

#include <glib.h>

#include "lk-cluster.h"

G_BEGIN_DECLS

#define LK_EVALUATE_ERROR (lk_evaluate_error_quark ())
GQuark lk_evaluate_error_quark (void);

typedef enum
{
  LK_EVALUATE_ERROR_NO_LABELS, /* no face has a label */
} LkEvaluateError;

typedef struct
{
  double precision;
  double recall;
  double f1;
} LkPrecisionRecall;

typedef struct
{
  LkPrecisionRecall bcubed;
  LkPrecisionRecall pairwise;
  gsize people;     /* people found (unassigned faces are not people) */
  gsize identities; /* distinct labels */
  gsize split;      /* identities whose faces are in more than one group */
  gsize mixed;      /* people holding more than one identity */
  gsize labelled;   /* faces with a label */
} LkScore;

/* labels: people->n_faces entries, NULL where a face has none. */
gboolean lk_evaluate (const LkPeople *people, const char *const *labels, LkScore *score,
                      GError **error);

/* People holding two faces of one photo (photo: people->n_faces ids). The
 * format's rule says this never happens, so anything but 0 is a bug. */
gsize lk_evaluate_same_photo (const LkPeople *people, const guint64 *photo);

G_END_DECLS
