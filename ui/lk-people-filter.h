/* lk-people-filter.h — the people grid's header: how many are named, and which to show */
#pragma once

#include <gtk/gtk.h>

#include "people/lk-person-item.h"

G_BEGIN_DECLS

#define LK_TYPE_PEOPLE_FILTER (lk_people_filter_get_type ())
G_DECLARE_FINAL_TYPE (LkPeopleFilter, lk_people_filter, LK, PEOPLE_FILTER, GtkWidget)

/* "all", "named", "unnamed" or "hidden" (the "filter" property). */
const char *lk_people_filter_get_filter (LkPeopleFilter *self);
void lk_people_filter_set_filter (LkPeopleFilter *self, const char *filter);
/* Whether `item` passes the chosen filter; with "all", hidden people pass
 * only with `show_hidden`. */
gboolean lk_people_filter_match (LkPeopleFilter *self, LkPersonItem *item, gboolean show_hidden);
/* Counts the people of `people` (of LkPersonItem) for the progress line,
 * "412 of 1,569 people named" (hidden people are out of the review, and out
 * of the count); NULL: no library. */
void lk_people_filter_count (LkPeopleFilter *self, GListModel *people);
/* What the last count found: the people in the review (shown, with faces:
 * the "1,569" of the progress line, and the window subtitle's "1,569
 * people") and the hidden ones, so the two lines say the same number. */
guint lk_people_filter_get_n_people (LkPeopleFilter *self);
guint lk_people_filter_get_n_hidden (LkPeopleFilter *self);
/* The progress line as shown. */
const char *lk_people_filter_get_summary (LkPeopleFilter *self);

G_END_DECLS
