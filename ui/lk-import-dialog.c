/* lk-import-dialog.c — see lk-import-dialog.h
 *
 * - The form asks only what the importer reads: Immich's database URL, its
 *   media folder and an optional owner; PhotoPrism's index.db file (the
 *   importer reads no MariaDB yet, so no URL is offered), its storage and
 *   originals folders; and where the library goes.
 * - The import runs in a GTask worker with no source object: the worker
 *   reads only the job (its task data, copied from the form), and the
 *   dialog's reference rides in the callback's data, dropped there on the
 *   main thread. As the source object the dialog went with the worker's
 *   last reference to the task, which GLib may drop after the result
 *   landed: a widget finalized off GTK's thread.
 * - The importer calls its progress
 *   callback from its worker threads; the latest figures are kept under a
 *   mutex and at most one G_PRIORITY_LOW idle is pending on the main
 *   context, so a fast producer cannot flood the main loop (the session's
 *   shape, lk-session.c).
 * - Cancel stops the importer between batches (and while it connects): the
 *   importer writes beside the output folder and renames at the end, so a
 *   cancelled or failed import leaves nothing, and the parent folders this
 *   dialog made for the default output are removed again when empty.
 * - While an import runs the application is held: closing the last window
 *   cancels it, and the process waits for the importer to remove what it
 *   had written rather than exit in the middle.
 */
#include "config.h"

#include "lk-display-path.h"
#include "lk-file-dialog.h"
#include "lk-import-dialog.h"
#include "lk-wrap-box.h"

#include <errno.h>
#include <glib/gi18n.h>
#include <glib/gstdio.h>
#include <string.h>

#include "import/lk-import-immich.h"
#include "import/lk-import-photoprism.h"
#include "import/lk-import-photos.h"

struct _LkImportDialog
{
  GtkWindow parent_instance;

  LkImportDialogSource source;
  gboolean output_chosen; /* the user (or a caller) set the output: no default follows */

  GtkStack *stack;
  GtkButton *import_button;
  GtkButton *cancel_button;
  GtkLabel *intro_label;
  GtkWidget *message_box;
  GtkLabel *message_label;
  GtkLabel *database_label;
  GtkEntry *database_entry;
  GtkWidget *password_entry; /* Immich's: the address's password, hidden */
  GtkButton *database_button;
  GtkLabel *database_hint;
  GtkLabel *media_label;
  GtkEntry *media_entry;
  GtkButton *media_button;
  GtkLabel *media_hint;
  GtkWidget *media_field;
  GtkWidget *originals_field;
  GtkLabel *originals_label;
  GtkEntry *originals_entry;
  GtkButton *originals_button;
  GtkLabel *originals_hint;
  GtkWidget *owner_field;
  GtkLabel *owner_label;
  GtkEntry *owner_entry;
  GtkLabel *owner_hint;
  GtkLabel *output_label;
  GtkEntry *output_entry;
  GtkButton *output_button;
  GtkLabel *output_hint;
  GtkLabel *progress_title;
  GtkLabel *progress_phase;
  GtkProgressBar *progress_bar;
  GtkLabel *progress_detail;
  GtkLabel *models_label;
  GtkLabel *models_command;
  GtkLabel *models_after;
  GtkWidget *models_check;

  char *error;
  char *note;
  char *progress;

  /* The running import, or NULL. */
  struct _Job *job;
  gboolean close_when_done;
  gboolean disposed;
  guint pulse_id;
};

G_DEFINE_FINAL_TYPE (LkImportDialog, lk_import_dialog, GTK_TYPE_WINDOW)

enum
{
  SIGNAL_IMPORTED,
  N_SIGNALS
};

static guint signals[N_SIGNALS];

/* ---- the job: shared with the worker ------------------------------------ */

typedef struct _Job
{
  gatomicrefcount refs;
  LkImportDialogSource source;
  char *database;
  char *media;
  char *originals;
  char *owner;
  char *output;
  GCancellable *cancellable;
  GMainContext *context;
  LkImportSummary summary;
  /* The folders made for the output's parent, outermost first: removed
   * again (when empty) after an import that wrote nothing. */
  GPtrArray *made;

  GMutex lock; /* guards the fields below */
  LkImportRate rate;
  gboolean reported;      /* a progress call came */
  GSource *idle;          /* pending progress idle, or NULL */
  LkImportDialog *dialog; /* for the idle: NULL once the job is over */
} Job;

static Job *
job_ref (Job *job)
{
  g_atomic_ref_count_inc (&job->refs);
  return job;
}

static void
job_unref (Job *job)
{
  if (!g_atomic_ref_count_dec (&job->refs))
    return;
  g_free (job->database);
  g_free (job->media);
  g_free (job->originals);
  g_free (job->owner);
  g_free (job->output);
  g_clear_object (&job->cancellable);
  g_main_context_unref (job->context);
  lk_import_summary_clear (&job->summary);
  g_ptr_array_unref (job->made);
  g_mutex_clear (&job->lock);
  g_free (job);
}

G_DEFINE_AUTOPTR_CLEANUP_FUNC (Job, job_unref)

/* ---- small helpers ------------------------------------------------------ */

static gboolean check_models (LkImportDialog *self);

static const char *
source_name (LkImportDialogSource source)
{
  return source == LK_IMPORT_DIALOG_IMMICH       ? "Immich"
         : source == LK_IMPORT_DIALOG_PHOTOPRISM ? "PhotoPrism"
                                                 : "Photos";
}

/* The entry's text as a file name, "~/" expanded; NULL when empty. */
static char *
entry_path (GtkEntry *entry)
{
  g_autofree char *text = g_strstrip (g_strdup (gtk_editable_get_text (GTK_EDITABLE (entry))));

  if (text[0] == '\0')
    return NULL;
  g_autofree char *name = g_filename_from_utf8 (text, -1, NULL, NULL, NULL);
  if (name == NULL)
    return NULL;
  if (strcmp (name, "~") == 0 || g_str_has_prefix (name, "~/"))
    return g_build_filename (g_get_home_dir (), name + 1, NULL);
  return g_steal_pointer (&name);
}

static char *
entry_text (GtkEntry *entry)
{
  char *text = g_strstrip (g_strdup (gtk_editable_get_text (GTK_EDITABLE (entry))));

  if (text[0] == '\0')
    g_clear_pointer (&text, g_free);
  return text;
}

/* `path` in `entry`, the home folder as "~" (entry_path () reads it back). */
static void
set_entry_path (GtkEntry *entry, const char *path)
{
  const char *home = g_get_home_dir ();
  gsize n = strlen (home);
  g_autofree char *text = NULL;

  if (path == NULL)
    text = g_strdup ("");
  else if (n > 1 && strncmp (path, home, n) == 0 && path[n] == G_DIR_SEPARATOR)
    {
      g_autofree char *rest = g_filename_display_name (path + n);
      text = g_strconcat ("~", rest, NULL);
    }
  else
    text = g_filename_display_name (path);
  gtk_editable_set_text (GTK_EDITABLE (entry), text);
}

/* Where a library imported from `source` goes unless the user says
 * otherwise: the Pictures folder (~/Pictures where the user has no such
 * folder set: a library is the user's to see, never in a hidden folder)
 * /Likeness/NAME,
 * NAME the source, with the Immich server's host when it is not this
 * machine, so two servers do not share one library by default. An existing
 * import of the same source there is updated in place, keeping decisions. */
static char *
default_output (LkImportDialogSource source, const char *database)
{
  const char *pictures = g_get_user_special_dir (G_USER_DIRECTORY_PICTURES);
  g_autofree char *base = pictures != NULL
                              ? g_build_filename (pictures, "Likeness", NULL)
                              : g_build_filename (g_get_home_dir (), "Pictures", "Likeness", NULL);
  g_autofree char *host = NULL;

  if (source == LK_IMPORT_DIALOG_IMMICH && database != NULL)
    {
      g_autoptr (GUri) uri = g_uri_parse (database, G_URI_FLAGS_NON_DNS, NULL);
      const char *h = uri != NULL ? g_uri_get_host (uri) : NULL;
      if (h != NULL && h[0] != '\0' && strcmp (h, "localhost") != 0 && strcmp (h, "127.0.0.1") != 0
          && strcmp (h, "::1") != 0 && strchr (h, '/') == NULL)
        host = g_strdup (h);
    }
  g_autofree char *name = host != NULL ? g_strdup_printf ("%s (%s)", source_name (source), host)
                                       : g_strdup (source_name (source));
  return g_build_filename (base, name, NULL);
}

/* libpq indents its advice with a tab on a line of its own ("…refused\n\tIs
 * the server running…"): a tab in a wrapped label is a wide gap. */
static char *
untab (const char *text)
{
  g_autoptr (GString) out = g_string_new (NULL);

  for (const char *p = text; p != NULL && *p != '\0'; p++)
    if (*p != '\t')
      g_string_append_c (out, *p);
  return text != NULL ? g_string_free (g_steal_pointer (&out), FALSE) : NULL;
}

static void
show_message (LkImportDialog *self, const char *error, const char *note)
{
  g_free (self->error);
  self->error = untab (error);
  error = self->error;
  g_free (self->note);
  self->note = g_strdup (note);
  const char *text = error != NULL ? error : note;
  gtk_widget_set_visible (self->message_box, text != NULL);
  gtk_label_set_label (self->message_label, text != NULL ? text : "");
  if (error != NULL)
    {
      gtk_widget_add_css_class (self->message_box, "error");
      gtk_widget_remove_css_class (self->message_box, "note");
    }
  else
    {
      gtk_widget_add_css_class (self->message_box, "note");
      gtk_widget_remove_css_class (self->message_box, "error");
    }
}

/* The password of an Immich address in the Database field goes to the
 * password entry below it, shown as dots with a peek button as GNOME's
 * password entries are: an address on screen kept DB_PASSWORD in plain
 * sight (the error messages already hid it). */
static void
take_password (LkImportDialog *self)
{
  const char *text = gtk_editable_get_text (GTK_EDITABLE (self->database_entry));
  g_autoptr (GUri) uri
      = self->source == LK_IMPORT_DIALOG_IMMICH
            ? g_uri_parse (text, G_URI_FLAGS_HAS_PASSWORD | G_URI_FLAGS_ENCODED, NULL)
            : NULL;

  if (uri == NULL || g_uri_get_password (uri) == NULL)
    return;
  g_autofree char *password = g_uri_unescape_string (g_uri_get_password (uri), NULL);
  g_autoptr (GUri) bare = g_uri_build_with_user (
      g_uri_get_flags (uri), g_uri_get_scheme (uri), g_uri_get_user (uri), NULL,
      g_uri_get_auth_params (uri), g_uri_get_host (uri), g_uri_get_port (uri), g_uri_get_path (uri),
      g_uri_get_query (uri), g_uri_get_fragment (uri));
  g_autofree char *address = g_uri_to_string (bare);
  gtk_editable_set_text (GTK_EDITABLE (self->password_entry), password != NULL ? password : "");
  gtk_editable_set_text (GTK_EDITABLE (self->database_entry), address);
}

/* The Immich address with the password put back, for libpq. */
static char *
immich_address (LkImportDialog *self)
{
  g_autofree char *address = entry_text (self->database_entry);
  const char *password = gtk_editable_get_text (GTK_EDITABLE (self->password_entry));

  if (address == NULL || password[0] == '\0')
    return g_steal_pointer (&address);
  g_autoptr (GUri) uri
      = g_uri_parse (address, G_URI_FLAGS_HAS_PASSWORD | G_URI_FLAGS_ENCODED, NULL);
  if (uri != NULL && g_uri_get_host (uri) != NULL)
    {
      g_autofree char *escaped = g_uri_escape_string (password, NULL, FALSE);
      g_autoptr (GUri) full = g_uri_build_with_user (
          g_uri_get_flags (uri), g_uri_get_scheme (uri), g_uri_get_user (uri), escaped,
          g_uri_get_auth_params (uri), g_uri_get_host (uri), g_uri_get_port (uri),
          g_uri_get_path (uri), g_uri_get_query (uri), g_uri_get_fragment (uri));
      return g_uri_to_string (full);
    }
  /* A key=value connection string: libpq's quoting, backslashes and quotes
   * escaped. */
  GString *quoted = g_string_new (NULL);
  for (const char *p = password; *p != '\0'; p++)
    {
      if (*p == '\\' || *p == '\'')
        g_string_append_c (quoted, '\\');
      g_string_append_c (quoted, *p);
    }
  g_autofree char *value = g_string_free (quoted, FALSE);
  return g_strdup_printf ("%s password='%s'", address, value);
}

static void
on_database_focus_leave (GtkEventControllerFocus *controller, LkImportDialog *self)
{
  /* The focus also leaves while the dialog is destroyed, its children gone. */
  if (!self->disposed)
    take_password (self);
}

/* Import needs the database and the output; the rest is optional. */
static void
update_actions (LkImportDialog *self)
{
  gboolean running = self->job != NULL;
  g_autofree char *database = entry_text (self->database_entry);
  g_autofree char *output = entry_text (self->output_entry);

  gtk_widget_action_set_enabled (GTK_WIDGET (self), "import.start",
                                 !running && database != NULL && output != NULL);
}

/* ---- progress ----------------------------------------------------------- */

static char *
progress_text (const LkImportRate *rate)
{
  g_autofree char *count
      = rate->phase == LK_IMPORT_PHASE_READ
            /* Translators: "4,000 of 20,000 faces read" */
            ? g_strdup_printf (_ ("%'zu of %'zu faces read"), rate->done, rate->total)
            : rate->phase == LK_IMPORT_PHASE_DETECT
                  /* Translators: "400 of 2,000 photos searched" */
                  ? g_strdup_printf (_ ("%'zu of %'zu photos searched"), rate->done, rate->total)
                  /* Translators: "4,000 of 20,000 thumbnails cut" */
                  : g_strdup_printf (_ ("%'zu of %'zu thumbnails cut"), rate->done, rate->total);

  if (rate->per_second <= 0)
    return g_steal_pointer (&count);
  g_autofree char *speed = rate->per_second < 10
                               ? g_strdup_printf (_ ("%'.1f per second"), rate->per_second)
                               : g_strdup_printf (_ ("%'.0f per second"), rate->per_second);
  if (rate->seconds_left <= 0)
    return g_strdup_printf ("%s · %s", count, speed);
  double left = rate->seconds_left;
  g_autofree char *left_text = left < 60.0
                                   ? g_strdup_printf (_ ("about %.0f s left"), MAX (left, 1.0))
                                   : g_strdup_printf (_ ("about %.0f min left"), left / 60.0);
  return g_strdup_printf ("%s · %s · %s", count, speed, left_text);
}

static void
show_progress (LkImportDialog *self, const LkImportRate *rate, gboolean reported)
{
  if (!reported)
    {
      gtk_label_set_label (self->progress_phase,
                           self->source == LK_IMPORT_DIALOG_IMMICH ? _ ("Reading the database…")
                           : self->source == LK_IMPORT_DIALOG_PHOTOPRISM
                               ? _ ("Reading the index…")
                               : _ ("Loading the face models and listing the photos…"));
      gtk_progress_bar_pulse (self->progress_bar);
      return;
    }
  gtk_label_set_label (self->progress_phase,
                       rate->phase == LK_IMPORT_PHASE_READ
                           ? _ ("Reading the faces and their embeddings")
                       : rate->phase == LK_IMPORT_PHASE_DETECT
                           ? _ ("Finding and recognising the faces in the photos")
                           : _ ("Cutting the face thumbnails"));
  gtk_progress_bar_set_fraction (self->progress_bar,
                                 rate->total > 0 ? (double) rate->done / rate->total : 0.0);
  g_free (self->progress);
  self->progress = progress_text (rate);
  gtk_label_set_label (self->progress_detail, self->progress);
}

static gboolean
on_progress_idle (gpointer data)
{
  Job *job = data;

  g_mutex_lock (&job->lock);
  LkImportRate rate = job->rate;
  LkImportDialog *dialog = job->dialog;
  g_clear_pointer (&job->idle, g_source_unref);
  g_mutex_unlock (&job->lock);
  if (dialog != NULL && dialog->job == job)
    show_progress (dialog, &rate, TRUE);
  return G_SOURCE_REMOVE;
}

/* From the importer's threads (one at a time). */
static void
on_import_progress (LkImportPhase phase, gsize done, gsize total, gpointer data)
{
  Job *job = data;

  g_mutex_lock (&job->lock);
  lk_import_rate_update (&job->rate, phase, done, total, g_get_monotonic_time ());
  job->reported = TRUE;
  if (job->idle == NULL)
    {
      job->idle = g_idle_source_new ();
      g_source_set_priority (job->idle, G_PRIORITY_LOW);
      g_source_set_callback (job->idle, on_progress_idle, job_ref (job),
                             (GDestroyNotify) job_unref);
      g_source_attach (job->idle, job->context);
    }
  g_mutex_unlock (&job->lock);
}

/* Until the first progress call (connecting, counting), the bar pulses. */
static gboolean
on_pulse (gpointer data)
{
  LkImportDialog *self = data;

  gboolean reported = TRUE;
  if (self->job != NULL)
    {
      g_mutex_lock (&self->job->lock);
      reported = self->job->reported;
      g_mutex_unlock (&self->job->lock);
    }
  if (reported)
    {
      self->pulse_id = 0;
      return G_SOURCE_REMOVE;
    }
  gtk_progress_bar_pulse (self->progress_bar);
  return G_SOURCE_CONTINUE;
}

/* ---- the worker --------------------------------------------------------- */

void (*lk_import_dialog_worker_hook) (GTask *task);

/* Makes the output's missing parents, remembering them (outermost first). */
static gboolean
make_parents (Job *job, GError **error)
{
  g_autofree char *parent = g_path_get_dirname (job->output);
  g_autoptr (GPtrArray) missing = g_ptr_array_new_with_free_func (g_free);

  for (char *p = g_strdup (parent); p != NULL;)
    {
      if (g_file_test (p, G_FILE_TEST_EXISTS))
        {
          g_free (p);
          break;
        }
      g_ptr_array_insert (missing, 0, p);
      char *up = g_path_get_dirname (p);
      if (strcmp (up, p) == 0)
        {
          g_free (up);
          break;
        }
      p = up;
    }
  for (guint k = 0; k < missing->len; k++)
    {
      const char *dir = g_ptr_array_index (missing, k);
      if (g_mkdir (dir, 0755) != 0)
        {
          int saved = errno;
          g_set_error (error, LK_IMPORT_ERROR, LK_IMPORT_ERROR_OUTPUT,
                       "Cannot create the folder %s: %s", dir, g_strerror (saved));
          return FALSE;
        }
      g_ptr_array_add (job->made, g_strdup (dir));
    }
  return TRUE;
}

static void
remove_made (Job *job)
{
  for (guint k = job->made->len; k-- > 0;)
    g_rmdir (g_ptr_array_index (job->made, k));
}

static void
import_thread (GTask *task, gpointer source_object, gpointer task_data, GCancellable *cancellable)
{
  Job *job = task_data;
  GError *error = NULL;
  gboolean ok = make_parents (job, &error);

  if (ok && job->source == LK_IMPORT_DIALOG_IMMICH)
    {
      LkImportImmichOptions options
          = { job->database, job->owner, job->media, NULL, on_import_progress, job, &job->summary };
      ok = lk_import_immich (job->output, &options, cancellable, &error);
    }
  else if (ok && job->source == LK_IMPORT_DIALOG_PHOTOS)
    {
      const char *folders[] = { job->database, NULL };
      LkImportPhotosOptions options
          = { folders, LK_DETECTOR_HOG, 0, on_import_progress, job, &job->summary, NULL };
      ok = lk_import_photos (job->output, &options, cancellable, &error);
    }
  else if (ok)
    {
      LkImportPhotoprismOptions options
          = { job->database, job->media, job->originals, on_import_progress, job, &job->summary };
      ok = lk_import_photoprism (job->output, &options, cancellable, &error);
    }
  if (!ok)
    {
      remove_made (job);
      g_task_return_error (task, error);
    }
  else
    g_task_return_boolean (task, TRUE);
  if (lk_import_dialog_worker_hook != NULL)
    lk_import_dialog_worker_hook (task);
}

/* ---- running ------------------------------------------------------------ */

static char *
summary_text (const LkImportSummary *s)
{
  g_autoptr (GString) text = g_string_new (NULL);

  /* Translators: "Imported 20,000 faces of 8,000 photos" */
  g_string_printf (text, _ ("Imported %'zu faces of %'zu photos"), s->faces, s->photos);
  gsize without = s->missing_previews + s->undecodable_previews;
  if (without > 0)
    g_string_append_printf (text,
                            _ ("; %'zu without a thumbnail (their image is missing or "
                               "unreadable)"),
                            without);
  gsize refused = s->bad_empty + s->bad_not_image + s->bad_no_loader + s->bad_undecodable
                  + s->bad_too_large + s->bad_unreadable + s->bad_changed;
  if (refused > 0 && s->problems != NULL && s->problems->len > 0)
    g_string_append_printf (text,
                            g_dngettext (GETTEXT_PACKAGE, "; %'zu file skipped (%s)",
                                         "; %'zu files skipped, the first: %s", refused),
                            refused, (const char *) g_ptr_array_index (s->problems, 0));
  /* Say what "refused" means: the rule, and what became
   * of the faces (lk-import.c's count_refusals). */
  if (s->refused_assignments > 0)
    g_string_append_printf (
        text,
        g_dngettext (GETTEXT_PACKAGE,
                     "; %'zu face left unassigned: the source gave it to a second person, or "
                     "to a person already in its photo",
                     "; %'zu faces left unassigned: the source gave them to a second person, or "
                     "to a person already in their photo",
                     s->refused_assignments),
        s->refused_assignments);
  return g_string_free (g_steal_pointer (&text), FALSE);
}

static void
set_running (LkImportDialog *self, gboolean running)
{
  gtk_stack_set_visible_child_name (self->stack, running ? "progress" : "form");
  gtk_button_set_label (self->cancel_button, running ? _ ("_Stop") : _ ("_Cancel"));
  update_actions (self);
}

/* An Immich database field libpq could not even parse: "immich.local",
 * "immich:secret@host". Its words (missing "=" after "immich.local" in
 * connection info string) quote the field, password and all. */
static gboolean
is_unreadable_address (const char *message)
{
  return strstr (message, "connection info string") != NULL
         || strstr (message, "invalid URI") != NULL
         || strstr (message, "invalid connection option") != NULL
         || strstr (message, "unterminated quoted string") != NULL;
}

/* The importer's message as a new user can act on it, for the two a first
 * try meets most: libpq's and sqlite's words say what the library saw, not
 * what is wrong with the field or how a right one looks. NULL: the
 * importer's own message says it. */
static char *
plain_words (LkImportDialog *self, const Job *job, const GError *error)
{
  if (!g_error_matches (error, LK_IMPORT_ERROR, LK_IMPORT_ERROR_CONNECT))
    return NULL;
  if (job->source == LK_IMPORT_DIALOG_IMMICH && is_unreadable_address (error->message))
    return g_strdup (
        _ ("The Database field is not an address of a PostgreSQL database. A right one looks like "
           "postgresql://immich:PASSWORD@HOST:5432/immich: the user, password and database name "
           "are DB_USERNAME, DB_PASSWORD and DB_DATABASE_NAME in Immich’s .env, HOST the computer "
           "its database runs on."));
  if (job->source != LK_IMPORT_DIALOG_PHOTOPRISM)
    return NULL;

  g_autofree char *shown = lk_display_path (job->database);
  g_autofree char *inside = g_build_filename (job->database, "index.db", NULL);
  g_autofree char *inside_shown = lk_display_path (inside);
  g_autofree char *text = NULL;
  if (g_file_test (job->database, G_FILE_TEST_IS_DIR))
    text = g_file_test (inside, G_FILE_TEST_IS_REGULAR)
               /* Translators: "~/photoprism/storage is a folder: the index in it is …/index.db" */
               ? g_strdup_printf (_ ("%s is a folder: the index in it is %s. Choose that file."),
                                  shown, inside_shown)
               : g_strdup_printf (_ ("%s is a folder, not PhotoPrism’s index. The index is the "
                                     "file index.db in PhotoPrism’s storage folder "
                                     "(PHOTOPRISM_STORAGE_PATH), such as "
                                     "/photoprism/storage/index.db."),
                                  shown);
  /* sqlite says "disk I/O error" of a folder, "unable to open database
   * file" of a file that is not there or not readable. */
  else if (strstr (error->message, "unable to open database file") == NULL)
    return NULL;
  else if (!g_file_test (job->database, G_FILE_TEST_EXISTS))
    text
        = g_strdup_printf (_ ("There is no file %s. PhotoPrism’s index is the file index.db in its "
                              "storage folder (PHOTOPRISM_STORAGE_PATH), such as "
                              "/photoprism/storage/index.db."),
                           shown);
  else
    text = g_strdup_printf (_ ("%s cannot be read with your permissions: PhotoPrism’s container "
                               "may own it. Ask for read access to it and its folder, or copy it "
                               "somewhere you can read."),
                            shown);
  /* The importer's own words, for a bug report. */
  return g_strdup_printf ("%s\n\n%s", text, error->message);
}

static void
on_import_done (GObject *source, GAsyncResult *result, gpointer user_data)
{
  g_autoptr (LkImportDialog) self = user_data;
  Job *job = g_task_get_task_data (G_TASK (result));
  g_autoptr (GError) error = NULL;
  gboolean ok = g_task_propagate_boolean (G_TASK (result), &error);
  GApplication *app = g_application_get_default ();

  g_mutex_lock (&job->lock);
  job->dialog = NULL;
  g_mutex_unlock (&job->lock);
  if (app != NULL)
    g_application_release (app);
  if (self->job != job)
    return;
  g_clear_pointer (&self->job, job_unref);
  g_clear_handle_id (&self->pulse_id, g_source_remove);
  if (self->disposed)
    return; /* destroyed with its window meanwhile */
  g_clear_pointer (&self->progress, g_free);

  if (ok)
    {
      g_autofree char *summary = summary_text (&job->summary);
      g_signal_emit (self, signals[SIGNAL_IMPORTED], 0, job->output, summary);
      gtk_window_destroy (GTK_WINDOW (self));
      return;
    }
  if (self->close_when_done)
    {
      gtk_window_destroy (GTK_WINDOW (self));
      return;
    }
  set_running (self, FALSE);
  if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    show_message (self, NULL, _ ("The import was stopped; nothing was written."));
  else
    {
      g_autofree char *plain = plain_words (self, job, error);
      show_message (self, plain != NULL ? plain : error->message, NULL);
    }
  gtk_widget_grab_focus (GTK_WIDGET (self->import_button));
}

void
lk_import_dialog_start (LkImportDialog *self)
{
  g_return_if_fail (LK_IS_IMPORT_DIALOG (self));

  g_autofree char *database = NULL;
  g_autofree char *output = entry_path (self->output_entry);
  if (self->job != NULL || !check_models (self))
    return;
  take_password (self);
  database = self->source == LK_IMPORT_DIALOG_IMMICH ? immich_address (self)
                                                     : entry_path (self->database_entry);
  if (self->source == LK_IMPORT_DIALOG_PHOTOS && database != NULL && !g_path_is_absolute (database))
    {
      show_message (self, _ ("Choose the photo folder by its full path (starting with / or ~)."),
                    NULL);
      gtk_widget_grab_focus (GTK_WIDGET (self->database_entry));
      return;
    }
  if (database == NULL || output == NULL)
    return;
  if (!g_path_is_absolute (output))
    {
      show_message (
          self, _ ("Choose the folder for the library by its full path (starting with / or ~)."),
          NULL);
      gtk_widget_grab_focus (GTK_WIDGET (self->output_entry));
      return;
    }

  Job *job = g_new0 (Job, 1);
  g_atomic_ref_count_init (&job->refs);
  g_mutex_init (&job->lock);
  job->source = self->source;
  job->database = g_steal_pointer (&database);
  job->media = entry_path (self->media_entry);
  job->originals = entry_path (self->originals_entry);
  job->owner = entry_text (self->owner_entry);
  job->output = g_steal_pointer (&output);
  job->cancellable = g_cancellable_new ();
  job->context = g_main_context_ref_thread_default ();
  job->made = g_ptr_array_new_with_free_func (g_free);
  job->dialog = self;
  lk_import_rate_init (&job->rate, g_get_monotonic_time ());
  self->job = job;

  show_message (self, NULL, NULL);
  /* A photo folder is no source to import from: Likeness finds the faces. */
  g_autofree char *title
      = self->source == LK_IMPORT_DIALOG_PHOTOS
            ? g_strdup (_ ("Finding the Faces in Your Photos"))
            : g_strdup_printf (_ ("Importing from %s"), source_name (self->source));
  gtk_label_set_label (self->progress_title, title);
  gtk_label_set_label (self->progress_detail, " ");
  gtk_progress_bar_set_fraction (self->progress_bar, 0.0);
  show_progress (self, &job->rate, FALSE);
  set_running (self, TRUE);
  gtk_widget_grab_focus (GTK_WIDGET (self->cancel_button));
  g_clear_handle_id (&self->pulse_id, g_source_remove);
  self->pulse_id = g_timeout_add (100, on_pulse, self);

  GApplication *app = g_application_get_default ();
  if (app != NULL)
    g_application_hold (app);
  g_autoptr (GTask) task = g_task_new (NULL, job->cancellable, on_import_done, g_object_ref (self));
  g_task_set_source_tag (task, lk_import_dialog_start);
  g_task_set_task_data (task, job_ref (job), (GDestroyNotify) job_unref);
  g_task_run_in_thread (task, import_thread);
}

void
lk_import_dialog_cancel (LkImportDialog *self)
{
  g_return_if_fail (LK_IS_IMPORT_DIALOG (self));

  if (self->job != NULL)
    {
      g_cancellable_cancel (self->job->cancellable);
      gtk_label_set_label (self->progress_phase, _ ("Stopping…"));
    }
}

gboolean
lk_import_dialog_is_running (LkImportDialog *self)
{
  g_return_val_if_fail (LK_IS_IMPORT_DIALOG (self), FALSE);
  return self->job != NULL;
}

/* ---- choosers ----------------------------------------------------------- */

static void
take_chosen (GtkEntry *entry, GFile *file)
{
  g_autofree char *path = file != NULL ? g_file_get_path (file) : NULL;
  if (path != NULL)
    set_entry_path (entry, path);
}

/* `entry` is a template child of `parent`, which lk_file_dialog keeps alive
 * until the choice is made: no reference of its own is needed. */
static void
on_chosen (GtkWindow *parent, GFile *file, gpointer user_data)
{
  take_chosen (user_data, file);
}

/* A file or folder chooser for `entry`, starting where it points. */
static void
choose (LkImportDialog *self, GtkEntry *entry, gboolean folder, const char *title)
{
  g_autofree char *current = entry_path (entry);
  g_autoptr (GFile) start = NULL;

  /* Start where the entry points, or at the nearest folder that exists
   * (the default output is usually not made yet). */
  for (char *p = current != NULL ? g_strdup (current) : NULL; p != NULL;)
    {
      if (g_file_test (p, G_FILE_TEST_IS_DIR) || (!folder && g_file_test (p, G_FILE_TEST_EXISTS)))
        {
          start = g_file_new_for_path (p);
          g_free (p);
          break;
        }
      char *up = g_path_get_dirname (p);
      gboolean top = strcmp (up, p) == 0;
      g_free (p);
      p = top ? (g_free (up), NULL) : up;
    }
  lk_file_dialog_choose (GTK_WINDOW (self), title, _ ("_Select"), folder, start, on_chosen, entry);
}

static void
on_database_button (GtkButton *button, LkImportDialog *self)
{
  if (self->source == LK_IMPORT_DIALOG_PHOTOS)
    choose (self, self->database_entry, TRUE, _ ("Choose the Photo Folder"));
  else
    choose (self, self->database_entry, FALSE, _ ("Choose PhotoPrism’s Index (index.db)"));
}

static void
on_media_button (GtkButton *button, LkImportDialog *self)
{
  choose (self, self->media_entry, TRUE,
          self->source == LK_IMPORT_DIALOG_IMMICH ? _ ("Choose Immich’s Media Folder")
                                                  : _ ("Choose PhotoPrism’s Storage Folder"));
}

static void
on_originals_button (GtkButton *button, LkImportDialog *self)
{
  choose (self, self->originals_entry, TRUE, _ ("Choose PhotoPrism’s Originals Folder"));
}

static void
on_output_button (GtkButton *button, LkImportDialog *self)
{
  choose (self, self->output_entry, TRUE, _ ("Choose Where the Library Goes"));
}

/* ---- fields ------------------------------------------------------------- */

static void
on_output_changed (GtkEditable *editable, LkImportDialog *self)
{
  update_actions (self);
}

static void
on_output_edited (GtkEditable *editable, LkImportDialog *self)
{
  self->output_chosen = TRUE;
}

static void
on_database_changed (GtkEditable *editable, LkImportDialog *self)
{
  if (!self->output_chosen)
    {
      g_autofree char *database = entry_text (self->database_entry);
      g_autofree char *output = default_output (self->source, database);
      GtkEditable *out = GTK_EDITABLE (self->output_entry);
      g_signal_handlers_block_by_func (out, on_output_edited, self);
      set_entry_path (self->output_entry, output);
      g_signal_handlers_unblock_by_func (out, on_output_edited, self);
    }
  update_actions (self);
}

static void
set_field (GtkLabel *label, const char *mnemonic, GtkEntry *entry, const char *placeholder,
           GtkLabel *hint, const char *hint_text)
{
  gtk_label_set_text_with_mnemonic (label, mnemonic);
  gtk_entry_set_placeholder_text (entry, placeholder);
  gtk_label_set_label (hint, hint_text);
  /* The label names the entry for screen readers (the mnemonic widget) and
   * the hint describes it. */
  gtk_accessible_update_relation (GTK_ACCESSIBLE (entry), GTK_ACCESSIBLE_RELATION_DESCRIBED_BY,
                                  hint, NULL, -1);
}

/* The command that fetches the models in a build from source: Debian's dlib
 * source package, each file checked against the SHA-256 the engine expects,
 * into DIR/models (the first folder the models are looked up in when no
 * LIKENESS_MODELS_DIR is set). */
static char *
models_command (void)
{
  g_autofree char *parent = g_build_filename (g_get_user_data_dir (), "likeness", NULL);
  g_autofree char *shown = lk_display_path (parent);
  return g_strdup_printf (".ci/dlib-source %s", shown);
}

/* A photo folder's import needs dlib's face models: without them the dialog
 * says so and how to get them instead of showing the form. TRUE when they
 * are there (or the source needs none). */
static gboolean
check_models (LkImportDialog *self)
{
  g_auto (GStrv) dirs = NULL;
  g_auto (GStrv) missing = self->source == LK_IMPORT_DIALOG_PHOTOS
                               ? lk_import_photos_missing_models (LK_DETECTOR_HOG, &dirs)
                               : NULL;
  gboolean have = missing == NULL || missing[0] == NULL;

  gtk_widget_set_visible (GTK_WIDGET (self->import_button), have);
  gtk_button_set_label (self->cancel_button, have ? _ ("_Cancel") : _ ("_Close"));
  if (have)
    {
      if (g_strcmp0 (gtk_stack_get_visible_child_name (self->stack), "models") == 0)
        gtk_stack_set_visible_child_name (self->stack, "form");
      return TRUE;
    }

  g_autoptr (GString) looked = g_string_new (NULL);
  for (char **d = dirs; *d != NULL; d++)
    {
      g_autofree char *shown = lk_display_path (*d);
      g_string_append_printf (looked, "%s%s", looked->len > 0 ? ", " : "", shown);
    }
  g_autofree char *files = g_strjoinv (", ", missing);
  gboolean flatpak = g_file_test ("/.flatpak-info", G_FILE_TEST_EXISTS);
  g_autofree char *command
      = flatpak ? g_strdup_printf ("flatpak install --reinstall %s", APP_ID) : models_command ();
  gtk_label_set_label (
      self->models_label,
      flatpak ? _ ("To find faces, Likeness needs dlib’s face models. The Flatpak of Likeness "
                   "brings them, but this installation lacks them: install Likeness again.")
              : _ ("To find faces, Likeness needs dlib’s face models, and they are not on this "
                   "computer. In a build from source, this command in Likeness’s source folder "
                   "fetches them from Debian’s dlib source package, checks each file and puts "
                   "them where Likeness looks:"));
  gtk_label_set_label (self->models_command, command);
  g_autofree char *after = g_strdup_printf (
      /* Translators: the model files missing, then the folders looked in */
      _ ("Then press Check Again. Missing: %s. Looked in: %s. Likeness itself downloads "
         "nothing, and your photos stay on this computer."),
      files, looked->str);
  gtk_label_set_label (self->models_after, after);
  gtk_stack_set_visible_child_name (self->stack, "models");
  gtk_widget_grab_focus (self->models_check);
  return FALSE;
}

static void
setup_source (LkImportDialog *self)
{
  gboolean immich = self->source == LK_IMPORT_DIALOG_IMMICH;
  gboolean photos = self->source == LK_IMPORT_DIALOG_PHOTOS;
  g_autofree char *title = photos
                               ? g_strdup (_ ("Add a Photo Folder"))
                               : g_strdup_printf (_ ("Import from %s"), source_name (self->source));
  gtk_window_set_title (GTK_WINDOW (self), title);

  if (photos)
    {
      gtk_label_set_label (
          self->intro_label,
          _ ("Likeness finds the faces in your photos, on this computer, and makes a library of "
             "them. Your photos are only read: nothing is written into their folder."));
      set_field (self->database_label, _ ("_Photo folder"), self->database_entry, "~/Pictures",
                 self->database_hint,
                 _ ("Its subfolders are searched too; hidden folders are skipped."));
      gtk_widget_set_tooltip_text (GTK_WIDGET (self->database_button), _ ("Choose a folder"));
      gtk_accessible_update_property (GTK_ACCESSIBLE (self->database_button),
                                      GTK_ACCESSIBLE_PROPERTY_LABEL, _ ("Choose a folder"), -1);
    }
  else if (immich)
    {
      gtk_label_set_label (
          self->intro_label,
          _ ("Likeness reads the faces Immich found, their embeddings and the people you named, "
             "and makes a library of them. Immich’s database is only read, never changed."));
      set_field (self->database_label, _ ("_Database"), self->database_entry,
                 "postgresql://immich:PASSWORD@localhost:5432/immich?sslmode=disable",
                 self->database_hint,
                 _ ("The address of Immich’s PostgreSQL database with its user (DB_USERNAME in "
                    "Immich’s .env), and below it the password (DB_PASSWORD), kept hidden: a "
                    "password typed into the address moves there."));
      set_field (self->media_label, _ ("_Media folder"), self->media_entry, _ ("Optional"),
                 self->media_hint,
                 _ ("Immich’s upload location (UPLOAD_LOCATION) as this computer sees it: the "
                    "thumbnails are cut from the previews in it. Without it the faces come "
                    "without thumbnails."));
      set_field (self->owner_label, _ ("O_wner"), self->owner_entry, _ ("Everyone’s photos"),
                 self->owner_hint, _ ("Only this user’s photos: an email address or user id."));
    }
  else
    {
      gtk_label_set_label (
          self->intro_label,
          _ ("Likeness reads the faces PhotoPrism found, their embeddings and the people you "
             "named, and makes a library of them. PhotoPrism’s index is only read, never "
             "changed."));
      set_field (self->database_label, _ ("_Index"), self->database_entry,
                 "/photoprism/storage/index.db", self->database_hint,
                 _ ("PhotoPrism’s SQLite index, index.db in its storage folder. An index kept in "
                    "MariaDB cannot be read yet."));
      set_field (self->media_label, _ ("_Storage folder"), self->media_entry, _ ("Optional"),
                 self->media_hint,
                 _ ("PhotoPrism’s storage folder: thumbnails are cut from its cached images when "
                    "the original is not found."));
      set_field (self->originals_label, _ ("_Originals folder"), self->originals_entry,
                 _ ("Optional"), self->originals_hint,
                 _ ("PhotoPrism’s originals folder: thumbnails are cut from the photos "
                    "themselves."));
      gtk_widget_set_tooltip_text (GTK_WIDGET (self->database_button), _ ("Choose the index file"));
      gtk_accessible_update_property (GTK_ACCESSIBLE (self->database_button),
                                      GTK_ACCESSIBLE_PROPERTY_LABEL, _ ("Choose the index file"),
                                      -1);
    }
  set_field (self->output_label, _ ("Save _library in"), self->output_entry, "", self->output_hint,
             photos   ? _ ("A new or empty folder, or a library made from photos before: adding "
                             "the folder again searches only new photos and keeps your decisions.")
             : immich ? _ ("A new or empty folder, or a library imported from Immich before: "
                           "importing again updates it and keeps your decisions.")
                      : _ ("A new or empty folder, or a library imported from PhotoPrism before: "
                           "importing again updates it and keeps your decisions."));

  /* Only what this source's importer reads. */
  gtk_widget_set_visible (GTK_WIDGET (self->database_button), !immich);
  gtk_widget_set_visible (self->password_entry, immich);
  gtk_widget_set_visible (self->originals_field, !immich && !photos);
  gtk_widget_set_visible (self->owner_field, immich);
  gtk_widget_set_visible (self->media_field, !photos);

  GtkButton *folder_buttons[] = { self->media_button, self->originals_button, self->output_button };
  for (gsize k = 0; k < G_N_ELEMENTS (folder_buttons); k++)
    {
      gtk_widget_set_tooltip_text (GTK_WIDGET (folder_buttons[k]), _ ("Choose a folder"));
      gtk_accessible_update_property (GTK_ACCESSIBLE (folder_buttons[k]),
                                      GTK_ACCESSIBLE_PROPERTY_LABEL, _ ("Choose a folder"), -1);
    }

  g_autofree char *output = default_output (self->source, NULL);
  set_entry_path (self->output_entry, output);
  update_actions (self);
  check_models (self);
}

/* ---- GObject ------------------------------------------------------------ */

static void
action_start (GtkWidget *widget, const char *name, GVariant *parameter)
{
  lk_import_dialog_start (LK_IMPORT_DIALOG (widget));
}

static void
action_check_models (GtkWidget *widget, const char *name, GVariant *parameter)
{
  LkImportDialog *self = LK_IMPORT_DIALOG (widget);

  if (check_models (self))
    gtk_widget_grab_focus (GTK_WIDGET (self->database_entry));
}

static void
action_copy_command (GtkWidget *widget, const char *name, GVariant *parameter)
{
  LkImportDialog *self = LK_IMPORT_DIALOG (widget);

  gdk_clipboard_set_text (gtk_widget_get_clipboard (widget),
                          gtk_label_get_label (self->models_command));
}

static void
action_cancel (GtkWidget *widget, const char *name, GVariant *parameter)
{
  LkImportDialog *self = LK_IMPORT_DIALOG (widget);

  if (self->job != NULL)
    lk_import_dialog_cancel (self);
  else
    gtk_window_close (GTK_WINDOW (self));
}

/* Closing while an import runs stops it; the dialog goes once the importer
 * has removed what it wrote. */
static gboolean
lk_import_dialog_close_request (GtkWindow *window)
{
  LkImportDialog *self = LK_IMPORT_DIALOG (window);

  if (self->job == NULL)
    return GTK_WINDOW_CLASS (lk_import_dialog_parent_class)->close_request (window);
  self->close_when_done = TRUE;
  lk_import_dialog_cancel (self);
  gtk_widget_set_visible (GTK_WIDGET (self), FALSE);
  return TRUE;
}

/* gtk_window_destroy () (the application quitting, say) unrealizes the
 * dialog but disposes it only when the running import's callback lets go
 * of it: the import is stopped here so that it does. */
static void
lk_import_dialog_unrealize (GtkWidget *widget)
{
  LkImportDialog *self = LK_IMPORT_DIALOG (widget);

  if (self->job != NULL)
    {
      self->close_when_done = TRUE;
      g_cancellable_cancel (self->job->cancellable);
    }
  GTK_WIDGET_CLASS (lk_import_dialog_parent_class)->unrealize (widget);
}

static void
lk_import_dialog_dispose (GObject *object)
{
  LkImportDialog *self = LK_IMPORT_DIALOG (object);

  /* Destroyed with its parent while importing: stop; on_import_done (its
   * data holds this object) releases the application. */
  self->disposed = TRUE;
  g_clear_handle_id (&self->pulse_id, g_source_remove);
  if (self->job != NULL)
    {
      g_cancellable_cancel (self->job->cancellable);
      g_mutex_lock (&self->job->lock);
      self->job->dialog = NULL;
      g_mutex_unlock (&self->job->lock);
    }
  gtk_widget_dispose_template (GTK_WIDGET (self), LK_TYPE_IMPORT_DIALOG);
  G_OBJECT_CLASS (lk_import_dialog_parent_class)->dispose (object);
}

static void
lk_import_dialog_finalize (GObject *object)
{
  LkImportDialog *self = LK_IMPORT_DIALOG (object);

  g_free (self->error);
  g_free (self->note);
  g_free (self->progress);
  G_OBJECT_CLASS (lk_import_dialog_parent_class)->finalize (object);
}

static void
lk_import_dialog_class_init (LkImportDialogClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);
  GtkWindowClass *window_class = GTK_WINDOW_CLASS (klass);

  object_class->dispose = lk_import_dialog_dispose;
  object_class->finalize = lk_import_dialog_finalize;
  window_class->close_request = lk_import_dialog_close_request;
  widget_class->unrealize = lk_import_dialog_unrealize;

  /* ::imported (folder, summary): the library is written in `folder`;
   * `summary` says what came across, for a notification. */
  signals[SIGNAL_IMPORTED]
      = g_signal_new ("imported", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL,
                      G_TYPE_NONE, 2, G_TYPE_STRING, G_TYPE_STRING);

  g_type_ensure (LK_TYPE_WRAP_BOX);
  gtk_widget_class_set_template_from_resource (widget_class,
                                               RESOURCE_PREFIX "/lk-import-dialog.ui");
#define BIND(name) gtk_widget_class_bind_template_child (widget_class, LkImportDialog, name)
  BIND (stack);
  BIND (import_button);
  BIND (cancel_button);
  BIND (intro_label);
  BIND (message_box);
  BIND (message_label);
  BIND (database_label);
  BIND (database_entry);
  BIND (password_entry);
  BIND (database_button);
  BIND (database_hint);
  BIND (media_label);
  BIND (media_entry);
  BIND (media_button);
  BIND (media_hint);
  BIND (media_field);
  BIND (originals_field);
  BIND (originals_label);
  BIND (originals_entry);
  BIND (originals_button);
  BIND (originals_hint);
  BIND (owner_field);
  BIND (owner_label);
  BIND (owner_entry);
  BIND (owner_hint);
  BIND (output_label);
  BIND (output_entry);
  BIND (output_button);
  BIND (output_hint);
  BIND (progress_title);
  BIND (progress_phase);
  BIND (progress_bar);
  BIND (progress_detail);
  BIND (models_label);
  BIND (models_command);
  BIND (models_after);
  BIND (models_check);
#undef BIND

  gtk_widget_class_install_action (widget_class, "import.start", NULL, action_start);
  gtk_widget_class_install_action (widget_class, "import.cancel", NULL, action_cancel);
  gtk_widget_class_install_action (widget_class, "import.check-models", NULL, action_check_models);
  gtk_widget_class_install_action (widget_class, "import.copy-command", NULL, action_copy_command);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_Escape, 0, "import.cancel", NULL);
}

static void
lk_import_dialog_init (LkImportDialog *self)
{
  gtk_widget_init_template (GTK_WIDGET (self));
  g_signal_connect (self->database_entry, "changed", G_CALLBACK (on_database_changed), self);
  g_signal_connect (self->output_entry, "changed", G_CALLBACK (on_output_changed), self);
  g_signal_connect (self->database_button, "clicked", G_CALLBACK (on_database_button), self);
  g_signal_connect (self->media_button, "clicked", G_CALLBACK (on_media_button), self);
  g_signal_connect (self->originals_button, "clicked", G_CALLBACK (on_originals_button), self);
  g_signal_connect (self->output_button, "clicked", G_CALLBACK (on_output_button), self);
  GtkEventController *focus = gtk_event_controller_focus_new ();
  g_signal_connect (focus, "leave", G_CALLBACK (on_database_focus_leave), self);
  gtk_widget_add_controller (GTK_WIDGET (self->database_entry), focus);
  gtk_window_set_default_widget (GTK_WINDOW (self), GTK_WIDGET (self->import_button));
}

/* ---- public ------------------------------------------------------------- */

gboolean
lk_import_dialog_available (LkImportDialogSource source)
{
  if (source == LK_IMPORT_DIALOG_PHOTOS)
    return lk_import_photos_available ();
  return source == LK_IMPORT_DIALOG_IMMICH ? lk_import_immich_available ()
                                           : lk_import_photoprism_available ();
}

/* Not destroy-with-parent: GTK then keeps a pointer to the parent, which
 * the dialog's dispose uses — later than the parent's when a running import
 * (its GTask's callback) holds the dialog. The link is cut while the parent lives. */
static void
on_parent_destroy (LkImportDialog *self)
{
  if (self->job != NULL)
    {
      self->close_when_done = TRUE;
      g_cancellable_cancel (self->job->cancellable);
    }
  gtk_window_set_transient_for (GTK_WINDOW (self), NULL);
  gtk_window_destroy (GTK_WINDOW (self));
}

LkImportDialog *
lk_import_dialog_new (GtkWindow *parent, LkImportDialogSource source)
{
  LkImportDialog *self = g_object_new (LK_TYPE_IMPORT_DIALOG, NULL);

  if (parent != NULL)
    {
      gtk_window_set_transient_for (GTK_WINDOW (self), parent);
      gtk_window_set_application (GTK_WINDOW (self), gtk_window_get_application (parent));
      g_signal_connect_object (parent, "destroy", G_CALLBACK (on_parent_destroy), self,
                               G_CONNECT_SWAPPED);
    }
  self->source = source;
  setup_source (self);
  /* Typing in the output entry from now on is the user's choice; the
   * default above follows the database until then. */
  g_signal_connect (self->output_entry, "changed", G_CALLBACK (on_output_edited), self);
  return self;
}

gboolean
lk_import_dialog_is_photo_folder (const char *folder)
{
  g_return_val_if_fail (folder != NULL, FALSE);
  return lk_import_photos_probe (folder);
}

LkImportDialogSource
lk_import_dialog_get_source (LkImportDialog *self)
{
  g_return_val_if_fail (LK_IS_IMPORT_DIALOG (self), LK_IMPORT_DIALOG_IMMICH);
  return self->source;
}

void
lk_import_dialog_set_database (LkImportDialog *self, const char *database)
{
  g_return_if_fail (LK_IS_IMPORT_DIALOG (self));
  gtk_editable_set_text (GTK_EDITABLE (self->database_entry), database != NULL ? database : "");
  take_password (self);
}

char *
lk_import_dialog_get_database (LkImportDialog *self)
{
  g_return_val_if_fail (LK_IS_IMPORT_DIALOG (self), NULL);
  return self->source == LK_IMPORT_DIALOG_IMMICH ? immich_address (self)
                                                 : entry_path (self->database_entry);
}

void
lk_import_dialog_set_media (LkImportDialog *self, const char *folder)
{
  g_return_if_fail (LK_IS_IMPORT_DIALOG (self));
  set_entry_path (self->media_entry, folder);
}

void
lk_import_dialog_set_originals (LkImportDialog *self, const char *folder)
{
  g_return_if_fail (LK_IS_IMPORT_DIALOG (self));
  set_entry_path (self->originals_entry, folder);
}

void
lk_import_dialog_set_owner (LkImportDialog *self, const char *owner)
{
  g_return_if_fail (LK_IS_IMPORT_DIALOG (self));
  gtk_editable_set_text (GTK_EDITABLE (self->owner_entry), owner != NULL ? owner : "");
}

void
lk_import_dialog_set_output (LkImportDialog *self, const char *folder)
{
  g_return_if_fail (LK_IS_IMPORT_DIALOG (self));
  set_entry_path (self->output_entry, folder);
  self->output_chosen = TRUE;
}

char *
lk_import_dialog_get_output (LkImportDialog *self)
{
  g_return_val_if_fail (LK_IS_IMPORT_DIALOG (self), NULL);
  return entry_path (self->output_entry);
}

const char *
lk_import_dialog_get_error (LkImportDialog *self)
{
  g_return_val_if_fail (LK_IS_IMPORT_DIALOG (self), NULL);
  return self->error;
}

const char *
lk_import_dialog_get_note (LkImportDialog *self)
{
  g_return_val_if_fail (LK_IS_IMPORT_DIALOG (self), NULL);
  return self->note;
}

const char *
lk_import_dialog_get_page (LkImportDialog *self)
{
  g_return_val_if_fail (LK_IS_IMPORT_DIALOG (self), NULL);
  return gtk_stack_get_visible_child_name (self->stack);
}

const char *
lk_import_dialog_get_progress (LkImportDialog *self)
{
  g_return_val_if_fail (LK_IS_IMPORT_DIALOG (self), NULL);
  return self->progress;
}
