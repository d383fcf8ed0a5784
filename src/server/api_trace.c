/*
 * api_trace.c - GET /api/runs/{run}/trace: the profiler-trace views attached to a stored run
 * (`mfu trace FILE... --attach RUN`, kept by the store's run_traces table), for the
 * dashboard's trace panel. The stored text is mfu trace --json's; it is parsed and written
 * again through the server's HTML-safe JSON writer, so kernel and file names reach the page
 * escaped like every other string of the API. 404 when the run is unknown; a run without a
 * trace answers {"run": NAME, "trace": null, "how": "..."} (200: the run exists, it has nothing
 * attached; the dashboard asks for every run it opens and a console error would be noise).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "server/internal.h"

void mfu__api_get_trace(mfu__server *s, const char *name, mfu__reply *out)
{
    mfu_error e;
    memset(&e, 0, sizeof e);
    int64_t id = 0;
    char *text = NULL;
    pthread_mutex_lock(&s->reg.store_mu);
    mfu_status st = mfu_store_find_run(s->reg.store, name, &id, &e);
    if (st == MFU_OK)
        st = mfu_store_get_trace(s->reg.store, id, &text, &e);
    pthread_mutex_unlock(&s->reg.store_mu);
    if (st == MFU_E_UNKNOWN) {
        /* a live run the store does not hold yet (posted, followed) exists: it has no trace */
        mfu__srun *r = mfu__reg_get(&s->reg, name, false);
        if (!r) {
            mfu__api_error(out, 404, "no run named '%s' (GET /api/runs lists them)", name);
            return;
        }
        mfu__reg_put(&s->reg, r);
        text = NULL;
        st = MFU_OK;
    }
    if (st != MFU_OK) {
        mfu__api_error(out, 500, "the trace of run '%s' could not be read: %s", name, e.message);
        return;
    }
    if (!text) {
        mfu__sb b;
        mfu__sb_init(&b, 0);
        mfu__jw w;
        mfu__jw_init(&w, &b);
        mfu__jw_obj(&w);
        mfu__jw_key(&w, "run");
        mfu__jw_str(&w, name);
        mfu__jw_key(&w, "trace");
        mfu__jw_null(&w);
        mfu__jw_key(&w, "how");
        mfu__jw_str(&w, "no trace attached to this run: attach one with mfu trace FILE... "
                        "--attach RUN");
        mfu__jw_end_obj(&w);
        if (b.failed) {
            mfu__sb_free(&b);
            mfu__api_error(out, 500, "the answer could not be built (out of memory)");
            return;
        }
        free(out->body);
        out->status = 200;
        out->content_type = "application/json; charset=utf-8";
        out->body = mfu__sb_take(&b, &out->len);
        return;
    }
    json_error_t je;
    json_t *v = json_loads(text, 0, &je);
    free(text);
    if (!v) {
        mfu__api_error(out, 500, "the trace attached to run '%s' is not JSON (line %d: %s)", name,
                       je.line, je.text);
        return;
    }
    mfu__sb b;
    mfu__sb_init(&b, 0);
    mfu__jw w;
    mfu__jw_init(&w, &b);
    mfu__jw_json(&w, v);
    json_decref(v);
    if (b.failed) {
        mfu__sb_free(&b);
        mfu__api_error(out, 500, "the answer could not be built (out of memory)");
        return;
    }
    free(out->body);
    out->status = 200;
    out->content_type = "application/json; charset=utf-8";
    out->body = mfu__sb_take(&b, &out->len);
}
