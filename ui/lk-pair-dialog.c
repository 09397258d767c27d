/* lk-pair-dialog.c — "Help Likeness tell people apart": same or different person, a pair at a time
 *
 * Why it is shaped this way:
 *
 * - When the estimate refuses, or is unsure, the user knows what the
 *   cosines cannot say. Google Photos asks "Same or different person?" about
 *   two faces; so does this dialog, about the pairs the pair model is least
 *   sure of (lk-pair-questions.h), twenty at most: enough to fit from, few
 *   enough to answer in a minute.
 * - Every answer is a decision like any other (a merge, a move, a "not this
 *   person"), saved in review.json as it is given: closing the dialog half
 *   way loses nothing, and Undo (Ctrl+Z) takes the last answer back and
 *   shows its pair again.
 * - The pairs are chosen once, when the dialog opens, and named by face:
 *   each answer re-clusters and renumbers the people, never the faces.
 *   Choosing them compares a few hundred faces with every face (a second
 *   on a large library), so it runs on a worker while a spinner shows, and
 *   closing the dialog cancels it.
 * - After the last pair the fit is the window's (win.fit-decisions): a
 *   re-scan with its progress and its Cancel, like every calibration change.
 */
#include "config.h"

#include <adwaita.h>
#include <glib/gi18n.h>
#include <math.h>

#include "lk-pair-dialog.h"
#include "lk-tile.h"

#define FACE_SIZE 160

struct _LkPairDialog
{
  GtkWindow parent_instance;

  LkSession *session;
  LkTextureCache *cache;
  GArray *pairs; /* of LkPairQuestion, as lk_session_pair_questions gave them; NULL while
                  * they are being chosen */
  GCancellable *cancellable;
  GArray *answered; /* guint: the pairs answered and not undone, the last one last */
  guint position;   /* the pair shown; pairs->len once every pair is behind */
  gboolean fitted;  /* win.fit-decisions was activated */

  GtkStack *stack;
  GtkBox *faces_box;
  GtkLabel *detail_label;
  GtkLabel *progress_label;
  GtkWidget *undo_button;
  GtkWidget *same_button;
  AdwStatusPage *done_page;
  GtkWidget *tile_a;
  GtkWidget *tile_b;
};

G_DEFINE_FINAL_TYPE (LkPairDialog, lk_pair_dialog, GTK_TYPE_WINDOW)

static void
finish (LkPairDialog *self)
{
  gtk_stack_set_visible_child_name (self->stack, "done");
  if (self->fitted)
    return;
  GtkWindow *parent = gtk_window_get_transient_for (GTK_WINDOW (self));
  if (self->answered->len > 0 && lk_session_can_fit_decisions (self->session, NULL, NULL)
      && parent != NULL)
    {
      self->fitted = TRUE;
      adw_status_page_set_description (
          self->done_page, _ ("Likeness fits its pair model to your answers and groups the "
                              "people again"));
      gtk_widget_activate_action (GTK_WIDGET (parent), "win.fit-decisions", NULL);
    }
  else
    adw_status_page_set_description (
        self->done_page,
        self->pairs->len == 0
            ? _ ("There is no pair to ask about: every face near another is decided")
            : _ ("Your answers are kept. They are too few to fit from yet: answer more pairs, or "
                 "confirm and merge people"));
}

static void
show (LkPairDialog *self)
{
  if (self->pairs == NULL)
    {
      gtk_stack_set_visible_child_name (self->stack, "choosing");
      gtk_widget_set_sensitive (self->undo_button, FALSE);
      return;
    }
  guint total = self->pairs->len;
  gtk_widget_set_sensitive (self->undo_button, self->answered->len > 0 && !self->fitted);
  if (self->position >= total)
    {
      /* Translators: how many pairs were answered, of how many asked */
      g_autofree char *text
          = g_strdup_printf (_ ("%'u answered of %'u"), self->answered->len, total);
      gtk_label_set_label (self->progress_label, text);
      finish (self);
      return;
    }
  /* Translators: progress through the pairs, "3 of 20" */
  g_autofree char *progress = g_strdup_printf (_ ("%'u of %'u"), self->position + 1, total);
  gtk_label_set_label (self->progress_label, progress);
  gtk_stack_set_visible_child_name (self->stack, "question");
  const LkPairQuestion *q = &g_array_index (self->pairs, LkPairQuestion, self->position);
  GtkWidget *tiles[2] = { self->tile_a, self->tile_b };
  guint32 faces[2] = { q->a, q->b };
  for (guint k = 0; k < 2; k++)
    {
      g_autofree char *path = lk_session_thumbnail_path (self->session, faces[k]);
      g_autofree char *text = lk_session_describe_face (self->session, faces[k]);
      lk_tile_set_face (LK_TILE (tiles[k]), path, text);
      lk_tile_set_text (LK_TILE (tiles[k]), text, NULL);
    }
  g_autofree char *detail
      = isnan (q->p) ? g_strdup (_ ("Likeness cannot tell these two apart on its own yet"))
                     /* Translators: the pair model's chance that two faces are one person */
                     : g_strdup_printf (_ ("The pair model gives them %.0f %%: it is not sure"),
                                        100.0 * q->p);
  gtk_label_set_label (self->detail_label, detail);
  gtk_widget_grab_focus (self->same_button);
}

gboolean
lk_pair_dialog_answer (LkPairDialog *self, gboolean same)
{
  g_return_val_if_fail (LK_IS_PAIR_DIALOG (self), FALSE);
  g_autoptr (GError) error = NULL;
  if (self->pairs == NULL || self->position >= self->pairs->len)
    return FALSE;
  const LkPairQuestion *q = &g_array_index (self->pairs, LkPairQuestion, self->position);
  if (!lk_session_answer_pair (self->session, q->a, q->b, same, &error))
    {
      /* An earlier answer may have made this one impossible (two faces of
       * one photo would meet in a merge): the pair is passed over. */
      g_message ("The answer about faces %u and %u could not be recorded: %s", q->a, q->b,
                 error->message);
      self->position++;
      show (self);
      return FALSE;
    }
  g_array_append_val (self->answered, self->position);
  self->position++;
  show (self);
  return TRUE;
}

void
lk_pair_dialog_skip (LkPairDialog *self)
{
  g_return_if_fail (LK_IS_PAIR_DIALOG (self));
  if (self->pairs == NULL || self->position >= self->pairs->len)
    return;
  self->position++;
  show (self);
}

gboolean
lk_pair_dialog_undo (LkPairDialog *self)
{
  g_return_val_if_fail (LK_IS_PAIR_DIALOG (self), FALSE);
  g_autoptr (GError) error = NULL;
  if (self->answered->len == 0 || self->fitted)
    return FALSE;
  if (!lk_session_undo (self->session, &error))
    {
      g_warning ("The answer could not be undone: %s", error->message);
      return FALSE;
    }
  self->position = g_array_index (self->answered, guint, self->answered->len - 1);
  g_array_set_size (self->answered, self->answered->len - 1);
  show (self);
  return TRUE;
}

gboolean
lk_pair_dialog_get_pair (LkPairDialog *self, guint32 *a, guint32 *b, guint *position, guint *total)
{
  g_return_val_if_fail (LK_IS_PAIR_DIALOG (self), FALSE);
  if (position)
    *position = self->position;
  if (total)
    *total = self->pairs ? self->pairs->len : 0;
  if (self->pairs == NULL || self->position >= self->pairs->len)
    return FALSE;
  const LkPairQuestion *q = &g_array_index (self->pairs, LkPairQuestion, self->position);
  if (a)
    *a = q->a;
  if (b)
    *b = q->b;
  return TRUE;
}

gboolean
lk_pair_dialog_is_choosing (LkPairDialog *self)
{
  g_return_val_if_fail (LK_IS_PAIR_DIALOG (self), FALSE);
  return self->pairs == NULL;
}

guint
lk_pair_dialog_get_n_answers (LkPairDialog *self)
{
  g_return_val_if_fail (LK_IS_PAIR_DIALOG (self), 0);
  return self->answered->len;
}

static void
on_pairs_chosen (GObject *source, GAsyncResult *result, gpointer data)
{
  g_autoptr (LkPairDialog) self = data;
  g_autoptr (GError) error = NULL;
  g_autoptr (GArray) pairs = lk_session_pair_questions_finish (result, &error);
  if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED) || self->session == NULL)
    return;
  self->pairs
      = pairs ? g_steal_pointer (&pairs) : g_array_new (FALSE, FALSE, sizeof (LkPairQuestion));
  show (self);
}

static void
on_same_clicked (LkPairDialog *self)
{
  lk_pair_dialog_answer (self, TRUE);
}

static void
on_different_clicked (LkPairDialog *self)
{
  lk_pair_dialog_answer (self, FALSE);
}

static void
on_skip_clicked (LkPairDialog *self)
{
  lk_pair_dialog_skip (self);
}

static void
on_undo_clicked (LkPairDialog *self)
{
  lk_pair_dialog_undo (self);
}

static gboolean
on_key_pressed (LkPairDialog *self, guint keyval, guint keycode, GdkModifierType state,
                GtkEventControllerKey *controller)
{
  GdkModifierType mods = state & gtk_accelerator_get_default_mod_mask ();
  if (mods == GDK_CONTROL_MASK && (keyval == GDK_KEY_z || keyval == GDK_KEY_Z))
    {
      lk_pair_dialog_undo (self);
      return TRUE;
    }
  if (mods != 0)
    return FALSE;
  switch (keyval)
    {
      case GDK_KEY_s:
        lk_pair_dialog_answer (self, TRUE);
        return TRUE;
      case GDK_KEY_d:
        lk_pair_dialog_answer (self, FALSE);
        return TRUE;
      case GDK_KEY_k:
      case GDK_KEY_Right:
        lk_pair_dialog_skip (self);
        return TRUE;
      case GDK_KEY_Escape:
        gtk_window_close (GTK_WINDOW (self));
        return TRUE;
      default:
        return FALSE;
    }
}

static void
lk_pair_dialog_dispose (GObject *object)
{
  LkPairDialog *self = LK_PAIR_DIALOG (object);

  if (self->cancellable != NULL)
    g_cancellable_cancel (self->cancellable);
  g_clear_object (&self->cancellable);
  g_clear_object (&self->session);
  g_clear_object (&self->cache);
  gtk_widget_dispose_template (GTK_WIDGET (object), LK_TYPE_PAIR_DIALOG);
  G_OBJECT_CLASS (lk_pair_dialog_parent_class)->dispose (object);
}

static void
lk_pair_dialog_finalize (GObject *object)
{
  LkPairDialog *self = LK_PAIR_DIALOG (object);

  g_clear_pointer (&self->pairs, g_array_unref);
  g_array_unref (self->answered);
  G_OBJECT_CLASS (lk_pair_dialog_parent_class)->finalize (object);
}

static void
lk_pair_dialog_class_init (LkPairDialogClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = lk_pair_dialog_dispose;
  object_class->finalize = lk_pair_dialog_finalize;

  gtk_widget_class_set_template_from_resource (widget_class, RESOURCE_PREFIX "/lk-pair-dialog.ui");
  gtk_widget_class_bind_template_child (widget_class, LkPairDialog, stack);
  gtk_widget_class_bind_template_child (widget_class, LkPairDialog, faces_box);
  gtk_widget_class_bind_template_child (widget_class, LkPairDialog, detail_label);
  gtk_widget_class_bind_template_child (widget_class, LkPairDialog, progress_label);
  gtk_widget_class_bind_template_child (widget_class, LkPairDialog, undo_button);
  gtk_widget_class_bind_template_child (widget_class, LkPairDialog, same_button);
  gtk_widget_class_bind_template_child (widget_class, LkPairDialog, done_page);
  gtk_widget_class_bind_template_callback (widget_class, on_same_clicked);
  gtk_widget_class_bind_template_callback (widget_class, on_different_clicked);
  gtk_widget_class_bind_template_callback (widget_class, on_skip_clicked);
  gtk_widget_class_bind_template_callback (widget_class, on_undo_clicked);
  gtk_widget_class_bind_template_callback (widget_class, on_key_pressed);
}

static void
lk_pair_dialog_init (LkPairDialog *self)
{
  g_type_ensure (ADW_TYPE_STATUS_PAGE);
  g_type_ensure (ADW_TYPE_HEADER_BAR);
  gtk_widget_init_template (GTK_WIDGET (self));
  self->answered = g_array_new (FALSE, FALSE, sizeof (guint));
}

LkPairDialog *
lk_pair_dialog_new (GtkWindow *parent, LkSession *session, LkTextureCache *cache)
{
  g_return_val_if_fail (LK_IS_SESSION (session), NULL);
  LkPairDialog *self = g_object_new (LK_TYPE_PAIR_DIALOG, "transient-for", parent, NULL);
  self->session = g_object_ref (session);
  self->cache = g_object_ref (cache);
  self->tile_a = lk_tile_new (cache, FACE_SIZE);
  self->tile_b = lk_tile_new (cache, FACE_SIZE);
  gtk_box_append (self->faces_box, self->tile_a);
  gtk_box_append (self->faces_box, self->tile_b);
  self->cancellable = g_cancellable_new ();
  show (self);
  lk_session_pair_questions_async (session, LK_PAIR_QUESTIONS, self->cancellable, on_pairs_chosen,
                                   g_object_ref (self));
  return self;
}
