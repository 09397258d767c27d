/* lk-window-select.c — several people selected in the grid, merged into one
 *
 * People-review apps merge several people at once. The grid's
 * model is a GtkMultiSelection: Ctrl+click and Shift+click select (the
 * first such click starts the selection mode), and the Select button in the
 * bar under the grid starts it too; in the selection mode a click toggles a
 * person and Shift+click selects a range, rather than opening one. The
 * clicks are taken here, before the grid's items see them: GTK 4.8's item
 * with single-click-activate selected nothing on the Ctrl+click that
 * started the mode (test-ui-review's real clicks). Merge Selected makes them one person in one step
 * (lk_session_merge_many: a merge decision each, one undo): its name and id
 * stay. With two named people or more among them, the user picks who stays
 * in a chooser of the selected people (a name is never dropped without
 * asking); otherwise it is the named one, else the one of most
 * faces. "Unassigned faces" is never merged. The keyboard selects too:
 * the grid's own requests go through an LkPeopleSelection (it says why),
 * and a selected tile shows a check mark, as Files and Photos do.
 */
#include "config.h"

#include <glib/gi18n.h>

#include "lk-clash-popover.h"
#include "lk-person-chooser.h"
#include "lk-window-private.h"

static void refuse_merge (LkWindow *self, GPtrArray *items, const GError *error);

/* The selected people (LkPersonItem, borrowed from the model), the
 * unassigned entry left out. */
static GPtrArray *
selected_people (LkWindow *self)
{
  GPtrArray *items = g_ptr_array_new_with_free_func (g_object_unref);
  g_autoptr (GtkBitset) set
      = gtk_selection_model_get_selection (GTK_SELECTION_MODEL (self->people_selection));
  GtkBitsetIter iter;
  guint position;

  for (gboolean ok = gtk_bitset_iter_init_first (&iter, set, &position); ok;
       ok = gtk_bitset_iter_next (&iter, &position))
    {
      LkPersonItem *item = g_list_model_get_item (G_LIST_MODEL (self->people_selection), position);
      if (item != NULL && !lk_person_item_is_unassigned (item))
        g_ptr_array_add (items, item);
      else
        g_clear_object (&item);
    }
  return items;
}

/* Starts or ends the selection mode: the one place that does, whether the
 * Select button, a Ctrl or Shift click or the end of a merge asks. */
static void
set_selecting (LkWindow *self, gboolean selecting)
{
  self->selecting = selecting;
  lk_people_selection_set_selecting (self->grid_selection, selecting);
  gtk_grid_view_set_single_click_activate (self->people_grid, !selecting);
  /* The check marks and the accent of the selected tiles (style.css). */
  if (selecting)
    gtk_widget_add_css_class (GTK_WIDGET (self->people_grid), "selecting");
  else
    gtk_widget_remove_css_class (GTK_WIDGET (self->people_grid), "selecting");
  if (gtk_toggle_button_get_active (self->select_button) != selecting)
    gtk_toggle_button_set_active (self->select_button, selecting);
  /* Either way the selection starts empty: the hover highlight of the
   * single-click grid is not a choice, nor is what a finished mode left. */
  gtk_selection_model_unselect_all (GTK_SELECTION_MODEL (self->people_selection));
  _lk_window_update_selection (self);
}

void
_lk_window_update_selection (LkWindow *self)
{
  g_autoptr (GPtrArray) items = selected_people (self);
  guint n = items->len;
  g_autofree char *text
      = self->selecting
            ? (n > 0 ? g_strdup_printf (
                   g_dngettext (GETTEXT_PACKAGE, "%'u person selected", "%'u people selected", n),
                   n)
                     : g_strdup (_ ("Click people to select them; Merge Selected makes them one")))
            : g_strdup (_ ("Ctrl+click or Shift+click people to merge several at once"));
  gtk_label_set_label (self->selection_label, text);
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "win.merge-selected",
                                 self->selecting && n >= 2);
}

/* Selects the person at `position`, or unselects them when they are. */
static void
toggle (LkWindow *self, guint position)
{
  GtkSelectionModel *model = GTK_SELECTION_MODEL (self->people_selection);

  if (gtk_selection_model_is_selected (model, position))
    gtk_selection_model_unselect_item (model, position);
  else
    gtk_selection_model_select_item (model, position, FALSE);
}

/* Outside the selection mode the grid's single-click activation selects the
 * person under the pointer (GTK's hover highlight): that is no selection of
 * the user's, so only the mode's own clicks and the Select button start it. */
static void
on_selection_changed (GtkSelectionModel *model, guint position, guint n, gpointer user_data)
{
  LkWindow *self = user_data;

  if (self->selecting)
    _lk_window_update_selection (self);
}

/* The position of the grid's item that holds `w`, or -1; `item` (optional)
 * is set to its widget, the grid's child that takes the focus. */
static gint64
position_of_widget (LkWindow *self, GtkWidget *w, GtkWidget **item)
{
  for (; w != NULL && w != GTK_WIDGET (self->people_grid); w = gtk_widget_get_parent (w))
    {
      GtkListItem *list_item = g_object_get_data (G_OBJECT (w), "lk-list-item");
      if (list_item != NULL && gtk_list_item_get_item (list_item) != NULL)
        {
          if (item != NULL)
            *item = gtk_widget_get_parent (w);
          return gtk_list_item_get_position (list_item);
        }
    }
  return -1;
}

/* The position of the grid's item under (x, y), or -1. */
static gint64
position_at (LkWindow *self, double x, double y, GtkWidget **item)
{
  return position_of_widget (
      self, gtk_widget_pick (GTK_WIDGET (self->people_grid), x, y, GTK_PICK_DEFAULT), item);
}

void
_lk_window_selection_focus_changed (LkWindow *self)
{
  GtkWidget *focus = gtk_root_get_focus (GTK_ROOT (self));
  gint64 position = focus != NULL && gtk_widget_is_ancestor (focus, GTK_WIDGET (self->people_grid))
                        ? position_of_widget (self, gtk_widget_get_first_child (focus), NULL)
                        : -1;

  lk_people_selection_set_focus (self->grid_selection,
                                 position < 0 ? GTK_INVALID_LIST_POSITION : (guint) position);
}

/* A click in the selection mode, or with Ctrl or Shift (which starts it):
 * Ctrl or a plain click toggles the person, Shift selects from the last one
 * clicked; the grid's items never see it, so nobody is opened. */
static void
on_grid_pressed (GtkGestureClick *gesture, int n_press, double x, double y, gpointer user_data)
{
  LkWindow *self = user_data;
  GdkModifierType state
      = gtk_event_controller_get_current_event_state (GTK_EVENT_CONTROLLER (gesture));
  gboolean shift = (state & GDK_SHIFT_MASK) != 0;

  if (!self->selecting && (state & (GDK_CONTROL_MASK | GDK_SHIFT_MASK)) == 0)
    return;
  GtkWidget *item = NULL;
  gint64 position = position_at (self, x, y, &item);
  if (position < 0)
    return;
  gtk_gesture_set_state (GTK_GESTURE (gesture), GTK_EVENT_SEQUENCE_CLAIMED);
  GtkSelectionModel *model = GTK_SELECTION_MODEL (self->people_selection);
  if (!self->selecting)
    set_selecting (self, TRUE);
  if (shift && self->select_anchor < g_list_model_get_n_items (G_LIST_MODEL (model)))
    {
      guint from = MIN (self->select_anchor, (guint) position);
      guint to = MAX (self->select_anchor, (guint) position);
      gtk_selection_model_select_range (model, from, to - from + 1, FALSE);
    }
  else
    toggle (self, (guint) position);
  self->select_anchor = (guint) position;
  /* The keyboard goes on from the person clicked, as after a click that
   * GTK saw: Shift+arrows extend from there. */
  if (item != NULL)
    gtk_widget_grab_focus (item);
  lk_people_selection_set_anchor (self->grid_selection, (guint) position);
  _lk_window_update_selection (self);
}

static void
on_select_toggled (GtkToggleButton *button, gpointer user_data)
{
  LkWindow *self = user_data;

  if (gtk_toggle_button_get_active (button) != self->selecting)
    set_selecting (self, gtk_toggle_button_get_active (button));
}

gboolean
_lk_window_selection_activate (LkWindow *self, guint position)
{
  if (!self->selecting)
    return FALSE;
  /* In the selection mode Enter (or a double-click) toggles, as a click. */
  toggle (self, position);
  lk_people_selection_set_anchor (self->grid_selection, position);
  return TRUE;
}

/* The person the others join: the named one of most faces, else the one of
 * most faces (ties: the first selected). */
static LkPersonItem *
merge_target (GPtrArray *items)
{
  LkPersonItem *best = NULL;
  for (guint k = 0; k < items->len; k++)
    {
      LkPersonItem *item = g_ptr_array_index (items, k);
      if (best == NULL)
        {
          best = item;
          continue;
        }
      gboolean named = lk_person_item_get_name (item) != NULL;
      gboolean best_named = lk_person_item_get_name (best) != NULL;
      if (named != best_named
              ? named
              : lk_person_item_get_n_faces (item) > lk_person_item_get_n_faces (best))
        best = item;
    }
  return best;
}

/* Merges the others of `items` into `target`: one step, one undo. */
static gboolean
merge_into (LkWindow *self, GPtrArray *items, LkPersonItem *target, GError **error)
{
  g_autoptr (GPtrArray) others = g_ptr_array_new ();
  for (guint k = 0; k < items->len; k++)
    if (g_ptr_array_index (items, k) != target)
      g_ptr_array_add (others, (gpointer) lk_person_item_get_id (g_ptr_array_index (items, k)));
  g_autofree char *title = g_strdup (lk_person_item_get_title (target));
  if (!lk_session_merge_many (self->session, lk_person_item_get_id (target),
                              (const char *const *) others->pdata, others->len, error))
    return FALSE;
  g_autofree char *message
      = g_strdup_printf (g_dngettext (GETTEXT_PACKAGE, "Merged %'u person into %s",
                                      "Merged %'u people into %s", others->len),
                         others->len, title);
  set_selecting (self, FALSE);
  _lk_window_remember_decision (self, message);
  _lk_window_show_toast (self, message, TOAST_UNDO);
  return TRUE;
}

static gint
compare_keepers (gconstpointer x, gconstpointer y)
{
  LkPersonItem *a = *(LkPersonItem *const *) x, *b = *(LkPersonItem *const *) y;
  gboolean named_a = lk_person_item_get_name (a) != NULL;
  gboolean named_b = lk_person_item_get_name (b) != NULL;

  if (named_a != named_b)
    return named_a ? -1 : 1;
  guint n_a = lk_person_item_get_n_faces (a), n_b = lk_person_item_get_n_faces (b);
  return n_a > n_b ? -1 : n_a < n_b;
}

static void
on_keeper_chosen (LkPersonChooser *chooser, const char *id, gpointer user_data)
{
  LkWindow *self = user_data;
  g_autoptr (GPtrArray) items = selected_people (self);
  g_autoptr (GError) error = NULL;
  LkPersonItem *target = NULL;

  for (guint k = 0; k < items->len && target == NULL; k++)
    if (g_strcmp0 (lk_person_item_get_id (g_ptr_array_index (items, k)), id) == 0)
      target = g_ptr_array_index (items, k);
  /* The selection cannot change while the popover is up; a re-scan can
   * still take people away. */
  if (target == NULL || items->len < 2)
    _lk_window_show_toast (self, _ ("The selected people changed: select them again to merge"),
                           TOAST_PLAIN);
  else if (!merge_into (self, items, target, &error))
    refuse_merge (self, items, error);
}

/* The Merge Selected button, found by its action: the chooser points at it.
 * Looked up rather than bound, so the bar's layout stays the template's. */
static GtkWidget *
find_actionable (GtkWidget *root, const char *action)
{
  if (GTK_IS_ACTIONABLE (root)
      && g_strcmp0 (gtk_actionable_get_action_name (GTK_ACTIONABLE (root)), action) == 0)
    return root;
  for (GtkWidget *child = gtk_widget_get_first_child (root); child != NULL;
       child = gtk_widget_get_next_sibling (child))
    {
      GtkWidget *found = find_actionable (child, action);
      if (found != NULL)
        return found;
    }
  return NULL;
}

/* Merge Selected's place in the selection line's coordinates, where the
 * popovers of the merge point. */
static gboolean
merge_button_rect (LkWindow *self, GdkRectangle *rect)
{
  GtkWidget *bar = gtk_widget_get_ancestor (GTK_WIDGET (self->select_button), GTK_TYPE_ACTION_BAR);
  GtkWidget *anchor = bar != NULL ? find_actionable (bar, "win.merge-selected") : NULL;
  graphene_rect_t bounds;

  if (anchor == NULL
      || !gtk_widget_compute_bounds (anchor, GTK_WIDGET (self->selection_label), &bounds))
    return FALSE;
  *rect = (GdkRectangle){ (int) bounds.origin.x, (int) bounds.origin.y, (int) bounds.size.width,
                          (int) bounds.size.height };
  return TRUE;
}

/* A person as the refusal names them: “Ada”, or "an unnamed person". */
static char *
refusal_name (LkPersonItem *item)
{
  const char *name = lk_person_item_get_name (item);

  return name != NULL ? g_strdup_printf ("“%s”", name) : g_strdup (_ ("an unnamed person"));
}

/* A merge refused because two of the selected people share a photo: the
 * engine's message names faces by number ("… holds two of these faces (127
 * and 129)"); the popover shows the two faces, names the two people, and
 * offers the photo. Any other refusal is a notification. */
static void
refuse_merge (LkWindow *self, GPtrArray *items, const GError *error)
{
  LkPersonItem *first = NULL, *second = NULL;
  guint32 a = 0, b = 0;

  if (g_error_matches (error, LK_REVIEW_ERROR, LK_REVIEW_ERROR_SAME_PHOTO))
    for (guint i = 0; i < items->len && first == NULL; i++)
      for (guint j = i + 1; j < items->len && first == NULL; j++)
        if (lk_session_find_photo_clash (
                self->session, lk_person_item_get_id (g_ptr_array_index (items, i)), NULL, 0,
                lk_person_item_get_id (g_ptr_array_index (items, j)), &a, &b))
          {
            first = g_ptr_array_index (items, i);
            second = g_ptr_array_index (items, j);
          }
  if (first == NULL)
    {
      _lk_window_show_toast (self, error->message, TOAST_PLAIN);
      return;
    }
  g_autofree char *where = lk_clash_popover_describe_photo (self->session, a);
  g_autofree char *one = refusal_name (first);
  g_autofree char *other = refusal_name (second);
  g_autofree char *text = NULL;
  if (lk_person_item_get_name (first) == NULL && lk_person_item_get_name (second) == NULL)
    /* Translators: %s is a photo's path, "“2019/IMG_0042.jpg”" */
    text = g_strdup_printf (_ ("%s shows two of the people selected side by side: two faces of "
                               "one photo are never one person. Unselect one of them to merge "
                               "the others."),
                            where);
  else
    /* Translators: "“2019/IMG_0042.jpg” shows “Ada” and an unnamed person side by side: …" */
    text = g_strdup_printf (_ ("%s shows %s and %s side by side: two faces of one photo are never "
                               "one person. Unselect one of them to merge the others."),
                            where, one, other);
  if (self->clash_popover == NULL)
    {
      self->clash_popover = lk_clash_popover_new (self->cache);
      gtk_widget_set_parent (self->clash_popover, GTK_WIDGET (self->selection_label));
    }
  GdkRectangle rect;
  lk_clash_popover_show (LK_CLASH_POPOVER (self->clash_popover), self->session, a, b, text,
                         merge_button_rect (self, &rect) ? &rect : NULL);
}

/* Several named people: which name survives is the user's to say. */
static void
ask_who_stays (LkWindow *self, GPtrArray *items)
{
  /* Parented to the selection line, which stays sensitive, and pointing at
   * Merge Selected: parented to the button, the chooser went insensitive
   * with it when the merge ended the selection, under the search entry's
   * focus ("GtkText - did not receive a focus-out event"). */
  if (self->keeper_chooser == NULL)
    {
      self->keeper_chooser = lk_person_chooser_new (self->cache, FALSE);
      g_signal_connect (self->keeper_chooser, "chosen", G_CALLBACK (on_keeper_chosen), self);
      gtk_widget_set_parent (self->keeper_chooser, GTK_WIDGET (self->selection_label));
    }
  GdkRectangle rect;
  gtk_popover_set_pointing_to (GTK_POPOVER (self->keeper_chooser),
                               merge_button_rect (self, &rect) ? &rect : NULL);
  g_autoptr (GPtrArray) keepers = g_ptr_array_new_with_free_func (g_object_unref);
  for (guint k = 0; k < items->len; k++)
    g_ptr_array_add (keepers, g_object_ref (g_ptr_array_index (items, k)));
  g_ptr_array_sort (keepers, compare_keepers);
  lk_person_chooser_set_people (LK_PERSON_CHOOSER (self->keeper_chooser), self->session, keepers,
                                _ ("Who stays? The others join them and their names go (one "
                                   "undo brings them back)."));
  gtk_popover_popup (GTK_POPOVER (self->keeper_chooser));
}

gboolean
lk_window_merge_selected (LkWindow *self, GError **error)
{
  g_autoptr (GPtrArray) items = selected_people (self);

  if (self->session == NULL || !self->selecting || items->len < 2)
    {
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                           _ ("Select two people or more to merge"));
      return FALSE;
    }
  guint named = 0;
  for (guint k = 0; k < items->len; k++)
    named += lk_person_item_get_name (g_ptr_array_index (items, k)) != NULL;
  if (named >= 2)
    {
      ask_who_stays (self, items);
      return TRUE;
    }
  return merge_into (self, items, merge_target (items), error);
}

static void
action_merge_selected (GtkWidget *widget, const char *name, GVariant *parameter)
{
  LkWindow *self = LK_WINDOW (widget);
  g_autoptr (GError) error = NULL;

  if (!lk_window_merge_selected (self, &error))
    {
      g_autoptr (GPtrArray) items = selected_people (self);
      refuse_merge (self, items, error);
    }
}

static void
action_select_none (GtkWidget *widget, const char *name, GVariant *parameter)
{
  set_selecting (LK_WINDOW (widget), FALSE);
}

void
_lk_window_class_install_selection (GtkWidgetClass *widget_class)
{
  gtk_widget_class_install_action (widget_class, "win.merge-selected", NULL, action_merge_selected);
  gtk_widget_class_install_action (widget_class, "win.select-none", NULL, action_select_none);
}

/* Shift+arrow, Ctrl+Space or Ctrl+A outside the selection mode: they start
 * it, as Ctrl+click and Shift+click do. */
static void
on_start_selecting (LkPeopleSelection *selection, gpointer user_data)
{
  set_selecting (LK_WINDOW (user_data), TRUE);
}

void
_lk_window_selection_dispose (LkWindow *self)
{
  if (self->keeper_chooser != NULL)
    gtk_widget_unparent (g_steal_pointer (&self->keeper_chooser));
  if (self->clash_popover != NULL)
    gtk_widget_unparent (g_steal_pointer (&self->clash_popover));
  if (self->grid_selection != NULL)
    g_signal_handlers_disconnect_by_data (self->grid_selection, self);
  g_clear_object (&self->grid_selection);
}

void
_lk_window_selection_init (LkWindow *self)
{
  self->people_selection = gtk_multi_selection_new (G_LIST_MODEL (g_object_ref (self->filtered)));
  g_signal_connect (self->people_selection, "selection-changed", G_CALLBACK (on_selection_changed),
                    self);
  self->grid_selection = lk_people_selection_new (GTK_SELECTION_MODEL (self->people_selection));
  g_signal_connect (self->grid_selection, "start-selecting", G_CALLBACK (on_start_selecting), self);
  gtk_grid_view_set_model (self->people_grid, GTK_SELECTION_MODEL (self->grid_selection));
  GtkGesture *click = gtk_gesture_click_new ();
  gtk_event_controller_set_propagation_phase (GTK_EVENT_CONTROLLER (click), GTK_PHASE_CAPTURE);
  g_signal_connect (click, "pressed", G_CALLBACK (on_grid_pressed), self);
  gtk_widget_add_controller (GTK_WIDGET (self->people_grid), GTK_EVENT_CONTROLLER (click));
  g_signal_connect (self->select_button, "toggled", G_CALLBACK (on_select_toggled), self);
  _lk_window_update_selection (self);
}
