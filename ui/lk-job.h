/* lk-job.h — one piece of background work whose result may go stale
 *
 * A GTask worker with two guarantees the window relies on:
 *
 * - Progress reported from the worker (any rate) reaches the main loop at most
 *   once per frame of the widget the job is bound to: the worker only stores
 *   the latest value, a tick callback on the widget reads it.
 * - Once a job is cancelled — by the user, or because a newer job superseded
 *   it — its done callback is never called: the result is freed on the main
 *   thread and nothing stale can reach a view.
 */
#pragma once

#include <gtk/gtk.h>

G_BEGIN_DECLS

#define LK_TYPE_JOB (lk_job_get_type ())
G_DECLARE_FINAL_TYPE (LkJob, lk_job, LK, JOB, GObject)

/* Runs on a worker thread. Returns the result (freed with the job's
 * result_free if nobody takes it), or NULL with `error` set. */
typedef gpointer (*LkJobFunc) (LkJob        *job,
                               gpointer      task_data,
                               GCancellable *cancellable,
                               GError      **error);

/* Runs on the main thread, only for a job that was not cancelled. `result` is
 * the callback's to keep (or free with the job's result_free). */
typedef void (*LkJobDoneFunc) (LkJob        *job,
                               gpointer      result,
                               const GError *error,
                               gpointer      user_data);

LkJob      *lk_job_new             (GtkWidget     *widget,
                                    LkJobFunc      func,
                                    gpointer       task_data,
                                    GDestroyNotify task_data_free,
                                    GDestroyNotify result_free);
void        lk_job_start           (LkJob         *self,
                                    LkJobDoneFunc  done,
                                    gpointer       user_data);
void        lk_job_cancel          (LkJob         *self);
gboolean    lk_job_is_cancelled    (LkJob         *self);
gboolean    lk_job_is_running      (LkJob         *self);

/* From any thread. `what` is a static string naming the phase ("Scanning");
 * fraction in [0, 1], or negative while the phase cannot tell. */
void        lk_job_set_progress    (LkJob         *self,
                                    const char    *what,
                                    double         fraction);
/* From any thread: how many items the whole job covers (faces, for a scan),
 * so the window can show a rate. */
void        lk_job_set_total       (LkJob         *self,
                                    guint64        total);
guint64     lk_job_get_total       (LkJob         *self);
/* The latest progress (main thread). */
double      lk_job_get_fraction    (LkJob         *self);
const char *lk_job_get_phase       (LkJob         *self);
/* Seconds since the current phase began. */
double      lk_job_get_phase_seconds (LkJob       *self);
/* How many "progress" signals were emitted (for the tests). */
guint       lk_job_get_n_updates   (LkJob         *self);

G_END_DECLS
