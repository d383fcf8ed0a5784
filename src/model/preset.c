/*
 * preset.c - bundled model presets: Hugging Face shaped config.json files under
 * src/model/presets/, compiled into the library by src/model/module.cmake, read with the same
 * parser as a user's config.json. The file name without ".json" is the preset name; the table
 * is generated in alphabetical order of file names.
 */
#include <string.h>

#include "model/model_internal.h"
#include "util/embed.h"
#include "util/util.h"

size_t mfu_preset_count(void)
{
    size_t n = 0;
    while (mfu__model_preset_names[n])
        n++;
    return n;
}

const char *mfu_preset_name(size_t i)
{
    return i < mfu_preset_count() ? mfu__model_preset_names[i] : NULL;
}

mfu_status mfu_preset_find(const char *name, mfu_arch *out, mfu_error *err)
{
    return mfu__preset_find_with(name, NULL, out, err);
}

mfu_status mfu__preset_find_with(const char *name, const mfu_arch *overrides, mfu_arch *out,
                                 mfu_error *err)
{
    if (!name || !out)
        return mfu__fail(err, MFU_E_INVALID, 0, "mfu_preset_find: NULL argument");
    for (size_t i = 0; mfu__model_preset_names[i]; i++) { /* sorted as the embedded files */
        const char *preset = mfu__model_preset_names[i];  /* the file name without ".json" */
        if (mfu__strcasecmp(preset, name) != 0)
            continue;
        const struct mfu__embedded *e = &mfu__model_presets[i];
        mfu_arch a;
        mfu_status st =
            mfu_arch_from_config_text((const char *)e->bytes, e->size, overrides, &a, err);
        if (st != MFU_OK)
            return st;
        mfu__strlcpy(a.name, preset, sizeof a.name);
        *out = a;
        return MFU_OK;
    }
    char near[3 * MFU_ARCH_NAME_MAX + 16];
    if (mfu__did_you_mean(name, mfu__model_preset_names, mfu_preset_count(), near, sizeof near))
        return mfu__fail_field(err, MFU_E_UNKNOWN, "--model",
                               "unknown model preset '%.64s' (did you mean %s?): pass --model "
                               "with a name from 'mfu flops --list-presets', or --config with a "
                               "config.json",
                               name, near);
    return mfu__fail_field(err, MFU_E_UNKNOWN, "--model",
                           "unknown model preset '%.64s': pass --model with a name from 'mfu "
                           "flops --list-presets', or --config with a config.json",
                           name);
}
