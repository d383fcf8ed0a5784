/*
 * mfu/mfu.h - the whole public API of libmfu. Include this one header.
 * See common.h for the ownership, error and unit conventions that every module follows.
 */
#ifndef MFU_MFU_H
#define MFU_MFU_H
#include "mfu/common.h"
#include "mfu/device.h"
#include "mfu/model.h"
#include "mfu/estimate.h"
#include "mfu/run.h"
#include "mfu/ingest.h"
#include "mfu/analysis.h"
#include "mfu/roofline.h"
#include "mfu/report.h"
#include "mfu/store.h"
#include "mfu/monitor.h"
#include "mfu/trace.h"
#endif
