/* lk-questions.h — "Is this Ada?": faces and small people to offer a named person
 *
 * Google Photos asks, one face at a time, whether a face it is unsure of is
 * someone the user named. Here the questions are the unassigned faces and
 * the small unnamed people that the scan's pairs link to a named person:
 * "Yes" is the move (a face) or merge (a person) the user could make by
 * hand; "No" a rejection (lk_review_reject_faces), after which the same
 * question is never asked again.
 */
#pragma once

#include <glib.h>

#include "lk-cluster.h"

G_BEGIN_DECLS

/* Unnamed people of at most this many faces are asked about; a larger one
 * is a person of its own that the user can name or merge (Merge…). */
#define LK_QUESTION_SMALL_PERSON 3
/* A candidate is asked about when this share of it, on average, is linked:
 * the mean over its faces of the best pair probability to the named person
 * (no pair: 0). 0.5 asks about a single face with any pair (every pair of the
 * scan is at or above the bar, 0.9 by default) and about a small person when
 * most of its faces have one, not about a person linked by one face only. */
#define LK_QUESTION_MIN_SCORE    0.5

typedef struct
{
  gint32 person;    /* the named person asked about: index into people */
  gint32 candidate; /* an unnamed small person (index into people), or -1: `face` is unassigned */
  guint32 face;     /* the unassigned face, or the candidate's cover */
  double score;     /* mean over the candidate's faces of its best pair probability to person */
} LkQuestion;

/* The questions, highest score first (ties: lower face first), at most
 * `limit` (0: all); one per candidate, for the named person it links best.
 * Left out: hidden people (as candidates and as named people), a candidate
 * with a face the named person's pin excludes (a "No" or "not this person"
 * before), and one with a face of a photo the named person already has a
 * face in (two faces of one photo are never one person: "Yes" could not be
 * done). Dismissed faces have no pairs in the people (lk_cluster) and are
 * never unassigned. O(pairs + questions · faces). Array of LkQuestion. */
GArray *lk_people_questions (const LkPeople *people, const LkClusterInput *input,
                             const GPtrArray *pins, gsize limit);

G_END_DECLS
