/* lk-session.c — one open library: its faces, pairs, review decisions and people
 *
 * Why it is shaped this way:
 *
 * - Loading, scanning and the first clustering are one job on a worker
 *   thread; the session object itself is only created on the main thread
 *   from the finished result, so the window never sees a half-loaded library,
 *   and a cancelled or superseded load (see lk-job.c) is simply freed.
 * - A decision is applied to the review at once (checked against the people
 *   the user is looking at), then saved and re-clustered on a worker thread.
 *   Done in the same main-loop turn, that cost 146-262 ms of main-thread time
 *   per decision on an 18,143-face library (765,265 pairs; lk_cluster ~170 ms,
 *   the save ~3 ms), far over the 50 ms frame budget; now the decision call
 *   takes ~0.1 ms and the people follow when the worker lands (that landing,
 *   sync_people and the views' "changed" handlers, still measured up to 50 ms
 *   of main-thread CPU with LIKENESS_STALL_PROBE=1 on a loaded machine).
 * - Decisions are serialised by waiting: one made while the previous one is
 *   in flight is kept as asked (defer()) and made when that lands, against
 *   the people it produced — the worker's lk_review_save reads the review, so
 *   nothing may change it meanwhile, and checking the new decision against the
 *   people about to be replaced could undo the one in flight. One that no
 *   longer applies by its turn is reported ("decision-failed"), never dropped
 *   silently. The worker gets its own copy of the pins, so the main thread may
 *   still read the review meanwhile.
 * - The worker holds the session (so its review), and the application is held
 *   until the commit lands: closing the window or opening another library
 *   never loses a decision. A replaced session's result lands only in that
 *   session, whose signals the window has disconnected, so nothing stale shows.
 * - The people model is updated in place by id: a person that keeps its id
 *   keeps its LkPersonItem, so bound tiles follow renames without a rebuild
 *   and the grid keeps its scroll position.
 * - A library whose folder cannot be written is found twice over: access
 *   (W_OK) when it loads (cheap, and lets the window say so before the first
 *   decision), and a save failing with LK_REVIEW_ERROR_READ_ONLY (access can
 *   be wrong: ACLs, network file systems, a medium turned read-only since).
 *   Whatever the last save found wins. Decisions are still attempted there
 *   (a failed save costs one failed open), so nothing depends on the guess.
 *   lk_session_save_elsewhere moves the review.json for good
 *   (lk-review-location.h); the library folder is never written then.
 */
#include "config.h"

#include <glib/gi18n.h>

#include <errno.h>

#include <glib/gstdio.h>

#include "lk-review-location.h"
#include "lk-review.h"
#include "lk-scan.h"
#include "lk-session.h"
#include "lk-source-people.h"

#define REVIEW_FILE "review.json"

struct _LkLoaded
{
  LkLibrary *library;
  LkReview *review;
  LkScanResult *scan;
  LkPeople *people;
  double probability_bar;
  gboolean replace_review;
  char *review_path;           /* where decisions are saved (lk_review_location_resolve) */
  gboolean read_only;          /* the library's folder cannot be written */
};

typedef struct
{
  char *folder;
  double probability_bar;
  gboolean replace_review;
} LoadRequest;

struct _LkSession
{
  GObject parent_instance;

  LkLoaded *data;
  LkClusterInput input;
  char *review_path;
  GListStore *people_store;    /* of LkPersonItem */
  GHashTable *items;           /* id → LkPersonItem (borrowed from the store) */
  gboolean committing;         /* a decision's save and re-cluster are running */
  GQueue pending;              /* of Pending: decisions made meanwhile, in order */
  gboolean unsaved;            /* the last save failed: decisions only in memory */
};

G_DEFINE_FINAL_TYPE (LkSession, lk_session, G_TYPE_OBJECT)

enum
{
  SIGNAL_CHANGED,
  SIGNAL_SAVE_FAILED,
  SIGNAL_DECISION_FAILED,
  N_SIGNALS
};

static guint signals[N_SIGNALS];

enum
{
  PROP_0,
  PROP_COMMITTING,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

void
lk_loaded_free (LkLoaded *loaded)
{
  if (loaded == NULL)
    return;
  g_clear_pointer (&loaded->people, lk_people_free);
  g_clear_pointer (&loaded->scan, lk_scan_result_free);
  g_clear_pointer (&loaded->review, lk_review_free);
  g_clear_pointer (&loaded->library, lk_library_free);
  g_free (loaded->review_path);
  g_free (loaded);
}

G_DEFINE_AUTOPTR_CLEANUP_FUNC (LkLoaded, lk_loaded_free)

static void
load_request_free (gpointer data)
{
  LoadRequest *request = data;

  g_free (request->folder);
  g_free (request);
}

static void
fill_cluster_input (LkClusterInput *input, const LkLoaded *loaded)
{
  input->n_faces = loaded->library->count;
  input->photo = loaded->library->photo;
  input->quality = loaded->library->quality;
  input->crop_px = loaded->library->crop_px;
  input->pairs = (const LkPair *) loaded->scan->pairs->data;
  input->n_pairs = loaded->scan->pairs->len;
}

static void
on_scan_progress (double fraction, gpointer user_data)
{
  lk_job_set_progress (LK_JOB (user_data), _("Comparing every pair of faces"), fraction);
}

static gpointer
load_in_thread (LkJob *job, gpointer task_data, GCancellable *cancellable, GError **error)
{
  LoadRequest *request = task_data;
  g_autoptr (LkLoaded) loaded = g_new0 (LkLoaded, 1);

  lk_job_set_progress (job, _("Reading the library"), -1.0);
  loaded->library = lk_library_load (request->folder, error);
  if (loaded->library == NULL)
    return NULL;

  const LkLibrary *library = loaded->library;
  lk_job_set_total (job, library->count);
  /* A read-only library's decisions may have been saved elsewhere before: then
   * they are read from (and saved to) there; otherwise its own review.json is
   * the starting state, read-only or not. */
  g_autofree char *start = NULL;
  loaded->review_path = lk_review_location_resolve (library->folder, &start);
  loaded->read_only = g_access (library->folder, W_OK) != 0
                      && (errno == EROFS || errno == EACCES || errno == EPERM);
  if (request->replace_review)
    loaded->review = lk_review_new (library->count, library->fingerprint, library->photo);
  else
    loaded->review = lk_review_load (start, library->count, library->fingerprint,
                                     library->photo, error);
  if (loaded->review == NULL)
    return NULL;
  /* The source's people, below the user's decisions (lk-source-people.h). */
  g_autoptr (GPtrArray) base = lk_source_people_pins (library, NULL);
  lk_review_set_base_pins (loaded->review, base);
  loaded->replace_review = request->replace_review;

  loaded->probability_bar = request->probability_bar > 0.0 ? request->probability_bar
                                                            : library->min_probability;
  LkFaces faces;
  lk_faces_from_library (&faces, library);
  /* background: the scan's workers yield the CPU to the main loop (lk-scan.c). */
  LkScanOptions options = { .kernel = LK_KERNEL_AUTO, .threads = 0, .background = TRUE,
                            .progress = on_scan_progress, .progress_data = job };
  lk_job_set_progress (job, _("Comparing every pair of faces"), 0.0);
  loaded->scan = lk_scan (&faces, &library->calibration, loaded->probability_bar, &options,
                          cancellable, error);
  if (loaded->scan == NULL)
    return NULL;

  lk_job_set_progress (job, _("Grouping faces into people"), -1.0);
  LkClusterInput input;
  fill_cluster_input (&input, loaded);
  LkClusterOptions cluster_options = { .linkage = LK_LINKAGE_AVERAGE };
  loaded->people = lk_cluster (&input, lk_review_pins (loaded->review), &cluster_options, error);
  if (loaded->people == NULL)
    return NULL;
  return g_steal_pointer (&loaded);
}

/* Brings the people store in line with data->people, reusing the items of
 * `items` (id → LkPersonItem, may be NULL) by id. */
static void
sync_people (LkSession *self, GHashTable *items)
{
  const LkPeople *people = self->data->people;
  g_autoptr (GPtrArray) next = g_ptr_array_new_full (people->n_people + 1, g_object_unref);
  gboolean same_order = g_list_model_get_n_items (G_LIST_MODEL (self->people_store))
                        == people->n_people + 1;

  self->items = g_hash_table_new (g_str_hash, g_str_equal);
  for (gsize k = 0; k < people->n_people; k++)
    {
      const LkPerson *person = &people->people[k];
      LkPersonItem *item = items != NULL ? g_hash_table_lookup (items, person->id) : NULL;

      if (item != NULL)
        {
          g_object_ref (item);
          lk_person_item_update (item, person);
        }
      else
        item = lk_person_item_new_person (person);
      g_ptr_array_add (next, item);
      g_hash_table_insert (self->items, (gpointer) lk_person_item_get_id (item), item);
    }

  LkPersonItem *unassigned = items != NULL ? g_hash_table_lookup (items, LK_PERSON_ITEM_UNASSIGNED_ID) : NULL;
  if (unassigned != NULL)
    {
      g_object_ref (unassigned);
      lk_person_item_update_unassigned (unassigned, people->unassigned, people->n_unassigned);
    }
  else
    unassigned = lk_person_item_new_unassigned (people->unassigned, people->n_unassigned);
  g_ptr_array_add (next, unassigned);
  g_hash_table_insert (self->items, (gpointer) lk_person_item_get_id (unassigned), unassigned);

  for (guint k = 0; same_order && k < next->len; k++)
    {
      g_autoptr (GObject) old = g_list_model_get_item (G_LIST_MODEL (self->people_store), k);
      same_order = old == g_ptr_array_index (next, k);
    }
  if (!same_order)
    g_list_store_splice (self->people_store, 0,
                         g_list_model_get_n_items (G_LIST_MODEL (self->people_store)),
                         next->pdata, next->len);
}

/* What a commit's worker needs. The pins are its own copy, so the main thread
 * may read the review's (lazily built) pins while it runs. The session is
 * borrowed: the completion callback holds it, so the review being saved
 * outlives a window that closed meanwhile, and the last reference is dropped
 * on the main thread. */
typedef struct
{
  LkSession *session;
  GPtrArray *pins;             /* of LkPin *, owned */
  LkReviewSaveFlags flags;
  GApplication *app;           /* held until the commit lands, or NULL */
} CommitRequest;

typedef struct
{
  LkPeople *people;            /* NULL with cluster_error */
  GError *cluster_error;
  GError *save_error;          /* NULL when review.json was written */
} CommitResult;

static void
commit_request_free (gpointer data)
{
  CommitRequest *request = data;

  g_ptr_array_unref (request->pins);
  g_free (request);
}

static void
commit_result_free (gpointer data)
{
  CommitResult *result = data;

  g_clear_pointer (&result->people, lk_people_free);
  g_clear_error (&result->cluster_error);
  g_clear_error (&result->save_error);
  g_free (result);
}

static void
commit_in_thread (GTask *task, gpointer source_object, gpointer task_data,
                  GCancellable *cancellable)
{
  CommitRequest *request = task_data;
  LkSession *self = request->session;
  CommitResult *result = g_new0 (CommitResult, 1);

  /* No decision changes the review while self->committing (they wait in
   * self->pending, see defer()), so reading it here races with nothing. */
  lk_review_save (self->data->review, self->data->review_path, request->flags, &result->save_error);
  LkClusterOptions options = { .linkage = LK_LINKAGE_AVERAGE };
  result->people = lk_cluster (&self->input, request->pins, &options, &result->cluster_error);
  g_task_return_pointer (task, result, commit_result_free);
}

/* A decision made while the previous one is still being saved and
 * re-clustered. It is not checked against the people on screen — they are
 * about to be replaced, and a decision recorded against them could undo the
 * one in flight (a rename of a person just merged away would pin its old
 * faces again) — but kept as asked and made, in order, against the people
 * the previous decision produced. One that no longer applies (its person is
 * gone) is reported through "decision-failed"; none is dropped silently. */
typedef enum
{
  PENDING_RENAME,
  PENDING_MERGE,
  PENDING_REMOVE,
  PENDING_MOVE,
  PENDING_COVER,
  PENDING_HIDE,
  PENDING_CONFIRM,
  PENDING_REJECT,
  PENDING_UNDO,
  PENDING_REDO,
} PendingKind;

typedef struct
{
  PendingKind kind;
  char *id;
  char *other;     /* merge, move: the other person (NULL: a new one) */
  char *name;      /* rename */
  GArray *faces;   /* remove, move; cover, confirm, reject: one face */
  gboolean hidden; /* hide */
} Pending;

static void
pending_free (gpointer data)
{
  Pending *pending = data;

  g_free (pending->id);
  g_free (pending->other);
  g_free (pending->name);
  g_clear_pointer (&pending->faces, g_array_unref);
  g_free (pending);
}

static gboolean
defer (LkSession *self, PendingKind kind, const char *id, const char *other, const char *name,
       const guint32 *faces, gsize n_faces, gboolean hidden)
{
  if (!self->committing)
    return FALSE;
  Pending *pending = g_new0 (Pending, 1);
  pending->kind = kind;
  pending->id = g_strdup (id);
  pending->other = g_strdup (other);
  pending->name = g_strdup (name);
  pending->faces = g_array_new (FALSE, FALSE, sizeof (guint32));
  if (n_faces > 0)
    g_array_append_vals (pending->faces, faces, (guint) n_faces);
  pending->hidden = hidden;
  g_queue_push_tail (&self->pending, pending);
  return TRUE;
}

static gboolean
make (LkSession *self, const Pending *p, GError **error)
{
  const guint32 *faces = (const guint32 *) p->faces->data;
  guint32 face = p->faces->len > 0 ? faces[0] : 0;

  switch (p->kind)
    {
    case PENDING_RENAME:
      return lk_session_rename (self, p->id, p->name, error);
    case PENDING_MERGE:
      return lk_session_merge (self, p->id, p->other, error);
    case PENDING_REMOVE:
      return lk_session_remove_faces (self, p->id, faces, p->faces->len, error);
    case PENDING_MOVE:
      return lk_session_move_faces (self, p->id, faces, p->faces->len, p->other, NULL, error);
    case PENDING_COVER:
      return lk_session_set_cover (self, p->id, face, error);
    case PENDING_HIDE:
      return lk_session_set_hidden (self, p->id, p->hidden, error);
    case PENDING_CONFIRM:
      return lk_session_confirm (self, p->id, face, error);
    case PENDING_REJECT:
      return lk_session_reject (self, p->id, face, error);
    case PENDING_UNDO:
      return lk_session_undo (self, error);
    case PENDING_REDO:
      return lk_session_redo (self, error);
    default:
      break;
    }
  g_return_val_if_reached (FALSE);
}

/* The next waiting decisions, until one is in flight again. */
static void
make_pending (LkSession *self)
{
  while (!self->committing && !g_queue_is_empty (&self->pending))
    {
      Pending *pending = g_queue_pop_head (&self->pending);
      g_autoptr (GError) error = NULL;
      if (!make (self, pending, &error))
        g_signal_emit (self, signals[SIGNAL_DECISION_FAILED], 0, error);
      pending_free (pending);
    }
}

static void
on_commit_done (GObject *source_object, GAsyncResult *async_result, gpointer user_data)
{
  g_autoptr (LkSession) self = user_data;
  CommitRequest *request = g_task_get_task_data (G_TASK (async_result));
  CommitResult *result = g_task_propagate_pointer (G_TASK (async_result), NULL);

  self->committing = FALSE;
  self->unsaved = result->save_error != NULL;
  /* What the save found beats what access () said when the library opened. */
  if (!lk_session_saves_elsewhere (self))
    {
      if (result->save_error == NULL)
        self->data->read_only = FALSE;
      else if (g_error_matches (result->save_error, LK_REVIEW_ERROR, LK_REVIEW_ERROR_READ_ONLY))
        self->data->read_only = TRUE;
    }
  if (result->save_error != NULL)
    g_signal_emit (self, signals[SIGNAL_SAVE_FAILED], 0, result->save_error);
  if (result->people != NULL)
    {
      lk_people_free (self->data->people);
      self->data->people = g_steal_pointer (&result->people);
      g_autoptr (GHashTable) items = g_steal_pointer (&self->items);
      sync_people (self, items);
    }
  else
    g_warning ("The people could not be regrouped after a decision: %s",
               result->cluster_error->message);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_COMMITTING]);
  if (result->cluster_error == NULL)
    g_signal_emit (self, signals[SIGNAL_CHANGED], 0);
  commit_result_free (result);
  /* The next decision's commit holds the application itself before this one
   * lets go, so closing the window cannot end the process in between. */
  make_pending (self);
  if (request->app != NULL)
    {
      g_application_release (request->app);
      g_clear_object (&request->app);
    }
}

/* The corrupt or foreign review.json the user chose to start over from (the
 * library's own, or the remembered one elsewhere) is replaced; once a save
 * elsewhere wrote a file of ours, nothing needs replacing any more. */
static LkReviewSaveFlags
save_flags (LkSession *self)
{
  return self->data->replace_review ? LK_REVIEW_SAVE_REPLACE : LK_REVIEW_SAVE_DEFAULT;
}

/* After a decision was recorded: save and re-cluster on a worker; the people
 * and "changed" follow when it lands. The application (if any) is held
 * meanwhile, so closing the last window does not end the process before
 * review.json is written. TRUE: the decision is recorded. */
static gboolean
commit (LkSession *self)
{
  const GPtrArray *pins = lk_review_pins (self->data->review);
  CommitRequest *request = g_new0 (CommitRequest, 1);

  request->session = self;
  request->pins = g_ptr_array_new_full (pins->len, (GDestroyNotify) lk_pin_free);
  for (guint k = 0; k < pins->len; k++)
    g_ptr_array_add (request->pins, lk_pin_copy (g_ptr_array_index (pins, k)));
  request->flags = save_flags (self);
  request->app = g_application_get_default ();
  if (request->app != NULL)
    g_application_hold (g_object_ref (request->app));

  self->committing = TRUE;
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_COMMITTING]);
  g_autoptr (GTask) task = g_task_new (NULL, NULL, on_commit_done, g_object_ref (self));
  g_task_set_source_tag (task, commit);
  g_task_set_task_data (task, request, commit_request_free);
  g_task_run_in_thread (task, commit_in_thread);
  return TRUE;
}

/* Saving elsewhere and retrying a save wait for the decision in flight: they
 * change where it is being written. (Decisions themselves wait in
 * self->pending instead; see defer().) */
static gboolean
check_idle (LkSession *self, GError **error)
{
  if (!self->committing)
    return TRUE;
  g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_BUSY,
                       _("The previous change is still being saved; try again in a moment"));
  return FALSE;
}

static void
lk_session_finalize (GObject *object)
{
  LkSession *self = LK_SESSION (object);

  g_queue_clear_full (&self->pending, pending_free);
  g_clear_pointer (&self->items, g_hash_table_unref);
  g_clear_object (&self->people_store);
  g_clear_pointer (&self->data, lk_loaded_free);
  G_OBJECT_CLASS (lk_session_parent_class)->finalize (object);
}

static void
lk_session_get_property (GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
  LkSession *self = LK_SESSION (object);

  switch (prop_id)
    {
    case PROP_COMMITTING:
      g_value_set_boolean (value, self->committing);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
lk_session_class_init (LkSessionClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->finalize = lk_session_finalize;
  object_class->get_property = lk_session_get_property;

  /* A decision's save and re-cluster are running; decisions wait for it. */
  properties[PROP_COMMITTING]
    = g_param_spec_boolean ("committing", NULL, NULL, FALSE,
                            G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, properties);

  /* The people changed after a decision, an undo or a redo. */
  signals[SIGNAL_CHANGED] = g_signal_new ("changed", G_TYPE_FROM_CLASS (klass),
                                          G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL,
                                          G_TYPE_NONE, 0);
  /* review.json could not be written; the decisions are kept in memory. */
  signals[SIGNAL_SAVE_FAILED] = g_signal_new ("save-failed", G_TYPE_FROM_CLASS (klass),
                                              G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL,
                                              G_TYPE_NONE, 1, G_TYPE_ERROR);
  /* A decision made while another was saving, which no longer applied when
   * its turn came (its person was merged away, nothing left to undo). */
  signals[SIGNAL_DECISION_FAILED] = g_signal_new ("decision-failed", G_TYPE_FROM_CLASS (klass),
                                              G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL,
                                              G_TYPE_NONE, 1, G_TYPE_ERROR);
}

static void
lk_session_init (LkSession *self)
{
  self->people_store = g_list_store_new (LK_TYPE_PERSON_ITEM);
}

LkJob *
lk_session_load (GtkWidget *widget, const char *folder, double probability_bar,
                 gboolean replace_review)
{
  g_return_val_if_fail (folder != NULL, NULL);

  LoadRequest *request = g_new0 (LoadRequest, 1);
  request->folder = g_strdup (folder);
  request->probability_bar = probability_bar;
  request->replace_review = replace_review;
  return lk_job_new (widget, load_in_thread, request, load_request_free,
                     (GDestroyNotify) lk_loaded_free);
}

LkSession *
lk_session_new (LkLoaded *loaded, LkSession *previous)
{
  g_return_val_if_fail (loaded != NULL, NULL);
  g_return_val_if_fail (previous == NULL || LK_IS_SESSION (previous), NULL);

  LkSession *self = g_object_new (LK_TYPE_SESSION, NULL);
  self->data = loaded;
  fill_cluster_input (&self->input, loaded);
  sync_people (self, previous != NULL && g_strcmp0 (previous->data->library->folder,
                                                    loaded->library->folder) == 0
                         ? previous->items
                         : NULL);
  return self;
}

const char *
lk_session_get_folder (LkSession *self)
{
  g_return_val_if_fail (LK_IS_SESSION (self), NULL);
  return self->data->library->folder;
}

const LkLibrary *
lk_session_get_library (LkSession *self)
{
  g_return_val_if_fail (LK_IS_SESSION (self), NULL);
  return self->data->library;
}

double
lk_session_get_probability_bar (LkSession *self)
{
  g_return_val_if_fail (LK_IS_SESSION (self), 0.0);
  return self->data->probability_bar;
}

double
lk_session_get_scan_seconds (LkSession *self)
{
  g_return_val_if_fail (LK_IS_SESSION (self), 0.0);
  return self->data->scan->seconds;
}

gsize
lk_session_get_n_pairs (LkSession *self)
{
  g_return_val_if_fail (LK_IS_SESSION (self), 0);
  return self->data->scan->pairs->len;
}

GListModel *
lk_session_get_people (LkSession *self)
{
  g_return_val_if_fail (LK_IS_SESSION (self), NULL);
  return G_LIST_MODEL (self->people_store);
}

guint
lk_session_get_n_people (LkSession *self)
{
  g_return_val_if_fail (LK_IS_SESSION (self), 0);
  return self->data->people->n_people;
}

LkPersonItem *
lk_session_find_person (LkSession *self, const char *id)
{
  g_return_val_if_fail (LK_IS_SESSION (self), NULL);
  return id != NULL ? g_hash_table_lookup (self->items, id) : NULL;
}

char *
lk_session_thumbnail_path (LkSession *self, guint32 face)
{
  g_return_val_if_fail (LK_IS_SESSION (self), NULL);
  g_return_val_if_fail (face < self->data->library->count, NULL);
  return lk_library_thumbnail_path (self->data->library, face);
}

char *
lk_session_describe_face (LkSession *self, guint32 face)
{
  g_return_val_if_fail (LK_IS_SESSION (self), NULL);
  g_return_val_if_fail (face < self->data->library->count, NULL);

  const LkLibrary *library = self->data->library;
  const LkPhoto *photo = lk_library_find_photo (library, library->photo[face]);
  if (photo != NULL && photo->path != NULL)
    return g_strdup_printf (_("Face %u in %s"), face, photo->path);
  /* xgettext cannot expand G_GUINT64_FORMAT inside _(): translate a %s */
  g_autofree char *photo_id = g_strdup_printf ("%" G_GUINT64_FORMAT, library->photo[face]);
  return g_strdup_printf (_("Face %u in photo %s"), face, photo_id);
}

GPtrArray *
lk_session_merge_candidates (LkSession *self, const char *id, GArray **similarity)
{
  g_return_val_if_fail (LK_IS_SESSION (self), NULL);
  g_return_val_if_fail (similarity != NULL, NULL);

  const LkPeople *people = self->data->people;
  g_autoptr (GPtrArray) result = g_ptr_array_new_with_free_func (g_object_unref);
  g_autoptr (GArray) means = g_array_new (FALSE, FALSE, sizeof (double));
  g_autofree gboolean *taken = g_new0 (gboolean, people->n_people);
  gssize self_index = -1;

  for (gsize k = 0; k < people->n_people; k++)
    if (strcmp (people->people[k].id, id) == 0)
      self_index = (gssize) k;

  if (self_index >= 0)
    {
      g_autoptr (GArray) similar = lk_people_similar (people, &self->input, self_index, 0);

      taken[self_index] = TRUE;
      for (guint k = 0; k < similar->len; k++)
        {
          const LkSimilarPerson *s = &g_array_index (similar, LkSimilarPerson, k);
          g_ptr_array_add (result, g_object_ref (lk_session_find_person (
                                       self, people->people[s->person].id)));
          g_array_append_val (means, s->mean);
          taken[s->person] = TRUE;
        }
    }
  for (gsize k = 0; k < people->n_people; k++)
    if (!taken[k])
      {
        double zero = 0.0;
        g_ptr_array_add (result, g_object_ref (lk_session_find_person (self, people->people[k].id)));
        g_array_append_val (means, zero);
      }
  *similarity = g_steal_pointer (&means);
  return g_steal_pointer (&result);
}

GArray *
lk_session_suggestions (LkSession *self, gsize limit)
{
  g_return_val_if_fail (LK_IS_SESSION (self), NULL);

  /* Faces whose linkage sits within this of the merge threshold: wide enough to
   * catch the faces a user would disagree about, narrow enough that the list is
   * a short review rather than the whole library. */
  const double margin = 0.15;
  return lk_people_suggestions (self->data->people, &self->input,
                                lk_review_pins (self->data->review),
                                LK_CLUSTER_DEFAULT_THRESHOLD, margin, limit);
}

const char *
lk_session_person_id (LkSession *self, gint32 index)
{
  g_return_val_if_fail (LK_IS_SESSION (self), NULL);
  if (index < 0 || (gsize) index >= self->data->people->n_people)
    return NULL;
  return self->data->people->people[index].id;
}

gboolean
lk_session_rename (LkSession *self, const char *id, const char *name, GError **error)
{
  g_return_val_if_fail (LK_IS_SESSION (self), FALSE);
  if (defer (self, PENDING_RENAME, id, NULL, name, NULL, 0, FALSE))
    return TRUE;
  return lk_review_name (self->data->review, self->data->people, id, name, error)
         && commit (self);
}

gboolean
lk_session_merge (LkSession *self, const char *id, const char *other_id, GError **error)
{
  g_return_val_if_fail (LK_IS_SESSION (self), FALSE);
  if (defer (self, PENDING_MERGE, id, other_id, NULL, NULL, 0, FALSE))
    return TRUE;
  return lk_review_merge (self->data->review, self->data->people, id, other_id, error)
         && commit (self);
}

gboolean
lk_session_remove_faces (LkSession *self, const char *id, const guint32 *faces, gsize n_faces,
                         GError **error)
{
  g_return_val_if_fail (LK_IS_SESSION (self), FALSE);
  if (defer (self, PENDING_REMOVE, id, NULL, NULL, faces, n_faces, FALSE))
    return TRUE;
  return lk_review_remove (self->data->review, self->data->people, id, faces, n_faces, error)
         && commit (self);
}

gboolean
lk_session_move_faces (LkSession *self, const char *id, const guint32 *faces, gsize n_faces,
                       const char *target_id, char **new_id, GError **error)
{
  g_return_val_if_fail (LK_IS_SESSION (self), FALSE);
  if (defer (self, PENDING_MOVE, id, target_id, NULL, faces, n_faces, FALSE))
    {
      if (new_id != NULL)
        *new_id = NULL; /* named when its turn comes */
      return TRUE;
    }
  return lk_review_move (self->data->review, self->data->people, id, faces, n_faces, target_id,
                         new_id, error)
         && commit (self);
}

gboolean
lk_session_set_cover (LkSession *self, const char *id, guint32 face, GError **error)
{
  g_return_val_if_fail (LK_IS_SESSION (self), FALSE);
  if (defer (self, PENDING_COVER, id, NULL, NULL, &face, 1, FALSE))
    return TRUE;
  return lk_review_set_cover (self->data->review, self->data->people, id, face, error)
         && commit (self);
}

gboolean
lk_session_set_hidden (LkSession *self, const char *id, gboolean hidden, GError **error)
{
  g_return_val_if_fail (LK_IS_SESSION (self), FALSE);
  if (defer (self, PENDING_HIDE, id, NULL, NULL, NULL, 0, hidden))
    return TRUE;
  return lk_review_set_hidden (self->data->review, self->data->people, id, hidden, error)
         && commit (self);
}

gboolean
lk_session_confirm (LkSession *self, const char *id, guint32 face, GError **error)
{
  g_return_val_if_fail (LK_IS_SESSION (self), FALSE);
  if (defer (self, PENDING_CONFIRM, id, NULL, NULL, &face, 1, FALSE))
    return TRUE;
  return lk_review_confirm (self->data->review, self->data->people, id, face, error)
         && commit (self);
}

gboolean
lk_session_reject (LkSession *self, const char *id, guint32 face, GError **error)
{
  g_return_val_if_fail (LK_IS_SESSION (self), FALSE);
  if (defer (self, PENDING_REJECT, id, NULL, NULL, &face, 1, FALSE))
    return TRUE;
  return lk_review_reject (self->data->review, self->data->people, id, face, error)
         && commit (self);
}

gboolean
lk_session_undo (LkSession *self, GError **error)
{
  g_return_val_if_fail (LK_IS_SESSION (self), FALSE);
  if (defer (self, PENDING_UNDO, NULL, NULL, NULL, NULL, 0, FALSE))
    return TRUE;
  if (!lk_review_undo (self->data->review))
    {
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND, _("There is nothing to undo"));
      return FALSE;
    }
  return commit (self);
}

gboolean
lk_session_redo (LkSession *self, GError **error)
{
  g_return_val_if_fail (LK_IS_SESSION (self), FALSE);
  if (defer (self, PENDING_REDO, NULL, NULL, NULL, NULL, 0, FALSE))
    return TRUE;
  if (!lk_review_redo (self->data->review))
    {
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND, _("There is nothing to redo"));
      return FALSE;
    }
  return commit (self);
}

gboolean
lk_session_is_committing (LkSession *self)
{
  g_return_val_if_fail (LK_IS_SESSION (self), FALSE);
  return self->committing;
}

gboolean
lk_session_can_undo (LkSession *self)
{
  g_return_val_if_fail (LK_IS_SESSION (self), FALSE);
  return lk_review_can_undo (self->data->review);
}

gboolean
lk_session_can_redo (LkSession *self)
{
  g_return_val_if_fail (LK_IS_SESSION (self), FALSE);
  return lk_review_can_redo (self->data->review);
}

gboolean
lk_session_retry_save (LkSession *self, GError **error)
{
  g_return_val_if_fail (LK_IS_SESSION (self), FALSE);
  if (!check_idle (self, error))
    return FALSE;

  if (!lk_review_save (self->data->review, self->data->review_path, save_flags (self), error))
    {
      self->unsaved = TRUE;
      return FALSE;
    }
  self->unsaved = FALSE;
  if (!lk_session_saves_elsewhere (self))
    self->data->read_only = FALSE;
  return TRUE;
}

gboolean
lk_session_is_read_only (LkSession *self)
{
  g_return_val_if_fail (LK_IS_SESSION (self), FALSE);
  return self->data->read_only;
}

gboolean
lk_session_saves_elsewhere (LkSession *self)
{
  g_return_val_if_fail (LK_IS_SESSION (self), FALSE);
  g_autofree char *own = g_build_filename (self->data->library->folder, REVIEW_FILE, NULL);
  return g_strcmp0 (own, self->data->review_path) != 0;
}

const char *
lk_session_get_review_path (LkSession *self)
{
  g_return_val_if_fail (LK_IS_SESSION (self), NULL);
  return self->data->review_path;
}

gboolean
lk_session_has_unsaved (LkSession *self)
{
  g_return_val_if_fail (LK_IS_SESSION (self), FALSE);
  return self->unsaved;
}

gboolean
lk_session_save_elsewhere (LkSession *self, const char *folder, GError **error)
{
  g_return_val_if_fail (LK_IS_SESSION (self), FALSE);
  g_return_val_if_fail (folder != NULL && g_path_is_absolute (folder), FALSE);
  if (!check_idle (self, error))
    return FALSE;

  const char *library_folder = self->data->library->folder;
  g_autofree char *path = g_build_filename (folder, REVIEW_FILE, NULL);
  g_autofree char *own = g_build_filename (library_folder, REVIEW_FILE, NULL);
  gboolean is_own = g_strcmp0 (path, own) == 0;
  /* A review.json there holds decisions this session has not read (the same
   * library from another mount, another library, an older copy): saving over
   * it would drop them, so the user chooses another folder. */
  if (g_strcmp0 (path, self->data->review_path) != 0 && !is_own
      && g_file_test (path, G_FILE_TEST_EXISTS))
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_EXISTS,
                   _("it already holds a review.json, whose decisions would be lost. Choose "
                     "another folder, or move that file away first."));
      return FALSE;
    }
  /* Never over another library's review.json (no REPLACE): the error says whose it is. */
  LkReviewSaveFlags flags = is_own && self->data->replace_review ? LK_REVIEW_SAVE_REPLACE
                                                                 : LK_REVIEW_SAVE_DEFAULT;
  if (!lk_review_save (self->data->review, path, flags, error))
    return FALSE;
  if (!is_own)
    self->data->replace_review = FALSE;

  /* Saved: from now on every decision goes there, in this run and the next. */
  g_free (self->data->review_path);
  self->data->review_path = g_steal_pointer (&path);
  self->unsaved = FALSE;
  if (is_own)
    self->data->read_only = FALSE;
  g_autoptr (GError) remember_error = NULL;
  if (!lk_review_location_remember (library_folder, is_own ? NULL : self->data->review_path,
                                    &remember_error))
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_FAILED,
                   _("The decisions were saved in %s, but Likeness could not remember that for "
                     "the next time you open this library: %s"),
                   self->data->review_path, remember_error->message);
      return FALSE;
    }
  return TRUE;
}
