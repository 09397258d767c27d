/* lk-people-selection.c — the people grid's selection, as GTK's list widget sees it
 *
 * GTK 4.8's grid selects as a file list does: hovering a single-click grid
 * selects the person under the pointer, an arrow key selects the person it
 * moves to and nobody else, Shift+arrow selects the run from "the last
 * item selected" (which the hover put there, not the focus). In a grid
 * whose clicks open people and whose selection mode toggles them, that
 * greyed tiles nobody had chosen, dropped a selection at the next arrow,
 * and selected runs from where the pointer rested. So the grid's requests
 * come here first:
 *
 * - outside the selection mode, a request for one person alone (hover,
 *   arrows) is ignored: nothing looks selected that is not. A request that
 *   only a selection makes (Shift+arrow, Ctrl+Space, Ctrl+A) emits
 *   "start-selecting", whose handler starts the mode, then is applied;
 * - in the mode, arrows move the focus only, Ctrl+Space toggles, and
 *   Shift+arrows add the run from the anchor (the person last clicked,
 *   toggled or arrowed to, else where the focus was) to the focus, on top
 *   of what was selected before the run began.
 */
#include "config.h"

#include "lk-people-selection.h"

struct _LkPeopleSelection
{
  GObject parent_instance;

  GtkSelectionModel *model;
  gboolean selecting;
  guint anchor;       /* where a Shift run starts; GTK_INVALID_LIST_POSITION: none */
  guint focus;        /* the focus's person, or GTK_INVALID_LIST_POSITION */
  guint focus_before; /* where it was before its last move */
  GtkBitset *base;    /* the selection before the running Shift run, or NULL */
};

enum
{
  START_SELECTING,
  N_SIGNALS
};

static guint signals[N_SIGNALS];

static void lk_people_selection_list_model_init (GListModelInterface *iface);
static void lk_people_selection_selection_model_init (GtkSelectionModelInterface *iface);

G_DEFINE_FINAL_TYPE_WITH_CODE (LkPeopleSelection, lk_people_selection, G_TYPE_OBJECT,
                               G_IMPLEMENT_INTERFACE (G_TYPE_LIST_MODEL,
                                                      lk_people_selection_list_model_init)
                                   G_IMPLEMENT_INTERFACE (GTK_TYPE_SELECTION_MODEL,
                                                          lk_people_selection_selection_model_init))

/* ---- helpers ---------------------------------------------------------- */

static void
end_run (LkPeopleSelection *self)
{
  g_clear_pointer (&self->base, gtk_bitset_unref);
}

/* TRUE when the mode is on, starting it if the grid asked for what only a
 * selection does. */
static gboolean
ensure_selecting (LkPeopleSelection *self)
{
  if (self->selecting)
    return TRUE;
  g_signal_emit (self, signals[START_SELECTING], 0);
  /* The key that asked has already moved the focus: a run it starts begins
   * where the focus was before. */
  self->anchor = GTK_INVALID_LIST_POSITION;
  return self->selecting;
}

/* Adds the run from the anchor to the focus to what was selected before the
 * run began. GTK's own bounds are not used: they start at its "last item
 * selected", which a hover may have set. */
static gboolean
select_run (LkPeopleSelection *self, guint position, guint n_items)
{
  guint n = g_list_model_get_n_items (G_LIST_MODEL (self->model));
  guint to = self->focus < n ? self->focus : position + n_items - 1;

  if (self->anchor >= n)
    self->anchor = self->focus_before < n ? self->focus_before : position;
  if (self->base == NULL)
    self->base = gtk_selection_model_get_selection (self->model);
  g_autoptr (GtkBitset) selected = gtk_bitset_copy (self->base);
  gtk_bitset_add_range_closed (selected, MIN (self->anchor, to), MAX (self->anchor, to));
  g_autoptr (GtkBitset) mask = gtk_bitset_new_range (0, n);
  return gtk_selection_model_set_selection (self->model, selected, mask);
}

/* ---- the wrapped model's signals -------------------------------------- */

static void
on_items_changed (GListModel *model, guint position, guint removed, guint added, gpointer user_data)
{
  LkPeopleSelection *self = user_data;

  /* Positions moved: a run's anchor and base no longer say who. */
  self->anchor = GTK_INVALID_LIST_POSITION;
  end_run (self);
  g_list_model_items_changed (G_LIST_MODEL (self), position, removed, added);
}

static void
on_selection_changed (GtkSelectionModel *model, guint position, guint n_items, gpointer user_data)
{
  gtk_selection_model_selection_changed (GTK_SELECTION_MODEL (user_data), position, n_items);
}

/* ---- GListModel -------------------------------------------------------- */

static GType
get_item_type (GListModel *list)
{
  return g_list_model_get_item_type (G_LIST_MODEL (LK_PEOPLE_SELECTION (list)->model));
}

static guint
get_n_items (GListModel *list)
{
  return g_list_model_get_n_items (G_LIST_MODEL (LK_PEOPLE_SELECTION (list)->model));
}

static gpointer
get_item (GListModel *list, guint position)
{
  return g_list_model_get_item (G_LIST_MODEL (LK_PEOPLE_SELECTION (list)->model), position);
}

static void
lk_people_selection_list_model_init (GListModelInterface *iface)
{
  iface->get_item_type = get_item_type;
  iface->get_n_items = get_n_items;
  iface->get_item = get_item;
}

/* ---- GtkSelectionModel: the grid's requests ---------------------------- */

static gboolean
is_selected (GtkSelectionModel *model, guint position)
{
  return gtk_selection_model_is_selected (LK_PEOPLE_SELECTION (model)->model, position);
}

static GtkBitset *
get_selection_in_range (GtkSelectionModel *model, guint position, guint n_items)
{
  return gtk_selection_model_get_selection_in_range (LK_PEOPLE_SELECTION (model)->model, position,
                                                     n_items);
}

static gboolean
select_item (GtkSelectionModel *model, guint position, gboolean unselect_rest)
{
  LkPeopleSelection *self = LK_PEOPLE_SELECTION (model);

  /* One person alone: a hover or an arrow key. It moves the anchor, as a
   * click does, and selects nobody. */
  if (unselect_rest)
    {
      if (self->selecting)
        {
          self->anchor = position;
          end_run (self);
        }
      return FALSE;
    }
  if (!ensure_selecting (self))
    return FALSE;
  self->anchor = position;
  end_run (self);
  return gtk_selection_model_select_item (self->model, position, FALSE);
}

static gboolean
unselect_item (GtkSelectionModel *model, guint position)
{
  LkPeopleSelection *self = LK_PEOPLE_SELECTION (model);

  if (!self->selecting)
    return FALSE;
  self->anchor = position;
  end_run (self);
  return gtk_selection_model_unselect_item (self->model, position);
}

static gboolean
select_range (GtkSelectionModel *model, guint position, guint n_items, gboolean unselect_rest)
{
  LkPeopleSelection *self = LK_PEOPLE_SELECTION (model);

  if (n_items == 0 || !ensure_selecting (self))
    return FALSE;
  return select_run (self, position, n_items);
}

static gboolean
unselect_range (GtkSelectionModel *model, guint position, guint n_items)
{
  LkPeopleSelection *self = LK_PEOPLE_SELECTION (model);

  if (!self->selecting)
    return FALSE;
  end_run (self);
  return gtk_selection_model_unselect_range (self->model, position, n_items);
}

static gboolean
select_all (GtkSelectionModel *model)
{
  LkPeopleSelection *self = LK_PEOPLE_SELECTION (model);

  if (!ensure_selecting (self))
    return FALSE;
  end_run (self);
  return gtk_selection_model_select_all (self->model);
}

static gboolean
unselect_all (GtkSelectionModel *model)
{
  LkPeopleSelection *self = LK_PEOPLE_SELECTION (model);

  if (!self->selecting)
    return FALSE;
  end_run (self);
  return gtk_selection_model_unselect_all (self->model);
}

static gboolean
set_selection (GtkSelectionModel *model, GtkBitset *selected, GtkBitset *mask)
{
  LkPeopleSelection *self = LK_PEOPLE_SELECTION (model);

  if (!self->selecting)
    return FALSE;
  end_run (self);
  return gtk_selection_model_set_selection (self->model, selected, mask);
}

static void
lk_people_selection_selection_model_init (GtkSelectionModelInterface *iface)
{
  iface->is_selected = is_selected;
  iface->get_selection_in_range = get_selection_in_range;
  iface->select_item = select_item;
  iface->unselect_item = unselect_item;
  iface->select_range = select_range;
  iface->unselect_range = unselect_range;
  iface->select_all = select_all;
  iface->unselect_all = unselect_all;
  iface->set_selection = set_selection;
}

/* ---- GObject ----------------------------------------------------------- */

static void
lk_people_selection_dispose (GObject *object)
{
  LkPeopleSelection *self = LK_PEOPLE_SELECTION (object);

  if (self->model != NULL)
    g_signal_handlers_disconnect_by_data (self->model, self);
  g_clear_object (&self->model);
  end_run (self);
  G_OBJECT_CLASS (lk_people_selection_parent_class)->dispose (object);
}

static void
lk_people_selection_class_init (LkPeopleSelectionClass *klass)
{
  G_OBJECT_CLASS (klass)->dispose = lk_people_selection_dispose;

  /* The grid asked for a selection outside the selection mode: the
   * handler starts the mode (lk_people_selection_set_selecting). */
  signals[START_SELECTING] = g_signal_new ("start-selecting", G_TYPE_FROM_CLASS (klass),
                                           G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL, G_TYPE_NONE, 0);
}

static void
lk_people_selection_init (LkPeopleSelection *self)
{
  self->anchor = GTK_INVALID_LIST_POSITION;
  self->focus = GTK_INVALID_LIST_POSITION;
  self->focus_before = GTK_INVALID_LIST_POSITION;
}

/* ---- public API -------------------------------------------------------- */

LkPeopleSelection *
lk_people_selection_new (GtkSelectionModel *model)
{
  LkPeopleSelection *self = g_object_new (LK_TYPE_PEOPLE_SELECTION, NULL);

  self->model = g_object_ref (model);
  g_signal_connect (model, "items-changed", G_CALLBACK (on_items_changed), self);
  g_signal_connect (model, "selection-changed", G_CALLBACK (on_selection_changed), self);
  return self;
}

void
lk_people_selection_set_selecting (LkPeopleSelection *self, gboolean selecting)
{
  g_return_if_fail (LK_IS_PEOPLE_SELECTION (self));

  self->selecting = selecting;
  /* A run starts at the focus, not at what a hover touched before. */
  self->anchor = self->focus;
  end_run (self);
}

void
lk_people_selection_set_anchor (LkPeopleSelection *self, guint position)
{
  g_return_if_fail (LK_IS_PEOPLE_SELECTION (self));

  self->anchor = position;
  end_run (self);
}

void
lk_people_selection_set_focus (LkPeopleSelection *self, guint position)
{
  g_return_if_fail (LK_IS_PEOPLE_SELECTION (self));

  if (position == self->focus)
    return;
  self->focus_before = self->focus;
  self->focus = position;
}
