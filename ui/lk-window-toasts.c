/* lk-window-toasts.c — the window's one notification
 *
 * Decisions come back as a notification with Undo at the bottom: an
 * AdwToast in the AdwToastOverlay of the visible page, which holds the
 * page's content only, so the notification sits above the page's bar
 * (Merge Selected, the faces' actions, the answers) and never over it.
 * libadwaita 1.2 keeps no toast above a bar of the overlay's own child,
 * hence one overlay per page with a bar; the window moves the shown
 * notification when the page changes. A leaf room: every other room of the
 * window calls it, it calls only the core.
 */
#include "config.h"

#include <adwaita.h>
#include <glib/gi18n.h>

#include "lk-window-private.h"

/* Seconds a notification stays: long enough to read it; one with Undo long
 * enough to decide and reach the button (at 6 s, a click on Undo landed on
 * the face under a notification already gone); a failed save's longest. */
#define TOAST_SECONDS         6
#define TOAST_UNDO_SECONDS    10
#define TOAST_FAILURE_SECONDS 18

/* ---- the notification ------------------------------------------------- */

/* A notification is dismissed only once its overlay has shown it for this
 * long, counted in the overlay's frames: libadwaita 1.2 frees a toast's
 * state when its hide animation ends, but leaves its show animation (300
 * ms, 500 when it replaces one) connected to that freed state, so a toast
 * dismissed before its show animation ended crashed the window when the
 * show animation ended or its page was unmapped (a freed pointer
 * unreferenced in adw_animation_skip's "done"; tests/test-ui-adaptive
 * met it on a busy display). A delay in wall-clock time is not enough: on a
 * loaded machine the overlay's frames, which drive the animation, come
 * later than any such delay. So the delay is counted by a tick callback on the
 * overlay, which runs after the animation's own in the same frame (GTK runs
 * a widget's tick callbacks in the order they were added). An overlay not
 * mapped has no show animation running (libadwaita skips it then). */
#define TOAST_SETTLE_MS 600

static const char *const settle_key = "lk-toast-settle";

typedef struct
{
  GtkWidget *home;    /* the overlay (it lives as long as the window) */
  gint64 first_frame; /* µs: the overlay's first frame after the toast came, or 0 */
  gboolean settled;
} ToastSettle;

static gboolean
on_toast_tick (GtkWidget *home, GdkFrameClock *clock, gpointer user_data)
{
  ToastSettle *settle = g_object_get_data (G_OBJECT (user_data), settle_key);
  gint64 now = gdk_frame_clock_get_frame_time (clock);

  if (settle->first_frame == 0)
    settle->first_frame = now;
  if (now - settle->first_frame < TOAST_SETTLE_MS * 1000)
    return G_SOURCE_CONTINUE;
  settle->settled = TRUE;
  return G_SOURCE_REMOVE;
}

/* Called once `toast` is in `home`. */
static void
watch_toast_settle (AdwToast *toast, GtkWidget *home)
{
  ToastSettle *settle = g_new0 (ToastSettle, 1);

  settle->home = home;
  settle->settled = !gtk_widget_get_mapped (home);
  g_object_set_data_full (G_OBJECT (toast), settle_key, settle, g_free);
  if (!settle->settled)
    gtk_widget_add_tick_callback (home, on_toast_tick, g_object_ref (toast), g_object_unref);
}

static gboolean
toast_settled (AdwToast *toast)
{
  ToastSettle *settle = g_object_get_data (G_OBJECT (toast), settle_key);

  return settle->settled || !gtk_widget_get_mapped (settle->home);
}

static gboolean
on_retired_due (gpointer user_data)
{
  LkWindow *self = user_data;

  for (guint i = 0; i < self->retired->len;)
    {
      AdwToast *toast = g_ptr_array_index (self->retired, i);
      if (toast_settled (toast))
        {
          adw_toast_dismiss (toast);
          g_ptr_array_remove_index (self->retired, i);
        }
      else
        i++;
    }
  if (self->retired->len > 0)
    return G_SOURCE_CONTINUE;
  self->retired_id = 0;
  return G_SOURCE_REMOVE;
}

/* Dismisses `toast` (taking it) once it has settled: at once when it has. */
static void
retire_toast (LkWindow *self, AdwToast *toast)
{
  if (toast_settled (toast))
    {
      adw_toast_dismiss (toast);
      g_object_unref (toast);
      return;
    }
  g_ptr_array_add (self->retired, toast);
  if (self->retired_id == 0)
    self->retired_id = g_timeout_add (100, on_retired_due, self);
}

void
_lk_window_hide_toast (LkWindow *self)
{
  g_clear_handle_id (&self->toast_timeout_id, g_source_remove);
  self->toast_label = NULL;
  self->toast_home = NULL;
  if (self->toast != NULL)
    retire_toast (self, g_steal_pointer (&self->toast));
}

/* The window goes: its overlays take their toasts with them; none is
 * dismissed (see TOAST_SETTLE_MS). */
void
_lk_window_drop_toasts (LkWindow *self)
{
  g_clear_handle_id (&self->toast_timeout_id, g_source_remove);
  g_clear_handle_id (&self->retired_id, g_source_remove);
  self->toast_label = NULL;
  self->toast_home = NULL;
  g_clear_object (&self->toast);
  g_ptr_array_set_size (self->retired, 0);
}

static gboolean
on_toast_timeout (gpointer user_data)
{
  LkWindow *self = user_data;

  self->toast_timeout_id = 0;
  _lk_window_hide_toast (self);
  return G_SOURCE_REMOVE;
}

/* Its close button, or the overlay making room for another. */
static void
on_toast_dismissed (AdwToast *toast, gpointer user_data)
{
  LkWindow *self = user_data;

  if (toast != self->toast)
    return;
  g_clear_handle_id (&self->toast_timeout_id, g_source_remove);
  self->toast_label = NULL;
  self->toast_home = NULL;
  g_clear_object (&self->toast);
}

/* The overlay over the visible page's content, above its bar if it has one. */
static GtkWidget *
toast_home (LkWindow *self)
{
  const char *page = gtk_stack_get_visible_child_name (self->stack);

  if (g_strcmp0 (page, "person") == 0)
    return lk_person_page_get_toast_overlay (self->person_page);
  if (g_strcmp0 (page, "suggestions") == 0)
    return lk_suggestions_page_get_toast_overlay (self->suggestions_page);
  if (g_strcmp0 (page, "people") == 0)
    return self->people_toast_overlay;
  return self->toast_overlay;
}

/* Where "Not This Person" put the faces, or a notification that they are
 * there no longer. */
static void
show_toast_person (LkWindow *self)
{
  LkPersonItem *person = self->session != NULL && self->toast_person != NULL
                             ? lk_session_find_person (self->session, self->toast_person)
                             : NULL;

  if (person != NULL && lk_person_item_get_n_faces (person) > 0)
    lk_window_show_person (self, person);
  else
    _lk_window_show_toast (self, _ ("Those faces are no longer a person of their own"),
                           TOAST_PLAIN);
}

static void
on_toast_show_clicked (GtkButton *button, gpointer user_data)
{
  show_toast_person (LK_WINDOW (user_data));
}

/* libadwaita 1.2's toast has one button, which is Undo as on every
 * decision's notification; "Not This Person" also offers the new person,
 * so its Show sits in the title, after the message. */
static GtkWidget *
show_person_title (LkWindow *self, GtkWidget *title)
{
  if (self->toast_kind != TOAST_SHOW_PERSON)
    return title;
  GtkWidget *box = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 6);
  GtkWidget *show = gtk_button_new_with_mnemonic (_ ("_Show"));
  gtk_widget_set_hexpand (title, TRUE);
  gtk_widget_set_valign (show, GTK_ALIGN_CENTER);
  gtk_widget_add_css_class (show, "flat");
  gtk_widget_set_tooltip_text (show, _ ("Open the new person"));
  g_signal_connect_object (show, "clicked", G_CALLBACK (on_toast_show_clicked), self, 0);
  gtk_box_append (GTK_BOX (box), title);
  gtk_box_append (GTK_BOX (box), show);
  return box;
}

/* Shows self->toast_message (kind self->toast_kind) in the visible page's
 * overlay, in place of the notification shown. The window's own timeout
 * dismisses it (the toast's is 0), so a notification moved to another page
 * keeps the time it had left. */
static void
post_toast (LkWindow *self)
{
  static const char *const labels[] = {
    [TOAST_PLAIN] = NULL,
    [TOAST_UNDO] = N_ ("_Undo"),
    [TOAST_REDO] = N_ ("_Redo"),
    [TOAST_RETRY_SAVE] = N_ ("_Retry"),
    [TOAST_SAVE_ELSEWHERE] = N_ ("_Save Elsewhere…"),
    [TOAST_SHOW_PERSON] = N_ ("_Undo"), /* its Show is beside the message */
    [TOAST_REFIT] = N_ ("_Fit"),
  };
  GtkWidget *home = toast_home (self);
  /* One line, ending in … when the window is too narrow for it (a wrapped
   * notification covers lines of the grid, and leaves a word alone on a
   * second line); the whole message, or the failure's detail,
   * is the tooltip. A label of ours, not the toast's title: that one is
   * Pango markup, which a library's name may not be. */
  GtkWidget *title = gtk_label_new (self->toast_message);
  gtk_label_set_ellipsize (GTK_LABEL (title), PANGO_ELLIPSIZE_END);
  gtk_label_set_xalign (GTK_LABEL (title), 0);
  gtk_label_set_single_line_mode (GTK_LABEL (title), TRUE);
  gtk_widget_set_tooltip_text (title, self->toast_detail != NULL ? self->toast_detail
                                                                 : self->toast_message);
  gtk_widget_add_css_class (title, "heading");

  AdwToast *toast = adw_toast_new ("");
  adw_toast_set_custom_title (toast, show_person_title (self, title));
  adw_toast_set_timeout (toast, 0);
  adw_toast_set_priority (toast, ADW_TOAST_PRIORITY_HIGH);
  if (labels[self->toast_kind] != NULL)
    {
      adw_toast_set_button_label (toast, _ (labels[self->toast_kind]));
      adw_toast_set_action_name (toast, "win.toast-action");
    }
  g_signal_connect_object (toast, "dismissed", G_CALLBACK (on_toast_dismissed), self, 0);

  /* The new one first (high priority: at once), then the one it replaces,
   * out of the queue, later. */
  AdwToast *shown = g_steal_pointer (&self->toast);
  self->toast = g_object_ref (toast);
  self->toast_label = GTK_LABEL (title);
  self->toast_home = home;
  adw_toast_overlay_add_toast (ADW_TOAST_OVERLAY (home), toast);
  watch_toast_settle (toast, home);
  if (shown != NULL)
    retire_toast (self, shown);
}

/* The page changed: the notification follows it, above its bar. */
void
_lk_window_place_toast (LkWindow *self)
{
  if (self->toast != NULL && toast_home (self) != self->toast_home)
    post_toast (self);
}

void
_lk_window_show_toast_detail (LkWindow *self, const char *message, ToastKind kind,
                              const char *detail)
{
  g_free (self->toast_message);
  self->toast_message = g_strdup (message);
  g_free (self->toast_detail);
  self->toast_detail = g_strdup (detail);
  self->toast_kind = kind;
  post_toast (self);
  g_clear_handle_id (&self->toast_timeout_id, g_source_remove);
  self->toast_timeout_id = g_timeout_add_seconds (
      kind == TOAST_RETRY_SAVE || kind == TOAST_SAVE_ELSEWHERE ? TOAST_FAILURE_SECONDS
      : kind == TOAST_UNDO || kind == TOAST_REDO || kind == TOAST_SHOW_PERSON || kind == TOAST_REFIT
          ? TOAST_UNDO_SECONDS
          : TOAST_SECONDS,
      on_toast_timeout, self);
}

void
_lk_window_show_toast (LkWindow *self, const char *message, ToastKind kind)
{
  _lk_window_show_toast_detail (self, message, kind, NULL);
}
