/* lk-question-dialog.c — "Is this Ada?", one face or small person at a time
 *
 * Google Photos asks, one face at a time, whether a face it is unsure of is
 * someone the user named; Likeness asks about the unassigned faces and the
 * small unnamed people that pairs down to the question bar link to a named
 * person (lk_people_questions_below). The session finds them on the worker
 * that groups the people; the dialog copies the first MAX_QUESTIONS. Yes is the move (a face) or
 * merge (a person) the user could make by hand; No a rejection, recorded in review.json, so the
 * question is never asked again; Skip leaves it for another sitting. Every
 * answer is a decision like any other: the dialog's Undo (Ctrl+Z) takes the
 * last one back, and the question comes back with it.
 *
 * Questions are named by face and person id, never by index: each answer
 * re-clusters and renumbers the people. After an answer the list is asked
 * again once the people land ("changed"); meanwhile the answered question is
 * not shown again.
 */
#include "config.h"

#include <adwaita.h>
#include <glib/gi18n.h>
#include <string.h>

#include "lk-question-dialog.h"
#include "lk-tile.h"

#define FACE_SIZE     160
#define MAX_QUESTIONS 500

typedef struct
{
  guint32 face;
  char *person;    /* the named person's id */
  char *candidate; /* the small person's id, or NULL: `face` is unassigned */
  double score;
} Question;

struct _LkQuestionDialog
{
  GtkWindow parent_instance;

  LkSession *session;
  LkTextureCache *cache;
  gulong changed_id;
  GArray *questions;   /* of Question, best first */
  GHashTable *skipped; /* "face person" keys skipped in this sitting */
  GHashTable *pending; /* "face person" keys answered, until the people land */
  guint answers;       /* answered in this sitting and not undone: what Undo may take back */
  guint serial;        /* counts the people landing ("changed") */

  GtkStack *stack;
  GtkLabel *question_label;
  GtkLabel *detail_label;
  GtkLabel *count_label;
  GtkBox *faces;
  GtkWidget *face_tile;
  GtkWidget *person_tile;
  GtkWidget *undo_button;
  GtkWidget *yes_button;
};

G_DEFINE_FINAL_TYPE (LkQuestionDialog, lk_question_dialog, GTK_TYPE_WINDOW)

static void
question_clear (gpointer data)
{
  Question *q = data;
  g_free (q->person);
  g_free (q->candidate);
}

static char *
key_of (const Question *q)
{
  return g_strdup_printf ("%u %s", q->face, q->person);
}

/* Asks the session again: the questions of the people on screen, but those
 * skipped or answered meanwhile. */
static void
collect (LkQuestionDialog *self)
{
  g_array_set_size (self->questions, 0);
  if (self->session == NULL || !lk_session_is_loaded (self->session))
    return;
  g_autoptr (GArray) found = lk_session_questions (self->session, MAX_QUESTIONS);
  for (guint k = 0; k < found->len; k++)
    {
      const LkQuestion *f = &g_array_index (found, LkQuestion, k);
      Question q
          = { f->face, g_strdup (lk_session_person_id (self->session, f->person)),
              f->candidate >= 0 ? g_strdup (lk_session_person_id (self->session, f->candidate))
                                : NULL,
              f->score };
      g_autofree char *key = key_of (&q);
      if (g_hash_table_contains (self->pending, key))
        {
          question_clear (&q);
          continue;
        }
      g_array_append_val (self->questions, q);
    }
}

/* The first question not skipped, or the first skipped one when all are. */
static Question *
current (LkQuestionDialog *self)
{
  for (guint k = 0; k < self->questions->len; k++)
    {
      Question *q = &g_array_index (self->questions, Question, k);
      g_autofree char *key = key_of (q);
      if (!g_hash_table_contains (self->skipped, key))
        return q;
    }
  if (self->questions->len > 0)
    {
      /* Everything was skipped once: round again. */
      g_hash_table_remove_all (self->skipped);
      return &g_array_index (self->questions, Question, 0);
    }
  return NULL;
}

static void
show (LkQuestionDialog *self)
{
  Question *q = current (self);
  guint n = self->questions->len;
  g_autofree char *count = g_strdup_printf (
      g_dngettext (GETTEXT_PACKAGE, "%'u left to review", "%'u left to review", n), n);

  gtk_label_set_label (self->count_label, count);
  gtk_widget_set_sensitive (self->undo_button, self->answers > 0);
  if (q == NULL)
    {
      gtk_stack_set_visible_child_name (self->stack, "done");
      return;
    }
  gtk_stack_set_visible_child_name (self->stack, "question");
  LkPersonItem *person = lk_session_find_person (self->session, q->person);
  LkPersonItem *candidate
      = q->candidate ? lk_session_find_person (self->session, q->candidate) : NULL;
  const char *name = person != NULL ? lk_person_item_get_title (person) : q->person;
  /* Translators: the question about a face, with the person's name. */
  g_autofree char *question = g_strdup_printf (_ ("Is this %s?"), name);
  gtk_label_set_label (self->question_label, question);

  g_autofree char *face_path = lk_session_thumbnail_path (self->session, q->face);
  g_autofree char *face_text = lk_session_describe_face (self->session, q->face);
  lk_tile_set_face (LK_TILE (self->face_tile), face_path, face_text);
  guint n_faces = candidate != NULL ? lk_person_item_get_n_faces (candidate) : 1;
  g_autofree char *what
      = candidate != NULL
            ? g_strdup_printf (g_dngettext (GETTEXT_PACKAGE, "An unnamed person of %'u face",
                                            "An unnamed person of %'u faces", n_faces),
                               n_faces)
            : g_strdup (_ ("An unassigned face"));
  lk_tile_set_text (LK_TILE (self->face_tile), what, NULL);

  gint64 cover = person != NULL ? lk_person_item_get_cover (person) : -1;
  g_autofree char *cover_path
      = cover >= 0 ? lk_session_thumbnail_path (self->session, (guint32) cover) : NULL;
  lk_tile_set_face (LK_TILE (self->person_tile), cover_path, name);
  lk_tile_set_text (LK_TILE (self->person_tile), name, NULL);

  /* The pair model's word, on the captions' scale: the best chance per face,
   * averaged over the candidate's faces. */
  g_autofree char *detail = g_strdup_printf (
      _ ("%.0f %% match by the pair model. Yes puts %s with %s; No keeps them apart for good"),
      100.0 * q->score, candidate != NULL ? _ ("these faces") : _ ("this face"), name);
  gtk_label_set_label (self->detail_label, detail);
  gtk_widget_grab_focus (self->yes_button);
}

static void
on_changed (LkSession *session, gpointer user_data)
{
  LkQuestionDialog *self = user_data;

  self->serial++;
  g_hash_table_remove_all (self->pending);
  collect (self);
  show (self);
}

gboolean
lk_question_dialog_answer (LkQuestionDialog *self, gboolean yes)
{
  g_return_val_if_fail (LK_IS_QUESTION_DIALOG (self), FALSE);
  Question *q = current (self);
  g_autoptr (GError) error = NULL;
  gboolean ok;

  if (q == NULL)
    return FALSE;
  /* The session may re-cluster (and this dialog collect again) before the
   * call returns: the question is copied first. */
  g_autofree char *key = key_of (q);
  g_autofree char *person = g_strdup (q->person);
  g_autofree char *candidate_id = g_strdup (q->candidate);
  guint32 face = q->face;
  guint serial = self->serial;
  LkPersonItem *candidate
      = candidate_id ? lk_session_find_person (self->session, candidate_id) : NULL;
  if (candidate_id != NULL && candidate == NULL)
    return FALSE;
  g_autofree guint32 *faces
      = candidate != NULL ? g_memdup2 (lk_person_item_get_faces (candidate),
                                       lk_person_item_get_n_faces (candidate) * sizeof (guint32))
                          : g_memdup2 (&face, sizeof face);
  guint n_faces = candidate != NULL ? lk_person_item_get_n_faces (candidate) : 1;
  if (yes)
    ok = candidate != NULL
             ? lk_session_merge (self->session, person, candidate_id, &error)
             : lk_session_move_faces (self->session, NULL, &face, 1, person, NULL, &error);
  else
    ok = lk_session_reject_faces (self->session, person, faces, n_faces, &error);
  if (!ok)
    {
      g_warning ("The answer could not be recorded: %s", error->message);
      return FALSE;
    }
  self->answers++;
  if (self->serial == serial)
    {
      /* Until the people land, the answered question is not asked again. */
      for (guint k = 0; k < self->questions->len; k++)
        {
          g_autofree char *other = key_of (&g_array_index (self->questions, Question, k));
          if (strcmp (other, key) == 0)
            {
              g_array_remove_index (self->questions, k);
              break;
            }
        }
      g_hash_table_add (self->pending, g_steal_pointer (&key));
    }
  show (self);
  return TRUE;
}

void
lk_question_dialog_skip (LkQuestionDialog *self)
{
  g_return_if_fail (LK_IS_QUESTION_DIALOG (self));
  Question *q = current (self);
  if (q == NULL)
    return;
  g_hash_table_add (self->skipped, key_of (q));
  show (self);
}

gboolean
lk_question_dialog_undo (LkQuestionDialog *self)
{
  g_return_val_if_fail (LK_IS_QUESTION_DIALOG (self), FALSE);
  g_autoptr (GError) error = NULL;

  if (self->answers == 0)
    return FALSE;
  if (!lk_session_undo (self->session, &error))
    {
      g_warning ("The answer could not be undone: %s", error->message);
      return FALSE;
    }
  self->answers--;
  show (self);
  return TRUE;
}

guint
lk_question_dialog_get_n_left (LkQuestionDialog *self)
{
  g_return_val_if_fail (LK_IS_QUESTION_DIALOG (self), 0);
  return self->questions->len;
}

const char *
lk_question_dialog_get_person (LkQuestionDialog *self, guint32 *face)
{
  g_return_val_if_fail (LK_IS_QUESTION_DIALOG (self), NULL);
  Question *q = current (self);
  if (q == NULL)
    return NULL;
  if (face != NULL)
    *face = q->face;
  return q->person;
}

guint
lk_question_dialog_count (LkSession *session)
{
  if (session == NULL || !lk_session_is_loaded (session))
    return 0;
  return lk_session_get_n_questions (session);
}

static void
on_yes (GtkButton *button, gpointer user_data)
{
  lk_question_dialog_answer (LK_QUESTION_DIALOG (user_data), TRUE);
}

static void
on_no (GtkButton *button, gpointer user_data)
{
  lk_question_dialog_answer (LK_QUESTION_DIALOG (user_data), FALSE);
}

static void
on_skip (GtkButton *button, gpointer user_data)
{
  lk_question_dialog_skip (LK_QUESTION_DIALOG (user_data));
}

static void
on_undo (GtkButton *button, gpointer user_data)
{
  lk_question_dialog_undo (LK_QUESTION_DIALOG (user_data));
}

static gboolean
on_key (GtkEventControllerKey *controller, guint keyval, guint keycode, GdkModifierType state,
        gpointer user_data)
{
  LkQuestionDialog *self = user_data;
  GdkModifierType mods = state & gtk_accelerator_get_default_mod_mask ();

  if (mods == GDK_CONTROL_MASK && (keyval == GDK_KEY_z || keyval == GDK_KEY_Z))
    {
      lk_question_dialog_undo (self);
      return TRUE;
    }
  if (mods != 0)
    return FALSE;
  switch (keyval)
    {
      case GDK_KEY_y:
        lk_question_dialog_answer (self, TRUE);
        return TRUE;
      case GDK_KEY_n:
        lk_question_dialog_answer (self, FALSE);
        return TRUE;
      case GDK_KEY_s:
      case GDK_KEY_Right:
        lk_question_dialog_skip (self);
        return TRUE;
      case GDK_KEY_Escape:
        gtk_window_close (GTK_WINDOW (self));
        return TRUE;
      default:
        return FALSE;
    }
}

static void
lk_question_dialog_dispose (GObject *object)
{
  LkQuestionDialog *self = LK_QUESTION_DIALOG (object);

  if (self->session != NULL)
    g_clear_signal_handler (&self->changed_id, self->session);
  g_clear_object (&self->session);
  g_clear_object (&self->cache);
  gtk_widget_dispose_template (GTK_WIDGET (self), LK_TYPE_QUESTION_DIALOG);
  G_OBJECT_CLASS (lk_question_dialog_parent_class)->dispose (object);
}

static void
lk_question_dialog_finalize (GObject *object)
{
  LkQuestionDialog *self = LK_QUESTION_DIALOG (object);

  g_array_unref (self->questions);
  g_hash_table_unref (self->skipped);
  g_hash_table_unref (self->pending);
  G_OBJECT_CLASS (lk_question_dialog_parent_class)->finalize (object);
}

static void
lk_question_dialog_class_init (LkQuestionDialogClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = lk_question_dialog_dispose;
  object_class->finalize = lk_question_dialog_finalize;

  g_type_ensure (ADW_TYPE_HEADER_BAR);
  gtk_widget_class_set_template_from_resource (widget_class,
                                               RESOURCE_PREFIX "/lk-question-dialog.ui");
#define BIND(name) gtk_widget_class_bind_template_child (widget_class, LkQuestionDialog, name)
  BIND (stack);
  BIND (question_label);
  BIND (detail_label);
  BIND (count_label);
  BIND (faces);
  BIND (undo_button);
  BIND (yes_button);
#undef BIND
  gtk_widget_class_bind_template_callback (widget_class, on_yes);
  gtk_widget_class_bind_template_callback (widget_class, on_no);
  gtk_widget_class_bind_template_callback (widget_class, on_skip);
  gtk_widget_class_bind_template_callback (widget_class, on_undo);
  gtk_widget_class_bind_template_callback (widget_class, on_key);
}

static void
lk_question_dialog_init (LkQuestionDialog *self)
{
  self->questions = g_array_new (FALSE, FALSE, sizeof (Question));
  g_array_set_clear_func (self->questions, question_clear);
  self->skipped = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  self->pending = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  gtk_widget_init_template (GTK_WIDGET (self));
}

LkQuestionDialog *
lk_question_dialog_new (GtkWindow *parent, LkSession *session, LkTextureCache *cache)
{
  g_return_val_if_fail (LK_IS_SESSION (session), NULL);
  LkQuestionDialog *self = g_object_new (LK_TYPE_QUESTION_DIALOG, "transient-for", parent, "modal",
                                         TRUE, "destroy-with-parent", TRUE, NULL);
  self->session = g_object_ref (session);
  self->cache = g_object_ref (cache);
  /* The tiles take the cache when they are made: they join the template here. */
  self->face_tile = lk_tile_new (cache, FACE_SIZE);
  self->person_tile = lk_tile_new (cache, FACE_SIZE);
  gtk_widget_add_css_class (self->person_tile, "person");
  gtk_box_append (self->faces, self->face_tile);
  gtk_box_append (self->faces, self->person_tile);

  self->changed_id = g_signal_connect (session, "changed", G_CALLBACK (on_changed), self);
  collect (self);
  show (self);
  return self;
}
