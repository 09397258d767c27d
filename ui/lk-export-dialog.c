/* lk-export-dialog.c — Write Names to Photos… (see the header)
 *
 * Both runs (the count and the write) are lk_export_xmp on a GTask worker,
 * over the library loaded again from its folder in that worker and a copy of
 * the people made when the dialog opened: the worker shares nothing with the
 * window's session, whose people a decision replaces on the main thread. The
 * worker's progress is two atomics, read by a 100 ms timeout on the main
 * thread (a sidecar takes about a millisecond: a signal per photo would
 * flood the main loop).
 */
#include "config.h"

#include "lk-export-dialog.h"

#include <glib/gi18n.h>

#include "export/lk-export-xmp.h"

typedef enum
{
  STATE_COUNTING,
  STATE_COUNTED,
  STATE_WRITING,
  STATE_DONE,
} State;

struct _LkExportDialog
{
  GtkWindow parent_instance;

  char *folder;
  LkSession *session; /* told the mapping the user gave, for the face viewer */
  LkPeople *people;
  State state;
  GCancellable *cancellable;
  gint done;  /* atomic: photos visited by the running worker */
  gint total; /* atomic */
  guint tick;
  guint fit_tick;
  guint fit_frames;

  GtkLabel *text;
  GtkProgressBar *progress;
  GtkButton *write;
  GtkButton *close;
  GtkLabel *problems;
  GtkWidget *problems_scroll;

  /* The options: each change counts again. */
  GtkDropDown *naming;
  GtkCheckButton *digikam;
  GtkWidget *map_box;
  GtkEntry *map_from;
  GtkEntry *map_to;
  GtkButton *recount;
  guint generation; /* of the job whose report is awaited */
  char *folders;    /* the library's photo_folders, for the count's text, or NULL */
};

G_DEFINE_FINAL_TYPE (LkExportDialog, lk_export_dialog, GTK_TYPE_WINDOW)

gboolean
lk_export_dialog_available (void)
{
  return lk_export_xmp_supported ();
}

/* What lk_export_xmp reads of the people: names, hidden flags, who has
 * which face. */
static LkPeople *
copy_people (const LkPeople *people)
{
  LkPeople *copy = g_new0 (LkPeople, 1);
  copy->n_people = people->n_people;
  copy->people = g_new0 (LkPerson, MAX (people->n_people, 1));
  for (gsize k = 0; k < people->n_people; k++)
    {
      copy->people[k].id = g_strdup (people->people[k].id);
      copy->people[k].name = g_strdup (people->people[k].name);
      copy->people[k].hidden = people->people[k].hidden;
    }
  copy->n_faces = people->n_faces;
  copy->person_of = g_memdup2 (people->person_of, MAX (people->n_faces, 1) * sizeof (gint32));
  return copy;
}

typedef struct
{
  char *folder;
  LkPeople *people;
  gboolean dry_run;
  gint *done;
  gint *total;
  guint generation;
  LkExportXmpSidecarName sidecar_name;
  gboolean digikam_tags;
  LkPathMap map; /* from == NULL: none */
} Job;

static void
job_free (Job *job)
{
  g_free (job->folder);
  lk_path_map_clear (&job->map);
  g_free (job);
}

static void
on_progress (gsize done, gsize total, gpointer data)
{
  Job *job = data;
  g_atomic_int_set (job->total, (gint) MIN (total, G_MAXINT));
  g_atomic_int_set (job->done, (gint) MIN (done, G_MAXINT));
}

static void
run_job (GTask *task, gpointer source, gpointer data, GCancellable *cancellable)
{
  Job *job = data;
  GError *error = NULL;
  g_autoptr (LkLibrary) library = lk_library_load (job->folder, &error);
  if (library == NULL)
    {
      g_task_return_error (task, error);
      return;
    }
  if (library->count != job->people->n_faces)
    {
      g_task_return_new_error (task, G_IO_ERROR, G_IO_ERROR_FAILED, "%s",
                               _ ("The library changed on disk since it was opened: open it "
                                  "again, then write the names."));
      return;
    }
  LkExportXmpOptions options = { 0 };
  options.dry_run = job->dry_run;
  options.sidecar_name = job->sidecar_name;
  options.digikam_tags = job->digikam_tags;
  options.maps = job->map.from != NULL ? &job->map : NULL;
  options.n_maps = job->map.from != NULL ? 1 : 0;
  options.cancellable = cancellable;
  options.progress = on_progress;
  options.progress_data = job;
  LkExportXmpReport *report = lk_export_xmp (library, job->people, &options, &error);
  if (report == NULL)
    g_task_return_error (task, error);
  else
    g_task_return_pointer (task, report, (GDestroyNotify) lk_export_xmp_report_free);
}

static void fit (LkExportDialog *self);

static void
set_problems (LkExportDialog *self, const LkExportXmpReport *report)
{
  g_autoptr (GString) text = g_string_new (NULL);
  for (guint k = 0; k < report->entries->len; k++)
    {
      const LkExportXmpEntry *e = &g_array_index (report->entries, LkExportXmpEntry, k);
      if (e->message != NULL)
        g_string_append_printf (text, "%s%s", text->len > 0 ? "\n" : "", e->message);
    }
  gtk_label_set_text (self->problems, text->str);
  gtk_widget_set_visible (self->problems_scroll, text->len > 0);
  fit (self);
}

static void start_job (LkExportDialog *self, gboolean dry_run);

/* The window follows its text, which grows from one line (counting) to a
 * paragraph and a list. GTK 4.8 keeps a mapped window's size when its
 * content grows (under Xvfb the paragraph was cut at 127 px of the 170 it
 * measured); setting resizable presents the window again, and a window that
 * is not resizable is presented at its natural size. */
static gboolean
fit_now (GtkWidget *widget, GdkFrameClock *clock, gpointer data)
{
  LkExportDialog *self = LK_EXPORT_DIALOG (widget);
  int min = 0, natural = 0;
  gtk_widget_measure (widget, GTK_ORIENTATION_VERTICAL, gtk_widget_get_width (widget), &min,
                      &natural, NULL, NULL);
  double dx = 0, dy = 0;
  gtk_native_get_surface_transform (GTK_NATIVE (widget), &dx, &dy);
  /* The measure includes the shadow around the window, the height not. */
  if (gtk_widget_get_height (widget) + (int) (2 * dy) >= min || ++self->fit_frames > 30)
    {
      self->fit_tick = 0;
      return G_SOURCE_REMOVE;
    }
  gtk_window_set_resizable (GTK_WINDOW (widget), TRUE);
  gtk_window_set_resizable (GTK_WINDOW (widget), FALSE);
  return G_SOURCE_CONTINUE;
}

/* Frame by frame until the window holds its text (a few frames: the new
 * size is asked for, then allocated), at most 30. */
static void
fit (LkExportDialog *self)
{
  self->fit_frames = 0;
  if (self->fit_tick == 0)
    self->fit_tick = gtk_widget_add_tick_callback (GTK_WIDGET (self), fit_now, NULL, NULL);
}

static void set_options_sensitive (LkExportDialog *self);

static void
on_job_done (GObject *source, GAsyncResult *result, gpointer data)
{
  g_autoptr (LkExportDialog) self = data;
  g_autoptr (GError) error = NULL;
  const Job *job = g_task_get_task_data (G_TASK (result));
  g_autoptr (LkExportXmpReport) report = g_task_propagate_pointer (G_TASK (result), &error);
  /* A count made stale by a change of the options: its successor reports. */
  if (job->generation != self->generation)
    return;
  g_clear_handle_id (&self->tick, g_source_remove);
  gtk_widget_set_visible (GTK_WIDGET (self->progress), FALSE);
  if (report == NULL)
    {
      self->state = STATE_DONE;
      gtk_label_set_text (self->text, error->message);
      gtk_widget_set_visible (GTK_WIDGET (self->write), FALSE);
      gtk_button_set_label (self->close, _ ("_Close"));
      fit (self);
      return;
    }
  set_problems (self, report);
  g_autofree char *text = NULL;
  if (self->state == STATE_COUNTING)
    {
      self->state = STATE_COUNTED;
      gsize to_write = report->created + report->updated;
      g_autoptr (GString) t = g_string_new (NULL);
      if (report->photos == 0 && to_write == 0 && report->unmapped == 0)
        g_string_append (t, _ ("No photo of this library holds a face of a named, shown person "
                               "with a file Likeness can find: name people first. Nothing to "
                               "write."));
      else if (report->photos > 0 || to_write > 0)
        {
          const char *example = gtk_drop_down_get_selected (self->naming) == 1
                                    ? _ ("PHOTO.xmp")
                                    : _ ("PHOTO.jpg.xmp");
          g_string_append_printf (
              t,
              _ ("The names of %'zu faces on %'zu photos go into XMP sidecar files beside the "
                 "photos (%s), where Immich, PhotoPrism, digiKam and Lightroom read face "
                 "regions. The photos themselves are not changed.\n\n"
                 "%'zu sidecars to create, %'zu to change, %'zu already up to date, %'zu refused."),
              report->regions, report->photos, example, report->created, report->updated,
              report->unchanged, report->refused + report->failed);
        }
      if (self->folders != NULL && report->photos > 0)
        g_string_append_printf (t, _ ("\n\nThe photos are in %s."), self->folders);
      const char *gap = t->len > 0 ? "\n\n" : "";
      if (report->missing > 0 && gtk_widget_get_visible (self->map_box))
        g_string_append_printf (
            t,
            _ ("%s%'zu photos with named faces are not where the library says: if their "
               "folder moved, say above where it is now."),
            gap, report->missing);
      gap = t->len > 0 ? "\n\n" : "";
      if (report->unmapped > 0)
        g_string_append_printf (
            t,
            _ ("%s%'zu photos with named faces are known only by their path on the server "
               "the library was imported from (the first: %s): say above where that folder "
               "is on this computer."),
            gap, report->unmapped, report->unmapped_example);
      text = g_string_free (g_steal_pointer (&t), FALSE);
      gtk_widget_set_sensitive (GTK_WIDGET (self->write), to_write > 0);
      /* The face viewer looks where this count looked. */
      if (gtk_widget_get_visible (self->map_box))
        lk_session_set_photo_map (self->session, job->map.from != NULL ? &job->map : NULL);
      set_options_sensitive (self);
    }
  else
    {
      self->state = STATE_DONE;
      gsize visited = report->created + report->updated + report->unchanged + report->refused
                      + report->failed;
      if (report->cancelled)
        text = g_strdup_printf (
            _ ("Stopped after %'zu photos: %'zu sidecars created, %'zu updated, %'zu up to date. "
               "Every sidecar is either as it was or complete."),
            visited, report->created, report->updated, report->unchanged);
      else
        text = g_strdup_printf (
            _ ("Done: %'zu sidecars created, %'zu updated, %'zu were up to date; %'zu could not "
               "be written."),
            report->created, report->updated, report->unchanged, report->refused + report->failed);
      gtk_widget_set_visible (GTK_WIDGET (self->write), FALSE);
      gtk_button_set_label (self->close, _ ("_Close"));
      set_options_sensitive (self);
    }
  gtk_label_set_text (self->text, text);
  fit (self);
}

static gboolean
on_tick (gpointer data)
{
  LkExportDialog *self = data;
  gint total = g_atomic_int_get (&self->total), done = g_atomic_int_get (&self->done);
  if (total > 0)
    {
      gtk_progress_bar_set_fraction (self->progress, (double) done / total);
      g_autofree char *line = g_strdup_printf (_ ("%'d of %'d photos"), done, total);
      gtk_progress_bar_set_text (self->progress, line);
    }
  return G_SOURCE_CONTINUE;
}

static void
start_job (LkExportDialog *self, gboolean dry_run)
{
  Job *job = g_new0 (Job, 1);
  job->folder = g_strdup (self->folder);
  job->people = self->people;
  job->dry_run = dry_run;
  job->done = &self->done;
  job->total = &self->total;
  job->generation = ++self->generation;
  job->sidecar_name = gtk_drop_down_get_selected (self->naming) == 1 ? LK_EXPORT_XMP_NAME_BASENAME
                                                                     : LK_EXPORT_XMP_NAME_FULL;
  job->digikam_tags = gtk_check_button_get_active (self->digikam);
  const char *from = gtk_editable_get_text (GTK_EDITABLE (self->map_from));
  const char *to = gtk_editable_get_text (GTK_EDITABLE (self->map_to));
  if (from[0] != '\0' && to[0] != '\0')
    {
      g_autofree char *text = g_strdup_printf ("%s=%s", from, to);
      if (!lk_path_map_parse (text, &job->map, NULL))
        lk_path_map_clear (&job->map); /* said in the count: the photos stay unmapped */
    }
  if (self->cancellable != NULL)
    g_cancellable_cancel (self->cancellable);
  g_clear_handle_id (&self->tick, g_source_remove);
  g_atomic_int_set (&self->done, 0);
  g_atomic_int_set (&self->total, 0);
  g_clear_object (&self->cancellable);
  self->cancellable = g_cancellable_new ();
  gtk_progress_bar_set_fraction (self->progress, 0);
  gtk_widget_set_visible (GTK_WIDGET (self->progress), TRUE);
  self->tick = g_timeout_add (100, on_tick, self);
  /* The task holds the dialog, and so the people the worker reads. */
  g_autoptr (GTask) task = g_task_new (NULL, self->cancellable, on_job_done, g_object_ref (self));
  g_task_set_task_data (task, job, (GDestroyNotify) job_free);
  /* A stopped write still returns its report (what was written). */
  g_task_set_check_cancellable (task, FALSE);
  g_task_run_in_thread (task, run_job);
}

static void
set_options_sensitive (LkExportDialog *self)
{
  gboolean open = self->state == STATE_COUNTING || self->state == STATE_COUNTED;
  gtk_widget_set_sensitive (GTK_WIDGET (self->naming), open);
  gtk_widget_set_sensitive (GTK_WIDGET (self->digikam), open);
  gtk_widget_set_sensitive (self->map_box, open);
}

/* An option changed: the count is made again with it. */
static void
recount (LkExportDialog *self)
{
  if (self->state != STATE_COUNTING && self->state != STATE_COUNTED)
    return;
  self->state = STATE_COUNTING;
  gtk_label_set_text (self->text, _ ("Counting the photos and their sidecars…"));
  gtk_widget_set_sensitive (GTK_WIDGET (self->write), FALSE);
  start_job (self, TRUE);
}

static void
on_option_changed (GObject *object, GParamSpec *pspec, LkExportDialog *self)
{
  recount (self);
}

static void
on_recount (GtkWidget *widget, LkExportDialog *self)
{
  recount (self);
}

void
lk_export_dialog_set_sidecar_name (LkExportDialog *self, LkExportXmpSidecarName name)
{
  g_return_if_fail (LK_IS_EXPORT_DIALOG (self));
  gtk_drop_down_set_selected (self->naming, name == LK_EXPORT_XMP_NAME_BASENAME ? 1 : 0);
}

void
lk_export_dialog_set_digikam_tags (LkExportDialog *self, gboolean digikam_tags)
{
  g_return_if_fail (LK_IS_EXPORT_DIALOG (self));
  gtk_check_button_set_active (self->digikam, digikam_tags);
}

void
lk_export_dialog_set_map (LkExportDialog *self, const char *from, const char *to)
{
  g_return_if_fail (LK_IS_EXPORT_DIALOG (self));
  gtk_editable_set_text (GTK_EDITABLE (self->map_from), from != NULL ? from : "");
  gtk_editable_set_text (GTK_EDITABLE (self->map_to), to != NULL ? to : "");
  /* What Look There does (a button's activate clicks only after its
   * pressed look has been shown). */
  recount (self);
}

gboolean
lk_export_dialog_offers_map (LkExportDialog *self)
{
  g_return_val_if_fail (LK_IS_EXPORT_DIALOG (self), FALSE);
  return gtk_widget_get_visible (self->map_box);
}

void
lk_export_dialog_start (LkExportDialog *self)
{
  g_return_if_fail (LK_IS_EXPORT_DIALOG (self));
  if (self->state != STATE_COUNTED)
    return;
  self->state = STATE_WRITING;
  set_options_sensitive (self);
  gtk_label_set_text (self->text, _ ("Writing the sidecars…"));
  gtk_widget_set_visible (self->problems_scroll, FALSE);
  gtk_widget_set_sensitive (GTK_WIDGET (self->write), FALSE);
  gtk_button_set_label (self->close, _ ("_Stop"));
  start_job (self, FALSE);
}

void
lk_export_dialog_stop (LkExportDialog *self)
{
  g_return_if_fail (LK_IS_EXPORT_DIALOG (self));
  if (self->cancellable != NULL)
    g_cancellable_cancel (self->cancellable);
}

gboolean
lk_export_dialog_is_fitting (LkExportDialog *self)
{
  g_return_val_if_fail (LK_IS_EXPORT_DIALOG (self), FALSE);
  return self->fit_tick != 0;
}

gboolean
lk_export_dialog_is_busy (LkExportDialog *self)
{
  return self->state == STATE_COUNTING || self->state == STATE_WRITING;
}

gboolean
lk_export_dialog_is_done (LkExportDialog *self)
{
  return self->state == STATE_DONE;
}

const char *
lk_export_dialog_get_text (LkExportDialog *self)
{
  return gtk_label_get_text (self->text);
}

const char *
lk_export_dialog_get_problems (LkExportDialog *self)
{
  return gtk_label_get_text (self->problems);
}

static void
on_write_clicked (GtkButton *button, LkExportDialog *self)
{
  lk_export_dialog_start (self);
}

static void
on_close_clicked (GtkButton *button, LkExportDialog *self)
{
  if (lk_export_dialog_is_busy (self))
    lk_export_dialog_stop (self);
  if (self->state != STATE_WRITING)
    gtk_window_destroy (GTK_WINDOW (self));
}

/* Closing the window while it writes stops the write; the dialog goes once
 * the worker is done (the task holds it). */
static gboolean
on_close_request (GtkWindow *window)
{
  LkExportDialog *self = LK_EXPORT_DIALOG (window);
  lk_export_dialog_stop (self);
  return FALSE;
}

static void
lk_export_dialog_dispose (GObject *object)
{
  LkExportDialog *self = LK_EXPORT_DIALOG (object);
  if (self->cancellable != NULL)
    g_cancellable_cancel (self->cancellable);
  g_clear_handle_id (&self->tick, g_source_remove);
  gtk_widget_dispose_template (GTK_WIDGET (self), LK_TYPE_EXPORT_DIALOG);
  G_OBJECT_CLASS (lk_export_dialog_parent_class)->dispose (object);
}

static void
lk_export_dialog_finalize (GObject *object)
{
  LkExportDialog *self = LK_EXPORT_DIALOG (object);
  g_clear_object (&self->cancellable);
  g_clear_pointer (&self->people, lk_people_free);
  g_free (self->folder);
  g_free (self->folders);
  g_clear_object (&self->session);
  G_OBJECT_CLASS (lk_export_dialog_parent_class)->finalize (object);
}

static void
lk_export_dialog_class_init (LkExportDialogClass *klass)
{
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  G_OBJECT_CLASS (klass)->dispose = lk_export_dialog_dispose;
  G_OBJECT_CLASS (klass)->finalize = lk_export_dialog_finalize;
  GTK_WINDOW_CLASS (klass)->close_request = on_close_request;

  gtk_widget_class_set_template_from_resource (widget_class,
                                               RESOURCE_PREFIX "/lk-export-dialog.ui");
#define BIND(name) gtk_widget_class_bind_template_child (widget_class, LkExportDialog, name)
  BIND (text);
  BIND (progress);
  BIND (write);
  BIND (close);
  BIND (problems);
  BIND (problems_scroll);
  BIND (naming);
  BIND (digikam);
  BIND (map_box);
  BIND (map_from);
  BIND (map_to);
  BIND (recount);
#undef BIND
  gtk_widget_class_bind_template_callback (widget_class, on_write_clicked);
  gtk_widget_class_bind_template_callback (widget_class, on_close_clicked);
  gtk_widget_class_bind_template_callback (widget_class, on_option_changed);
  gtk_widget_class_bind_template_callback (widget_class, on_recount);
}

static void
lk_export_dialog_init (LkExportDialog *self)
{
  gtk_widget_init_template (GTK_WIDGET (self));
}

LkExportDialog *
lk_export_dialog_new (GtkWindow *parent, LkSession *session)
{
  LkExportDialog *self = g_object_new (LK_TYPE_EXPORT_DIALOG, "transient-for", parent, "modal",
                                       TRUE, "destroy-with-parent", TRUE, NULL);
  self->folder = g_strdup (lk_session_get_folder (session));
  self->session = g_object_ref (session);
  self->people = copy_people (lk_session_peek_people (session));
  /* Photos outside the library: the folders it names are said in the count
   * (the sidecars go there), and the mapping is offered. */
  const LkLibrary *library = lk_session_get_library (session);
  gboolean outside = library->n_photo_folders > 0;
  for (gsize k = 0; k < library->n_photos && !outside; k++)
    outside = library->photos[k].path == NULL && library->photos[k].source_path != NULL;
  gtk_widget_set_visible (self->map_box, outside);
  const LkPathMap *known = lk_session_get_photo_map (session);
  if (outside && known != NULL)
    {
      gtk_editable_set_text (GTK_EDITABLE (self->map_from), known->from);
      gtk_editable_set_text (GTK_EDITABLE (self->map_to), known->to);
    }
  if (library->n_photo_folders > 0)
    {
      g_autoptr (GString) folders = g_string_new (NULL);
      for (gsize k = 0; k < library->n_photo_folders; k++)
        g_string_append_printf (folders, "%s%s", k > 0 ? ", " : "", library->photo_folders[k]);
      self->folders = g_string_free (g_steal_pointer (&folders), FALSE);
    }
  self->state = STATE_COUNTING;
  start_job (self, TRUE);
  return self;
}
