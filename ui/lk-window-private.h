/* lk-window-private.h — what the window's files (lk-window*.c) share, and
 * what the tests and the developer probes may ask a window
 *
 * The public face of the window is lk-window.h; this header is for the
 * window's own files (ui/lk-window*.c), the probes (ui/dev/lk-window-probes.c)
 * and the display tests, which read the struct's template children.
 */
#pragma once

#include <adwaita.h>

#include "lk-empty-page.h"
#include "lk-error-page.h"
#include "lk-guard-banner.h"
#include "lk-loading-page.h"
#include "lk-people-filter.h"
#include "lk-people-selection.h"
#include "lk-person-page.h"
#include "lk-review-bar.h"
#include "lk-suggestions-page.h"
#include "lk-texture-cache.h"
#include "lk-window.h"

G_BEGIN_DECLS

typedef enum
{
  TOAST_PLAIN,
  TOAST_UNDO,
  TOAST_REDO,
  TOAST_RETRY_SAVE,
  TOAST_SAVE_ELSEWHERE,
  TOAST_SHOW_PERSON, /* toast_person: where "Not This Person" put the faces */
  TOAST_REFIT,       /* enough decisions to fit the calibration to them */
} ToastKind;

struct _LkWindow
{
  GtkApplicationWindow parent_instance;

  GSettings *settings;
  GtkStringList *recent; /* recent-libraries, for the empty page */
  LkTextureCache *cache;
  LkSession *session;
  gulong save_failed_id;
  gulong decision_failed_id;
  gulong refreshed_id;
  gulong changed_id;

  LkSession *loading; /* the session being loaded: self->session (re-scan) or a new one */
  GCancellable *load_cancellable;
  char *job_folder;
  char *failed_folder; /* the folder of the error page */
  /* A failed load's folder being looked at for photos (lk-window-load.c):
   * its error page waits for the answer. NULL when none is. */
  GCancellable *probe_cancellable;

  GtkSortListModel *sorted;
  GtkFilterListModel *filtered;
  GtkCustomSorter *sorter;
  GtkCustomFilter *filter;
  char *sort_order;
  gboolean show_hidden;

  guint toast_timeout_id;
  guint settle_focus_id;
  ToastKind toast_kind;
  gboolean told_read_only;  /* a failed save said this library is read-only */
  gboolean close_confirmed; /* the user chose to close with unsaved decisions */
  char *toast_person;       /* TOAST_SHOW_PERSON's person id */
  /* Where Review Suggestions was opened from, for Back and Escape: the
   * person page, or the grid with the keys on this person's tile (an id, as
   * every answer re-clusters the people; NULL when no tile had them). */
  gboolean review_from_person;
  char *review_from_tile;
  /* What the decisions made in this window said ("Named “Ada”"), newest
   * last, and those undone: "Undone" says what (lk-window-actions.c). */
  GPtrArray *done_messages;
  GPtrArray *undone_messages;
  /* The calibration change the running load makes (lk-window-calibration.c). */
  LkCalibrationChange calibration_change;
  LkCalibrationFrom calibration_from;

  /* Template children. */
  GtkWidget *back_button;
  GtkWidget *open_button;
  GtkWidget *search_button;
  GtkMenuButton *menu_button;
  GMenu *recent_section;
  GtkRevealer *banner_revealer;
  GtkWidget *banner;
  GtkImage *banner_icon;
  GtkLabel *banner_label;
  GtkButton *banner_button;
  LkGuardBanner *guard_banner;
  GtkRevealer *scan_revealer;
  GtkLabel *scan_label;
  GtkProgressBar *scan_bar;
  GtkSearchBar *search_bar;
  GtkSearchEntry *search_entry;
  GtkStack *stack;
  LkEmptyPage *empty_page;
  LkLoadingPage *loading_page;
  LkErrorPage *error_page;
  LkPeopleFilter *people_filter;
  GtkStack *people_stack;
  GtkGridView *people_grid;
  LkReviewBar *review_bar;
  GtkRevealer *alone_revealer; /* every face alone: why */
  GtkLabel *alone_label;
  GtkWidget *selection_bar;
  GtkLabel *selection_label;
  GtkToggleButton *select_button;
  GtkMultiSelection *people_selection; /* who is selected (lk-window-select.c) */
  LkPeopleSelection *grid_selection;   /* the grid's model: its requests, over it */
  gboolean selecting;                  /* a click selects people rather than opens one */
  guint select_anchor;                 /* where a Shift+click's range starts */
  GtkWidget *keeper_chooser;           /* Merge Selected's "who stays?", or NULL */
  GtkWidget *clash_popover;            /* Merge Selected refused: two faces of one photo */
  LkPersonPage *person_page;
  LkSuggestionsPage *suggestions_page;
  GtkWidget *toast_overlay;        /* over the pages without a bar */
  GtkWidget *people_toast_overlay; /* over the grid, above the selection bar */
  AdwWindowTitle *window_title;

  /* The notification shown (lk-window-actions.c), NULL when none. */
  AdwToast *toast;
  GtkLabel *toast_label; /* its title, the toast's */
  GtkWidget *toast_home; /* the overlay it is in */
  char *toast_message;
  char *toast_detail; /* its tooltip, when not the message */
  GPtrArray *retired; /* notifications replaced, dismissed once settled */
  guint retired_id;
};

/* ---- shared by the window's files ---------------------------------------- */

/* lk-window.c */
void _lk_window_set_page (LkWindow *self, const char *page);
void _lk_window_update_header (LkWindow *self);
void _lk_window_update_people_stack (LkWindow *self);
void _lk_window_update_banner (LkWindow *self);
/* Puts the keyboard focus on `item`'s tile in the people grid, if shown. */
void _lk_window_focus_person (LkWindow *self, LkPersonItem *item);
void _lk_window_emit_load_started (LkWindow *self);
void _lk_window_emit_load_finished (LkWindow *self, gboolean loaded);

/* lk-window-load.c: loading, the session's wiring, the recent libraries */
void _lk_window_start_load (LkWindow *self, const char *folder, gboolean replace_review);
void _lk_window_clear_job (LkWindow *self);
void _lk_window_show_error (LkWindow *self, const char *folder, const GError *error);
void _lk_window_save_failed (LkSession *session, const GError *error, gpointer user_data);
/* Fills the recent libraries and follows their setting. */
void _lk_window_recent_init (LkWindow *self);

/* lk-window-close.c: TRUE when the window must stay open (it asked whether
 * to lose unsaved decisions); otherwise its size is saved. */
gboolean _lk_window_hold_close (LkWindow *self);
/* lk-window-close.c: the window's unmap, which pops its open popovers down
 * first (they outlived the window otherwise). */
void _lk_window_unmap (GtkWidget *widget);

/* lk-window-actions.c */
void _lk_window_class_install_actions (GtkWidgetClass *widget_class);
void _lk_window_show_toast (LkWindow *self, const char *message, ToastKind kind);
/* The same, with `detail` (the error's whole text) as its tooltip. */
void _lk_window_show_toast_detail (LkWindow *self, const char *message, ToastKind kind,
                                   const char *detail);
void _lk_window_hide_toast (LkWindow *self);
void _lk_window_drop_toasts (LkWindow *self);
void _lk_window_place_toast (LkWindow *self);
void _lk_window_open_folder_file (LkWindow *self, GFile *file);
void _lk_window_save_elsewhere (LkWindow *self, GFile *folder);
/* A decision made in this window said `message` (NULL: forget them all,
 * when the history is no longer only this window's). */
void _lk_window_remember_decision (LkWindow *self, const char *message);
/* Takes back the last decision (or puts back the last one undone) and says
 * which, in lk-window-history.c. */
void _lk_window_undo_or_redo (LkWindow *self, gboolean undo);

/* lk-window-select.c: several people selected in the grid, merged at once */
void _lk_window_class_install_selection (GtkWidgetClass *widget_class);
void _lk_window_selection_init (LkWindow *self);
void _lk_window_selection_dispose (LkWindow *self);
void _lk_window_update_selection (LkWindow *self);
/* Enter or a double-click on the person at `position`: TRUE when the
 * selection mode took it (it toggles the person's selection). */
gboolean _lk_window_selection_activate (LkWindow *self, guint position);
/* The keyboard focus moved (Shift+arrows extend from where it was). */
void _lk_window_selection_focus_changed (LkWindow *self);

/* lk-window-calibration.c: the guard banner's fits, the calibration's undo,
 * the offer to fit from the decisions */
void _lk_window_calibration_init (LkWindow *self);
void _lk_window_calibrate (LkWindow *self, LkCalibrationChange change, LkCalibrationFrom from);
/* Before a load starts: a window session estimates a missing calibration. */
void _lk_window_calibration_prepare (LkWindow *self, LkSession *loading);
/* A load ended (not cancelled). TRUE when it was a calibration change that
 * failed: the people on screen stay, a notification says why. */
gboolean _lk_window_calibration_load_done (LkWindow *self, LkSession *session, gboolean loaded,
                                           const GError *error);
/* The session's people changed: perhaps offer to fit from the decisions. */
void _lk_window_calibration_changed (LkWindow *self);
/* Undo (redo TRUE: redo) when its next step is a calibration change: TRUE
 * when it was (a load then makes it). */
gboolean _lk_window_calibration_undo (LkWindow *self, gboolean redo);

/* ---- for the tests and the developer probes ----------------------------- */

/* The visible page: "empty", "loading", "error", "people", "person",
 * "suggestions". */
const char *lk_window_get_page (LkWindow *self);
/* Merges the people selected in the grid into one (win.merge-selected). */
gboolean lk_window_merge_selected (LkWindow *self, GError **error);
/* TRUE while a library loads or scans. */
gboolean lk_window_is_busy (LkWindow *self);
/* The people as the grid shows them (sorted, filtered; of LkPersonItem). */
GListModel *lk_window_get_visible_people (LkWindow *self);
/* Opens a person's page. */
void lk_window_show_person (LkWindow *self, LkPersonItem *item);
/* The error page's message and advice. */
const char *lk_window_get_error_message (LkWindow *self);
const char *lk_window_get_error_hint (LkWindow *self);
/* The text of the notification at the bottom, or NULL when none is shown. */
const char *lk_window_get_toast (LkWindow *self);
/* Its title label (in the AdwToast's widget, the "toast" node), or NULL. */
GtkLabel *lk_window_get_toast_label (LkWindow *self);
/* Why every face is alone (the grid holds only "Unassigned faces"), or NULL
 * when that explanation is hidden. */
const char *lk_window_get_alone_text (LkWindow *self);
/* The header bar's subtitle, or NULL when it has none. */
const char *lk_window_get_subtitle (LkWindow *self);
/* The text of the read-only banner under the header bar, or NULL when hidden. */
const char *lk_window_get_banner (LkWindow *self);
/* What choosing `folder` in Save Elsewhere's folder chooser does. */
void lk_window_save_elsewhere (LkWindow *self, GFile *folder);

G_END_DECLS
