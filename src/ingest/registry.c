/*
 * registry.c - the one table of log formats.
 *
 * Adding a format = one file src/ingest/fmt_NAME.c defining `const mfu__format mfu__fmt_NAME`
 * and one X(NAME) line below (docs/internals/ingest.md, "Adding a format"). The order is the
 * detection tie-break (earlier wins) and the order of `mfu convert --list-formats`: specific
 * formats first, the generic jsonl / csv readers, then the last resort (generic) at the end.
 * Ties that matter: axolotl before hf (a dict with Axolotl's keys scores a step for both
 * readers' detect only through axolotl, but Axolotl logs also hold HF side lines), deepspeed
 * before neox (a log made only of DeepSpeed engine lines hints both; it is DeepSpeed's).
 */
#include "ingest/format.h"

/* One line per format. Keep the generic readers (jsonl, csv) and the last resort (generic)
 * last. */
/* clang-format off */
#define MFU__FORMATS(X) \
    X(mfu) \
    X(megatron) \
    X(nemo) \
    X(nanogpt) \
    X(llmc) \
    X(torchtitan) \
    X(axolotl) \
    X(hf) \
    X(deepspeed) \
    X(neox) \
    X(maxtext) \
    X(composer) \
    X(lightning) \
    X(torchtune) \
    X(fairseq) \
    X(nanotron) \
    X(llama2c) \
    X(modded_nanogpt) \
    X(colossalai) \
    X(jsonl) \
    X(csv) \
    X(generic)
/* clang-format on */

#define MFU__DECLARE(name) extern const mfu__format mfu__fmt_##name;
#define MFU__ENTRY(name) &mfu__fmt_##name,

MFU__FORMATS(MFU__DECLARE)

static const mfu__format *const table[] = {MFU__FORMATS(MFU__ENTRY)};

/* ingest.c's decisions try at most 64 formats (TRIAL_MAX) */
_Static_assert(MFU__ARRAY_LEN(table) <= 64, "more formats than ingest.c's TRIAL_MAX");

size_t mfu__format_count(void)
{
    return MFU__ARRAY_LEN(table);
}

const mfu__format *mfu__format_at(size_t i)
{
    return i < MFU__ARRAY_LEN(table) ? table[i] : NULL;
}

const mfu__format *mfu__format_find(const char *name)
{
    if (!name)
        return NULL;
    for (size_t i = 0; i < MFU__ARRAY_LEN(table); i++)
        if (mfu__strcasecmp(table[i]->name, name) == 0)
            return table[i];
    return NULL;
}
