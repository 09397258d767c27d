/* lk-person-chooser.c — a popover that picks a person
 *
 * A GtkListView over the candidates (a library can hold thousands of people,
 * so no GtkListBox), filtered by the search entry; the people most similar to
 * the current one come first (the people pairs link, then the rest by the
 * cosine between their mean faces), so merging the obvious duplicate is:
 * open, Down, Enter. A row says how alike only where that means something
 * (a match percentage from pairs, "Looks alike" from the mean faces); when
 * nobody is alike a line at the top says so rather than letting the first
 * row look like a suggestion. Emits "chosen" with the id (NULL for "New
 * person").
 */
#include "config.h"

#include <glib/gi18n.h>

#include "lk-person-chooser.h"
#include "lk-tile.h"

/* The "New person" row: an item with no person. */
#define NEW_PERSON_KEY "lk-new-person"

struct _LkPersonChooser
{
  GtkPopover parent_instance;

  LkTextureCache *cache;
  LkSession *session;
  gboolean offer_new;
  GHashTable *similarity; /* LkPersonItem → LkCandidateScore * */
  GtkWidget *notice;      /* "No one looks like this person" */
  GtkWidget *notice_title;
  gboolean nobody_alike; /* the notice's condition, while nothing is typed */
  GtkWidget *no_match;   /* "No one matches “…”" */
  GtkWidget *heading;    /* what the choice is for, when it is not the usual one */

  GtkWidget *search;
  char *filtered_for; /* the search text the list was last filtered for */
  GtkWidget *list;
  GListStore *store;
  GtkFilterListModel *filtered;
  GtkSingleSelection *selection;
};

G_DEFINE_FINAL_TYPE (LkPersonChooser, lk_person_chooser, GTK_TYPE_POPOVER)

enum
{
  SIGNAL_CHOSEN,
  N_SIGNALS
};

static guint signals[N_SIGNALS];

static gboolean
match (gpointer item, gpointer user_data)
{
  LkPersonChooser *self = user_data;
  const char *text = gtk_editable_get_text (GTK_EDITABLE (self->search));

  if (text[0] == '\0' || g_object_get_data (item, NEW_PERSON_KEY) != NULL)
    return TRUE;
  g_autofree char *needle = g_utf8_casefold (text, -1);
  g_autofree char *title = g_utf8_casefold (lk_person_item_get_title (item), -1);
  return strstr (title, needle) != NULL;
}

/* "2019–2021" (or "2019"): the years of the photos of a person's faces, from
 * photos[].taken; NULL when none is dated. */
static char *
years_of (LkSession *session, LkPersonItem *item)
{
  const LkLibrary *library = lk_session_get_library (session);
  const guint32 *faces = lk_person_item_get_faces (item);
  int first = G_MAXINT, last = G_MININT;

  for (guint k = 0; k < lk_person_item_get_n_faces (item); k++)
    {
      const LkPhoto *photo = lk_library_find_photo (library, library->photo[faces[k]]);
      if (photo == NULL || photo->taken == NULL || !g_ascii_isdigit (photo->taken[0]))
        continue;
      int year = (int) g_ascii_strtoll (photo->taken, NULL, 10);
      first = MIN (first, year);
      last = MAX (last, year);
    }
  if (first > last)
    return NULL;
  return first == last ? g_strdup_printf ("%d", first) : g_strdup_printf ("%d–%d", first, last);
}

void
lk_person_chooser_describe (LkPersonChooser *self, LkPersonItem *item, char **title,
                            char **subtitle)
{
  guint n = lk_person_item_get_n_faces (item);
  g_autofree char *faces
      = g_strdup_printf (g_dngettext (GETTEXT_PACKAGE, "%'u face", "%'u faces", n), n);
  g_autofree char *years = years_of (self->session, item);
  const LkCandidateScore *score = g_hash_table_lookup (self->similarity, item);
  g_autofree char *match = NULL;

  /* "0 % match" says nothing: a percentage only where it rounds to one. */
  if (score != NULL && score->probability >= 0.005)
    /* Translators: a person's similarity, "87 % match" */
    match = g_strdup_printf (_ ("%.0f %% match"), score->probability * 100.0);
  else if (score != NULL && score->alike)
    /* Translators: in a person chooser, the person's faces resemble this one's */
    match = g_strdup (_ ("Looks alike"));
  GString *line = g_string_new (NULL);

  /* Hundreds of "Unnamed person" rows are told apart by what is known of
   * them: "Unnamed · 52 faces · 2019–2021". */
  if (lk_person_item_get_name (item) == NULL)
    {
      g_string_append_printf (line, _ ("Unnamed · %s"), faces);
      if (years != NULL)
        g_string_append_printf (line, " · %s", years);
      *title = g_string_free (line, FALSE);
      *subtitle = g_strdup (match != NULL ? match : "");
      return;
    }
  *title = g_strdup (lk_person_item_get_name (item));
  g_string_append (line, faces);
  if (match != NULL)
    g_string_append_printf (line, " · %s", match);
  if (years != NULL)
    g_string_append_printf (line, " · %s", years);
  *subtitle = g_string_free (line, FALSE);
}

static void
on_setup (GtkSignalListItemFactory *factory, GtkListItem *list_item, gpointer user_data)
{
  LkPersonChooser *self = user_data;
  GtkWidget *box = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 12);
  GtkWidget *labels = gtk_box_new (GTK_ORIENTATION_VERTICAL, 2);
  GtkWidget *title = gtk_label_new (NULL);
  GtkWidget *subtitle = gtk_label_new (NULL);

  gtk_box_append (GTK_BOX (box), lk_tile_new (self->cache, 40));
  gtk_label_set_xalign (GTK_LABEL (title), 0.0);
  gtk_label_set_ellipsize (GTK_LABEL (title), PANGO_ELLIPSIZE_END);
  gtk_label_set_xalign (GTK_LABEL (subtitle), 0.0);
  gtk_widget_add_css_class (subtitle, "dim-label");
  gtk_widget_add_css_class (subtitle, "caption");
  gtk_box_append (GTK_BOX (labels), title);
  gtk_box_append (GTK_BOX (labels), subtitle);
  gtk_widget_set_valign (labels, GTK_ALIGN_CENTER);
  gtk_box_append (GTK_BOX (box), labels);
  gtk_widget_set_margin_top (box, 4);
  gtk_widget_set_margin_bottom (box, 4);
  gtk_list_item_set_child (list_item, box);
}

static void
on_bind (GtkSignalListItemFactory *factory, GtkListItem *list_item, gpointer user_data)
{
  LkPersonChooser *self = user_data;
  LkPersonItem *item = gtk_list_item_get_item (list_item);
  GtkWidget *box = gtk_list_item_get_child (list_item);
  LkTile *tile = LK_TILE (gtk_widget_get_first_child (box));
  GtkWidget *labels = gtk_widget_get_last_child (box);
  GtkLabel *title = GTK_LABEL (gtk_widget_get_first_child (labels));
  GtkLabel *subtitle = GTK_LABEL (gtk_widget_get_last_child (labels));

  if (g_object_get_data (G_OBJECT (item), NEW_PERSON_KEY) != NULL)
    {
      lk_tile_set_face (tile, NULL, _ ("New person"));
      gtk_label_set_label (title, _ ("New Person"));
      gtk_label_set_label (subtitle, _ ("The faces become a person of their own"));
      gtk_widget_set_visible (GTK_WIDGET (subtitle), TRUE);
      return;
    }

  gint64 cover = lk_person_item_get_cover (item);
  g_autofree char *path = cover >= 0 ? lk_session_thumbnail_path (self->session, cover) : NULL;
  g_autofree char *title_text = NULL, *subtitle_text = NULL;

  lk_person_chooser_describe (self, item, &title_text, &subtitle_text);
  lk_tile_set_face (tile, path, title_text);
  gtk_label_set_label (title, title_text);
  gtk_label_set_label (subtitle, subtitle_text);
  /* An unnamed person with no match has one line: an empty second one left
   * it above the middle of its thumbnail. */
  gtk_widget_set_visible (GTK_WIDGET (subtitle), subtitle_text[0] != '\0');
}

static void
on_unbind (GtkSignalListItemFactory *factory, GtkListItem *list_item, gpointer user_data)
{
  GtkWidget *box = gtk_list_item_get_child (list_item);

  lk_tile_clear (LK_TILE (gtk_widget_get_first_child (box)));
}

static void
choose (LkPersonChooser *self, LkPersonItem *item)
{
  const char *id = g_object_get_data (G_OBJECT (item), NEW_PERSON_KEY) != NULL
                       ? NULL
                       : lk_person_item_get_id (item);
  g_autofree char *chosen = g_strdup (id);

  gtk_popover_popdown (GTK_POPOVER (self));
  g_signal_emit (self, signals[SIGNAL_CHOSEN], 0, chosen);
}

static void
on_activate (GtkListView *list, guint position, gpointer user_data)
{
  LkPersonChooser *self = user_data;
  g_autoptr (LkPersonItem) item = g_list_model_get_item (G_LIST_MODEL (self->filtered), position);

  if (item != NULL)
    choose (self, item);
}

/* The keyboard starts in the search entry with no row chosen: Enter picks
 * the first match only once something was typed (Enter on an empty search
 * merged whoever came first), Down moves into the list. */
/* Over the list: "No one looks like this person" is about the list as
 * offered, so only while nothing is typed; a search matching nobody says so
 * instead (the notice would sit over an empty list). */
static void
update_notices (LkPersonChooser *self)
{
  const char *text = gtk_editable_get_text (GTK_EDITABLE (self->search));
  GListModel *rows = G_LIST_MODEL (self->filtered);
  guint n = g_list_model_get_n_items (rows), people = 0;

  for (guint k = 0; k < n && people == 0; k++)
    {
      g_autoptr (GObject) item = g_list_model_get_item (rows, k);
      people += g_object_get_data (item, NEW_PERSON_KEY) == NULL;
    }
  gtk_widget_set_visible (self->notice, text[0] == '\0' && self->nobody_alike);
  if (text[0] != '\0' && people == 0)
    {
      /* Translators: a search in the person chooser found nobody, “Ada” */
      g_autofree char *label = g_strdup_printf (_ ("No one matches “%s”"), text);
      gtk_label_set_label (GTK_LABEL (self->no_match), label);
    }
  gtk_widget_set_visible (self->no_match, text[0] != '\0' && people == 0);
}

static void
on_search_changed (GtkSearchEntry *entry, gpointer user_data)
{
  LkPersonChooser *self = user_data;
  GtkFilter *filter = gtk_filter_list_model_get_filter (self->filtered);
  gboolean typed = gtk_editable_get_text (GTK_EDITABLE (entry))[0] != '\0';

  g_free (self->filtered_for);
  self->filtered_for = g_strdup (gtk_editable_get_text (GTK_EDITABLE (entry)));
  gtk_filter_changed (filter, GTK_FILTER_CHANGE_DIFFERENT);
  gtk_single_selection_set_selected (self->selection, typed ? 0 : GTK_INVALID_LIST_POSITION);
  update_notices (self);
}

/* Escape clears a search first, then closes the chooser, wherever the keys
 * are in it. Seen before the search entry (capture phase), whose own Escape
 * ("stop-search") does neither, so most of the time the chooser stayed
 * open. */
static gboolean
on_escape (GtkEventControllerKey *controller, guint keyval, guint keycode, GdkModifierType state,
           gpointer user_data)
{
  LkPersonChooser *self = user_data;

  if (keyval != GDK_KEY_Escape || (state & (GDK_CONTROL_MASK | GDK_SHIFT_MASK | GDK_ALT_MASK)) != 0)
    return FALSE;
  if (gtk_editable_get_text (GTK_EDITABLE (self->search))[0] != '\0')
    {
      gtk_editable_set_text (GTK_EDITABLE (self->search), "");
      gtk_widget_grab_focus (self->search);
    }
  else
    gtk_popover_popdown (GTK_POPOVER (self));
  return TRUE;
}

static void
on_search_activate (GtkSearchEntry *entry, gpointer user_data)
{
  LkPersonChooser *self = user_data;

  /* GtkSearchEntry says "search-changed" 150 ms after the last key, and
   * Enter does not hurry it (GTK 4.8): "ada" and Enter typed faster than
   * that found the list still filtered for "ad" or for nothing, and chose
   * no one (test-ui-review's merge, failed once under load). The list
   * catches up first. */
  if (g_strcmp0 (self->filtered_for, gtk_editable_get_text (GTK_EDITABLE (entry))) != 0)
    on_search_changed (entry, self);
  LkPersonItem *item = gtk_single_selection_get_selected_item (self->selection);

  if (item != NULL && gtk_editable_get_text (GTK_EDITABLE (entry))[0] != '\0')
    choose (self, item);
}

static gboolean
on_search_key (GtkEventControllerKey *controller, guint keyval, guint keycode,
               GdkModifierType state, gpointer user_data)
{
  LkPersonChooser *self = user_data;

  if (keyval != GDK_KEY_Down && keyval != GDK_KEY_KP_Down)
    return FALSE;
  if (gtk_single_selection_get_selected (self->selection) == GTK_INVALID_LIST_POSITION)
    gtk_single_selection_set_selected (self->selection, 0);
  gtk_widget_child_focus (self->list, GTK_DIR_TAB_FORWARD);
  return TRUE;
}

static void
on_show (GtkWidget *widget, gpointer user_data)
{
  LkPersonChooser *self = LK_PERSON_CHOOSER (widget);

  gtk_widget_grab_focus (self->search);
}

static void
lk_person_chooser_dispose (GObject *object)
{
  LkPersonChooser *self = LK_PERSON_CHOOSER (object);

  g_clear_object (&self->cache);
  g_clear_object (&self->session);
  g_clear_pointer (&self->similarity, g_hash_table_unref);
  g_clear_object (&self->selection);
  g_clear_object (&self->filtered);
  g_clear_object (&self->store);
  g_clear_pointer (&self->filtered_for, g_free);
  gtk_widget_dispose_template (GTK_WIDGET (self), LK_TYPE_PERSON_CHOOSER);
  G_OBJECT_CLASS (lk_person_chooser_parent_class)->dispose (object);
}

static void
lk_person_chooser_class_init (LkPersonChooserClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = lk_person_chooser_dispose;

  gtk_widget_class_set_template_from_resource (widget_class,
                                               RESOURCE_PREFIX "/lk-person-chooser.ui");
#define BIND(name) gtk_widget_class_bind_template_child (widget_class, LkPersonChooser, name)
  BIND (heading);
  BIND (search);
  BIND (notice);
  BIND (notice_title);
  BIND (no_match);
  BIND (list);
#undef BIND
  gtk_widget_class_bind_template_callback (widget_class, on_show);
  gtk_widget_class_bind_template_callback (widget_class, on_escape);
  gtk_widget_class_bind_template_callback (widget_class, on_search_changed);
  gtk_widget_class_bind_template_callback (widget_class, on_search_activate);
  gtk_widget_class_bind_template_callback (widget_class, on_search_key);
  gtk_widget_class_bind_template_callback (widget_class, on_setup);
  gtk_widget_class_bind_template_callback (widget_class, on_bind);
  gtk_widget_class_bind_template_callback (widget_class, on_unbind);
  gtk_widget_class_bind_template_callback (widget_class, on_activate);

  /* A person was picked: its id, or NULL for "New person". */
  signals[SIGNAL_CHOSEN] = g_signal_new ("chosen", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0,
                                         NULL, NULL, NULL, G_TYPE_NONE, 1, G_TYPE_STRING);
}

static void
lk_person_chooser_init (LkPersonChooser *self)
{
  gtk_widget_init_template (GTK_WIDGET (self));

  self->similarity = g_hash_table_new_full (NULL, NULL, NULL, g_free);
  self->store = g_list_store_new (LK_TYPE_PERSON_ITEM);
  self->filtered
      = gtk_filter_list_model_new (G_LIST_MODEL (g_object_ref (self->store)),
                                   GTK_FILTER (gtk_custom_filter_new (match, self, NULL)));
  self->selection = gtk_single_selection_new (G_LIST_MODEL (g_object_ref (self->filtered)));
  gtk_single_selection_set_autoselect (self->selection, FALSE);
  gtk_single_selection_set_can_unselect (self->selection, TRUE);
  gtk_list_view_set_model (GTK_LIST_VIEW (self->list), GTK_SELECTION_MODEL (self->selection));
  gtk_search_entry_set_key_capture_widget (GTK_SEARCH_ENTRY (self->search), GTK_WIDGET (self));
}

GtkWidget *
lk_person_chooser_new (LkTextureCache *cache, gboolean offer_new)
{
  LkPersonChooser *self = g_object_new (LK_TYPE_PERSON_CHOOSER, NULL);

  self->cache = g_object_ref (cache);
  self->offer_new = offer_new;
  return GTK_WIDGET (self);
}

void
lk_person_chooser_set_person (LkPersonChooser *self, LkSession *session, const char *id)
{
  lk_person_chooser_set_faces (self, session, id, NULL, 0);
}

void
lk_person_chooser_set_faces (LkPersonChooser *self, LkSession *session, const char *id,
                             const guint32 *faces, gsize n_faces)
{
  g_return_if_fail (LK_IS_PERSON_CHOOSER (self));
  g_return_if_fail (LK_IS_SESSION (session));

  /* Only choices that can succeed (an offer the session then refuses is
   * worse than none): a merge leaves out the people sharing a photo with
   * this one, a move those sharing one with the faces that move, and "a new
   * person" needs faces of different photos. */
  g_autoptr (GArray) similarity = NULL;
  g_autoptr (GPtrArray) candidates
      = faces != NULL ? lk_session_move_candidates (session, id, faces, n_faces, &similarity)
                      : lk_session_merge_candidates (session, id, &similarity);
  const LkLibrary *library = lk_session_get_library (session);
  gboolean one_photo = FALSE;
  for (gsize a = 0; faces != NULL && a < n_faces && !one_photo; a++)
    for (gsize b = a + 1; b < n_faces && !one_photo; b++)
      one_photo = faces[a] < library->count && faces[b] < library->count
                  && library->photo[faces[a]] == library->photo[faces[b]];

  g_set_object (&self->session, session);
  gtk_widget_set_visible (self->heading, FALSE);
  g_hash_table_remove_all (self->similarity);
  gboolean anyone_alike = FALSE;
  for (guint k = 0; k < candidates->len; k++)
    {
      const LkCandidateScore *score = &g_array_index (similarity, LkCandidateScore, k);
      g_hash_table_insert (self->similarity, g_ptr_array_index (candidates, k),
                           g_memdup2 (score, sizeof *score));
      anyone_alike = anyone_alike || score->alike || score->probability >= 0.5;
    }
  gtk_label_set_label (GTK_LABEL (self->notice_title), faces != NULL
                                                           ? _ ("No one looks like these faces")
                                                           : _ ("No one looks like this person"));
  self->nobody_alike = candidates->len > 0 && !anyone_alike;
  if (self->offer_new && !one_photo)
    {
      /* A placeholder item, told apart by its data; never shown as a person. */
      g_autoptr (LkPersonItem) new_person = lk_person_item_new_unassigned (NULL, 0);
      g_object_set_data (G_OBJECT (new_person), NEW_PERSON_KEY, GINT_TO_POINTER (TRUE));
      g_ptr_array_insert (candidates, 0, g_steal_pointer (&new_person));
    }
  gtk_editable_set_text (GTK_EDITABLE (self->search), "");
  g_list_store_splice (self->store, 0, g_list_model_get_n_items (G_LIST_MODEL (self->store)),
                       candidates->pdata, candidates->len);
  gtk_single_selection_set_selected (self->selection, GTK_INVALID_LIST_POSITION);
  update_notices (self);
}

void
lk_person_chooser_set_people (LkPersonChooser *self, LkSession *session, GPtrArray *people,
                              const char *heading)
{
  g_return_if_fail (LK_IS_PERSON_CHOOSER (self));
  g_return_if_fail (LK_IS_SESSION (session));

  g_set_object (&self->session, session);
  g_hash_table_remove_all (self->similarity);
  self->nobody_alike = FALSE;
  gtk_label_set_label (GTK_LABEL (self->heading), heading);
  gtk_widget_set_visible (self->heading, heading != NULL);
  gtk_editable_set_text (GTK_EDITABLE (self->search), "");
  g_list_store_splice (self->store, 0, g_list_model_get_n_items (G_LIST_MODEL (self->store)),
                       people->pdata, people->len);
  gtk_single_selection_set_selected (self->selection, GTK_INVALID_LIST_POSITION);
  update_notices (self);
}

GListModel *
lk_person_chooser_get_rows (LkPersonChooser *self)
{
  g_return_val_if_fail (LK_IS_PERSON_CHOOSER (self), NULL);
  return G_LIST_MODEL (self->filtered);
}

GtkWidget *
lk_person_chooser_get_search (LkPersonChooser *self)
{
  g_return_val_if_fail (LK_IS_PERSON_CHOOSER (self), NULL);
  return self->search;
}

GtkWidget *
lk_person_chooser_get_notice (LkPersonChooser *self)
{
  g_return_val_if_fail (LK_IS_PERSON_CHOOSER (self), NULL);
  return self->notice;
}

GtkWidget *
lk_person_chooser_get_no_match (LkPersonChooser *self)
{
  g_return_val_if_fail (LK_IS_PERSON_CHOOSER (self), NULL);
  return self->no_match;
}
