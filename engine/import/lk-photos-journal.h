/* lk-photos-journal.h — what the photo importer has already found, by the
 * photo's content
 *
 * One file beside the library (.OUTDIR.photos-journal): every photo searched
 * is appended as soon as it is done (its content hash, its size, its faces
 * with their embeddings), so an import that is stopped, killed or crashes
 * goes on from there next time, and a re-import searches only the photos
 * whose bytes changed or are new. At the end of a successful import it is
 * rewritten with the photos of the library only.
 *
 * The file: a header (magic "LKPJ", version, the model's name and its
 * dimension: another model's journal is ignored), then records of a length,
 * a payload and the payload's FNV-1a hash; a record cut short by a kill, or
 * one whose hash is wrong, ends the reading there. Native byte order and
 * float layout: the journal stays on the machine that wrote it (its header
 * has a byte-order mark; another order is ignored like another model).
 */
#pragma once

#include "detect/lk-detect.h"

G_BEGIN_DECLS

/* A photo's content hash as the importer names it: the first this many hex
 * digits of its SHA-256 (64 bits: no two photos of a library share one),
 * the journal's key and the start of a staged thumbnail's name. */
#define LK_PHOTOS_DIGEST_CHARS 16

typedef struct
{
  gint64 width; /* the photo as shown (oriented) */
  gint64 height;
  guint n_faces;
  LkDetectedFace *faces; /* in the photo's pixels */
  float *floats;         /* n_faces × dim */
} LkJournalEntry;

typedef struct _LkPhotosJournal LkPhotosJournal;

/* Reads `path` when it exists and is a journal of `model` and `dim` (else
 * starts empty, and overwrites it on the first append). */
LkPhotosJournal *lk_photos_journal_open (const char *path, const char *model, guint dim,
                                         GError **error);
void lk_photos_journal_free (LkPhotosJournal *journal);

/* The entries read or appended. */
guint lk_photos_journal_size (LkPhotosJournal *journal);

/* The entry of the photo whose content hash is `digest`, or NULL.
 * Thread-safe. The entry is the journal's, unchanged until the journal is
 * freed: an entry is never replaced or removed (a second append of the same
 * digest, the same bytes, keeps the first). */
const LkJournalEntry *lk_photos_journal_lookup (LkPhotosJournal *journal, const char *digest);

/* Appends one photo's result (thread-safe: a mutex). The record is written
 * with one write(2), so a kill leaves it whole or cut, never mixed. */
gboolean lk_photos_journal_append (LkPhotosJournal *journal, const char *digest, gint64 width,
                                   gint64 height, const LkDetectedFace *faces, guint n_faces,
                                   const float *floats, GError **error);

/* Rewrites the file with the entries of `digests` only (atomically: a new
 * file renamed over it). */
gboolean lk_photos_journal_compact (LkPhotosJournal *journal, const char *const *digests, guint n,
                                    GError **error);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (LkPhotosJournal, lk_photos_journal_free)

G_END_DECLS
