/* lk-window-history.c — what Undo and Redo say
 *
 * The session keeps the decisions and takes them back; the window keeps the
 * words each one was announced with, so "Undone: Named “Ada”" says what was
 * undone. A calibration change made after the last decision is taken back
 * first.
 */
#include "config.h"

#include <adwaita.h>
#include <glib/gi18n.h>

#include "lk-window-private.h"

void
_lk_window_remember_decision (LkWindow *self, const char *message)
{
  g_ptr_array_set_size (self->undone_messages, 0);
  if (message != NULL)
    g_ptr_array_add (self->done_messages, g_strdup (message));
  else
    g_ptr_array_set_size (self->done_messages, 0);
}

/* Moves the newest message of `from` to `to`; returns it, or NULL when
 * `from` is empty (a decision this window did not announce). */
static const char *
shift_message (GPtrArray *from, GPtrArray *to)
{
  if (from->len == 0)
    return NULL;
  char *message = g_ptr_array_steal_index (from, from->len - 1);
  g_ptr_array_add (to, message);
  return message;
}

void
_lk_window_undo_or_redo (LkWindow *self, gboolean undo)
{
  g_autoptr (GError) error = NULL;

  if (self->session == NULL)
    return;
  /* A calibration change made after the last decision is taken back first:
   * a re-scan, whose notification names it when it lands. */
  if (_lk_window_calibration_undo (self, !undo))
    return;
  if (!(undo ? lk_session_undo (self->session, &error) : lk_session_redo (self->session, &error)))
    {
      _lk_window_show_toast (self, error->message, TOAST_PLAIN);
      return;
    }
  /* Review Suggestions asks the undone answer's question again: the queue
   * has moved on, and the face undone would be nowhere to be seen. */
  if (g_strcmp0 (gtk_stack_get_visible_child_name (self->stack), "suggestions") == 0)
    {
      if (undo)
        lk_suggestions_page_undone (self->suggestions_page);
      else
        lk_suggestions_page_redone (self->suggestions_page);
    }
  /* "Undone" alone does not say what: the decision's own words. */
  const char *what = undo ? shift_message (self->done_messages, self->undone_messages)
                          : shift_message (self->undone_messages, self->done_messages);
  /* Translators: the notification after Ctrl+Z, "Undone: Named “Ada”" */
  g_autofree char *message = what == NULL ? g_strdup (undo ? _ ("Undone") : _ ("Redone"))
                             : undo       ? g_strdup_printf (_ ("Undone: %s"), what)
                                    /* Translators: after Ctrl+Shift+Z, "Redone: Named “Ada”" */
                                    : g_strdup_printf (_ ("Redone: %s"), what);
  if (undo)
    _lk_window_show_toast (self, message,
                           lk_session_can_redo (self->session) ? TOAST_REDO : TOAST_PLAIN);
  else
    _lk_window_show_toast (self, message, TOAST_UNDO);
}
