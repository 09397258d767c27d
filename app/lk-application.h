#pragma once

#include <adwaita.h>

G_BEGIN_DECLS

#define LK_TYPE_APPLICATION (lk_application_get_type ())
G_DECLARE_FINAL_TYPE (LkApplication, lk_application, LK, APPLICATION, AdwApplication)

LkApplication *lk_application_new (void);

G_END_DECLS
