/* lk-cli-import.c — `likeness-cli import immich|photoprism OUTDIR --database …`
 *
 * Progress goes to stderr (faces read, thumbnails cut, per second, time
 * left), the summary to stdout; Ctrl+C
 * cancels the import between batches and the engine removes what it had
 * written beside OUTDIR, so an interrupted import leaves no library.
 */
#include "config.h"

#include <glib/gi18n.h>
#include <glib-unix.h>
#include <stdio.h>
#include <string.h>

#include "lk-cli.h"
#include "import/lk-import-immich.h"
#include "import/lk-import-photoprism.h"
#include "import/lk-import-photos.h"

typedef struct
{
  LkImportRate rate;
  gint64 last;
  gsize faces_found; /* import photos */
} Progress;

static void
on_progress (LkImportPhase phase, gsize done, gsize total, gpointer data)
{
  Progress *p = data;
  gint64 now = g_get_monotonic_time ();

  if (phase != p->rate.phase)
    p->last = 0;
  lk_import_rate_update (&p->rate, phase, done, total, now);

  if (now - p->last < G_USEC_PER_SEC / 4 && done < total)
    return;
  p->last = now;
  /* "3 of 40 faces read": the noun agrees with the total. */
  g_autofree char *counted
      = phase == LK_IMPORT_PHASE_READ ? g_strdup_printf (
            ngettext ("%zu of %zu face read", "%zu of %zu faces read", total), done, total)
        : phase == LK_IMPORT_PHASE_DETECT
            ? g_strdup_printf (
                ngettext ("%zu of %zu photo searched", "%zu of %zu photos searched", total), done,
                total)
            : g_strdup_printf (
                ngettext ("%zu of %zu thumbnail cut", "%zu of %zu thumbnails cut", total), done,
                total);
  /* One line, rewritten in place ("\r" is no text to translate). */
  fputc ('\r', stderr);
  if (phase == LK_IMPORT_PHASE_DETECT)
    {
      g_autofree char *faces
          = g_strdup_printf (ngettext ("%zu face", "%zu faces", p->faces_found), p->faces_found);
      if (p->rate.seconds_left > 0)
        /* TRANSLATORS: "3 of 40 photos searched", "7 faces" */
        fprintf (stderr, _ ("%s, %s, %.1f photos/s, %.0f s left  "), counted, faces,
                 p->rate.per_second, p->rate.seconds_left);
      else
        fprintf (stderr, "%s, %s  ", counted, faces);
    }
  else if (p->rate.seconds_left > 0)
    /* TRANSLATORS: %s is "3 of 40 faces read" or "3 of 40 thumbnails cut" */
    fprintf (stderr, _ ("%s, %.0f/s, %.0f s left  "), counted, p->rate.per_second,
             p->rate.seconds_left);
  else
    fprintf (stderr, _ ("%s, %.0f/s  "), counted, p->rate.per_second);
  if (done >= total)
    fputc ('\n', stderr);
}

static void
print_summary (const char *outdir, const LkImportSummary *s)
{
  g_autofree char *faces = g_strdup_printf (ngettext ("%zu face", "%zu faces", s->faces), s->faces);
  g_autofree char *photos
      = g_strdup_printf (ngettext ("%zu photo", "%zu photos", s->photos), s->photos);
  /* TRANSLATORS: "Imported 4 faces of 3 photos into OUTDIR (model buffalo_l)" */
  printf (_ ("Imported %s of %s into %s (model %s)\n"), faces, photos, outdir, s->model);
  if (s->model_known)
    printf ("calibration=prior of %s\n", s->model);
  else
    printf ("calibration=default: no prior is known for the model %s; fit one with "
            "likeness-cli calibrate\n",
            s->model);
  printf ("thumbnails=%zu missing_previews=%zu undecodable_previews=%zu\n", s->thumbnails,
          s->missing_previews, s->undecodable_previews);
  if (s->problems != NULL || s->photos_searched > 0)
    {
      g_autofree char *formats = lk_import_photos_formats ();
      printf (_ ("formats read: %s\n"), formats);
      printf ("photos_searched=%zu photos_with_faces=%zu photos_reused=%zu\n", s->photos_searched,
              s->photos_with_faces, s->photos_reused);
      printf ("refused: empty=%zu not_image=%zu no_loader=%zu undecodable=%zu too_large=%zu "
              "unreadable=%zu changed=%zu\n",
              s->bad_empty, s->bad_not_image, s->bad_no_loader, s->bad_undecodable,
              s->bad_too_large, s->bad_unreadable, s->bad_changed);
      for (guint k = 0; s->problems != NULL && k < s->problems->len; k++)
        printf ("  %s\n", (const char *) g_ptr_array_index (s->problems, k));
    }
  else
    printf ("people=%zu refused_assignments=%zu\n", s->people, s->refused_assignments);
  if (s->first_problem != NULL)
    printf (_ ("first problem: %s\n"), s->first_problem);
}

static gboolean
on_sigint (gpointer data)
{
  g_cancellable_cancel (data);
  return G_SOURCE_CONTINUE;
}

typedef struct
{
  const char *outdir;
  gboolean photoprism;
  gboolean photos;
  LkImportPhotosOptions photos_options;
  LkImportImmichOptions immich;
  LkImportPhotoprismOptions photoprism_options;
  GCancellable *cancellable;
  GError *error;
  gboolean ok;
  gboolean done;
} Job;

static gpointer
import_thread (gpointer data)
{
  Job *job = data;
  job->ok = job->photos ? lk_import_photos (job->outdir, &job->photos_options, job->cancellable,
                                            &job->error)
            : job->photoprism
                ? lk_import_photoprism (job->outdir, &job->photoprism_options, job->cancellable,
                                        &job->error)
                : lk_import_immich (job->outdir, &job->immich, job->cancellable, &job->error);
  g_atomic_int_set (&job->done, TRUE);
  g_main_context_wakeup (NULL);
  return NULL;
}

/* The options of every source; each source checks that only its own
 * were given. */
typedef struct
{
  char *database, *owner, *media, *storage, *originals, *model, *detector;
  char **photo_folders;
  int threads;
} Args;

static void
args_clear (Args *a)
{
  g_free (a->database);
  g_free (a->owner);
  g_free (a->media);
  g_free (a->storage);
  g_free (a->originals);
  g_free (a->model);
  g_free (a->detector);
  g_strfreev (a->photo_folders);
}
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (Args, args_clear)

/* import photos: folders given, no server option, a known detector, a
 * sane thread count. FALSE (with a message) on bad usage. */
static gboolean
check_photos_options (const Args *a, LkDetectorKind *detector_kind)
{
  if (a->photo_folders == NULL || a->photo_folders[0] == NULL)
    {
      fprintf (stderr, _ ("likeness-cli import photos: --photos DIR is required\n"));
      return FALSE;
    }
  if (a->database != NULL || a->owner != NULL || a->media != NULL || a->model != NULL
      || a->storage != NULL || a->originals != NULL)
    {
      fprintf (stderr, _ ("likeness-cli import photos: --database, --owner, --media, --model, "
                          "--storage and --originals are Immich's and PhotoPrism's\n"));
      return FALSE;
    }
  if (a->detector != NULL && strcmp (a->detector, "cnn") == 0)
    *detector_kind = LK_DETECTOR_CNN;
  else if (a->detector != NULL && strcmp (a->detector, "hog") != 0)
    {
      fprintf (stderr, _ ("likeness-cli import photos: unknown --detector “%s” (hog or cnn)\n"),
               a->detector);
      return FALSE;
    }
  if (a->threads < 0 || a->threads > 1024)
    {
      fprintf (stderr, _ ("likeness-cli import photos: --threads %d is not 1 to 1024\n"),
               a->threads);
      return FALSE;
    }
  return TRUE;
}

/* import immich|photoprism: a database, and only that server's options. */
static gboolean
check_server_options (const char *source, gboolean photoprism, const Args *a)
{
  if (a->photo_folders != NULL || a->detector != NULL || a->threads != 0)
    {
      fprintf (stderr,
               _ ("likeness-cli import %s: --photos, --detector and --threads are for "
                  "import photos\n"),
               source);
      return FALSE;
    }
  if (a->database == NULL)
    {
      fprintf (stderr, _ ("likeness-cli import %s: --database %s is required\n"), source,
               photoprism ? "FILE" : "URL");
      return FALSE;
    }
  if (photoprism && (a->owner != NULL || a->media != NULL || a->model != NULL))
    {
      fprintf (stderr,
               _ ("likeness-cli import photoprism: --owner, --media and --model are Immich's; "
                  "PhotoPrism's folders are --storage and --originals\n"));
      return FALSE;
    }
  if (!photoprism && (a->storage != NULL || a->originals != NULL))
    {
      fprintf (stderr, _ ("likeness-cli import immich: --storage and --originals are PhotoPrism's; "
                          "Immich's media folder is --media\n"));
      return FALSE;
    }
  return TRUE;
}

/* Runs the import on a thread while this one waits for Ctrl+C (which
 * cancels it), then prints the summary. Returns the exit status. */
static int
run_import (const char *outdir, gboolean photoprism, gboolean photos, const Args *a,
            LkDetectorKind detector_kind)
{
  g_autoptr (GCancellable) cancellable = g_cancellable_new ();
  Progress progress = { 0 };
  lk_import_rate_init (&progress.rate, g_get_monotonic_time ());
  LkImportSummary summary = { 0 };
  Job job = { outdir,
              photoprism,
              photos,
              { (const char *const *) a->photo_folders, detector_kind, (guint) a->threads,
                on_progress, &progress, &summary, &progress.faces_found },
              { a->database, a->owner, a->media, a->model, on_progress, &progress, &summary },
              { a->database, a->storage, a->originals, on_progress, &progress, &summary },
              cancellable,
              NULL,
              FALSE,
              FALSE };
  guint sigint = g_unix_signal_add (SIGINT, on_sigint, cancellable);
  GThread *thread = g_thread_new ("lk-import", import_thread, &job);

  while (!g_atomic_int_get (&job.done))
    g_main_context_iteration (NULL, TRUE);
  g_thread_join (thread);
  g_source_remove (sigint);
  if (!job.ok)
    {
      int status = lk_cli_fail (job.error);
      g_error_free (job.error);
      return status;
    }
  print_summary (outdir, &summary);
  lk_import_summary_clear (&summary);
  return LK_CLI_OK;
}

int
lk_cli_import (int argc, char **argv)
{
  g_auto (Args) a = { 0 };
  const GOptionEntry entries[] = {
    { "photos", 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &a.photo_folders,
      N_ ("photos: a folder of photos to search for faces (repeatable)"), "DIR" },
    { "detector", 0, 0, G_OPTION_ARG_STRING, &a.detector,
      N_ ("photos: hog (dlib's HOG, the default: fast, frontal faces) or cnn (dlib's MMOD CNN: "
          "small "
          "and turned faces, ~10x slower)"),
      "hog|cnn" },
    { "threads", 0, 0, G_OPTION_ARG_INT, &a.threads,
      N_ ("photos: photos searched in parallel (default: one per core)"), "N" },
    { "database", 0, 0, G_OPTION_ARG_STRING, &a.database,
      N_ ("Immich: its PostgreSQL database (a libpq URL: postgresql://user:password@host/immich). "
          "PhotoPrism: its SQLite index (storage/index.db)"),
      "URL|FILE" },
    { "owner", 0, 0, G_OPTION_ARG_STRING, &a.owner,
      N_ ("Immich: only this user's assets (email or uuid)"), "EMAIL|UUID" },
    { "media", 0, 0, G_OPTION_ARG_FILENAME, &a.media,
      N_ ("Immich: the server's media folder (its upload location) as seen here; thumbnails are "
          "cut "
          "from the previews and originals under it. Without it, faces import without thumbnails"),
      "DIR" },
    { "model", 0, 0, G_OPTION_ARG_STRING, &a.model,
      N_ ("Immich: the server's facial recognition model (Administration → Machine Learning), "
          "for its calibration prior; default buffalo_l"),
      "NAME" },
    { "storage", 0, 0, G_OPTION_ARG_FILENAME, &a.storage,
      N_ ("PhotoPrism: its storage folder (thumbnails are cut from its cached ones when the "
          "original is not found)"),
      "DIR" },
    { "originals", 0, 0, G_OPTION_ARG_FILENAME, &a.originals,
      N_ ("PhotoPrism: its originals folder (thumbnails are cut from the originals)"), "DIR" },
    { NULL },
  };

  if (!lk_cli_parse ("import", "immich|photoprism|photos OUTDIR",
                     N_ ("Make a Likeness library in OUTDIR (new or empty) of the faces an Immich\n"
                         "server or a PhotoPrism index detected and embedded: every face with its\n"
                         "source id, box, embedding and thumbnail, every photo, and the people\n"
                         "named in the source.\n\n"
                         "  likeness-cli import immich OUTDIR --database URL --media DIR [--owner "
                         "EMAIL|UUID]\n"
                         "  likeness-cli import photoprism OUTDIR --database FILE --storage DIR "
                         "[--originals DIR]\n"
                         "  likeness-cli import photos OUTDIR --photos DIR [--photos DIR…] "
                         "[--detector hog|cnn] "
                         "[--threads N]"),
                     entries, &argc, &argv, 2, 2))
    return LK_CLI_USAGE;
  gboolean photoprism = strcmp (argv[1], "photoprism") == 0;
  gboolean photos = strcmp (argv[1], "photos") == 0;
  if (!photoprism && !photos && strcmp (argv[1], "immich") != 0)
    {
      fprintf (stderr,
               _ ("likeness-cli import: unknown source “%s” (known: immich, photoprism, photos)\n"),
               argv[1]);
      return LK_CLI_USAGE;
    }
  LkDetectorKind detector_kind = LK_DETECTOR_HOG;
  if (photos ? !check_photos_options (&a, &detector_kind)
             : !check_server_options (argv[1], photoprism, &a))
    return LK_CLI_USAGE;
  return run_import (argv[2], photoprism, photos, &a, detector_kind);
}
