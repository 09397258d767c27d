/* lk-person-page.c — every face of one person, and the review actions on them
 *
 * Each action goes straight to the session (applied, saved, re-clustered) and
 * then announces itself with the "toast" signal, which the window turns into
 * an undo notification: nothing asks "are you sure?", everything can be
 * undone. When a decision makes the person disappear (merged into another,
 * every face moved away) the page emits "person-gone" and the window goes back.
 */
#include "config.h"

#include <adwaita.h>
#include <glib/gi18n.h>

#include "lk-clash-popover.h"
#include "lk-face-item.h"
#include "lk-face-viewer.h"
#include "lk-grid-fit.h"
#include "lk-person-chooser.h"
#include "lk-person-page.h"
#include "lk-tile.h"
#include "lk-wrap-box.h"

/* Logical pixels: large enough to judge a face, small enough for ~8 across a
 * laptop screen. */
#define FACE_SIZE 112
/* A person of more faces than a 1280 × 720 window shows whole at once (10
 * columns × 4 rows of FACE_SIZE tiles under the header bar and the page's
 * title, the 5th row cut by the action bar: test-ui-review's screenshot)
 * opens outliers first: its wrong faces are then on the first screen, where
 * in the library's order they were anywhere (README, "Outliers first"). A
 * smaller person shows whole either way, in the order the photos came. */
#define SCREENFUL 40

typedef enum
{
  ORDER_AUTO = 0,     /* outliers first above SCREENFUL faces, else the library's */
  ORDER_OUTLIERS = 1, /* least like the rest of the person first */
  ORDER_LIBRARY = 2,  /* as the faces come in the library (today's order) */
} Order;

struct _LkPersonPage
{
  GtkWidget parent_instance;

  LkSession *session;
  LkTextureCache *cache;
  LkPersonItem *item;
  gulong changed_id;
  gulong title_id;
  GArray *shown;           /* guint32: the faces in faces_store */
  GListStore *faces_store; /* of LkFaceItem */
  GtkMultiSelection *selection;

  GtkWidget *header;
  GtkEditableLabel *name_label;
  GtkMenuButton *merge_button;
  GtkMenuButton *move_button;
  GtkWidget *hide_button;
  GtkLabel *count_label;
  GtkWidget *toast_overlay;
  GtkWidget *scrolled;
  GtkGridView *faces_grid;
  GtkWidget *action_bar;
  GtkLabel *selection_label;
  GtkLabel *selection_short_label; /* where the whole sentence does not fit */
  GtkWidget *merge_chooser;
  GtkWidget *move_chooser;
  GtkWidget *clash_popover;          /* a refused merge or move's two faces of one photo */
  GtkDropDown *order_dropdown;       /* Outliers First, Library Order */
  Order order;                       /* what the user chose; AUTO until they do */
  gboolean syncing_order;            /* the dropdown is being set by the page, not the user */
  GtkToggleButton *dismissed_button; /* on the unassigned entry: show the dismissed faces */
  GtkWidget *dismiss_button;
  GtkWidget *undismiss_button;
  GtkWidget *cover_button;
  GtkWidget *remove_button;
  GtkWidget *more_squeezer; /* Not a Face and Use as Cover, or a menu of them when narrow */
};

G_DEFINE_FINAL_TYPE (LkPersonPage, lk_person_page, GTK_TYPE_WIDGET)

enum
{
  PROP_0,
  PROP_HIDDEN,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

enum
{
  SIGNAL_TOAST,
  SIGNAL_TOAST_PERSON,
  SIGNAL_PERSON_GONE,
  SIGNAL_ERROR,
  N_SIGNALS
};

static guint signals[N_SIGNALS];

static void
toast (LkPersonPage *self, const char *message)
{
  g_signal_emit (self, signals[SIGNAL_TOAST], 0, message);
}

static void
report (LkPersonPage *self, const GError *error)
{
  g_signal_emit (self, signals[SIGNAL_ERROR], 0, error);
}

static const char *
person_id (LkPersonPage *self)
{
  return lk_person_item_is_unassigned (self->item) ? NULL : lk_person_item_get_id (self->item);
}

static gboolean
showing_dismissed (LkPersonPage *self)
{
  return self->item != NULL && lk_person_item_is_unassigned (self->item)
         && gtk_toggle_button_get_active (self->dismissed_button);
}

static int
compare_faces (gconstpointer x, gconstpointer y)
{
  guint32 a = *(const guint32 *) x, b = *(const guint32 *) y;
  return a < b ? -1 : a > b;
}

/* The selected faces, ascending (whatever order the grid shows them in). */
static GArray *
selected_faces (LkPersonPage *self)
{
  g_autoptr (GtkBitset) set
      = gtk_selection_model_get_selection (GTK_SELECTION_MODEL (self->selection));
  GArray *faces = g_array_new (FALSE, FALSE, sizeof (guint32));
  GtkBitsetIter iter;
  guint position;

  for (gboolean ok = gtk_bitset_iter_init_first (&iter, set, &position); ok;
       ok = gtk_bitset_iter_next (&iter, &position))
    if (position < self->shown->len)
      g_array_append_val (faces, g_array_index (self->shown, guint32, position));
  g_array_sort (faces, compare_faces);
  return faces;
}

static void
update_actions (LkPersonPage *self)
{
  gboolean person = self->item != NULL && !lk_person_item_is_unassigned (self->item);
  g_autoptr (GArray) faces = self->item != NULL ? selected_faces (self) : NULL;
  guint n = faces != NULL ? faces->len : 0;
  gboolean dismissed = showing_dismissed (self);

  gtk_widget_action_set_enabled (GTK_WIDGET (self), "person.rename", person);
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "person.merge", person);
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "person.hide", person);
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "person.remove", person && n > 0);
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "person.set-cover", person && n == 1);
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "person.move", n > 0 && !dismissed);
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "person.dismiss", n > 0 && !dismissed);
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "person.undismiss", n > 0 && dismissed);
  gtk_widget_set_visible (self->dismiss_button, !dismissed);
  gtk_widget_set_visible (self->undismiss_button, dismissed);
  gtk_widget_set_visible (GTK_WIDGET (self->move_button), !dismissed);
  gtk_widget_set_visible (self->remove_button, !dismissed);
  gtk_widget_set_visible (self->cover_button, !dismissed);
  gtk_widget_set_visible (self->more_squeezer, !dismissed);
  gtk_widget_set_sensitive (GTK_WIDGET (self->merge_button), person);
  gtk_widget_set_sensitive (GTK_WIDGET (self->move_button), n > 0 && !dismissed);
  gtk_editable_set_editable (GTK_EDITABLE (self->name_label), person);

  g_autofree char *text = NULL;
  g_autofree char *short_text = NULL;
  if (n > 0)
    /* The noun counts the faces shown: "1 of 491 faces selected". */
    text = g_strdup_printf (g_dngettext (GETTEXT_PACKAGE, "%'u of %'u face selected",
                                         "%'u of %'u faces selected", self->shown->len),
                            n, self->shown->len);
  else if (dismissed)
    text = g_strdup (_ ("Dismissed as no face; select faces to bring them back"));
  else
    text = g_strdup (_ ("Select faces to take them out or move them; Ctrl+A selects all"));
  if (n > 0)
    /* Translators: the person page's bar when the whole "2 of 9 faces
     * selected" does not fit */
    short_text
        = g_strdup_printf (g_dngettext (GETTEXT_PACKAGE, "%'u selected", "%'u selected", n), n);
  else
    short_text = g_strdup (_ ("Select faces"));
  gtk_label_set_label (self->selection_label, text);
  gtk_label_set_label (self->selection_short_label, short_text);
}

static void
show_title (LkPersonPage *self)
{
  if (gtk_editable_label_get_editing (self->name_label))
    return;
  gtk_editable_set_text (GTK_EDITABLE (self->name_label), lk_person_item_get_title (self->item));
}

/* GTK 4.8's GtkDropDown is a button inside a combo box, and the focus
 * lands on the button, which has no name of its own: a screen reader said
 * "GtkToggleButton". It takes the drop-down's (GTK 4.8 cannot read that
 * back, so the caller says it again). */
static void
name_dropdown_button (GtkWidget *dropdown, const char *label)
{
  for (GtkWidget *child = gtk_widget_get_first_child (dropdown); child != NULL;
       child = gtk_widget_get_next_sibling (child))
    if (GTK_IS_TOGGLE_BUTTON (child))
      gtk_accessible_update_property (GTK_ACCESSIBLE (child), GTK_ACCESSIBLE_PROPERTY_LABEL, label,
                                      -1);
}

static gboolean
outliers_first (LkPersonPage *self, guint n)
{
  if (self->item == NULL || lk_person_item_is_unassigned (self->item))
    return FALSE;
  return self->order == ORDER_OUTLIERS || (self->order == ORDER_AUTO && n > SCREENFUL);
}

/* Brings the page in line with the item after a re-clustering. */
static void
refresh (LkPersonPage *self)
{
  gboolean dismissed = showing_dismissed (self);
  gsize n_dismissed = 0;
  const guint32 *dismissed_faces = lk_session_dismissed_faces (self->session, &n_dismissed);
  guint n = dismissed ? (guint) n_dismissed : lk_person_item_get_n_faces (self->item);
  g_autofree guint32 *faces = g_memdup2 (
      dismissed ? dismissed_faces : lk_person_item_get_faces (self->item), n * sizeof (guint32));
  gboolean outliers = !dismissed && outliers_first (self, n);

  if (outliers && n > 2)
    lk_session_outliers_first (self->session, faces, n, NULL);
  self->syncing_order = TRUE;
  gtk_drop_down_set_selected (self->order_dropdown, outliers ? 0 : 1);
  self->syncing_order = FALSE;
  gtk_widget_set_visible (GTK_WIDGET (self->order_dropdown),
                          !lk_person_item_is_unassigned (self->item));
  gtk_widget_set_visible (GTK_WIDGET (self->dismissed_button),
                          lk_person_item_is_unassigned (self->item)
                              && (n_dismissed > 0 || dismissed));
  g_autofree char *dismissed_label = g_strdup_printf (
      g_dngettext (GETTEXT_PACKAGE, "_Dismissed (%'zu)", "_Dismissed (%'zu)", n_dismissed),
      n_dismissed);
  gtk_button_set_label (GTK_BUTTON (self->dismissed_button), dismissed_label);

  show_title (self);
  g_autofree char *count
      = dismissed ? g_strdup_printf (g_dngettext (GETTEXT_PACKAGE, "%'u face dismissed as no face",
                                                  "%'u faces dismissed as no face", n),
                                     n)
                  : g_strdup_printf (g_dngettext (GETTEXT_PACKAGE, "%'u face", "%'u faces", n), n);
  gtk_label_set_label (self->count_label, count);

  if (self->shown->len != n
      || (n > 0 && memcmp (self->shown->data, faces, n * sizeof (guint32)) != 0))
    {
      g_autoptr (GPtrArray) items = g_ptr_array_new_full (n, g_object_unref);

      for (guint k = 0; k < n; k++)
        g_ptr_array_add (items, lk_face_item_new (faces[k]));
      g_array_set_size (self->shown, 0);
      g_array_append_vals (self->shown, faces, n);
      g_list_store_splice (self->faces_store, 0,
                           g_list_model_get_n_items (G_LIST_MODEL (self->faces_store)),
                           items->pdata, items->len);
      gtk_selection_model_unselect_all (GTK_SELECTION_MODEL (self->selection));
    }
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_HIDDEN]);
  update_actions (self);
}

static void
on_session_changed (LkSession *session, gpointer user_data)
{
  LkPersonPage *self = user_data;

  if (self->item == NULL)
    return;
  if (lk_session_find_person (session, lk_person_item_get_id (self->item)) != self->item)
    {
      g_signal_emit (self, signals[SIGNAL_PERSON_GONE], 0);
      return;
    }
  refresh (self);
}

static void
on_title_changed (LkPersonItem *item, GParamSpec *pspec, gpointer user_data)
{
  show_title (LK_PERSON_PAGE (user_data));
}

static gboolean
release_label (gpointer user_data)
{
  g_object_unref (user_data);
  return G_SOURCE_REMOVE;
}

/* GTK 4.8's GtkEditableLabel re-checks its focus 100 ms after losing it, from
 * a timeout that outlives the widget (closing the window while the name had
 * the focus crashed). Each time the focus leaves, the label is kept alive for
 * a second. This controller is added after the label's own, so its timeout is
 * attached later and, when both are due in one main-loop turn (a stalled
 * process), GTK's check still runs first. */
static void
on_name_focus_leave (GtkEventControllerFocus *controller, gpointer user_data)
{
  GtkWidget *label = gtk_event_controller_get_widget (GTK_EVENT_CONTROLLER (controller));

  g_timeout_add_full (G_PRIORITY_DEFAULT, 1000, release_label, g_object_ref (label), NULL);
}

static void
on_editing_changed (GtkEditableLabel *label, GParamSpec *pspec, gpointer user_data)
{
  LkPersonPage *self = user_data;
  g_autoptr (GError) error = NULL;

  if (gtk_editable_label_get_editing (label) || self->item == NULL
      || lk_person_item_is_unassigned (self->item))
    return;

  gtk_widget_grab_focus (GTK_WIDGET (self->faces_grid));

  g_autofree char *name = g_strstrip (g_strdup (gtk_editable_get_text (GTK_EDITABLE (label))));
  const char *old = lk_person_item_get_name (self->item);
  if (g_strcmp0 (name, lk_person_item_get_title (self->item)) == 0
      || (old == NULL && name[0] == '\0'))
    {
      show_title (self);
      return;
    }
  if (!lk_session_rename (self->session, lk_person_item_get_id (self->item), name, &error))
    {
      show_title (self);
      report (self, error);
      return;
    }
  g_autofree char *message
      = name[0] != '\0' ? g_strdup_printf (_ ("Named “%s”"), name) : g_strdup (_ ("Name removed"));
  show_title (self);
  toast (self, message);
}

static void
on_selection_changed (GtkSelectionModel *model, guint position, guint n, gpointer user_data)
{
  update_actions (LK_PERSON_PAGE (user_data));
}

static void
on_face_setup (GtkSignalListItemFactory *factory, GtkListItem *list_item, gpointer user_data)
{
  LkPersonPage *self = user_data;

  GtkWidget *tile = lk_tile_new (self->cache, FACE_SIZE);

  /* The photo each face comes from, on hover. */
  lk_tile_set_description_tooltip (LK_TILE (tile), TRUE);
  gtk_list_item_set_child (list_item, tile);
}

static void
on_face_bind (GtkSignalListItemFactory *factory, GtkListItem *list_item, gpointer user_data)
{
  LkPersonPage *self = user_data;
  GtkWidget *tile = gtk_list_item_get_child (list_item);
  guint32 face = lk_face_item_get_face (gtk_list_item_get_item (list_item));
  g_autofree char *path = lk_session_thumbnail_path (self->session, face);
  g_autofree char *description = lk_session_describe_face (self->session, face);
  /* Where the face is among the person's, then the tooltip's photo. The
   * faces are all rebound whenever the person's faces change (refresh
   * splices them all), so the position stays right. */
  /* Translators: a face's accessible name on a person's page, "Face 3 of
   * 58. Face 2 of 3 in 2019/IMG_1.jpg" */
  g_autofree char *label
      = g_strdup_printf (_ ("Face %u of %u. %s"), gtk_list_item_get_position (list_item) + 1,
                         self->shown->len, description);

  lk_tile_set_label (LK_TILE (tile), label);
  lk_tile_set_face (LK_TILE (tile), path, description);
  /* For Space: which face the focused tile shows (+1: 0 is none). */
  g_object_set_data (G_OBJECT (tile), "lk-face", GUINT_TO_POINTER (face + 1));
}

/* The photo of the face at `position` of the grid. */
static void
view_photo (LkPersonPage *self, guint position)
{
  if (self->session == NULL || position >= self->shown->len)
    return;
  GtkRoot *root = gtk_widget_get_root (GTK_WIDGET (self));
  lk_face_viewer_present (GTK_IS_WINDOW (root) ? GTK_WINDOW (root) : NULL, self->session,
                          (const guint32 *) self->shown->data, self->shown->len, position);
}

/* Double-click or Enter on a face. */
static void
on_face_activate (GtkGridView *grid, guint position, gpointer user_data)
{
  view_photo (LK_PERSON_PAGE (user_data), position);
}

/* Space on a face: its photo (like a file manager's preview). The grid would
 * take Space to select; the page catches it first. */
static gboolean
on_faces_key (GtkEventControllerKey *controller, guint keyval, guint keycode, GdkModifierType state,
              gpointer user_data)
{
  LkPersonPage *self = user_data;
  GtkWidget *focus;

  if (keyval != GDK_KEY_space || (state & gtk_accelerator_get_default_mod_mask ()) != 0)
    return FALSE;
  focus = gtk_root_get_focus (gtk_widget_get_root (GTK_WIDGET (self)));
  for (GtkWidget *w = focus; w != NULL && w != GTK_WIDGET (self->faces_grid);
       w = gtk_widget_get_parent (w))
    {
      GtkWidget *tile = LK_IS_TILE (w) ? w : gtk_widget_get_first_child (w);
      if (tile != NULL && LK_IS_TILE (tile) && g_object_get_data (G_OBJECT (tile), "lk-face"))
        {
          guint32 face = GPOINTER_TO_UINT (g_object_get_data (G_OBJECT (tile), "lk-face")) - 1;
          for (guint k = 0; k < self->shown->len; k++)
            if (g_array_index (self->shown, guint32, k) == face)
              {
                view_photo (self, k);
                return TRUE;
              }
        }
    }
  view_photo (self, 0);
  return TRUE;
}

static void
on_face_unbind (GtkSignalListItemFactory *factory, GtkListItem *list_item, gpointer user_data)
{
  lk_tile_clear (LK_TILE (gtk_list_item_get_child (list_item)));
}

/* A merge or move refused because two of the faces share a photo: the two
 * faces, by thumbnail, and the photo by its path, beside the button the
 * user pressed (lk-clash-popover.c). */
static void
show_clash (LkPersonPage *self, GtkWidget *anchor, guint32 a, guint32 b)
{
  g_autofree char *where = lk_clash_popover_describe_photo (self->session, a);

  if (self->clash_popover == NULL)
    {
      self->clash_popover = lk_clash_popover_new (self->cache);
      gtk_widget_set_parent (self->clash_popover, GTK_WIDGET (self));
    }
  /* Translators: %s is a photo's path, "“2019/IMG_0042.jpg” holds both: …" */
  g_autofree char *text = g_strdup_printf (
      _ ("%s holds both: two faces of one photo are never one person, so they cannot be put "
         "together"),
      where);
  graphene_rect_t bounds;
  gboolean pointed = gtk_widget_compute_bounds (anchor, GTK_WIDGET (self), &bounds);
  lk_clash_popover_show (LK_CLASH_POPOVER (self->clash_popover), self->session, a, b, text,
                         pointed
                             ? &(GdkRectangle){ (int) bounds.origin.x, (int) bounds.origin.y,
                                                (int) bounds.size.width, (int) bounds.size.height }
                             : NULL);
}

gboolean
lk_person_page_get_outliers_first (LkPersonPage *self)
{
  g_return_val_if_fail (LK_IS_PERSON_PAGE (self), FALSE);
  return gtk_drop_down_get_selected (self->order_dropdown) == 0
         && gtk_widget_get_visible (GTK_WIDGET (self->order_dropdown));
}

void
lk_person_page_set_outliers_first (LkPersonPage *self, gboolean outliers_first)
{
  g_return_if_fail (LK_IS_PERSON_PAGE (self));
  gtk_drop_down_set_selected (self->order_dropdown, outliers_first ? 0 : 1);
}

const guint32 *
lk_person_page_get_shown (LkPersonPage *self, guint *n)
{
  g_return_val_if_fail (LK_IS_PERSON_PAGE (self), NULL);
  *n = self->shown->len;
  return (const guint32 *) self->shown->data;
}

void
lk_person_page_show_dismissed (LkPersonPage *self, gboolean show)
{
  g_return_if_fail (LK_IS_PERSON_PAGE (self));
  gtk_toggle_button_set_active (self->dismissed_button, show);
}

gboolean
lk_person_page_get_clash (LkPersonPage *self, guint32 *a, guint32 *b)
{
  g_return_val_if_fail (LK_IS_PERSON_PAGE (self), FALSE);
  return self->clash_popover != NULL
         && lk_clash_popover_get_faces (LK_CLASH_POPOVER (self->clash_popover), a, b);
}

/* A refusal: two faces of one photo are shown; anything else is said. */
static void
refused (LkPersonPage *self, const GError *error, GtkWidget *anchor, const guint32 *faces,
         gsize n_faces, const char *other_id)
{
  guint32 a, b;
  if (g_error_matches (error, LK_REVIEW_ERROR, LK_REVIEW_ERROR_SAME_PHOTO)
      && lk_session_find_photo_clash (self->session, lk_person_item_get_id (self->item), faces,
                                      n_faces, other_id, &a, &b))
    show_clash (self, anchor, a, b);
  else
    report (self, error);
}

static void
on_merge_chosen (LkPersonChooser *chooser, const char *other_id, gpointer user_data)
{
  LkPersonPage *self = user_data;
  g_autoptr (GError) error = NULL;
  LkPersonItem *other = lk_session_find_person (self->session, other_id);
  g_autofree char *other_title = g_strdup (other != NULL ? lk_person_item_get_title (other) : "");

  if (other_id == NULL || self->item == NULL)
    return;
  if (!lk_session_merge (self->session, lk_person_item_get_id (self->item), other_id, &error))
    {
      refused (self, error, GTK_WIDGET (self->merge_button), NULL, 0, other_id);
      return;
    }
  g_autofree char *message = g_strdup_printf (_ ("Merged “%s” into this person"), other_title);
  toast (self, message);
}

static void
on_move_chosen (LkPersonChooser *chooser, const char *target_id, gpointer user_data)
{
  LkPersonPage *self = user_data;
  g_autoptr (GError) error = NULL;
  g_autoptr (GArray) faces = selected_faces (self);
  g_autofree char *new_id = NULL;
  LkPersonItem *target = lk_session_find_person (self->session, target_id);
  g_autofree char *target_title
      = g_strdup (target != NULL ? lk_person_item_get_title (target) : _ ("a new person"));

  if (faces->len == 0)
    return;
  g_object_ref (self);
  if (!lk_session_move_faces (self->session, person_id (self), (const guint32 *) faces->data,
                              faces->len, target_id, &new_id, &error))
    refused (self, error, GTK_WIDGET (self->move_button), (const guint32 *) faces->data, faces->len,
             target_id);
  else
    {
      g_autofree char *message
          = g_strdup_printf (g_dngettext (GETTEXT_PACKAGE, "Moved %'u face to %s",
                                          "Moved %'u faces to %s", faces->len),
                             faces->len, target_title);
      toast (self, message);
    }
  g_object_unref (self);
}

static GtkWidget *
ensure_chooser (LkPersonPage *self, GtkWidget **chooser, gboolean offer_new, GCallback chosen)
{
  if (*chooser == NULL)
    {
      *chooser = lk_person_chooser_new (self->cache, offer_new);
      g_signal_connect (*chooser, "chosen", chosen, self);
    }
  return *chooser;
}

static void
on_merge_popup (GtkMenuButton *button, gpointer user_data)
{
  LkPersonPage *self = user_data;
  GtkWidget *chooser
      = ensure_chooser (self, &self->merge_chooser, FALSE, G_CALLBACK (on_merge_chosen));

  if (gtk_menu_button_get_popover (button) != GTK_POPOVER (chooser))
    gtk_menu_button_set_popover (button, chooser);
  lk_person_chooser_set_person (LK_PERSON_CHOOSER (chooser), self->session,
                                lk_person_item_get_id (self->item));
}

static void
on_move_popup (GtkMenuButton *button, gpointer user_data)
{
  LkPersonPage *self = user_data;
  GtkWidget *chooser
      = ensure_chooser (self, &self->move_chooser, TRUE, G_CALLBACK (on_move_chosen));

  if (gtk_menu_button_get_popover (button) != GTK_POPOVER (chooser))
    gtk_menu_button_set_popover (button, chooser);
  g_autoptr (GArray) faces = selected_faces (self);
  lk_person_chooser_set_faces (LK_PERSON_CHOOSER (chooser), self->session,
                               lk_person_item_get_id (self->item), (const guint32 *) faces->data,
                               faces->len);
}

static void
action_rename (GtkWidget *widget, const char *name, GVariant *parameter)
{
  LkPersonPage *self = LK_PERSON_PAGE (widget);

  gtk_editable_label_start_editing (self->name_label);
  gtk_widget_grab_focus (GTK_WIDGET (self->name_label));
}

static void
action_merge (GtkWidget *widget, const char *name, GVariant *parameter)
{
  gtk_menu_button_popup (LK_PERSON_PAGE (widget)->merge_button);
}

static void
action_move (GtkWidget *widget, const char *name, GVariant *parameter)
{
  gtk_menu_button_popup (LK_PERSON_PAGE (widget)->move_button);
}

static void
action_remove (GtkWidget *widget, const char *name, GVariant *parameter)
{
  LkPersonPage *self = LK_PERSON_PAGE (widget);
  g_autoptr (GError) error = NULL;
  g_autoptr (GArray) faces = selected_faces (self);

  if (faces->len == 0 || person_id (self) == NULL)
    return;
  /* Made while a save or a re-scan is in flight, the decision waits in the
   * session's queue and the new person has no id yet. */
  gboolean queued
      = lk_session_is_committing (self->session) || lk_session_is_loading (self->session);
  g_autofree char *new_id = NULL;
  /* "out of Unnamed person" reads as a name: an unnamed one is "this person". */
  const char *given = lk_person_item_get_name (self->item);
  g_autofree char *title
      = given != NULL ? g_strdup_printf ("“%s”", given) : g_strdup (_ ("this person"));
  g_object_ref (self);
  /* "Not This Person" means what it says: the faces become a person of
   * their own, rather than landing unannounced in whoever the clustering
   * puts them with (possibly a large, unrelated person). */
  if (!lk_session_take_out_faces (self->session, person_id (self), (const guint32 *) faces->data,
                                  faces->len, &new_id, &error))
    report (self, error);
  else if (new_id != NULL)
    {
      /* Translators: "Took 2 faces out: a new person now", beside a Show
       * button. Short: "Took 2 faces out of Unnamed person: they are a new
       * person now" wrapped its last word alone onto a second line. */
      g_autofree char *message
          = g_strdup_printf (g_dngettext (GETTEXT_PACKAGE, "Took %'u face out: a new person now",
                                          "Took %'u faces out: a new person now", faces->len),
                             faces->len);
      g_signal_emit (self, signals[SIGNAL_TOAST_PERSON], 0, message, new_id);
    }
  else
    {
      g_autofree char *message
          = queued ? g_strdup_printf (
                g_dngettext (GETTEXT_PACKAGE, "Took %'u face out: a new person soon",
                             "Took %'u faces out: a new person soon", faces->len),
                faces->len)
                   /* Two faces of one photo are never one person: they only leave. */
                   : g_strdup_printf (_ ("Took %'u faces out of %s. Being in one photo, each goes "
                                         "to whom it is most like"),
                                      faces->len, title);
      toast (self, message);
    }
  g_object_unref (self);
}

/* "Not a Face": the selected detections are no face (a logo, a pattern);
 * they leave the person for good, and the notification's Undo brings them
 * back (or the unassigned entry's Dismissed, later). */
static void
action_dismiss (GtkWidget *widget, const char *name, GVariant *parameter)
{
  LkPersonPage *self = LK_PERSON_PAGE (widget);
  g_autoptr (GError) error = NULL;
  g_autoptr (GArray) faces = selected_faces (self);

  if (faces->len == 0 || showing_dismissed (self))
    return;
  if (!lk_session_dismiss (self->session, (const guint32 *) faces->data, faces->len, &error))
    {
      report (self, error);
      return;
    }
  g_autofree char *message
      = g_strdup_printf (g_dngettext (GETTEXT_PACKAGE, "Dismissed %'u face: not a face",
                                      "Dismissed %'u faces: not faces", faces->len),
                         faces->len);
  toast (self, message);
}

static void
action_undismiss (GtkWidget *widget, const char *name, GVariant *parameter)
{
  LkPersonPage *self = LK_PERSON_PAGE (widget);
  g_autoptr (GError) error = NULL;
  g_autoptr (GArray) faces = selected_faces (self);

  if (faces->len == 0 || !showing_dismissed (self))
    return;
  if (!lk_session_undismiss (self->session, (const guint32 *) faces->data, faces->len, &error))
    {
      report (self, error);
      return;
    }
  g_autofree char *message = g_strdup_printf (
      g_dngettext (GETTEXT_PACKAGE, "Brought back %'u face", "Brought back %'u faces", faces->len),
      faces->len);
  toast (self, message);
}

static void
on_order_selected (GtkDropDown *dropdown, GParamSpec *pspec, gpointer user_data)
{
  LkPersonPage *self = user_data;

  if (self->syncing_order || self->item == NULL)
    return;
  self->order = gtk_drop_down_get_selected (dropdown) == 0 ? ORDER_OUTLIERS : ORDER_LIBRARY;
  refresh (self);
}

static void
on_dismissed_toggled (GtkToggleButton *button, gpointer user_data)
{
  LkPersonPage *self = user_data;

  if (self->item == NULL || self->session == NULL)
    return;
  refresh (self);
  gtk_adjustment_set_value (
      gtk_scrolled_window_get_vadjustment (GTK_SCROLLED_WINDOW (self->scrolled)), 0.0);
}

static void
action_set_cover (GtkWidget *widget, const char *name, GVariant *parameter)
{
  LkPersonPage *self = LK_PERSON_PAGE (widget);
  g_autoptr (GError) error = NULL;
  g_autoptr (GArray) faces = selected_faces (self);

  if (faces->len != 1 || person_id (self) == NULL)
    return;
  if (!lk_session_set_cover (self->session, person_id (self), g_array_index (faces, guint32, 0),
                             &error))
    report (self, error);
  else
    toast (self, _ ("Cover changed"));
}

static void
set_hidden (LkPersonPage *self, gboolean hidden)
{
  g_autoptr (GError) error = NULL;

  if (self->item == NULL || person_id (self) == NULL
      || hidden == lk_person_item_get_hidden (self->item))
    return;
  if (!lk_session_set_hidden (self->session, person_id (self), hidden, &error))
    {
      report (self, error);
      return;
    }
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_HIDDEN]);
  toast (self, hidden ? _ ("Person hidden") : _ ("Person shown again"));
}

static void
lk_person_page_get_property (GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
  LkPersonPage *self = LK_PERSON_PAGE (object);

  switch (prop_id)
    {
      case PROP_HIDDEN:
        g_value_set_boolean (value, self->item != NULL && lk_person_item_get_hidden (self->item));
        break;
      default:
        G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
lk_person_page_set_property (GObject *object, guint prop_id, const GValue *value, GParamSpec *pspec)
{
  LkPersonPage *self = LK_PERSON_PAGE (object);

  switch (prop_id)
    {
      case PROP_HIDDEN:
        set_hidden (self, g_value_get_boolean (value));
        break;
      default:
        G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
disconnect_item (LkPersonPage *self)
{
  if (self->item != NULL)
    g_clear_signal_handler (&self->title_id, self->item);
  g_clear_object (&self->item);
}

static void
lk_person_page_dispose (GObject *object)
{
  LkPersonPage *self = LK_PERSON_PAGE (object);

  disconnect_item (self);
  if (self->session != NULL)
    g_clear_signal_handler (&self->changed_id, self->session);
  g_clear_object (&self->session);
  g_clear_object (&self->cache);
  g_clear_object (&self->selection);
  g_clear_object (&self->faces_store);
  g_clear_pointer (&self->clash_popover, gtk_widget_unparent);
  gtk_widget_dispose_template (GTK_WIDGET (self), LK_TYPE_PERSON_PAGE);
  G_OBJECT_CLASS (lk_person_page_parent_class)->dispose (object);
}

static void
lk_person_page_finalize (GObject *object)
{
  LkPersonPage *self = LK_PERSON_PAGE (object);

  g_array_unref (self->shown);
  G_OBJECT_CLASS (lk_person_page_parent_class)->finalize (object);
}

static void
lk_person_page_class_init (LkPersonPageClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->get_property = lk_person_page_get_property;
  object_class->set_property = lk_person_page_set_property;
  object_class->dispose = lk_person_page_dispose;
  object_class->finalize = lk_person_page_finalize;

  properties[PROP_HIDDEN]
      = g_param_spec_boolean ("hidden", NULL, NULL, FALSE,
                              G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, properties);

  /* A decision was made: the message for the undo notification. */
  signals[SIGNAL_TOAST] = g_signal_new ("toast", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0,
                                        NULL, NULL, NULL, G_TYPE_NONE, 1, G_TYPE_STRING);
  /* "Not This Person" made the faces a new person: the message, and that
   * person's id (for a button that goes there). */
  signals[SIGNAL_TOAST_PERSON]
      = g_signal_new ("toast-person", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL,
                      NULL, G_TYPE_NONE, 2, G_TYPE_STRING, G_TYPE_STRING);
  /* The person no longer exists after a decision. */
  signals[SIGNAL_PERSON_GONE]
      = g_signal_new ("person-gone", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL,
                      NULL, G_TYPE_NONE, 0);
  /* A decision was refused; the message says why. */
  signals[SIGNAL_ERROR] = g_signal_new ("error", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0,
                                        NULL, NULL, NULL, G_TYPE_NONE, 1, G_TYPE_ERROR);
  g_type_ensure (ADW_TYPE_TOAST_OVERLAY);
  /* AdwSqueezer is what 1.2 has for a bar too narrow for its buttons;
   * deprecated from 1.4 (AdwBreakpoint), still there until 2. */
  G_GNUC_BEGIN_IGNORE_DEPRECATIONS
  g_type_ensure (ADW_TYPE_SQUEEZER);
  g_type_ensure (LK_TYPE_WRAP_BOX);
  G_GNUC_END_IGNORE_DEPRECATIONS

  gtk_widget_class_set_template_from_resource (widget_class, RESOURCE_PREFIX "/lk-person-page.ui");
  gtk_widget_class_bind_template_child (widget_class, LkPersonPage, header);
  gtk_widget_class_bind_template_child (widget_class, LkPersonPage, toast_overlay);
  gtk_widget_class_bind_template_child (widget_class, LkPersonPage, name_label);
  gtk_widget_class_bind_template_child (widget_class, LkPersonPage, merge_button);
  gtk_widget_class_bind_template_child (widget_class, LkPersonPage, move_button);
  gtk_widget_class_bind_template_child (widget_class, LkPersonPage, hide_button);
  gtk_widget_class_bind_template_child (widget_class, LkPersonPage, count_label);
  gtk_widget_class_bind_template_child (widget_class, LkPersonPage, scrolled);
  gtk_widget_class_bind_template_child (widget_class, LkPersonPage, faces_grid);
  gtk_widget_class_bind_template_child (widget_class, LkPersonPage, action_bar);
  gtk_widget_class_bind_template_child (widget_class, LkPersonPage, selection_label);
  gtk_widget_class_bind_template_child (widget_class, LkPersonPage, selection_short_label);
  gtk_widget_class_bind_template_child (widget_class, LkPersonPage, order_dropdown);
  gtk_widget_class_bind_template_child (widget_class, LkPersonPage, dismissed_button);
  gtk_widget_class_bind_template_child (widget_class, LkPersonPage, dismiss_button);
  gtk_widget_class_bind_template_child (widget_class, LkPersonPage, undismiss_button);
  gtk_widget_class_bind_template_child (widget_class, LkPersonPage, cover_button);
  gtk_widget_class_bind_template_child (widget_class, LkPersonPage, remove_button);
  gtk_widget_class_bind_template_child (widget_class, LkPersonPage, more_squeezer);
  gtk_widget_class_set_layout_manager_type (widget_class, GTK_TYPE_BOX_LAYOUT);

  gtk_widget_class_install_action (widget_class, "person.rename", NULL, action_rename);
  gtk_widget_class_install_action (widget_class, "person.merge", NULL, action_merge);
  gtk_widget_class_install_action (widget_class, "person.move", NULL, action_move);
  gtk_widget_class_install_action (widget_class, "person.remove", NULL, action_remove);
  gtk_widget_class_install_action (widget_class, "person.set-cover", NULL, action_set_cover);
  gtk_widget_class_install_action (widget_class, "person.dismiss", NULL, action_dismiss);
  gtk_widget_class_install_action (widget_class, "person.undismiss", NULL, action_undismiss);
  gtk_widget_class_install_property_action (widget_class, "person.hide", "hidden");

  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_F2, 0, "person.rename", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_m, GDK_CONTROL_MASK, "person.merge",
                                       NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_M, GDK_CONTROL_MASK | GDK_SHIFT_MASK,
                                       "person.move", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_Delete, 0, "person.remove", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_Delete, GDK_SHIFT_MASK,
                                       "person.dismiss", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_C, GDK_CONTROL_MASK | GDK_SHIFT_MASK,
                                       "person.set-cover", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_h, GDK_CONTROL_MASK, "person.hide",
                                       NULL);
}

/* GtkEditableLabel (GTK 4.8) shows the name in a GtkLabel of its own that
 * never shortens: a long name sets the page's least width, and the header
 * no longer fits a 640-pixel window. Its label ends in … instead; the
 * whole name is in the entry F2 opens. */
static void
ellipsize_name (GtkWidget *widget)
{
  for (GtkWidget *child = gtk_widget_get_first_child (widget); child != NULL;
       child = gtk_widget_get_next_sibling (child))
    {
      if (GTK_IS_LABEL (child))
        gtk_label_set_ellipsize (GTK_LABEL (child), PANGO_ELLIPSIZE_END);
      else
        ellipsize_name (child);
    }
}

static void
lk_person_page_init (LkPersonPage *self)
{
  GtkLayoutManager *layout;

  gtk_widget_init_template (GTK_WIDGET (self));
  layout = gtk_widget_get_layout_manager (GTK_WIDGET (self));
  gtk_orientable_set_orientation (GTK_ORIENTABLE (layout), GTK_ORIENTATION_VERTICAL);
  ellipsize_name (GTK_WIDGET (self->name_label));

  self->shown = g_array_new (FALSE, FALSE, sizeof (guint32));
  self->faces_store = g_list_store_new (LK_TYPE_FACE_ITEM);
  self->selection = gtk_multi_selection_new (G_LIST_MODEL (g_object_ref (self->faces_store)));
  g_signal_connect (self->selection, "selection-changed", G_CALLBACK (on_selection_changed), self);
  gtk_grid_view_set_model (self->faces_grid, GTK_SELECTION_MODEL (self->selection));
  lk_grid_fit_columns (self->faces_grid, FACE_SIZE);
  g_signal_connect (self->faces_grid, "activate", G_CALLBACK (on_face_activate), self);
  GtkEventController *keys = gtk_event_controller_key_new ();
  gtk_event_controller_set_propagation_phase (keys, GTK_PHASE_CAPTURE);
  g_signal_connect (keys, "key-pressed", G_CALLBACK (on_faces_key), self);
  gtk_widget_add_controller (GTK_WIDGET (self->faces_grid), keys);

  /* Not a stop for Tab or for the focus the window settles on a page: GTK
   * 4.8's GtkEditableLabel checks its focus 100 ms after losing it, from a
   * timeout on its focus controller, which a window closed meanwhile has
   * freed (a Gtk-CRITICAL, then a crash). F2 and a click still edit (the
   * text inside takes the focus then). */
  gtk_widget_set_focusable (GTK_WIDGET (self->name_label), FALSE);
  /* The text F2 puts the focus in: unnamed, a screen reader said "GtkText". */
  gtk_accessible_update_property (
      GTK_ACCESSIBLE (gtk_editable_get_delegate (GTK_EDITABLE (self->name_label))),
      GTK_ACCESSIBLE_PROPERTY_LABEL, _ ("Name"), -1);
  g_signal_connect (self->name_label, "notify::editing", G_CALLBACK (on_editing_changed), self);
  GtkEventController *focus = gtk_event_controller_focus_new ();
  g_signal_connect (focus, "leave", G_CALLBACK (on_name_focus_leave), NULL);
  gtk_widget_add_controller (GTK_WIDGET (self->name_label), focus);
  gtk_menu_button_set_create_popup_func (self->merge_button, on_merge_popup, self, NULL);
  gtk_menu_button_set_create_popup_func (self->move_button, on_move_popup, self, NULL);
  g_signal_connect (self->order_dropdown, "notify::selected", G_CALLBACK (on_order_selected), self);
  name_dropdown_button (GTK_WIDGET (self->order_dropdown), _ ("Order"));
  g_signal_connect (self->dismissed_button, "toggled", G_CALLBACK (on_dismissed_toggled), self);
}

void
lk_person_page_set_session (LkPersonPage *self, LkSession *session, LkTextureCache *cache)
{
  g_return_if_fail (LK_IS_PERSON_PAGE (self));

  /* A re-scan of the same library hands over the same item for a person who
   * keeps their id: the page stays on them, faces, selection and focus
   * included (a finished re-scan used to close the page and leave the focus
   * on Open). */
  LkPersonItem *same = self->item != NULL && session != NULL
                           ? lk_session_find_person (session, lk_person_item_get_id (self->item))
                           : NULL;
  if (same != NULL && same == self->item && cache == self->cache)
    {
      if (self->session != NULL)
        g_clear_signal_handler (&self->changed_id, self->session);
      g_set_object (&self->session, session);
      self->changed_id
          = g_signal_connect (session, "changed", G_CALLBACK (on_session_changed), self);
      refresh (self);
      return;
    }

  disconnect_item (self);
  if (self->session != NULL)
    g_clear_signal_handler (&self->changed_id, self->session);
  g_set_object (&self->session, session);
  if (session != NULL)
    self->changed_id = g_signal_connect (session, "changed", G_CALLBACK (on_session_changed), self);

  if (self->cache != cache)
    {
      GtkListItemFactory *factory = gtk_signal_list_item_factory_new ();

      g_set_object (&self->cache, cache);
      g_signal_connect (factory, "setup", G_CALLBACK (on_face_setup), self);
      g_signal_connect (factory, "bind", G_CALLBACK (on_face_bind), self);
      g_signal_connect (factory, "unbind", G_CALLBACK (on_face_unbind), self);
      gtk_grid_view_set_factory (self->faces_grid, factory);
      g_object_unref (factory);
      gtk_menu_button_set_popover (self->merge_button, NULL);
      gtk_menu_button_set_popover (self->move_button, NULL);
      self->merge_chooser = NULL;
      self->move_chooser = NULL;
    }
  g_array_set_size (self->shown, 0);
  g_list_store_remove_all (self->faces_store);
}

void
lk_person_page_show (LkPersonPage *self, LkPersonItem *item)
{
  g_return_if_fail (LK_IS_PERSON_PAGE (self));
  g_return_if_fail (LK_IS_PERSON_ITEM (item));
  g_return_if_fail (self->session != NULL);

  if (self->item != item)
    {
      disconnect_item (self);
      self->item = g_object_ref (item);
      self->title_id
          = g_signal_connect (item, "notify::title", G_CALLBACK (on_title_changed), self);
      g_array_set_size (self->shown, 0);
      g_list_store_remove_all (self->faces_store);
      gtk_toggle_button_set_active (self->dismissed_button, FALSE);
    }
  gtk_widget_set_visible (self->hide_button, !lk_person_item_is_unassigned (item));
  gtk_widget_set_visible (GTK_WIDGET (self->merge_button), !lk_person_item_is_unassigned (item));
  lk_grid_fit_columns_now (self->faces_grid);
  refresh (self);
  gtk_adjustment_set_value (
      gtk_scrolled_window_get_vadjustment (GTK_SCROLLED_WINDOW (self->scrolled)), 0.0);
}

LkPersonItem *
lk_person_page_get_person (LkPersonPage *self)
{
  g_return_val_if_fail (LK_IS_PERSON_PAGE (self), NULL);
  return self->item;
}

GtkWidget *
lk_person_page_get_toast_overlay (LkPersonPage *self)
{
  g_return_val_if_fail (LK_IS_PERSON_PAGE (self), NULL);
  return self->toast_overlay;
}

void
lk_person_page_view_photo (LkPersonPage *self, guint position)
{
  g_return_if_fail (LK_IS_PERSON_PAGE (self));
  view_photo (self, position);
}

void
lk_person_page_commit_name (LkPersonPage *self)
{
  g_return_if_fail (LK_IS_PERSON_PAGE (self));

  /* Stopping the edit with commit notifies "editing": on_editing_changed
   * renames, as after Enter. */
  if (gtk_editable_label_get_editing (self->name_label))
    gtk_editable_label_stop_editing (self->name_label, TRUE);
}

gboolean
lk_person_page_focus_faces (LkPersonPage *self)
{
  g_return_val_if_fail (LK_IS_PERSON_PAGE (self), FALSE);
  return gtk_widget_grab_focus (GTK_WIDGET (self->faces_grid));
}

gboolean
lk_person_page_focus_first_face (LkPersonPage *self)
{
  g_return_val_if_fail (LK_IS_PERSON_PAGE (self), FALSE);

  if (self->shown->len == 0)
    return lk_person_page_focus_faces (self);
  /* The grid keeps the focus position of the person shown before: its own
   * grab_focus would go back there. The first face's widget exists once
   * the grid is scrolled to it (GTK 4.8 has no way to focus a position). */
  guint32 first = g_array_index (self->shown, guint32, 0);
  gtk_widget_activate_action (GTK_WIDGET (self->faces_grid), "list.scroll-to-item", "u", 0);
  for (GtkWidget *child = gtk_widget_get_first_child (GTK_WIDGET (self->faces_grid)); child != NULL;
       child = gtk_widget_get_next_sibling (child))
    {
      GtkWidget *tile = gtk_widget_get_first_child (child);
      if (tile != NULL && LK_IS_TILE (tile)
          && GPOINTER_TO_UINT (g_object_get_data (G_OBJECT (tile), "lk-face")) == first + 1)
        return gtk_widget_grab_focus (child);
    }
  return lk_person_page_focus_faces (self);
}

GtkSelectionModel *
lk_person_page_get_selection (LkPersonPage *self)
{
  g_return_val_if_fail (LK_IS_PERSON_PAGE (self), NULL);
  return GTK_SELECTION_MODEL (self->selection);
}
