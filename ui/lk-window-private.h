/* lk-window-private.h — what lk-window.c and lk-window-actions.c share, and
 * what the tests and the developer probes may ask a window
 *
 * The public face of the window is lk-window.h; this header is for the
 * window's own files (ui/lk-window*.c), the probes (ui/lk-window-probes.c)
 * and the display tests, which read the struct's template children.
 */
#pragma once

#include "lk-people-filter.h"
#include "lk-person-page.h"
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
} ToastKind;

struct _LkWindow
{
  GtkApplicationWindow parent_instance;

  GSettings *settings;
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

  /* Template children. */
  GtkWidget *back_button;
  GtkWidget *open_button;
  GtkLabel *title_label;
  GtkLabel *subtitle_label;
  GtkWidget *search_button;
  GtkMenuButton *menu_button;
  GMenu *recent_section;
  GtkRevealer *banner_revealer;
  GtkWidget *banner;
  GtkImage *banner_icon;
  GtkLabel *banner_label;
  GtkButton *banner_button;
  GtkRevealer *scan_revealer;
  GtkLabel *scan_label;
  GtkProgressBar *scan_bar;
  GtkSearchBar *search_bar;
  GtkSearchEntry *search_entry;
  GtkStack *stack;
  GtkWidget *sample_button;
  GtkWidget *recent_title;
  GtkListBox *recent_list;
  GtkLabel *loading_title;
  GtkLabel *loading_phase;
  GtkProgressBar *loading_bar;
  GtkLabel *loading_detail;
  GtkLabel *error_title;
  GtkLabel *error_message;
  GtkLabel *error_hint;
  GtkWidget *retry_button;
  GtkWidget *start_over_button;
  LkPeopleFilter *people_filter;
  GtkStack *people_stack;
  GtkGridView *people_grid;
  LkPersonPage *person_page;
  LkSuggestionsPage *suggestions_page;
  GtkRevealer *toast_revealer;
  GtkLabel *toast_label;
  GtkButton *toast_button;
};

/* ---- shared by lk-window.c and lk-window-actions.c ---------------------- */

/* lk-window.c */
void _lk_window_set_page (LkWindow *self, const char *page);
void _lk_window_start_load (LkWindow *self, const char *folder, gboolean replace_review);
void _lk_window_clear_job (LkWindow *self);
void _lk_window_show_error (LkWindow *self, const char *folder, const GError *error);
void _lk_window_update_banner (LkWindow *self);
void _lk_window_save_failed (LkSession *session, const GError *error, gpointer user_data);
char *_lk_window_display_path (const char *path);

/* lk-window-actions.c */
void _lk_window_class_install_actions (GtkWidgetClass *widget_class);
void _lk_window_show_toast (LkWindow *self, const char *message, ToastKind kind);
void _lk_window_hide_toast (LkWindow *self);
void _lk_window_place_toast (LkWindow *self);
void _lk_window_open_folder_file (LkWindow *self, GFile *file);
void _lk_window_save_elsewhere (LkWindow *self, GFile *folder);

/* ---- for the tests and the developer probes ----------------------------- */

/* The visible page: "empty", "loading", "error", "people", "person",
 * "suggestions". */
const char *lk_window_get_page (LkWindow *self);
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
/* The text of the read-only banner under the header bar, or NULL when hidden. */
const char *lk_window_get_banner (LkWindow *self);
/* What choosing `folder` in Save Elsewhere's folder chooser does. */
void lk_window_save_elsewhere (LkWindow *self, GFile *folder);

G_END_DECLS
