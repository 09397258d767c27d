/* lk-window-probes.h — the developer probes, attached to a window from outside
 *
 * LIKENESS_STALL_PROBE (=1, =rescan, =scroll; lk-stall-probe.h,
 * lk-scroll-probe.h) and LIKENESS_SCREENSHOT (lk-screenshot.h) act on the
 * windows the application attached them to, and on no other.
 */
#pragma once

#include "lk-window.h"

G_BEGIN_DECLS

/* Attaches to `window` the probes the environment asks for; TRUE when it
 * asks for any. Call before the window opens a library. */
gboolean lk_window_probes_attach (LkWindow *window);

G_END_DECLS
