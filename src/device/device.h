/*
 * device/device.h - what other parts of mfu use from src/device beyond the public
 * mfu/device.h (cross-module header: the CLI; not installed). Internal to the project: the
 * rest of the device module's shared helpers stay in device_internal.h and cpu_internal.h.
 */
#ifndef MFU_DEVICE_DEVICE_H
#define MFU_DEVICE_DEVICE_H

#include "mfu/device.h"

/* Fill slot from a CPU already detected and its peak (what mfu_cpu_device does after its own
 * detection): for a caller that has both, so the machine is not read twice. *out points into
 * slot. info and peak are not kept. */
void mfu__cpu_device_from(mfu_device_slot *slot, const mfu_cpu_info *info, const mfu_cpu_peak *peak,
                          const mfu_device_info **out);

#endif /* MFU_DEVICE_DEVICE_H */
