/* lk-cli-import.c — `likeness-cli import immich OUTDIR --database URL`
 *
 * Progress goes to stderr (faces read, per second, time left); Ctrl+C
 * cancels the import between batches and the engine removes what it had
 * written beside OUTDIR, so an interrupted import leaves no library.
 */
#include "config.h"

#include <glib-unix.h>
#include <stdio.h>
#include <string.h>

#include "lk-cli.h"
#include "lk-import-immich.h"

typedef struct
{
  gint64 start;
  gint64 last;
} Progress;

static void
on_progress (gsize read, gsize total, gpointer data)
{
  Progress *p = data;
  gint64 now = g_get_monotonic_time ();
  double seconds = (now - p->start) / 1e6;
  double rate = seconds > 0 ? read / seconds : 0;

  if (now - p->last < G_USEC_PER_SEC / 4 && read < total)
    return;
  p->last = now;
  if (rate > 0 && total > read)
    fprintf (stderr, "\r%zu of %zu faces read, %.0f/s, %.0f s left  ", read, total, rate,
             (total - read) / rate);
  else
    fprintf (stderr, "\r%zu of %zu faces read, %.0f/s  ", read, total, rate);
  if (read >= total)
    fputc ('\n', stderr);
}

static gboolean
on_sigint (gpointer data)
{
  g_cancellable_cancel (data);
  return G_SOURCE_CONTINUE;
}

typedef struct
{
  char *outdir;
  LkImportImmichOptions options;
  GCancellable *cancellable;
  GError *error;
  gboolean ok;
  gboolean done;
} Job;

static gpointer
import_thread (gpointer data)
{
  Job *job = data;
  job->ok = lk_import_immich (job->outdir, &job->options, job->cancellable, &job->error);
  g_atomic_int_set (&job->done, TRUE);
  g_main_context_wakeup (NULL);
  return NULL;
}

int
lk_cli_import (int argc, char **argv)
{
  g_autofree char *database = NULL;
  g_autofree char *owner = NULL;
  const GOptionEntry entries[] = {
    { "database", 0, 0, G_OPTION_ARG_STRING, &database,
      "The Immich PostgreSQL database (a libpq URL: postgresql://user:password@host/immich)",
      "URL" },
    { "owner", 0, 0, G_OPTION_ARG_STRING, &owner, "Only this user's assets (email or uuid)",
      "EMAIL|UUID" },
    { NULL },
  };

  if (!lk_cli_parse ("import", "immich OUTDIR",
                     "Make a Likeness library in OUTDIR (new or empty) of the faces an Immich\n"
                     "server detected and embedded: every face with its Immich id, box and\n"
                     "ArcFace embedding, every asset as a photo.",
                     entries, &argc, &argv, 2, 2))
    return LK_CLI_USAGE;
  if (strcmp (argv[1], "immich") != 0)
    {
      fprintf (stderr, "likeness-cli import: unknown source “%s” (known: immich)\n", argv[1]);
      return LK_CLI_USAGE;
    }
  if (database == NULL)
    {
      fprintf (stderr, "likeness-cli import immich: --database URL is required\n");
      return LK_CLI_USAGE;
    }

  g_autoptr (GCancellable) cancellable = g_cancellable_new ();
  Progress progress = { g_get_monotonic_time (), 0 };
  Job job = { argv[2], { database, owner, on_progress, &progress }, cancellable, NULL, FALSE, FALSE };
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
  return LK_CLI_OK;
}
