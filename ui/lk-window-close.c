/* lk-window-close.c — closing a window: asked first when decisions would be
 * lost; the size kept for the next start
 *
 * Why it is a file of its own: the close button, Ctrl+W and Ctrl+Q (which
 * closes every window the same way, lk-application.c) all come through the
 * window's close-request, and this is the one place that may refuse it.
 */
#include "config.h"

#include <adwaita.h>
#include <glib/gi18n.h>

#include "lk-window-private.h"

/* AdwMessageDialog (libadwaita 1.2), GNOME's confirmation dialog: it closes
 * itself after its response. (GtkMessageDialog, used before, is deprecated
 * from GTK 4.10.) */
static void
on_close_response (AdwMessageDialog *dialog, const char *response, gpointer user_data)
{
  LkWindow *self = user_data;

  /* The dialog outlives this handler (it closes itself after); let it forget
   * the window, which may be gone before it is. */
  gtk_window_set_transient_for (GTK_WINDOW (dialog), NULL);
  if (g_strcmp0 (response, "discard") == 0)
    {
      self->close_confirmed = TRUE;
      gtk_window_close (GTK_WINDOW (self));
    }
  else if (g_strcmp0 (response, "save") == 0)
    gtk_widget_activate_action (GTK_WIDGET (self), "win.save-elsewhere", NULL);
}

/* Some decisions are only in memory (the last save failed): closing would
 * lose them, so ask first, offering Save Elsewhere…. */
static void
ask_before_close (LkWindow *self)
{
  AdwMessageDialog *dialog = ADW_MESSAGE_DIALOG (adw_message_dialog_new (
      GTK_WINDOW (self), _ ("Save Your Decisions Before Closing?"),
      lk_session_is_read_only (self->session) && !lk_session_saves_elsewhere (self->session)
          ? _ ("This library is read-only, so your decisions could not be saved in it. If you "
               "close it now, they are lost.")
          : _ ("Your last decisions could not be saved. If you close the library now, they are "
               "lost.")));
  adw_message_dialog_add_responses (dialog, "cancel", _ ("_Cancel"), "discard",
                                    _ ("_Discard Decisions"), "save", _ ("_Save Elsewhere…"), NULL);
  adw_message_dialog_set_response_appearance (dialog, "discard", ADW_RESPONSE_DESTRUCTIVE);
  adw_message_dialog_set_response_appearance (dialog, "save", ADW_RESPONSE_SUGGESTED);
  adw_message_dialog_set_default_response (dialog, "save");
  /* Escape and the dialog's close button keep the window open. */
  adw_message_dialog_set_close_response (dialog, "cancel");
  gtk_window_set_destroy_with_parent (GTK_WINDOW (dialog), TRUE);
  g_signal_connect (dialog, "response", G_CALLBACK (on_close_response), self);
  gtk_window_present (GTK_WINDOW (dialog));
}

/* TRUE when the window stays open: some decisions are only in memory and
 * the user is asked first. Otherwise the window's size is kept for the next
 * start, and it closes. */
gboolean
_lk_window_hold_close (LkWindow *self)
{
  GtkWindow *window = GTK_WINDOW (self);
  int width, height;

  /* A name typed without Enter is the user's decision too: made now, it is
   * saved as any other (a decision in flight holds the application). */
  lk_person_page_commit_name (self->person_page);
  if (self->session != NULL && lk_session_has_unsaved (self->session) && !self->close_confirmed)
    {
      ask_before_close (self);
      return TRUE;
    }

  gtk_window_get_default_size (window, &width, &height);
  g_settings_set (self->settings, "window-size", "(ii)", width, height);
  g_settings_set_boolean (self->settings, "window-maximized", gtk_window_is_maximized (window));
  return FALSE;
}

static void
popdown_popovers (GtkWidget *widget)
{
  for (GtkWidget *child = gtk_widget_get_first_child (widget); child != NULL;
       child = gtk_widget_get_next_sibling (child))
    {
      if (GTK_IS_POPOVER (child) && gtk_widget_get_visible (child))
        gtk_popover_popdown (GTK_POPOVER (child));
      popdown_popovers (child);
    }
}

/* The window's unmap (hidden or destroyed): its open popovers pop down
 * first. GTK 4.8 holds two references on a shown popover until it pops down
 * (measured on the Merge chooser: 1 while closed, 3 while open, 1 again after
 * gtk_popover_popdown), and does not pop one down when its window goes, so
 * an open chooser outlived its destroyed window, unrealized; a tooltip timer
 * started on it then asked its gone surface for the pointer (a Gdk-CRITICAL;
 * test-ui-window's open-chooser-goes-with-its-window). */
void
_lk_window_unmap (GtkWidget *widget)
{
  popdown_popovers (widget);
  GTK_WIDGET_CLASS (g_type_class_peek (g_type_parent (LK_TYPE_WINDOW)))->unmap (widget);
}
