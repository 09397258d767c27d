/* lk-suggestions-page.c — "Review suggestions": one uncertain face at a time
 *
 * The engine ranks the faces whose tie to a person sits nearest the merge
 * threshold (lk_people_suggestions); the page asks about them one by one,
 * face next to the person's cover: Y confirms (the face stays, or an
 * unassigned face joins), N takes a member face out or keeps an unassigned
 * one apart for good, → skips. Suggestions
 * are kept by face and person id, not by index, because every answer
 * re-clusters and renumbers the people. Answers go through the session like
 * any decision, so each shows the undo notification ("toast").
 */
#include "config.h"

#include <adwaita.h>
#include <glib/gi18n.h>

#include "people/lk-cluster.h"
#include "lk-face-viewer.h"
#include "scan/lk-scan.h"
#include "lk-suggestions-page.h"
#include "lk-wrap-box.h"
#include "lk-tile.h"

/* Enough for a sitting; the list is collected again on each visit. */
#define MAX_SUGGESTIONS 200
/* Large enough to compare two faces by eye, small enough that the question
 * fits half a 1280 × 720 screen beside the notification's room (192 does
 * not). */
#define FACE_SIZE       160
/* The person's faces most like the one asked about, shown under the pair:
 * one cover is a poor witness for a person of hundreds of faces; five more
 * fit one row of a laptop window at SIMILAR_SIZE. */
#define N_SIMILAR       5
#define SIMILAR_SIZE    96

typedef struct
{
  guint32 face;
  char *person_id;
  gboolean member;
  double linkage;
} Suggestion;

struct _LkSuggestionsPage
{
  GtkWidget parent_instance;

  LkSession *session;
  LkTextureCache *cache;
  GArray *suggestions; /* of Suggestion */
  guint current;

  GtkWidget *layout; /* the page's one child: the question, the answers under it */
  GtkWidget *toast_overlay;
  GtkStack *stack;
  GtkWidget *answer_bar;
  GtkLabel *question_label;
  GtkWidget *faces_box;   /* an LkWrapBox: one above the other when narrow */
  GtkWidget *similar_box; /* an LkWrapBox: the row wraps when narrow */
  GArray *similar;        /* guint32: the faces in similar_box, most similar first */
  GtkLabel *detail_label;
  GtkWidget *photo_button;
  GtkWidget *face_tile;
  /* Indices (guint) of the suggestions answered, oldest first, and of those
   * whose answer was undone, latest last: Ctrl+Z shows the question again. */
  GArray *answered;
  GArray *undone;
  /* Indices (guint) of the suggestions skipped: the end of the list offers
   * to ask them again rather than saying nothing is left. */
  GArray *skipped;
  AdwStatusPage *done_page;
  GtkWidget *again_button;
  GtkWidget *done_back_button;
  GtkWidget *person_tile;
};

G_DEFINE_FINAL_TYPE (LkSuggestionsPage, lk_suggestions_page, GTK_TYPE_WIDGET)

enum
{
  SIGNAL_TOAST,
  SIGNAL_ERROR,
  N_SIGNALS
};

static guint signals[N_SIGNALS];

static void
suggestion_clear (gpointer data)
{
  g_free (((Suggestion *) data)->person_id);
}

/* Fills the similar row: the person's faces (but `face`) most alike to it,
 * each captioned with what the pair model makes of the two ("87 %", as the
 * pickers' "87 % match"). Not the cosine itself: what a cosine means depends on the
 * face model (every dlib pair is above 0.7, an ArcFace pair of one person
 * may be 0.4), so the caption "0.72 alike" said nothing a user could weigh,
 * and beside "7 % average match" it read as a contradiction. Returns the
 * highest chance shown (0 when none is); *mean receives the chance averaged
 * over all the person's faces but `face`, on the same scale. */
static double
show_similar (LkSuggestionsPage *self, LkPersonItem *person, guint32 face, double *mean)
{
  const LkLibrary *library = lk_session_get_library (self->session);
  const LkCalibration *calibration = lk_session_get_calibration (self->session, NULL);
  const guint32 *faces = lk_person_item_get_faces (person);
  guint n = lk_person_item_get_n_faces (person);
  double best[N_SIMILAR];
  guint32 chosen[N_SIMILAR];
  guint count = 0;
  GtkWidget *child;

  double sum = 0.0;
  guint others = 0;

  while ((child = gtk_widget_get_first_child (self->similar_box)) != NULL)
    gtk_widget_unparent (child);
  g_array_set_size (self->similar, 0);
  for (guint k = 0; k < n; k++)
    {
      if (faces[k] == face)
        continue;
      const float *a = lk_library_row (library, face), *b = lk_library_row (library, faces[k]);
      double dot = 0.0;
      for (guint d = 0; d < library->dim; d++)
        dot += (double) a[d] * b[d];
      sum += lk_scan_probability (calibration, dot,
                                  MIN (library->crop_px[face], library->crop_px[faces[k]]));
      others++;
      /* Insertion into the few best, highest first. */
      guint at = count < N_SIMILAR ? count : N_SIMILAR;
      while (at > 0 && best[at - 1] < dot)
        at--;
      if (at >= N_SIMILAR)
        continue;
      guint last = MIN (count, N_SIMILAR - 1);
      memmove (best + at + 1, best + at, (last - at) * sizeof *best);
      memmove (chosen + at + 1, chosen + at, (last - at) * sizeof *chosen);
      best[at] = dot;
      chosen[at] = faces[k];
      count = MIN (count + 1, N_SIMILAR);
    }
  double closest = 0.0;
  for (guint k = 0; k < count; k++)
    {
      GtkWidget *tile = lk_tile_new (self->cache, SIMILAR_SIZE);
      g_autofree char *path = lk_session_thumbnail_path (self->session, chosen[k]);
      g_autofree char *text = lk_session_describe_face (self->session, chosen[k]);
      double p = lk_scan_probability (calibration, best[k],
                                      MIN (library->crop_px[face], library->crop_px[chosen[k]]));
      /* Translators: under a similar face, the pair model's chance that it
       * and the face asked about are one person. Keep it short: "100 %
       * match" wrapped to two lines under the 96-px face, in regular weight
       * too; the line below the row says "chance of one person: … %
       * with the closest face, … % on average over the person's … faces",
       * which says what the figure is. */
      g_autofree char *score = g_strdup_printf (_ ("%.0f %%"), 100.0 * p);
      /* Translators: a similar face's accessible name, what its tooltip
       * and the figure under it say: "Face 2 of 3 in 2019/IMG_1.jpg,
       * chance of one person 95 %" */
      g_autofree char *label
          = g_strdup_printf (_ ("%s, chance of one person %.0f %%"), text, 100.0 * p);
      closest = MAX (closest, p);

      lk_tile_set_label (LK_TILE (tile), label);
      lk_tile_set_face (LK_TILE (tile), path, text);
      lk_tile_set_description_tooltip (LK_TILE (tile), TRUE);
      lk_tile_set_text (LK_TILE (tile), score, NULL);
      gtk_widget_set_parent (tile, self->similar_box);
      g_array_append_val (self->similar, chosen[k]);
    }
  gtk_widget_set_visible (self->similar_box, count > 0);
  *mean = others > 0 ? sum / others : 0.0;
  return closest;
}

static void
show_current (LkSuggestionsPage *self)
{
  LkPersonItem *person = NULL;
  const Suggestion *s = NULL;

  /* Skip suggestions a decision has made moot (the person is gone). */
  while (self->current < self->suggestions->len)
    {
      s = &g_array_index (self->suggestions, Suggestion, self->current);
      person = lk_session_find_person (self->session, s->person_id);
      if (person != NULL)
        break;
      self->current++;
    }
  gboolean any = self->current < self->suggestions->len;

  gtk_widget_action_set_enabled (GTK_WIDGET (self), "suggest.confirm", any);
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "suggest.reject", any);
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "suggest.skip", any);
  gtk_stack_set_visible_child_name (self->stack, any ? "question" : "done");
  gtk_widget_set_visible (self->answer_bar, any);
  if (!any)
    {
      guint skipped = self->skipped->len;
      g_autofree char *description
          = skipped > 0 ? g_strdup_printf (
                g_dngettext (GETTEXT_PACKAGE,
                             "You skipped %'u face: look at it again, or go back to the "
                             "people.",
                             "You skipped %'u faces: look at them again, or go back to the "
                             "people.",
                             skipped),
                skipped)
                        : g_strdup (_ ("Every face the grouping was unsure about has had a look."));
      adw_status_page_set_title (self->done_page, skipped > 0 ? _ ("No More Suggestions")
                                                              : _ ("Nothing Left to Review"));
      adw_status_page_set_description (self->done_page, description);
      gtk_widget_set_visible (self->again_button, skipped > 0);
      gtk_widget_action_set_enabled (GTK_WIDGET (self), "suggest.review-skipped", skipped > 0);
      /* The keys on a way on: the focused See Photo has gone with the
       * answers, and GTK would hand the focus to the window's first
       * button, the header's Back. */
      gtk_widget_grab_focus (skipped > 0 ? self->again_button : self->done_back_button);
      return;
    }

  g_autofree char *face_path = lk_session_thumbnail_path (self->session, s->face);
  g_autofree char *face_text = lk_session_describe_face (self->session, s->face);
  gint64 cover = lk_person_item_get_cover (person);
  g_autofree char *cover_path
      = cover >= 0 ? lk_session_thumbnail_path (self->session, cover) : NULL;
  const char *title = lk_person_item_get_title (person);
  const char *name = lk_person_item_get_name (person);
  g_autofree char *question = name == NULL
                                  ? g_strdup (s->member ? _ ("Is This the Same Person?")
                                                        : _ ("Could This Be the Same Person?"))
                              : s->member ? g_strdup_printf (_ ("Is This %s?"), name)
                                          : g_strdup_printf (_ ("Could This Be %s?"), name);
  g_autofree char *cover_text = g_strdup_printf (_ ("%s, cover face"), title);
  /* One scale, said as such: a low "average match" beside faces captioned
   * 90 % and more reads as a contradiction, and the clustering's linkage
   * (where a pair below the bar counts as 0) gives exactly that. So both
   * figures are the pair model's chance, computed the same way: the closest
   * face's and the mean over all the person's faces. */
  double mean = 0.0;
  double closest = show_similar (self, person, s->face, &mean);
  guint n_faces = lk_person_item_get_n_faces (person);
  guint over = s->member && n_faces > 1 ? n_faces - 1 : n_faces;
  g_autofree char *detail = g_strdup_printf (
      /* Translators: "Face 12 in 2019/IMG_1.jpg · chance of one person: 96 % with the closest
       * face, 16 % on average over the person's 56 other faces · 3 of 57" */
      s->member ? _ ("%s · chance of one person: %.0f %% with the closest face, %.0f %% on "
                     "average over the person's %'u other faces · %'u of %'u")
                : _ ("%s · chance of one person: %.0f %% with the closest face, %.0f %% on "
                     "average over the person's %'u faces · %'u of %'u"),
      face_text, closest * 100.0, mean * 100.0, over, self->current + 1, self->suggestions->len);

  gtk_label_set_label (self->question_label, question);
  gtk_label_set_label (self->detail_label, detail);
  lk_tile_set_face (LK_TILE (self->face_tile), face_path, face_text);
  lk_tile_set_text (LK_TILE (self->face_tile), s->member ? _ ("This face") : _ ("Unassigned face"),
                    NULL);
  lk_tile_set_face (LK_TILE (self->person_tile), cover_path, cover_text);
  lk_tile_set_text (LK_TILE (self->person_tile), title, NULL);
  /* Never on Yes or No: Space or Enter there would record an answer the
   * user only meant as "show me". See Photo is what Space does anyway. */
  gtk_widget_grab_focus (self->photo_button);
}

gboolean
lk_suggestions_page_focus_default (LkSuggestionsPage *self)
{
  g_return_val_if_fail (LK_IS_SUGGESTIONS_PAGE (self), FALSE);
  if (self->current >= self->suggestions->len)
    return FALSE;
  return gtk_widget_grab_focus (self->photo_button);
}

static void
answered (LkSuggestionsPage *self, gboolean ok, const GError *error, const char *message)
{
  /* A failed save keeps the decision (lk_session_* return FALSE then, the
   * session holding it unsaved): it can be undone like any other. */
  if (ok || lk_session_has_unsaved (self->session))
    {
      g_array_append_val (self->answered, self->current);
      g_array_set_size (self->undone, 0);
    }
  if (ok)
    g_signal_emit (self, signals[SIGNAL_TOAST], 0, message);
  else
    g_signal_emit (self, signals[SIGNAL_ERROR], 0, error);
  self->current++;
  show_current (self);
}

static void
action_confirm (GtkWidget *widget, const char *name, GVariant *parameter)
{
  LkSuggestionsPage *self = LK_SUGGESTIONS_PAGE (widget);
  const Suggestion *s = &g_array_index (self->suggestions, Suggestion, self->current);
  g_autoptr (GError) error = NULL;
  gboolean ok;

  if (s->member)
    ok = lk_session_confirm (self->session, s->person_id, s->face, &error);
  else
    ok = lk_session_move_faces (self->session, NULL, &s->face, 1, s->person_id, NULL, &error);
  answered (self, ok, error, s->member ? _ ("Confirmed") : _ ("Face added to the person"));
}

static void
action_reject (GtkWidget *widget, const char *name, GVariant *parameter)
{
  LkSuggestionsPage *self = LK_SUGGESTIONS_PAGE (widget);
  const Suggestion *s = &g_array_index (self->suggestions, Suggestion, self->current);
  g_autoptr (GError) error = NULL;

  gboolean ok = s->member
                    ? lk_session_remove_faces (self->session, s->person_id, &s->face, 1, &error)
                    : lk_session_reject (self->session, s->person_id, s->face, &error);
  answered (self, ok, error,
            s->member ? _ ("Taken out of the person") : _ ("Kept apart from the person"));
}

/* The photo of the face asked about, on demand (Space). */
static void
action_photo (GtkWidget *widget, const char *name, GVariant *parameter)
{
  LkSuggestionsPage *self = LK_SUGGESTIONS_PAGE (widget);
  GtkRoot *root = gtk_widget_get_root (widget);

  if (self->current >= self->suggestions->len)
    return;
  const Suggestion *s = &g_array_index (self->suggestions, Suggestion, self->current);
  lk_face_viewer_present (GTK_IS_WINDOW (root) ? GTK_WINDOW (root) : NULL, self->session, &s->face,
                          1, 0);
}

static void
action_skip (GtkWidget *widget, const char *name, GVariant *parameter)
{
  LkSuggestionsPage *self = LK_SUGGESTIONS_PAGE (widget);
  gboolean known = FALSE;

  for (guint k = 0; k < self->skipped->len && !known; k++)
    known = g_array_index (self->skipped, guint, k) == self->current;
  if (!known)
    g_array_append_val (self->skipped, self->current);
  self->current++;
  show_current (self);
}

/* The skipped questions again, in their order; those a decision has made
 * moot are passed over by show_current (). */
static void
action_review_skipped (GtkWidget *widget, const char *name, GVariant *parameter)
{
  LkSuggestionsPage *self = LK_SUGGESTIONS_PAGE (widget);
  g_autoptr (GArray) again = g_array_new (FALSE, FALSE, sizeof (Suggestion));

  g_array_set_clear_func (again, suggestion_clear);
  for (guint k = 0; k < self->skipped->len; k++)
    {
      Suggestion *s
          = &g_array_index (self->suggestions, Suggestion, g_array_index (self->skipped, guint, k));
      Suggestion copy = *s;
      copy.person_id = g_strdup (s->person_id);
      g_array_append_val (again, copy);
    }
  g_array_set_size (self->suggestions, 0);
  g_array_append_vals (self->suggestions, again->data, again->len);
  /* The copies' ids now belong to the page's list. */
  g_array_set_clear_func (again, NULL);
  self->current = 0;
  g_array_set_size (self->skipped, 0);
  g_array_set_size (self->answered, 0);
  g_array_set_size (self->undone, 0);
  show_current (self);
}

static void
lk_suggestions_page_dispose (GObject *object)
{
  LkSuggestionsPage *self = LK_SUGGESTIONS_PAGE (object);

  g_clear_object (&self->session);
  g_clear_object (&self->cache);
  gtk_widget_dispose_template (GTK_WIDGET (self), LK_TYPE_SUGGESTIONS_PAGE);
  G_OBJECT_CLASS (lk_suggestions_page_parent_class)->dispose (object);
}

static void
lk_suggestions_page_finalize (GObject *object)
{
  LkSuggestionsPage *self = LK_SUGGESTIONS_PAGE (object);

  g_array_unref (self->suggestions);
  g_array_unref (self->similar);
  g_array_unref (self->answered);
  g_array_unref (self->undone);
  g_array_unref (self->skipped);
  G_OBJECT_CLASS (lk_suggestions_page_parent_class)->finalize (object);
}

static void
lk_suggestions_page_class_init (LkSuggestionsPageClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = lk_suggestions_page_dispose;
  object_class->finalize = lk_suggestions_page_finalize;

  /* An answer was recorded: the message for the undo notification. */
  signals[SIGNAL_TOAST] = g_signal_new ("toast", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0,
                                        NULL, NULL, NULL, G_TYPE_NONE, 1, G_TYPE_STRING);
  /* An answer was refused; the message says why. */
  signals[SIGNAL_ERROR] = g_signal_new ("error", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0,
                                        NULL, NULL, NULL, G_TYPE_NONE, 1, G_TYPE_ERROR);
  g_type_ensure (ADW_TYPE_TOAST_OVERLAY);
  g_type_ensure (ADW_TYPE_STATUS_PAGE);
  g_type_ensure (LK_TYPE_WRAP_BOX);

  gtk_widget_class_set_template_from_resource (widget_class,
                                               RESOURCE_PREFIX "/lk-suggestions-page.ui");
  gtk_widget_class_bind_template_child (widget_class, LkSuggestionsPage, layout);
  gtk_widget_class_bind_template_child (widget_class, LkSuggestionsPage, toast_overlay);
  gtk_widget_class_bind_template_child (widget_class, LkSuggestionsPage, stack);
  gtk_widget_class_bind_template_child (widget_class, LkSuggestionsPage, answer_bar);
  gtk_widget_class_bind_template_child (widget_class, LkSuggestionsPage, done_page);
  gtk_widget_class_bind_template_child (widget_class, LkSuggestionsPage, again_button);
  gtk_widget_class_bind_template_child (widget_class, LkSuggestionsPage, done_back_button);
  gtk_widget_class_bind_template_child (widget_class, LkSuggestionsPage, question_label);
  gtk_widget_class_bind_template_child (widget_class, LkSuggestionsPage, faces_box);
  gtk_widget_class_bind_template_child (widget_class, LkSuggestionsPage, similar_box);
  gtk_widget_class_bind_template_child (widget_class, LkSuggestionsPage, detail_label);
  gtk_widget_class_bind_template_child (widget_class, LkSuggestionsPage, photo_button);
  gtk_widget_class_set_layout_manager_type (widget_class, GTK_TYPE_BIN_LAYOUT);

  gtk_widget_class_install_action (widget_class, "suggest.confirm", NULL, action_confirm);
  gtk_widget_class_install_action (widget_class, "suggest.reject", NULL, action_reject);
  gtk_widget_class_install_action (widget_class, "suggest.skip", NULL, action_skip);
  gtk_widget_class_install_action (widget_class, "suggest.review-skipped", NULL,
                                   action_review_skipped);
  gtk_widget_class_install_action (widget_class, "suggest.photo", NULL, action_photo);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_y, 0, "suggest.confirm", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_n, 0, "suggest.reject", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_Delete, 0, "suggest.reject", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_Right, 0, "suggest.skip", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_s, 0, "suggest.skip", NULL);
  /* Escape leaves, as Back (the window's action) does: a review is left
   * the way a dialog is. */
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_Escape, 0, "win.back", NULL);
}

static void
lk_suggestions_page_init (LkSuggestionsPage *self)
{
  gtk_widget_init_template (GTK_WIDGET (self));
  self->suggestions = g_array_new (FALSE, FALSE, sizeof (Suggestion));
  self->similar = g_array_new (FALSE, FALSE, sizeof (guint32));
  self->answered = g_array_new (FALSE, FALSE, sizeof (guint));
  self->undone = g_array_new (FALSE, FALSE, sizeof (guint));
  self->skipped = g_array_new (FALSE, FALSE, sizeof (guint));

  /* Space is See Photo wherever the focus is on the page, a button included:
   * seen before the focused button (capture phase), so a Yes or No that took
   * the focus from a click never answers the next question on Space. */
  GtkEventController *keys = gtk_shortcut_controller_new ();
  gtk_event_controller_set_propagation_phase (keys, GTK_PHASE_CAPTURE);
  gtk_shortcut_controller_add_shortcut (GTK_SHORTCUT_CONTROLLER (keys),
                                        gtk_shortcut_new (gtk_keyval_trigger_new (GDK_KEY_space, 0),
                                                          gtk_named_action_new ("suggest.photo")));
  gtk_widget_add_controller (GTK_WIDGET (self), keys);
  g_array_set_clear_func (self->suggestions, suggestion_clear);
}

void
lk_suggestions_page_set_session (LkSuggestionsPage *self, LkSession *session, LkTextureCache *cache)
{
  g_return_if_fail (LK_IS_SUGGESTIONS_PAGE (self));

  g_set_object (&self->session, session);
  g_array_set_size (self->suggestions, 0);
  g_array_set_size (self->skipped, 0);
  if (self->cache != cache)
    {
      g_set_object (&self->cache, cache);
      if (self->face_tile != NULL)
        {
          gtk_widget_unparent (self->face_tile);
          gtk_widget_unparent (self->person_tile);
        }
      self->face_tile = lk_tile_new (cache, FACE_SIZE);
      self->person_tile = lk_tile_new (cache, FACE_SIZE);
      gtk_widget_add_css_class (self->person_tile, "person");
      gtk_widget_set_parent (self->face_tile, self->faces_box);
      gtk_widget_set_parent (self->person_tile, self->faces_box);
    }
}

void
lk_suggestions_page_start (LkSuggestionsPage *self)
{
  g_return_if_fail (LK_IS_SUGGESTIONS_PAGE (self));
  g_return_if_fail (self->session != NULL);

  g_autoptr (GArray) found = lk_session_suggestions (self->session, MAX_SUGGESTIONS);

  g_array_set_size (self->suggestions, 0);
  for (guint k = 0; k < found->len; k++)
    {
      const LkSuggestion *engine = &g_array_index (found, LkSuggestion, k);
      Suggestion s
          = { engine->face, g_strdup (lk_session_person_id (self->session, engine->person)),
              engine->member, engine->linkage };

      if (s.person_id != NULL)
        g_array_append_val (self->suggestions, s);
    }
  self->current = 0;
  g_array_set_size (self->answered, 0);
  g_array_set_size (self->undone, 0);
  g_array_set_size (self->skipped, 0);
  show_current (self);
}

void
lk_suggestions_page_undone (LkSuggestionsPage *self)
{
  g_return_if_fail (LK_IS_SUGGESTIONS_PAGE (self));
  if (self->answered->len == 0)
    return;
  guint index = g_array_index (self->answered, guint, self->answered->len - 1);
  g_array_set_size (self->answered, self->answered->len - 1);
  g_array_append_val (self->undone, index);
  self->current = index;
  show_current (self);
}

void
lk_suggestions_page_redone (LkSuggestionsPage *self)
{
  g_return_if_fail (LK_IS_SUGGESTIONS_PAGE (self));
  if (self->undone->len == 0)
    return;
  guint index = g_array_index (self->undone, guint, self->undone->len - 1);
  g_array_set_size (self->undone, self->undone->len - 1);
  g_array_append_val (self->answered, index);
  self->current = index + 1;
  show_current (self);
}

guint
lk_suggestions_page_get_n_left (LkSuggestionsPage *self)
{
  g_return_val_if_fail (LK_IS_SUGGESTIONS_PAGE (self), 0);
  return self->suggestions->len - MIN (self->current, self->suggestions->len);
}

GtkWidget *
lk_suggestions_page_get_toast_overlay (LkSuggestionsPage *self)
{
  g_return_val_if_fail (LK_IS_SUGGESTIONS_PAGE (self), NULL);
  return self->toast_overlay;
}

GArray *
lk_suggestions_page_get_similar (LkSuggestionsPage *self)
{
  g_return_val_if_fail (LK_IS_SUGGESTIONS_PAGE (self), NULL);
  return self->similar;
}

guint32
lk_suggestions_page_get_face (LkSuggestionsPage *self)
{
  g_return_val_if_fail (LK_IS_SUGGESTIONS_PAGE (self), G_MAXUINT32);
  if (self->current >= self->suggestions->len)
    return G_MAXUINT32;
  return g_array_index (self->suggestions, Suggestion, self->current).face;
}
