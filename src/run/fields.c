/*
 * fields.c - the field table of mfu_step (mfu_step_field_count, mfu_step_field_at), made from
 * MFU_STEP_FIELDS (mfu/step_fields.h): what a binding reads to lay out its mirror of the
 * struct and to name the fields, and what the tests compare every other list with.
 */
#include <stddef.h>

#include "mfu/run.h"
#include "util/util.h"

/* A member's offset and size; a bit's are those of flags, with its value. */
#define MEMBER_AT(name) offsetof(mfu_step, name), sizeof(((mfu_step *)0)->name), 0
#define AT_STEP(name, NAME) MEMBER_AT(name)
#define AT_DOUBLE(name, NAME) MEMBER_AT(name)
#define AT_SCOPE(name, NAME) MEMBER_AT(name)
#define AT_FLAGS(name, NAME) MEMBER_AT(name)
#define AT_RANK(name, NAME) MEMBER_AT(name)
#define AT_CODE(name, NAME) MEMBER_AT(name)
#define AT_BIT(name, NAME) offsetof(mfu_step, flags), sizeof(uint32_t), MFU_STEP_##NAME
#define AT_NANBIT(name, NAME) AT_BIT(name, NAME)

#define INFO(kind, name, NAME, arg, map, since, unit, what, help)                                  \
    {#name, MFU_STEP_KIND_##kind, AT_##kind(name, NAME), unit, what, help},

static const mfu_step_field_info fields[] = {MFU_STEP_FIELDS(INFO)};

size_t mfu_step_field_count(void)
{
    return MFU__ARRAY_LEN(fields);
}

const mfu_step_field_info *mfu_step_field_at(size_t i)
{
    return i < MFU__ARRAY_LEN(fields) ? &fields[i] : NULL;
}
