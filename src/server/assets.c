/*
 * assets.c - the dashboard files compiled into the library (src/server/module.cmake embeds
 * web/dist, or the placeholder page until the front end lands). Looked up by exact name only:
 * there is no path to traverse.
 */
#include <string.h>

#include "server/internal.h"
#include "util/embed.h"

extern const struct mfu__embedded mfu__web_assets[];

static const struct {
    const char *ext;
    const char *type;
} types[] = {
    {".html", "text/html; charset=utf-8"},
    {".js", "text/javascript; charset=utf-8"},
    {".mjs", "text/javascript; charset=utf-8"},
    {".css", "text/css; charset=utf-8"},
    {".json", "application/json"},
    {".map", "application/json"},
    {".svg", "image/svg+xml"},
    {".png", "image/png"},
    {".ico", "image/x-icon"},
    {".woff2", "font/woff2"},
    {".txt", "text/plain; charset=utf-8"},
};

static const char *content_type(const char *name)
{
    size_t n = strlen(name);
    for (size_t i = 0; i < MFU__ARRAY_LEN(types); i++) {
        size_t e = strlen(types[i].ext);
        if (n > e && mfu__strcasecmp(name + n - e, types[i].ext) == 0)
            return types[i].type;
    }
    return "application/octet-stream";
}

bool mfu__asset_find(const char *name, mfu__asset *out)
{
    for (const struct mfu__embedded *e = mfu__web_assets; e->name; e++) {
        if (strcmp(e->name, name) == 0) {
            out->name = e->name;
            out->bytes = e->bytes;
            out->size = e->size;
            out->content_type = content_type(e->name);
            return true;
        }
    }
    return false;
}
