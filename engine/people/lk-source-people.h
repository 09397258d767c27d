/* lk-source-people.h — the source's people, as the lowest layer of decisions
 *
 * A library imported from Immich or PhotoPrism says who the source thought
 * its faces were (the manifest's "people": names, hidden flags, the faces
 * assigned). Each such person becomes an LkPin — its source id as the
 * person's id, its name, its hidden flag, its faces held together — which
 * lk-review replays before the user's decisions (lk_review_set_base_pins), so
 * the person shows as the source had it, named, until the user decides
 * otherwise; any later decision about a face wins.
 *
 * Likeness's rules apply to the source's word too, and what they refuse is
 * reported, not silently kept: two faces of one photo are never one person
 * (the first in the manifest's order stays, the others are refused); a face
 * the source gave two people stays with the first; a face id the library
 * does not have was dropped by the loader (LkLibrary->source_unknown_faces).
 */
#pragma once

#include "library/lk-library.h"

G_BEGIN_DECLS

/* The pins (of LkPin *, owned by the array), one per source person left with
 * a face, in the manifest's order. `refusals` (of char *, may be NULL)
 * receives one line per refused assignment ("people[1] “Eve”: face 1 (id …)
 * is in photo 0 with face 0 (id …)"). */
GPtrArray *lk_source_people_pins (const LkLibrary *library, GPtrArray *refusals);

G_END_DECLS
