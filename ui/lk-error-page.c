/* lk-error-page.c — a library that could not be opened: why, and what to do
 *
 * The engine's message names the file and the step; under it, advice for
 * the kind of failure (its GError domain and code), and the ways on: open
 * another library, try again, or — when only the saved decisions are at
 * fault — start over without them. A folder of photos opened as a library
 * is no failure to retry: the page says what a library is and offers to
 * find the faces in those photos. The buttons are the window's actions
 * (win.open, win.retry, win.start-over, win.find-faces).
 */
#include "config.h"

#include <adwaita.h>
#include <glib/gi18n.h>

#include "lk-error-page.h"
#include "lk-wrap-box.h"
#include "library/lk-library.h"
#include "people/lk-review.h"

struct _LkErrorPage
{
  GtkWidget parent_instance;

  AdwStatusPage *status_page;
  GtkLabel *message_label;
  GtkLabel *hint_label;
  GtkWidget *retry_button;
  GtkWidget *start_over_button;
  GtkWidget *help_button;
  GtkWidget *find_faces_button;
};

G_DEFINE_FINAL_TYPE (LkErrorPage, lk_error_page, GTK_TYPE_WIDGET)

static const char *
error_hint (const GError *error, gboolean *offer_start_over)
{
  *offer_start_over = FALSE;
  if (error->domain == LK_LIBRARY_ERROR)
    switch ((LkLibraryError) error->code)
      {
        case LK_LIBRARY_ERROR_IO:
          return _ ("Check that the folder exists, holds library.json and that you may read it, "
                    "then try again — or open another library.");
        case LK_LIBRARY_ERROR_JSON:
          return _ ("library.json is not valid JSON. Restore it from a backup, or export the "
                    "library again from the program that made it.");
        case LK_LIBRARY_ERROR_FORMAT:
          return _ ("library.json does not follow the Likeness library format. Export the library "
                    "again from the program that made it; the message names the field to fix.");
        case LK_LIBRARY_ERROR_VERSION:
          return _ ("The library was written for a newer Likeness. Update Likeness to open it.");
        case LK_LIBRARY_ERROR_PATH:
          return _ ("A file named in library.json lies outside the library folder. Move it into "
                    "the folder and fix its path in library.json.");
        case LK_LIBRARY_ERROR_EMBEDDINGS:
          return _ ("embeddings.f32 does not match library.json, or holds a bad value. Export the "
                    "library again.");
        case LK_LIBRARY_ERROR_UNMAPPED: /* a photo's, never a load's: said where it happens */
          break;
      }
  if (error->domain == LK_REVIEW_ERROR)
    {
      *offer_start_over = error->code != LK_REVIEW_ERROR_IO;
      if (error->code == LK_REVIEW_ERROR_IO)
        return _ ("Check that you may read review.json in the library folder, then try again.");
      return _ ("Your saved decisions in review.json cannot be used with this library. To keep "
                "the file, move it out of the folder and try again; or start over, and your next "
                "decision replaces it.");
    }
  /* A folder that is missing or cannot be read is no bug of Likeness's. */
  if (error->domain == G_IO_ERROR || error->domain == G_FILE_ERROR)
    return _ ("Check the folder, then try again — or open another library.");
  return _ ("Try again. If it keeps failing, please report the message above as a bug.");
}

static void
lk_error_page_dispose (GObject *object)
{
  gtk_widget_dispose_template (GTK_WIDGET (object), LK_TYPE_ERROR_PAGE);
  G_OBJECT_CLASS (lk_error_page_parent_class)->dispose (object);
}

static void
lk_error_page_class_init (LkErrorPageClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = lk_error_page_dispose;

  g_type_ensure (ADW_TYPE_STATUS_PAGE);
  g_type_ensure (LK_TYPE_WRAP_BOX);
  gtk_widget_class_set_template_from_resource (widget_class, RESOURCE_PREFIX "/lk-error-page.ui");
  gtk_widget_class_bind_template_child (widget_class, LkErrorPage, status_page);
  gtk_widget_class_bind_template_child (widget_class, LkErrorPage, message_label);
  gtk_widget_class_bind_template_child (widget_class, LkErrorPage, hint_label);
  gtk_widget_class_bind_template_child (widget_class, LkErrorPage, retry_button);
  gtk_widget_class_bind_template_child (widget_class, LkErrorPage, start_over_button);
  gtk_widget_class_bind_template_child (widget_class, LkErrorPage, help_button);
  gtk_widget_class_bind_template_child (widget_class, LkErrorPage, find_faces_button);
  gtk_widget_class_set_layout_manager_type (widget_class, GTK_TYPE_BIN_LAYOUT);
}

static void
lk_error_page_init (LkErrorPage *self)
{
  gtk_widget_init_template (GTK_WIDGET (self));
}

void
lk_error_page_show (LkErrorPage *self, const char *name, const GError *error)
{
  g_return_if_fail (LK_IS_ERROR_PAGE (self));
  g_return_if_fail (error != NULL);

  gboolean start_over;
  const char *hint = error_hint (error, &start_over);
  g_autofree char *title = g_strdup_printf (_ ("Cannot Open “%s”"), name);

  adw_status_page_set_icon_name (self->status_page, "dialog-warning-symbolic");
  adw_status_page_set_title (self->status_page, title);
  gtk_label_set_label (self->message_label, error->message);
  gtk_label_set_label (self->hint_label, hint);
  gtk_widget_set_visible (GTK_WIDGET (self->hint_label), TRUE);
  gtk_widget_set_visible (self->retry_button, TRUE);
  gtk_widget_set_visible (self->find_faces_button, FALSE);
  gtk_widget_set_visible (self->start_over_button, start_over);
  /* The help's section for this error (help/C/troubleshooting.page). */
  gtk_actionable_set_action_target (GTK_ACTIONABLE (self->help_button), "s",
                                    error->domain == LK_REVIEW_ERROR ? "troubleshooting#review-file"
                                                                     : "troubleshooting#open");
}

void
lk_error_page_show_photos (LkErrorPage *self, const char *name, gboolean can_find)
{
  g_return_if_fail (LK_IS_ERROR_PAGE (self));

  /* Translators: the title when a folder of photos is opened as a library,
   * "“Holiday 2019” Holds Photos, Not a Library" */
  g_autofree char *title = g_strdup_printf (_ ("“%s” Holds Photos, Not a Library"), name);

  adw_status_page_set_icon_name (self->status_page, "folder-pictures-symbolic");
  adw_status_page_set_title (self->status_page, title);
  gtk_label_set_label (
      self->message_label,
      can_find ? _ ("A library is a folder Likeness made, with library.json in it. To find the "
                    "people in these photos, Likeness first finds the faces in them and makes a "
                    "library of those faces; the photos are only read, nothing is written into "
                    "their folder.")
               : _ ("A library is a folder Likeness made, with library.json in it. This build "
                    "of Likeness cannot find faces in photos itself (it was built without face "
                    "detection): import the photos into Immich or PhotoPrism, then import their "
                    "faces from there."));
  gtk_widget_set_visible (GTK_WIDGET (self->hint_label), FALSE);
  gtk_widget_set_visible (self->retry_button, FALSE);
  gtk_widget_set_visible (self->start_over_button, FALSE);
  gtk_widget_set_visible (self->find_faces_button, can_find);
  gtk_actionable_set_action_target (GTK_ACTIONABLE (self->help_button), "s",
                                    can_find ? "import-photos" : "open-library");
}

gboolean
lk_error_page_focus_retry (LkErrorPage *self)
{
  g_return_val_if_fail (LK_IS_ERROR_PAGE (self), FALSE);
  if (gtk_widget_get_visible (self->find_faces_button))
    return gtk_widget_grab_focus (self->find_faces_button);
  return gtk_widget_grab_focus (self->retry_button);
}

const char *
lk_error_page_get_message (LkErrorPage *self)
{
  g_return_val_if_fail (LK_IS_ERROR_PAGE (self), NULL);
  return gtk_label_get_label (self->message_label);
}

const char *
lk_error_page_get_hint (LkErrorPage *self)
{
  g_return_val_if_fail (LK_IS_ERROR_PAGE (self), NULL);
  return gtk_label_get_label (self->hint_label);
}
