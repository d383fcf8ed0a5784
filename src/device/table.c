/*
 * table.c - the accelerator table: static, read-only data. Every number carries its source in
 * the entry's `source`; where stacks disagree, `notes` says so and why this value was chosen.
 *
 * Rules used throughout (docs/devices.md):
 * - Dense peak = the highest rate a dense matrix multiply of that dtype can reach (tensor /
 *   matrix cores when the device has them), for one `unit`.
 * - NVIDIA datasheets print the 2:4-sparse figure; dense = sparse / 2 exactly (so H100 SXM
 *   bf16 is 1979 / 2 = 989.5 TFLOP/s). Where a datasheet prints a dense value that disagrees
 *   with its own sparse figure, the note says which one the unit count x clock confirms.
 * - GeForce cards: the tensor rate with FP32 accumulation (what cuBLAS uses for bf16/fp16
 *   GEMMs in PyTorch), which is half the FP16-accumulate rate printed first in the whitepaper.
 * - A figure nobody states is 0 ("no figure"), never a guess.
 *
 * Adding a device: append an entry (ids are stable; never renumber or reuse one), give every
 * number a source, run the unit tests (they check ids, names, sparse = 2 x dense, sources).
 */
#include <stddef.h>

#include "mfu/device.h"
#include "util/util.h"

/* The table is laid out by hand (one dtype group per line); keep clang-format off it. */
/* clang-format off */
#define T(x) ((x) * 1e12)          /* TFLOP/s -> FLOP/s */
#define GB(x) ((x) * 1e9)          /* vendor GB -> bytes */
#define GIB(x) ((x) * 1073741824.0) /* GiB -> bytes */
#define TBS(x) ((x) * 1e12)        /* TB/s -> bytes/s */
#define GBS(x) ((x) * 1e9)         /* GB/s -> bytes/s */

#define FP64 MFU_DTYPE_FP64
#define FP32 MFU_DTYPE_FP32
#define TF32 MFU_DTYPE_TF32
#define BF16 MFU_DTYPE_BF16
#define FP16 MFU_DTYPE_FP16
#define FP8 MFU_DTYPE_FP8
#define INT8 MFU_DTYPE_INT8

/* ---- reported names (NULL-terminated) ------------------------------------------------------ */

static const char *const n_v100_sxm2[] = {"Tesla V100-SXM2-16GB", "Tesla V100-SXM2-32GB",
                                           "V100 SXM2", "V100-SXM2", NULL};
static const char *const n_v100_pcie[] = {"Tesla V100-PCIE-16GB", "Tesla V100-PCIE-32GB",
                                           "V100 PCIe", "V100-PCIE", NULL};
static const char *const n_a10[] = {"NVIDIA A10", NULL};
static const char *const n_a10g[] = {"NVIDIA A10G", NULL};
static const char *const n_a40[] = {"NVIDIA A40", NULL};
static const char *const n_a100_sxm_80[] = {"NVIDIA A100-SXM4-80GB", "A100 SXM4 80GB",
                                             "A100 SXM 80GB", NULL};
static const char *const n_a100_sxm_40[] = {"NVIDIA A100-SXM4-40GB", "A100 SXM4 40GB",
                                             "A100 SXM 40GB", NULL};
static const char *const n_a100_pcie_80[] = {"NVIDIA A100 80GB PCIe", "NVIDIA A100-PCIE-80GB",
                                              NULL};
static const char *const n_a100_pcie_40[] = {"NVIDIA A100-PCIE-40GB", "A100 PCIe 40GB", NULL};
static const char *const n_l4[] = {"NVIDIA L4", NULL};
static const char *const n_l40[] = {"NVIDIA L40", NULL};
static const char *const n_l40s[] = {"NVIDIA L40S", NULL};
static const char *const n_h100_sxm[] = {"NVIDIA H100 80GB HBM3", "H100 SXM", "H100 SXM5",
                                          "H100-SXM5-80GB", NULL};
static const char *const n_h100_pcie[] = {"NVIDIA H100 PCIe", "H100 PCIe 80GB", NULL};
static const char *const n_h100_nvl[] = {"NVIDIA H100 NVL", NULL};
static const char *const n_h200_sxm[] = {"NVIDIA H200", "H200 SXM", "H200 SXM5", NULL};
static const char *const n_h200_nvl[] = {"NVIDIA H200 NVL", NULL};
static const char *const n_h20[] = {"NVIDIA H20", NULL};
static const char *const n_gh200[] = {"NVIDIA GH200 480GB", "GH200 96GB", NULL};
static const char *const n_gh200_144[] = {"GH200 144GB", "GH200 HBM3e", NULL};
static const char *const n_b200[] = {"NVIDIA B200", "HGX B200", "DGX B200", NULL};
static const char *const n_gb200[] = {"NVIDIA GB200", "GB200 NVL72", NULL};
static const char *const n_b300[] = {"NVIDIA B300 SXM6 AC", "NVIDIA B300", "HGX B300", NULL};
static const char *const n_gb300[] = {"NVIDIA GB300", "GB300 NVL72", NULL};
static const char *const n_rtx3090[] = {"NVIDIA GeForce RTX 3090", NULL};
static const char *const n_rtx4090[] = {"NVIDIA GeForce RTX 4090", NULL};
static const char *const n_rtx_a4000[] = {"NVIDIA RTX A4000", NULL};
static const char *const n_rtx_a5000[] = {"NVIDIA RTX A5000", NULL};
static const char *const n_rtx_a6000[] = {"NVIDIA RTX A6000", NULL};
static const char *const n_rtx5000_ada[] = {"NVIDIA RTX 5000 Ada Generation", "RTX 5000 Ada",
                                             NULL};
static const char *const n_rtx6000_ada[] = {"NVIDIA RTX 6000 Ada Generation", "RTX 6000 Ada",
                                             NULL};
static const char *const n_mi250x[] = {"AMD Instinct MI250X", NULL};
static const char *const n_mi300x[] = {"AMD Instinct MI300X", "AMD Instinct MI300X VF", NULL};
static const char *const n_mi325x[] = {"AMD Instinct MI325X", NULL};
static const char *const n_mi355x[] = {"AMD Instinct MI355X", NULL};
static const char *const n_tpu_v4[] = {"TPU v4", "v4", NULL};
static const char *const n_tpu_v5e[] = {"TPU v5 lite", "TPU v5e", "v5e", "v5litepod",
                                         "TPU v5litepod", NULL};
static const char *const n_tpu_v5p[] = {"TPU v5", "TPU v5p", "v5p", NULL};
static const char *const n_tpu_v6e[] = {"TPU v6 lite", "TPU v6e", "v6e", "Trillium", NULL};
static const char *const n_tpu_v7[] = {"TPU7x", "TPU v7", "v7", "tpu7x", "Ironwood", NULL};
static const char *const n_tpu_v7_chip[] = {"TPU7x chip", "TPU v7 chip", NULL};
static const char *const n_gaudi2[] = {"Gaudi2", "Gaudi 2", "HL-225", NULL};
static const char *const n_gaudi3[] = {"Gaudi3", "Gaudi 3", "HL-325L", NULL};
static const char *const n_trn1[] = {"Trainium", "Trainium1", "trn1", "trn1n", NULL};
static const char *const n_trn2[] = {"Trainium2", "trn2", NULL};
static const char *const n_v100s_pcie[] = {"Tesla V100S-PCIE-32GB", "V100S PCIe", "V100S-PCIE",
                                            NULL};
static const char *const n_t4[] = {"Tesla T4", NULL};
static const char *const n_mi350x[] = {"AMD Instinct MI350X", NULL};

/* ---- the table ----------------------------------------------------------------------------- */

static const mfu_device_info table[] = {
    /* ---- NVIDIA Volta ---- */
    {
        .id = "v100-sxm2",
        .name = "NVIDIA Tesla V100 SXM2",
        .vendor = "NVIDIA",
        .unit = "GPU",
        .dense_flops_per_s = {[FP64] = T(7.8), [FP32] = T(15.7), [FP16] = T(125)},
        .sparsity = MFU_SPARSITY_NONE,
        .memory_bytes = GB(32),
        .memory_bandwidth_bytes_per_s = GBS(900),
        .boost_clock_mhz = 1530,
        .peak_clock_mhz = 1530,
        .reported_names = n_v100_sxm2,
        .source = "NVIDIA Tesla V100 datasheet (SXM2: FP64 7.8, FP32 15.7, tensor 125 TFLOPS, "
                  "16/32 GB HBM2, 900 GB/s); same 125 in Lightning, Composer, llm.c and "
                  "Narayanan 2021 (llm.c llmc/mfu.h; Lightning fabric throughput.py; Composer "
                  "speed_monitor.py)",
        .notes = "fp16 is the tensor-core rate; no bf16/tf32 on Volta. Memory is the 32 GB "
                 "model; the 16 GB model has the same peaks and bandwidth.",
    },
    {
        .id = "v100-pcie",
        .name = "NVIDIA Tesla V100 PCIe",
        .vendor = "NVIDIA",
        .unit = "GPU",
        .dense_flops_per_s = {[FP64] = T(7.0), [FP32] = T(14.0), [FP16] = T(112)},
        .sparsity = MFU_SPARSITY_NONE,
        .memory_bytes = GB(32),
        .memory_bandwidth_bytes_per_s = GBS(900),
        .boost_clock_mhz = 1380,
        .peak_clock_mhz = 1380,
        .reported_names = n_v100_pcie,
        .source = "NVIDIA Tesla V100 datasheet (PCIe: FP64 7, FP32 14, tensor 112 TFLOPS); "
                  "Lightning and Composer use 112 (Lightning fabric throughput.py; Composer "
                  "speed_monitor.py)",
        .notes = "llm.c gives 'Tesla V100-PCIE-32GB' 125 (it scales every Volta card from the "
                 "SXM2 clock of 1530 MHz); the datasheet's 112 at 1380 MHz is used here. Memory "
                 "is the 32 GB model; the 16 GB model has the same peaks.",
    },
    /* ---- NVIDIA Ampere, data centre ---- */
    {
        .id = "a100-sxm4-80gb",
        .name = "NVIDIA A100 SXM4 80GB",
        .vendor = "NVIDIA",
        .unit = "GPU",
        .dense_flops_per_s = {[FP64] = T(19.5), [FP32] = T(19.5), [TF32] = T(156),
                              [BF16] = T(312), [FP16] = T(312), [INT8] = T(624)},
        .sparse_flops_per_s = {[TF32] = T(312), [BF16] = T(624), [FP16] = T(624),
                               [INT8] = T(1248)},
        .sparsity = MFU_SPARSITY_2_4,
        .memory_bytes = GB(80),
        .memory_bandwidth_bytes_per_s = GBS(2039),
        .boost_clock_mhz = 1410,
        .peak_clock_mhz = 1410,
        .reported_names = n_a100_sxm_80,
        .source = "NVIDIA A100 datasheet (80GB SXM: FP64 tensor 19.5, TF32 156/312*, BF16 "
                  "312/624*, INT8 624/1248* TOPS, 2039 GB/s); 312 in every stack: nanoGPT, "
                  "llm.c, torchtitan, Lightning, Composer, Narayanan 2021 (see docs/devices.md)",
        .notes = "fp64 is the FP64 tensor-core rate (vector FP64 is 9.7, which Lightning "
                 "lists). All four A100 variants have the same peaks; memory and bandwidth "
                 "differ.",
    },
    {
        .id = "a100-sxm4-40gb",
        .name = "NVIDIA A100 SXM4 40GB",
        .vendor = "NVIDIA",
        .unit = "GPU",
        .dense_flops_per_s = {[FP64] = T(19.5), [FP32] = T(19.5), [TF32] = T(156),
                              [BF16] = T(312), [FP16] = T(312), [INT8] = T(624)},
        .sparse_flops_per_s = {[TF32] = T(312), [BF16] = T(624), [FP16] = T(624),
                               [INT8] = T(1248)},
        .sparsity = MFU_SPARSITY_2_4,
        .memory_bytes = GB(40),
        .memory_bandwidth_bytes_per_s = GBS(1555),
        .boost_clock_mhz = 1410,
        .peak_clock_mhz = 1410,
        .reported_names = n_a100_sxm_40,
        .source = "NVIDIA A100 datasheet (40GB SXM: same peaks as 80GB, HBM2 1555 GB/s)",
        .notes = "fp64 is the FP64 tensor-core rate (vector 9.7).",
    },
    {
        .id = "a100-pcie-80gb",
        .name = "NVIDIA A100 PCIe 80GB",
        .vendor = "NVIDIA",
        .unit = "GPU",
        .dense_flops_per_s = {[FP64] = T(19.5), [FP32] = T(19.5), [TF32] = T(156),
                              [BF16] = T(312), [FP16] = T(312), [INT8] = T(624)},
        .sparse_flops_per_s = {[TF32] = T(312), [BF16] = T(624), [FP16] = T(624),
                               [INT8] = T(1248)},
        .sparsity = MFU_SPARSITY_2_4,
        .memory_bytes = GB(80),
        .memory_bandwidth_bytes_per_s = GBS(1935),
        .boost_clock_mhz = 1410,
        .peak_clock_mhz = 1410,
        .reported_names = n_a100_pcie_80,
        .source = "NVIDIA A100 datasheet (80GB PCIe: same peaks as SXM, HBM2e 1935 GB/s)",
        .notes = "The datasheet states the same peaks for PCIe and SXM (the PCIe card may "
                 "sustain less under its 300 W limit).",
    },
    {
        .id = "a100-pcie-40gb",
        .name = "NVIDIA A100 PCIe 40GB",
        .vendor = "NVIDIA",
        .unit = "GPU",
        .dense_flops_per_s = {[FP64] = T(19.5), [FP32] = T(19.5), [TF32] = T(156),
                              [BF16] = T(312), [FP16] = T(312), [INT8] = T(624)},
        .sparse_flops_per_s = {[TF32] = T(312), [BF16] = T(624), [FP16] = T(624),
                               [INT8] = T(1248)},
        .sparsity = MFU_SPARSITY_2_4,
        .memory_bytes = GB(40),
        .memory_bandwidth_bytes_per_s = GBS(1555),
        .boost_clock_mhz = 1410,
        .peak_clock_mhz = 1410,
        .reported_names = n_a100_pcie_40,
        .source = "NVIDIA A100 datasheet (40GB PCIe: same peaks, HBM2 1555 GB/s)",
        .notes = "",
    },
    {
        .id = "a10",
        .name = "NVIDIA A10",
        .vendor = "NVIDIA",
        .unit = "GPU",
        .dense_flops_per_s = {[FP32] = T(31.2), [TF32] = T(62.5), [BF16] = T(125),
                              [FP16] = T(125), [INT8] = T(250)},
        .sparse_flops_per_s = {[TF32] = T(125), [BF16] = T(250), [FP16] = T(250),
                               [INT8] = T(500)},
        .sparsity = MFU_SPARSITY_2_4,
        .memory_bytes = GB(24),
        .memory_bandwidth_bytes_per_s = GBS(600),
        .boost_clock_mhz = 1695,
        .peak_clock_mhz = 1695,
        .reported_names = n_a10,
        .source = "NVIDIA A10 datasheet (FP32 31.2, TF32 62.5/125*, BF16 125/250*, INT8 "
                  "250/500* TOPS, 24 GB GDDR6, 600 GB/s); Composer 'a10' 125 (Composer "
                  "speed_monitor.py)",
        .notes = "",
    },
    {
        .id = "a10g",
        .name = "NVIDIA A10G",
        .vendor = "NVIDIA",
        .unit = "GPU",
        .dense_flops_per_s = {[FP32] = T(31.2), [TF32] = T(62.5), [BF16] = T(125),
                              [FP16] = T(125), [INT8] = T(250)},
        .sparsity = MFU_SPARSITY_NONE,
        .memory_bytes = GB(24),
        .memory_bandwidth_bytes_per_s = GBS(600),
        .boost_clock_mhz = 0,
        .peak_clock_mhz = 0,
        .reported_names = n_a10g,
        .source = "Lightning _CUDA_FLOPS 'a10g' (FP32 31.2, TF32 62.5, BF16/FP16 125, INT8 250; "
                  "Lightning fabric throughput.py); AWS G5 instances (24 GB GDDR6)",
        .notes = "AWS-only part: NVIDIA publishes no A10G datasheet. Lightning's values equal "
                 "the A10 datasheet; they are used as is and no sparse figure is given.",
    },
    {
        .id = "a40",
        .name = "NVIDIA A40",
        .vendor = "NVIDIA",
        .unit = "GPU",
        .dense_flops_per_s = {[FP32] = T(37.4), [TF32] = T(74.8), [BF16] = T(149.7),
                              [FP16] = T(149.7), [INT8] = T(299.3)},
        .sparse_flops_per_s = {[TF32] = T(149.6), [BF16] = T(299.4), [FP16] = T(299.4),
                               [INT8] = T(598.6)},
        .sparsity = MFU_SPARSITY_2_4,
        .memory_bytes = GB(48),
        .memory_bandwidth_bytes_per_s = GBS(696),
        .boost_clock_mhz = 1740,
        .peak_clock_mhz = 1740,
        .reported_names = n_a40,
        .source = "NVIDIA A40 datasheet (FP32 37.4, TF32 74.8/149.6*, BF16 149.7/299.4*, INT8 "
                  "299.3/598.6* TOPS, 48 GB GDDR6, 696 GB/s); Lightning 'a40' 149.7 ("
                  "Lightning fabric throughput.py)",
        .notes = "The datasheet's dense and sparse figures are rounded separately (149.7 vs "
                 "299.4 / 2 = 149.7); the printed values are kept.",
    },
    /* ---- NVIDIA Ada, data centre ---- */
    {
        .id = "l4",
        .name = "NVIDIA L4",
        .vendor = "NVIDIA",
        .unit = "GPU",
        .dense_flops_per_s = {[FP32] = T(30.3), [TF32] = T(60), [BF16] = T(121),
                              [FP16] = T(121), [FP8] = T(242.5), [INT8] = T(242.5)},
        .sparse_flops_per_s = {[TF32] = T(120), [BF16] = T(242), [FP16] = T(242),
                               [FP8] = T(485), [INT8] = T(485)},
        .sparsity = MFU_SPARSITY_2_4,
        .memory_bytes = GB(24),
        .memory_bandwidth_bytes_per_s = GBS(300),
        .boost_clock_mhz = 2040,
        .peak_clock_mhz = 2040,
        .reported_names = n_l4,
        .source = "NVIDIA L4 datasheet (FP32 30.3, TF32 120*, BF16/FP16 242*, FP8 485*, INT8 "
                  "485* TOPS, * = with sparsity; 24 GB GDDR6, 300 GB/s); Lightning 'l4' 121 "
                  "(Lightning fabric throughput.py)",
        .notes = "Dense = datasheet sparse / 2.",
    },
    {
        .id = "l40",
        .name = "NVIDIA L40",
        .vendor = "NVIDIA",
        .unit = "GPU",
        .dense_flops_per_s = {[FP32] = T(90.5), [TF32] = T(90.5), [BF16] = T(181.05),
                              [FP16] = T(181.05), [FP8] = T(362), [INT8] = T(362)},
        .sparse_flops_per_s = {[TF32] = T(181), [BF16] = T(362.1), [FP16] = T(362.1),
                               [FP8] = T(724), [INT8] = T(724)},
        .sparsity = MFU_SPARSITY_2_4,
        .memory_bytes = GB(48),
        .memory_bandwidth_bytes_per_s = GBS(864),
        .boost_clock_mhz = 2490,
        .peak_clock_mhz = 2490,
        .reported_names = n_l40,
        .source = "NVIDIA L40 datasheet (FP32 90.5, TF32 90.5/181*, BF16 181.05/362.1*, FP8 "
                  "362/724*, INT8 362/724* TOPS, 48 GB GDDR6, 864 GB/s); Lightning 'l40' 181 "
                  "(Lightning fabric throughput.py)",
        .notes = "568 tensor cores x 128 FLOP/clk x 2490 MHz = 181.0 TFLOP/s: the L40 runs "
                 "bf16/fp16 with FP32 accumulation at half the L40S rate.",
    },
    {
        .id = "l40s",
        .name = "NVIDIA L40S",
        .vendor = "NVIDIA",
        .unit = "GPU",
        .dense_flops_per_s = {[FP32] = T(91.6), [TF32] = T(183), [BF16] = T(366.5),
                              [FP16] = T(366.5), [FP8] = T(733), [INT8] = T(733)},
        .sparse_flops_per_s = {[TF32] = T(366), [BF16] = T(733), [FP16] = T(733),
                               [FP8] = T(1466), [INT8] = T(1466)},
        .sparsity = MFU_SPARSITY_2_4,
        .memory_bytes = GB(48),
        .memory_bandwidth_bytes_per_s = GBS(864),
        .boost_clock_mhz = 2520,
        .peak_clock_mhz = 2520,
        .reported_names = n_l40s,
        .source = "NVIDIA L40S datasheet (FP32 91.6, TF32 183/366*, BF16 362.05/733*, FP8 "
                  "733/1466*, INT8 733/1466* TOPS, 48 GB GDDR6, 864 GB/s); torchtitan 'l40s' "
                  "362e12 (torchtitan tools/utils.py)",
        .notes = "The datasheet prints bf16 dense 362.05 but sparse 733; 568 tensor cores x 256 "
                 "FLOP/clk x 2520 MHz = 366.4 TFLOP/s agrees with 733 / 2 = 366.5, which is used "
                 "(torchtitan uses 362, and its lower-case 'l40s' never matches the CUDA name).",
    },
    /* ---- NVIDIA Hopper ---- */
    {
        .id = "h100-sxm",
        .name = "NVIDIA H100 SXM5 80GB",
        .vendor = "NVIDIA",
        .unit = "GPU",
        .dense_flops_per_s = {[FP64] = T(67), [FP32] = T(67), [TF32] = T(494.5),
                              [BF16] = T(989.5), [FP16] = T(989.5), [FP8] = T(1979),
                              [INT8] = T(1979)},
        .sparse_flops_per_s = {[TF32] = T(989), [BF16] = T(1979), [FP16] = T(1979),
                               [FP8] = T(3958), [INT8] = T(3958)},
        .sparsity = MFU_SPARSITY_2_4,
        .memory_bytes = GB(80),
        .memory_bandwidth_bytes_per_s = TBS(3.35),
        .boost_clock_mhz = 1980,
        .peak_clock_mhz = 1830,
        .reported_names = n_h100_sxm,
        .source = "NVIDIA H100 datasheet, SXM column (FP64 tensor 67, TF32 989*, BF16/FP16 "
                  "1979*, FP8 3958*, INT8 3958* TOPS, * = with sparsity; 80 GB HBM3, 3.35 "
                  "TB/s); Lightning/Composer 989.5, torchtitan 989, llm.c 988.8 (see "
                  "docs/devices.md)",
        .notes = "Stacks disagree in the 4th digit: 989 (torchtitan, Megatron maintainers), "
                 "989.5 (Lightning, Composer 1.979e15/2), 988.8 (llm.c clock scaling), 989.4 "
                 "(528 TC x 1024 FLOP/clk x 1830 MHz). 989.5 = datasheet 1979 / 2 is used; the "
                 "spread is 0.07%. Tensor peaks assume 1830 MHz; the boost clock is 1980 MHz.",
    },
    {
        .id = "h100-pcie",
        .name = "NVIDIA H100 PCIe 80GB",
        .vendor = "NVIDIA",
        .unit = "GPU",
        .dense_flops_per_s = {[FP64] = T(51), [FP32] = T(51), [TF32] = T(378),
                              [BF16] = T(756.5), [FP16] = T(756.5), [FP8] = T(1513),
                              [INT8] = T(1513)},
        .sparse_flops_per_s = {[TF32] = T(756), [BF16] = T(1513), [FP16] = T(1513),
                               [FP8] = T(3026), [INT8] = T(3026)},
        .sparsity = MFU_SPARSITY_2_4,
        .memory_bytes = GB(80),
        .memory_bandwidth_bytes_per_s = TBS(2.0),
        .boost_clock_mhz = 1755,
        .peak_clock_mhz = 1620,
        .reported_names = n_h100_pcie,
        .source = "NVIDIA H100 datasheet, PCIe column (FP64 tensor 51, TF32 756*, BF16/FP16 "
                  "1513*, FP8 3026*, INT8 3026* TOPS; 80 GB HBM2e, 2 TB/s); torchtitan and "
                  "llm.c 756, Composer 1.513e15/2 (llm.c llmc/mfu.h; torchtitan tools/utils.py; "
                  "Composer speed_monitor.py)",
        .notes = "756.5 = datasheet 1513 / 2 (torchtitan rounds to 756; 0.07%). 456 TC x 1024 "
                 "FLOP/clk x 1620 MHz = 756.4, so the tensor peak assumes 1620 MHz; boost is "
                 "1755 MHz.",
    },
    {
        .id = "h100-nvl",
        .name = "NVIDIA H100 NVL 94GB",
        .vendor = "NVIDIA",
        .unit = "GPU (one of the NVLink-bridged pair)",
        .dense_flops_per_s = {[FP64] = T(60), [FP32] = T(60), [TF32] = T(417.5),
                              [BF16] = T(835.5), [FP16] = T(835.5), [FP8] = T(1670.5),
                              [INT8] = T(1670.5)},
        .sparse_flops_per_s = {[TF32] = T(835), [BF16] = T(1671), [FP16] = T(1671),
                               [FP8] = T(3341), [INT8] = T(3341)},
        .sparsity = MFU_SPARSITY_2_4,
        .memory_bytes = GB(94),
        .memory_bandwidth_bytes_per_s = TBS(3.9),
        .boost_clock_mhz = 0,
        .peak_clock_mhz = 0,
        .reported_names = n_h100_nvl,
        .source = "NVIDIA H100 datasheet, NVL column (FP64 tensor 60, TF32 835*, BF16/FP16 "
                  "1671*, FP8 3341*; 94 GB HBM3, 3.9 TB/s); torchtitan 835, Lightning 835.5 "
                  "(torchtitan tools/utils.py; Lightning fabric throughput.py)",
        .notes = "835.5 = 1671 / 2 (torchtitan 835). Lightning listed the sparse 1978.8 here "
                 "until PR #21743: a 2x MFU error when switching GPUs (pytorch-lightning #21677).",
    },
    {
        .id = "h200-sxm",
        .name = "NVIDIA H200 SXM 141GB",
        .vendor = "NVIDIA",
        .unit = "GPU",
        .dense_flops_per_s = {[FP64] = T(67), [FP32] = T(67), [TF32] = T(494.5),
                              [BF16] = T(989.5), [FP16] = T(989.5), [FP8] = T(1979),
                              [INT8] = T(1979)},
        .sparse_flops_per_s = {[TF32] = T(989), [BF16] = T(1979), [FP16] = T(1979),
                               [FP8] = T(3958), [INT8] = T(3958)},
        .sparsity = MFU_SPARSITY_2_4,
        .memory_bytes = GB(141),
        .memory_bandwidth_bytes_per_s = TBS(4.8),
        .boost_clock_mhz = 1980,
        .peak_clock_mhz = 1830,
        .reported_names = n_h200_sxm,
        .source = "NVIDIA H200 datasheet, SXM column (same compute as H100 SXM: BF16 1979*, FP8 "
                  "3958*; 141 GB HBM3e, 4.8 TB/s); torchtitan 989, Composer/Lightning 989.5 "
                  "(torchtitan tools/utils.py; Lightning fabric throughput.py; Composer "
                  "speed_monitor.py)",
        .notes = "The driver reports the SXM part as plain 'NVIDIA H200' and the NVL part as "
                 "'NVIDIA H200 NVL', so 'H200' alone means SXM (as Composer assumes).",
    },
    {
        .id = "h200-nvl",
        .name = "NVIDIA H200 NVL 141GB",
        .vendor = "NVIDIA",
        .unit = "GPU",
        .dense_flops_per_s = {[FP64] = T(60), [FP32] = T(60), [TF32] = T(417.5),
                              [BF16] = T(835.5), [FP16] = T(835.5), [FP8] = T(1670.5),
                              [INT8] = T(1670.5)},
        .sparse_flops_per_s = {[TF32] = T(835), [BF16] = T(1671), [FP16] = T(1671),
                               [FP8] = T(3341), [INT8] = T(3341)},
        .sparsity = MFU_SPARSITY_2_4,
        .memory_bytes = GB(141),
        .memory_bandwidth_bytes_per_s = TBS(4.8),
        .boost_clock_mhz = 0,
        .peak_clock_mhz = 0,
        .reported_names = n_h200_nvl,
        .source = "NVIDIA H200 datasheet, NVL column (FP64 tensor 60, TF32 835*, BF16/FP16 "
                  "1671*, FP8 3341*; 141 GB HBM3e, 4.8 TB/s); Lightning 'h200 nvl1' 840 "
                  "(Lightning fabric throughput.py)",
        .notes = "Lightning's 840 comes from an older 1.68e15 sparse figure; 1671 / 2 = 835.5 "
                 "from the current datasheet is used (0.5% apart).",
    },
    {
        .id = "h20",
        .name = "NVIDIA H20 96GB",
        .vendor = "NVIDIA",
        .unit = "GPU",
        .dense_flops_per_s = {[FP64] = T(1), [FP32] = T(44), [TF32] = T(74), [BF16] = T(148),
                              [FP16] = T(148), [FP8] = T(296), [INT8] = T(296)},
        .sparsity = MFU_SPARSITY_NONE,
        .memory_bytes = GB(96),
        .memory_bandwidth_bytes_per_s = TBS(4.0),
        .boost_clock_mhz = 0,
        .peak_clock_mhz = 0,
        .reported_names = n_h20,
        .source = "torchtitan 'H20' 148e12 citing Tom's Hardware (torchtitan tools/utils.py); "
                  "press "
                  "listings: FP32 44, TF32 74, FP16 148, FP8/INT8 296, FP64 1, 96 GB HBM3, "
                  "4.0 TB/s",
        .notes = "China-market part with no public NVIDIA datasheet; figures are the press "
                 "ones torchtitan uses. No sparse figure is sourced.",
    },
    {
        .id = "gh200",
        .name = "NVIDIA GH200 96GB HBM3",
        .vendor = "NVIDIA",
        .unit = "GPU (the Hopper half of the superchip)",
        .dense_flops_per_s = {[FP64] = T(67), [FP32] = T(67), [TF32] = T(494.5),
                              [BF16] = T(989.5), [FP16] = T(989.5), [FP8] = T(1979),
                              [INT8] = T(1979)},
        .sparse_flops_per_s = {[TF32] = T(989), [BF16] = T(1979), [FP16] = T(1979),
                               [FP8] = T(3958), [INT8] = T(3958)},
        .sparsity = MFU_SPARSITY_2_4,
        .memory_bytes = GB(96),
        .memory_bandwidth_bytes_per_s = TBS(4.0),
        .boost_clock_mhz = 0,
        .peak_clock_mhz = 0,
        .reported_names = n_gh200,
        .source = "NVIDIA GH200 Grace Hopper Superchip datasheet (FP64 tensor 67, TF32 494/989*, "
                  "BF16/FP16 990/1979*, FP8 1979/3958*; 96 GB HBM3 at 4 TB/s)",
        .notes = "The datasheet rounds dense bf16 to 990 and tf32 to 494; 1979 / 2 = 989.5 and "
                 "989 / 2 = 494.5 are used, as for H100 SXM.",
    },
    {
        .id = "gh200-144gb",
        .name = "NVIDIA GH200 144GB HBM3e",
        .vendor = "NVIDIA",
        .unit = "GPU (the Hopper half of the superchip)",
        .dense_flops_per_s = {[FP64] = T(67), [FP32] = T(67), [TF32] = T(494.5),
                              [BF16] = T(989.5), [FP16] = T(989.5), [FP8] = T(1979),
                              [INT8] = T(1979)},
        .sparse_flops_per_s = {[TF32] = T(989), [BF16] = T(1979), [FP16] = T(1979),
                               [FP8] = T(3958), [INT8] = T(3958)},
        .sparsity = MFU_SPARSITY_2_4,
        .memory_bytes = GB(144),
        .memory_bandwidth_bytes_per_s = TBS(4.9),
        .boost_clock_mhz = 0,
        .peak_clock_mhz = 0,
        .reported_names = n_gh200_144,
        .source = "NVIDIA GH200 Grace Hopper Superchip datasheet (HBM3e variant: 144 GB, 4.9 "
                  "TB/s; same compute as the HBM3 variant)",
        .notes = "Same peaks as gh200; only memory differs.",
    },
    /* ---- NVIDIA Blackwell ---- */
    {
        .id = "b200",
        .name = "NVIDIA B200 (HGX)",
        .vendor = "NVIDIA",
        .unit = "GPU (one package, two dies)",
        .dense_flops_per_s = {[FP64] = T(37), [FP32] = T(75), [TF32] = T(1100),
                              [BF16] = T(2250), [FP16] = T(2250), [FP8] = T(4500),
                              [INT8] = T(4500)},
        .sparse_flops_per_s = {[TF32] = T(2200), [BF16] = T(4500), [FP16] = T(4500),
                               [FP8] = T(9000), [INT8] = T(9000)},
        .sparsity = MFU_SPARSITY_2_4,
        .memory_bytes = GB(180),
        .memory_bandwidth_bytes_per_s = TBS(8.0),
        .boost_clock_mhz = 0,
        .peak_clock_mhz = 0,
        .reported_names = n_b200,
        .source = "NVIDIA HGX B200 datasheet per GPU (FP8 9 PF*, BF16/FP16 4.5 PF*, TF32 2.2 "
                  "PF*, FP64 296 TF / 8, FP32 600 TF / 8; 1.44 TB / 8 = 180 GB HBM3e, 8 TB/s); "
                  "torchtitan 'B200' 2.25e15 (torchtitan tools/utils.py)",
        .notes = "Per-GPU figures vary between NVIDIA documents (TF32 2.2 vs 18/8 = 2.25 PF "
                 "sparse; some listings show 7.7 TB/s and FP64 40 TF at other power limits). The "
                 "HGX (1000 W) figures are used; GB200 runs at a higher limit (own entry).",
    },
    {
        .id = "gb200",
        .name = "NVIDIA GB200 (per GPU)",
        .vendor = "NVIDIA",
        .unit = "GPU (one of the two Blackwell GPUs of a superchip)",
        .dense_flops_per_s = {[FP64] = T(45), [FP32] = T(80), [TF32] = T(1250),
                              [BF16] = T(2500), [FP16] = T(2500), [FP8] = T(5000),
                              [INT8] = T(5000)},
        .sparse_flops_per_s = {[TF32] = T(2500), [BF16] = T(5000), [FP16] = T(5000),
                               [FP8] = T(10000), [INT8] = T(10000)},
        .sparsity = MFU_SPARSITY_2_4,
        .memory_bytes = GB(186),
        .memory_bandwidth_bytes_per_s = TBS(8.0),
        .boost_clock_mhz = 0,
        .peak_clock_mhz = 0,
        .reported_names = n_gb200,
        .source = "NVIDIA GB200 NVL72 datasheet divided by 72 GPUs (FP8 720 PF*, BF16 360 PF*, "
                  "TF32 180 PF*; 13.4 TB HBM3e, 576 TB/s); torchtitan 'GB200' 2.5e15 (half of "
                  "5,000 sparse; torchtitan tools/utils.py)",
        .notes = "FP64 is 45 TF in the launch material and 40 TF in later revisions; 45 is "
                 "kept. 'GB200' must not be read as B200 (a different power limit and peak).",
    },
    {
        .id = "b300",
        .name = "NVIDIA B300 (HGX)",
        .vendor = "NVIDIA",
        .unit = "GPU (one package, two dies)",
        .dense_flops_per_s = {[FP64] = T(1.25), [FP32] = T(75), [TF32] = T(1100),
                              [BF16] = T(2250), [FP16] = T(2250), [FP8] = T(4500)},
        .sparse_flops_per_s = {[TF32] = T(2200), [BF16] = T(4500), [FP16] = T(4500),
                               [FP8] = T(9000)},
        .sparsity = MFU_SPARSITY_2_4,
        .memory_bytes = GB(288),
        .memory_bandwidth_bytes_per_s = TBS(8.0),
        .boost_clock_mhz = 0,
        .peak_clock_mhz = 0,
        .reported_names = n_b300,
        .source = "NVIDIA HGX B300 datasheet per GPU (FP8 72 PF* / 8, BF16 36 PF* / 8, FP64 10 "
                  "TF / 8, FP32 600 TF / 8; 2.3 TB / 8 = 288 GB HBM3e, 8 TB/s); torchtitan "
                  "'B300' 2.25e15 (torchtitan tools/utils.py)",
        .notes = "INT8 is cut on Blackwell Ultra and the published figures disagree (2 POPS* "
                 "per HGX B300 vs 0.15 POPS per GPU elsewhere), so int8 has no figure. FP64 is "
                 "1.25 TF. Some listings give 270 GB usable memory.",
    },
    {
        .id = "gb300",
        .name = "NVIDIA GB300 (per GPU)",
        .vendor = "NVIDIA",
        .unit = "GPU (one of the two Blackwell Ultra GPUs of a superchip)",
        .dense_flops_per_s = {[FP64] = T(1.25), [FP32] = T(80), [TF32] = T(1250),
                              [BF16] = T(2500), [FP16] = T(2500), [FP8] = T(5000)},
        .sparse_flops_per_s = {[TF32] = T(2500), [BF16] = T(5000), [FP16] = T(5000),
                               [FP8] = T(10000)},
        .sparsity = MFU_SPARSITY_2_4,
        .memory_bytes = GB(279),
        .memory_bandwidth_bytes_per_s = TBS(8.0),
        .boost_clock_mhz = 0,
        .peak_clock_mhz = 0,
        .reported_names = n_gb300,
        .source = "NVIDIA GB300 NVL72 datasheet divided by 72 GPUs (FP8 360 PF, FP16/BF16 180 "
                  "PF dense; 20 TB HBM3e, 576 TB/s); torchtitan 'GB300' 2.5e15 (torchtitan "
                  "tools/utils.py)",
        .notes = "As for b300, int8 has no figure. 'GB300' must not be read as B300.",
    },
    /* ---- NVIDIA GeForce and RTX professional ---- */
    {
        .id = "rtx-3090",
        .name = "NVIDIA GeForce RTX 3090",
        .vendor = "NVIDIA",
        .unit = "GPU",
        .dense_flops_per_s = {[FP32] = T(35.6), [TF32] = T(35.6), [BF16] = T(71),
                              [FP16] = T(71), [INT8] = T(284)},
        .sparse_flops_per_s = {[TF32] = T(71), [BF16] = T(142), [FP16] = T(142),
                               [INT8] = T(568)},
        .sparsity = MFU_SPARSITY_2_4,
        .memory_bytes = GB(24),
        .memory_bandwidth_bytes_per_s = GBS(936),
        .boost_clock_mhz = 1695,
        .peak_clock_mhz = 1695,
        .reported_names = n_rtx3090,
        .source = "NVIDIA Ampere GA102 whitepaper, RTX 3090 column (FP16/BF16 tensor with FP32 "
                  "accumulate 71/142*, with FP16 accumulate 142/284*, TF32 35.6/71*, INT8 "
                  "284/568*; 24 GB GDDR6X, 936 GB/s); llm.c 71.2 (llm.c llmc/mfu.h)",
        .notes = "GeForce runs FP32-accumulate tensor math at half rate. bf16/fp16 use the "
                 "FP32-accumulate 71 (what PyTorch/cuBLAS GEMMs use); the FP16-accumulate rate "
                 "is 142. Lightning lists 35.6, the non-tensor shader rate, which inflates MFU "
                 "2x (Lightning fabric throughput.py).",
    },
    {
        .id = "rtx-4090",
        .name = "NVIDIA GeForce RTX 4090",
        .vendor = "NVIDIA",
        .unit = "GPU",
        .dense_flops_per_s = {[FP32] = T(82.6), [TF32] = T(82.6), [BF16] = T(165.2),
                              [FP16] = T(165.2), [FP8] = T(330.3), [INT8] = T(660.6)},
        .sparse_flops_per_s = {[TF32] = T(165.2), [BF16] = T(330.4), [FP16] = T(330.4),
                               [FP8] = T(660.6), [INT8] = T(1321.2)},
        .sparsity = MFU_SPARSITY_2_4,
        .memory_bytes = GB(24),
        .memory_bandwidth_bytes_per_s = GBS(1008),
        .boost_clock_mhz = 2520,
        .peak_clock_mhz = 2520,
        .reported_names = n_rtx4090,
        .source = "NVIDIA Ada Lovelace whitepaper, RTX 4090 column (FP16/BF16 tensor FP32-acc "
                  "165.2/330.4*, FP16-acc 330.3/660.6*, FP8 FP32-acc 330.3/660.6*, TF32 "
                  "82.6/165.2*, INT8 660.6/1321.2*; 24 GB GDDR6X, 1008 GB/s); llm.c 165.2 "
                  "(llm.c llmc/mfu.h)",
        .notes = "bf16/fp16/fp8 use FP32 accumulation (the FP16-accumulate rates are 2x). "
                 "Lightning lists 82.6 (non-tensor) for bf16; llm.c's 165.2 matches this table.",
    },
    {
        .id = "rtx-a4000",
        .name = "NVIDIA RTX A4000",
        .vendor = "NVIDIA",
        .unit = "GPU",
        .dense_flops_per_s = {[FP32] = T(19.2), [TF32] = T(38.35), [BF16] = T(76.7),
                              [FP16] = T(76.7), [INT8] = T(153.4)},
        .sparse_flops_per_s = {[TF32] = T(76.7), [BF16] = T(153.4), [FP16] = T(153.4),
                               [INT8] = T(306.8)},
        .sparsity = MFU_SPARSITY_2_4,
        .memory_bytes = GB(16),
        .memory_bandwidth_bytes_per_s = GBS(448),
        .boost_clock_mhz = 1560,
        .peak_clock_mhz = 1560,
        .reported_names = n_rtx_a4000,
        .source = "NVIDIA RTX A4000 datasheet (FP32 19.2, tensor 153.4* TFLOPS, 16 GB GDDR6, "
                  "448 GB/s); 192 TC x 256 FLOP/clk x 1560 MHz = 76.7 dense",
        .notes = "The datasheet gives one sparse FP16 tensor figure; TF32 (1/2) and INT8 (2x) "
                 "follow the GA102 ratios. Professional cards accumulate in FP32 at full rate, "
                 "so llm.c's GeForce-scaled 38.3 is half of this.",
    },
    {
        .id = "rtx-a5000",
        .name = "NVIDIA RTX A5000",
        .vendor = "NVIDIA",
        .unit = "GPU",
        .dense_flops_per_s = {[FP32] = T(27.8), [TF32] = T(55.55), [BF16] = T(111.1),
                              [FP16] = T(111.1), [INT8] = T(222.2)},
        .sparse_flops_per_s = {[TF32] = T(111.1), [BF16] = T(222.2), [FP16] = T(222.2),
                               [INT8] = T(444.4)},
        .sparsity = MFU_SPARSITY_2_4,
        .memory_bytes = GB(24),
        .memory_bandwidth_bytes_per_s = GBS(768),
        .boost_clock_mhz = 1695,
        .peak_clock_mhz = 1695,
        .reported_names = n_rtx_a5000,
        .source = "NVIDIA RTX A5000 datasheet (FP32 27.8, tensor 222.2* TFLOPS, 24 GB GDDR6, "
                  "768 GB/s); 256 TC x 256 FLOP/clk x 1695 MHz = 111.1 dense",
        .notes = "As rtx-a4000: TF32 and INT8 follow the GA102 ratios; llm.c's 55.5 is the "
                 "GeForce half rate.",
    },
    {
        .id = "rtx-a6000",
        .name = "NVIDIA RTX A6000",
        .vendor = "NVIDIA",
        .unit = "GPU",
        .dense_flops_per_s = {[FP32] = T(38.7), [TF32] = T(77.4), [BF16] = T(154.85),
                              [FP16] = T(154.85), [INT8] = T(309.7)},
        .sparse_flops_per_s = {[TF32] = T(154.8), [BF16] = T(309.7), [FP16] = T(309.7),
                               [INT8] = T(619.4)},
        .sparsity = MFU_SPARSITY_2_4,
        .memory_bytes = GB(48),
        .memory_bandwidth_bytes_per_s = GBS(768),
        .boost_clock_mhz = 1800,
        .peak_clock_mhz = 1800,
        .reported_names = n_rtx_a6000,
        .source = "NVIDIA RTX A6000 datasheet (FP32 38.7, tensor 309.7* TFLOPS, 48 GB GDDR6, "
                  "768 GB/s); torchtitan 'A6000' 154.85e12 (torchtitan tools/utils.py); 336 TC x "
                  "256 "
                  "FLOP/clk x 1800 MHz = 154.8",
        .notes = "Stacks disagree 4x: torchtitan 154.85 (datasheet / 2), llm.c 77.4 (scaled "
                 "from GeForce half-rate FP32 accumulation), Lightning 38.7 (non-tensor FP32). "
                 "154.85 is used: professional Ampere accumulates in FP32 at full rate.",
    },
    {
        .id = "rtx-5000-ada",
        .name = "NVIDIA RTX 5000 Ada Generation",
        .vendor = "NVIDIA",
        .unit = "GPU",
        .dense_flops_per_s = {[FP32] = T(65.3), [TF32] = T(130.55), [BF16] = T(261.1),
                              [FP16] = T(261.1), [FP8] = T(522.2), [INT8] = T(522.2)},
        .sparse_flops_per_s = {[TF32] = T(261.1), [BF16] = T(522.2), [FP16] = T(522.2),
                               [FP8] = T(1044.4), [INT8] = T(1044.4)},
        .sparsity = MFU_SPARSITY_2_4,
        .memory_bytes = GB(32),
        .memory_bandwidth_bytes_per_s = GBS(576),
        .boost_clock_mhz = 2550,
        .peak_clock_mhz = 2550,
        .reported_names = n_rtx5000_ada,
        .source = "NVIDIA RTX 5000 Ada datasheet (FP32 65.3, tensor 1044.4* TFLOPS = FP8 with "
                  "sparsity, 32 GB GDDR6, 576 GB/s); 400 TC x 256 FLOP/clk x 2550 MHz = 261.1 "
                  "bf16 dense",
        .notes = "bf16 = FP8 / 2 and TF32 = bf16 / 2 (Ada ratios, full-rate FP32 accumulation "
                 "on professional cards).",
    },
    {
        .id = "rtx-6000-ada",
        .name = "NVIDIA RTX 6000 Ada Generation",
        .vendor = "NVIDIA",
        .unit = "GPU",
        .dense_flops_per_s = {[FP32] = T(91.1), [TF32] = T(182.125), [BF16] = T(364.25),
                              [FP16] = T(364.25), [FP8] = T(728.5), [INT8] = T(728.5)},
        .sparse_flops_per_s = {[TF32] = T(364.25), [BF16] = T(728.5), [FP16] = T(728.5),
                               [FP8] = T(1457), [INT8] = T(1457)},
        .sparsity = MFU_SPARSITY_2_4,
        .memory_bytes = GB(48),
        .memory_bandwidth_bytes_per_s = GBS(960),
        .boost_clock_mhz = 2505,
        .peak_clock_mhz = 2505,
        .reported_names = n_rtx6000_ada,
        .source = "NVIDIA RTX 6000 Ada datasheet (FP32 91.1, tensor 1457.0* TFLOPS = FP8 with "
                  "sparsity, 48 GB GDDR6, 960 GB/s); 568 TC x 256 FLOP/clk x 2505 MHz = 364.2 "
                  "bf16 dense",
        .notes = "llm.c lists this card as 'NVIDIA RTX A6000 ADA' with 182.2 (GeForce half "
                 "rate); professional Ada accumulates in FP32 at full rate, so 364.25 is used.",
    },
    /* ---- AMD Instinct ---- */
    {
        .id = "mi250x",
        .name = "AMD Instinct MI250X (per GCD)",
        .vendor = "AMD",
        .unit = "GCD (half an MI250X package; ROCm shows each GCD as one device)",
        .dense_flops_per_s = {[FP64] = T(47.85), [FP32] = T(47.85), [BF16] = T(191.5),
                              [FP16] = T(191.5), [INT8] = T(191.5)},
        .sparsity = MFU_SPARSITY_NONE,
        .memory_bytes = GB(64),
        .memory_bandwidth_bytes_per_s = TBS(1.6),
        .boost_clock_mhz = 1700,
        .peak_clock_mhz = 1700,
        .reported_names = n_mi250x,
        .source = "AMD MI250X datasheet halved (383 TF FP16/BF16, 95.7 TF FP64/FP32 matrix, "
                  "128 GB HBM2e, 3.2 TB/s per package); ROCm 'MI250 microarchitecture' "
                  "FLOPS/clock/CU (1024 FP16, 256 FP64 matrix) x 110 CUs x 1700 MHz = 191.5; "
                  "torchtitan 'MI250X' 191.5e12 (torchtitan tools/utils.py)",
        .notes = "fp64/fp32 are the matrix rates (vector 23.95 per GCD).",
    },
    {
        .id = "mi300x",
        .name = "AMD Instinct MI300X",
        .vendor = "AMD",
        .unit = "GPU (OAM, SPX mode)",
        .dense_flops_per_s = {[FP64] = T(163.4), [FP32] = T(163.4), [TF32] = T(653.7),
                              [BF16] = T(1307.4), [FP16] = T(1307.4), [FP8] = T(2614.9),
                              [INT8] = T(2614.9)},
        .sparse_flops_per_s = {[TF32] = T(1307.4), [BF16] = T(2614.9), [FP16] = T(2614.9),
                               [FP8] = T(5229.8), [INT8] = T(5229.8)},
        .sparsity = MFU_SPARSITY_2_4,
        .memory_bytes = GB(192),
        .memory_bandwidth_bytes_per_s = TBS(5.3),
        .boost_clock_mhz = 2100,
        .peak_clock_mhz = 2100,
        .reported_names = n_mi300x,
        .source = "ROCm docs 'AMD Instinct MI300 series microarchitecture', MI300X peak table "
                  "(FLOPS/clock/CU: 2048 FP16/BF16, 4096 FP8/INT8, 1024 TF32, 256 FP64 matrix; "
                  "1307.4 TF BF16, 5.3 TB/s) = 304 CUs x 2100 MHz; AMD MI300X datasheet (192 GB "
                  "HBM3, sparsity 2x); torchtitan 1300e12 (torchtitan tools/utils.py)",
        .notes = "torchtitan rounds to 1300 (0.6% lower); 1307.4 is AMD's figure.",
    },
    {
        .id = "mi325x",
        .name = "AMD Instinct MI325X",
        .vendor = "AMD",
        .unit = "GPU (OAM, SPX mode)",
        .dense_flops_per_s = {[FP64] = T(163.4), [FP32] = T(163.4), [TF32] = T(653.7),
                              [BF16] = T(1307.4), [FP16] = T(1307.4), [FP8] = T(2614.9),
                              [INT8] = T(2614.9)},
        .sparse_flops_per_s = {[TF32] = T(1307.4), [BF16] = T(2614.9), [FP16] = T(2614.9),
                               [FP8] = T(5229.8), [INT8] = T(5229.8)},
        .sparsity = MFU_SPARSITY_2_4,
        .memory_bytes = GB(256),
        .memory_bandwidth_bytes_per_s = TBS(6.0),
        .boost_clock_mhz = 2100,
        .peak_clock_mhz = 2100,
        .reported_names = n_mi325x,
        .source = "AMD MI325X datasheet (same CDNA 3 compute as MI300X, 1307.4 TF FP16; 256 GB "
                  "HBM3E, 6 TB/s); torchtitan 1300e12 (torchtitan tools/utils.py)",
        .notes = "Same peaks as mi300x; more and faster memory.",
    },
    {
        .id = "mi355x",
        .name = "AMD Instinct MI355X",
        .vendor = "AMD",
        .unit = "GPU (OAM, SPX mode)",
        .dense_flops_per_s = {[FP64] = T(78.6), [FP32] = T(157.3), [BF16] = T(2516.6),
                              [FP16] = T(2516.6), [FP8] = T(5033.2), [INT8] = T(5033.2)},
        .sparsity = MFU_SPARSITY_NONE,
        .memory_bytes = GB(288),
        .memory_bandwidth_bytes_per_s = TBS(8.0),
        .boost_clock_mhz = 2400,
        .peak_clock_mhz = 2400,
        .reported_names = n_mi355x,
        .source = "ROCm 'AMD GPU specifications' (MI355X: 256 CUs, 288 GiB) x AMD ISSCC 2026 "
                  "(8192 FP8 FLOPS/clock/CU) x 2400 MHz peak clock (Hot Chips 2025) = 5033 TF "
                  "FP8; FP16/BF16 half of it; AMD MI355X product page '2.5 PFLOP/s' dense BF16 "
                  "as quoted in AMD-AGI/Primus PR #772 and torchtitan PR #4779; torchtitan "
                  "'MI355X' 2500e12 (torchtitan tools/utils.py)",
        .notes = "Computed from CU count x per-CU rate x clock (the ISSCC rate and the Hot Chips "
                 "clock reached us through press reports); it agrees with AMD's 2.5 PFLOP/s to "
                 "0.7%, and torchtitan rounds to 2500. "
                 "CDNA 4 has no TF32 rate we could source (tf32 has no figure); AMD's sparse "
                 "figures are not sourced here.",
    },
    /* ---- Google TPU ---- */
    {
        .id = "tpu-v4",
        .name = "Google TPU v4",
        .vendor = "Google",
        .unit = "chip (2 TensorCores as one megacore device)",
        .dense_flops_per_s = {[BF16] = T(275), [INT8] = T(275)},
        .sparsity = MFU_SPARSITY_NONE,
        .memory_bytes = GIB(32),
        .memory_bandwidth_bytes_per_s = GBS(1200),
        .boost_clock_mhz = 0,
        .peak_clock_mhz = 0,
        .reported_names = n_tpu_v4,
        .source = "Cloud TPU docs 'TPU v4' (peak 275 TFLOPS bf16 or int8 per chip; 32 GiB HBM2, "
                  "1200 GBps); PaLM App. B 275; torchtitan, Lightning, MaxText (see "
                  "docs/devices.md)",
        .notes = "",
    },
    {
        .id = "tpu-v5e",
        .name = "Google TPU v5e",
        .vendor = "Google",
        .unit = "chip (1 TensorCore)",
        .dense_flops_per_s = {[BF16] = T(197), [INT8] = T(393)},
        .sparsity = MFU_SPARSITY_NONE,
        .memory_bytes = GB(16),
        .memory_bandwidth_bytes_per_s = GBS(819),
        .boost_clock_mhz = 0,
        .peak_clock_mhz = 0,
        .reported_names = n_tpu_v5e,
        .source = "Cloud TPU docs 'TPU v5e' (197 TFLOPs bf16, 393 TOPs int8 per chip; 16 GB "
                  "HBM2, 819 GBps); torchtitan, Lightning 'v5litepod', MaxText (see "
                  "docs/devices.md)",
        .notes = "One version of the page gives the bandwidth as 800 GiBps (859 GB/s); 819 GBps "
                 "from the key-specifications table is used.",
    },
    {
        .id = "tpu-v5p",
        .name = "Google TPU v5p",
        .vendor = "Google",
        .unit = "chip (2 TensorCores as one megacore device)",
        .dense_flops_per_s = {[BF16] = T(459), [FP8] = T(459), [INT8] = T(918)},
        .sparsity = MFU_SPARSITY_NONE,
        .memory_bytes = GB(95),
        .memory_bandwidth_bytes_per_s = GBS(2765),
        .boost_clock_mhz = 0,
        .peak_clock_mhz = 0,
        .reported_names = n_tpu_v5p,
        .source = "Cloud TPU docs 'TPU v5p' (459 TFLOPs bf16 per chip, 95 GB HBM2e, 2765 GBps) "
                  "and 'TPU7x' comparison table (FP8 459 on v5p); torchtitan, MaxText ("
                  "see docs/devices.md)",
        .notes = "fp8 runs at the bf16 rate on v5p. int8 918 TOPS is Google's v5p launch "
                 "figure.",
    },
    {
        .id = "tpu-v6e",
        .name = "Google TPU v6e (Trillium)",
        .vendor = "Google",
        .unit = "chip (1 TensorCore)",
        .dense_flops_per_s = {[BF16] = T(918), [FP8] = T(918), [INT8] = T(1836)},
        .sparsity = MFU_SPARSITY_NONE,
        .memory_bytes = GB(32),
        .memory_bandwidth_bytes_per_s = GBS(1638),
        .boost_clock_mhz = 0,
        .peak_clock_mhz = 0,
        .reported_names = n_tpu_v6e,
        .source = "Cloud TPU docs 'TPU v6e' (918 TFLOPs bf16, 1836 TOPs int8 per chip; 32 GB, "
                  "1638 GBps) and 'TPU7x' table (FP8 918); torchtitan, MaxText (see "
                  "docs/devices.md)",
        .notes = "fp8 runs at the bf16 rate on v6e.",
    },
    {
        .id = "tpu-v7",
        .name = "Google TPU7x per TensorCore",
        .vendor = "Google",
        .unit = "TensorCore (half a chip; JAX shows each as one device)",
        .dense_flops_per_s = {[BF16] = T(1153.5), [FP8] = T(2307)},
        .sparsity = MFU_SPARSITY_NONE,
        .memory_bytes = GIB(96),
        .memory_bandwidth_bytes_per_s = TBS(3.685),
        .boost_clock_mhz = 0,
        .peak_clock_mhz = 0,
        .reported_names = n_tpu_v7,
        .source = "Cloud TPU docs 'TPU7x (Ironwood)' (per chip: 2307 TFLOPs BF16, 4614 FP8, 192 "
                  "GiB HBM; two TensorCores, no megacore per JAX ChipVersion) halved; Google's "
                  "Ironwood announcement 7.37 TB/s per chip halved; torchtitan 'v7' "
                  "2307e12 / 2 (torchtitan tools/utils.py)",
        .notes = "Per device, like torchtitan: frameworks count each TensorCore as a device, so "
                 "with world size = devices this entry gives the right capacity. Use "
                 "tpu-v7-chip when counting chips.",
    },
    {
        .id = "tpu-v7-chip",
        .name = "Google TPU7x per chip",
        .vendor = "Google",
        .unit = "chip (2 TensorCores, 2 framework devices)",
        .dense_flops_per_s = {[BF16] = T(2307), [FP8] = T(4614)},
        .sparsity = MFU_SPARSITY_NONE,
        .memory_bytes = GIB(192),
        .memory_bandwidth_bytes_per_s = TBS(7.37),
        .boost_clock_mhz = 0,
        .peak_clock_mhz = 0,
        .reported_names = n_tpu_v7_chip,
        .source = "Cloud TPU docs 'TPU7x (Ironwood)' (2307 TFLOPs BF16, 4614 FP8, 192 GiB HBM per "
                  "chip); Google's Ironwood announcement (7.37 TB/s per chip)",
        .notes = "Only chosen by its id or 'TPU7x chip': what JAX reports ('TPU7x') is the "
                 "per-device entry tpu-v7.",
    },
    /* ---- Intel Gaudi ---- */
    {
        .id = "gaudi2",
        .name = "Intel Gaudi 2",
        .vendor = "Intel",
        .unit = "accelerator (OAM)",
        .dense_flops_per_s = {[BF16] = T(432), [FP8] = T(865)},
        .sparsity = MFU_SPARSITY_NONE,
        .memory_bytes = GB(96),
        .memory_bandwidth_bytes_per_s = TBS(2.46),
        .boost_clock_mhz = 0,
        .peak_clock_mhz = 0,
        .reported_names = n_gaudi2,
        .source = "Intel, 'Intel Gaudi 3 AI Accelerator' (Hot Chips 2024) generations table "
                  "(Gaudi 2: 432 TFLOPs BF16, 96 GB, 2.46 TB/s); Intel Gaudi 2 launch material "
                  "(FP8 865 TFLOPS, MME)",
        .notes = "Matrix-engine (MME) rates; the vector cores are far slower. 'HL-225' is the "
                 "name hl-smi shows.",
    },
    {
        .id = "gaudi3",
        .name = "Intel Gaudi 3",
        .vendor = "Intel",
        .unit = "accelerator (OAM, two dies)",
        .dense_flops_per_s = {[BF16] = T(1835), [FP8] = T(1835)},
        .sparsity = MFU_SPARSITY_NONE,
        .memory_bytes = GB(128),
        .memory_bandwidth_bytes_per_s = TBS(3.67),
        .boost_clock_mhz = 0,
        .peak_clock_mhz = 0,
        .reported_names = n_gaudi3,
        .source = "Intel, 'Intel Gaudi 3 AI Accelerator' (Hot Chips 2024) spec table (BF16 and "
                  "FP8 matrix 1835 TFLOPs, BF16 vector 28.7, 128 GB HBM2e, 3.67 TB/s)",
        .notes = "FP8 runs at the BF16 matrix rate on Gaudi 3. Some press rounds bandwidth to "
                 "3.7 TB/s.",
    },
    /* ---- AWS Trainium ---- */
    {
        .id = "trainium1",
        .name = "AWS Trainium (per chip)",
        .vendor = "AWS",
        .unit = "chip (2 NeuronCore-v2; torch-neuronx shows each core as a device)",
        .dense_flops_per_s = {[FP32] = T(47.5), [TF32] = T(190), [BF16] = T(190),
                              [FP16] = T(190), [FP8] = T(190), [INT8] = T(380)},
        .sparsity = MFU_SPARSITY_NONE,
        .memory_bytes = GIB(32),
        .memory_bandwidth_bytes_per_s = 820.0 * 1073741824.0,
        .boost_clock_mhz = 0,
        .peak_clock_mhz = 0,
        .reported_names = n_trn1,
        .source = "AWS Neuron docs 'Trainium Architecture' (two NeuronCore-v2: 380 INT8 TOPS, 190 "
                  "FP16/BF16/cFP8/TF32 TFLOPS, 47.5 FP32; 32 GiB, 820 GiB/s); Composer 'trn1' "
                  "190e12/2 per core (Composer speed_monitor.py)",
        .notes = "Per chip. Frameworks count NeuronCores (2 per chip): divide by 2 per core, or "
                 "count chips. torchtitan uses 90e12 per core.",
    },
    {
        .id = "trainium2",
        .name = "AWS Trainium2 (per chip)",
        .vendor = "AWS",
        .unit = "chip (8 NeuronCore-v3; 4 logical cores at the default LNC=2)",
        .dense_flops_per_s = {[FP32] = T(181), [TF32] = T(667), [BF16] = T(667),
                              [FP16] = T(667), [FP8] = T(1299)},
        .sparse_flops_per_s = {[TF32] = T(2563), [BF16] = T(2563), [FP16] = T(2563),
                               [FP8] = T(2563)},
        .sparsity = MFU_SPARSITY_OTHER,
        .memory_bytes = GIB(96),
        .memory_bandwidth_bytes_per_s = TBS(2.9),
        .boost_clock_mhz = 0,
        .peak_clock_mhz = 0,
        .reported_names = n_trn2,
        .source = "AWS Neuron docs 'Trainium2 Architecture' (eight NeuronCore-v3: 1299 FP8, 667 "
                  "BF16/FP16/TF32, 181 FP32 TFLOPS, 2563 FP8/FP16/BF16/TF32 sparse; 96 GiB, 2.9 "
                  "TB/s); torchtitan 79e12 x LNC 2 per logical core (torchtitan tools/utils.py)",
        .notes = "The sparse figure is one number for every dtype and is not 2x dense (AWS "
                 "supports several structured-sparsity patterns). Per chip; torchtitan's 158 per "
                 "logical core is 5% below 667 / 4.",
    },
    /* ---- appended later (ids and table positions of earlier entries stay as they were) ---- */
    {
        .id = "v100s-pcie",
        .name = "NVIDIA Tesla V100S PCIe",
        .vendor = "NVIDIA",
        .unit = "GPU",
        .dense_flops_per_s = {[FP64] = T(8.2), [FP32] = T(16.4), [FP16] = T(130)},
        .sparsity = MFU_SPARSITY_NONE,
        .memory_bytes = GB(32),
        .memory_bandwidth_bytes_per_s = GBS(1134),
        .boost_clock_mhz = 0,
        .peak_clock_mhz = 0,
        .reported_names = n_v100s_pcie,
        .source = "NVIDIA Tesla V100 datasheet (volta-v100-datasheet-update-us-1165301-r5), V100S "
                  "PCIe column (FP64 8.2, FP32 16.4, tensor 130 TFLOPS; 32 GB HBM2, 1134 "
                  "GB/sec, 250 W); Composer 'v100s-pcie' and Lightning 'v100s pcie' use the same "
                  "8.2/16.4/130 (shared/reference/flops-and-peaks.md)",
        .notes = "fp16 is the tensor-core rate (FP16 multiply, FP32 accumulate); no bf16/tf32 on "
                 "Volta and no sparsity. The datasheet states no clock (130 / (640 TC x 128 "
                 "FLOP/clk) implies 1587 MHz, 16.4 / (5120 x 2) 1602 MHz), so none is given. Only "
                 "a 32 GB model exists. 'V100' alone does not match this entry: V100S is its own word.",
    },
    {
        .id = "t4",
        .name = "NVIDIA T4",
        .vendor = "NVIDIA",
        .unit = "GPU",
        .dense_flops_per_s = {[FP32] = T(8.1), [FP16] = T(65), [INT8] = T(130)},
        .sparsity = MFU_SPARSITY_NONE,
        .memory_bytes = GB(16),
        .memory_bandwidth_bytes_per_s = GBS(320),
        .boost_clock_mhz = 1590,
        .peak_clock_mhz = 1590,
        .reported_names = n_t4,
        .source = "NVIDIA T4 datasheet (t4-tensor-core-datasheet-951643: Single-Precision 8.1 "
                  "TFLOPS, Mixed-Precision (FP16/FP32) 65 TFLOPS, INT8 130 TOPS, INT4 260 TOPS; "
                  "16 GB GDDR6, 300 GB/sec; 70 W) and NVIDIA T4 product page (same peaks, "
                  "'320+ GB/s'); Composer 't4' and Lightning 't4' 65/130/8.1 "
                  "(shared/reference/flops-and-peaks.md); CUDA deviceQuery output of a Tesla T4 "
                  "(public): 40 SMs, 2560 CUDA cores, 1590 MHz max clock, 256-bit memory bus at "
                  "5001 MHz",
        .notes = "Turing: fp16 is the tensor-core rate with FP32 accumulation (320 TC x 128 "
                 "FLOP/clk x 1590 MHz = 65.1), int8 twice it; no bf16, tf32 or fp8, no sparsity. "
                 "Bandwidth: the datasheet prints 300 GB/sec, the product page 320+ GB/s; 320 is "
                 "used, which deviceQuery's 256-bit bus at 5001 MHz (x2, DDR) gives. 'T4G' (AWS) and 'T40' are other names and do "
                 "not match.",
    },
    {
        .id = "mi350x",
        .name = "AMD Instinct MI350X",
        .vendor = "AMD",
        .unit = "GPU (OAM, SPX mode)",
        .dense_flops_per_s = {[BF16] = T(2306.9), [FP16] = T(2306.9), [FP8] = T(4613.7)},
        .sparsity = MFU_SPARSITY_NONE,
        .memory_bytes = GB(288),
        .memory_bandwidth_bytes_per_s = TBS(8.0),
        .boost_clock_mhz = 2200,
        .peak_clock_mhz = 2200,
        .reported_names = n_mi350x,
        .source = "ROCm 'AMD GPU specifications' (MI350X: gfx950, 256 CUs) x AMD ISSCC 2026 "
                  "(8192 FP8 FLOPS/clock/CU, as reported by the press; BF16/FP16 half of it) x "
                  "2200 MHz max clock (AMD at Hot Chips 2025 as reported by the press: MI350X "
                  "air-cooled, 1000 W, 2.2 GHz; MI355X 2.4 GHz) = 4613.7 TF "
                  "FP8, 2306.9 BF16; AMD MI350X product page '2.3 PFLOP/s dense BF16' as quoted in "
                  "torchtitan PR #4779 (which adds 'MI350X' 2300e12) and AMD-AGI/Primus PR #772; "
                  "memory: 'AMD Instinct MI350X 288GB HBM3e' (AMD's MLPerf Inference v6.1 system "
                  "description; ROCm lists 288), 8 TB/s (MI350 series, Hot Chips 2025 press "
                  "reports)",
        .notes = "Same CDNA 4 die and CU count as mi355x at a lower clock (2200 vs 2400 MHz) and "
                 "power (1000 vs 1400 W). fp64, fp32 and int8 have no figure: no AMD MI350X figure "
                 "for them was found. AMD's sparse figures are not sourced here; CDNA 4 has no "
                 "TF32 rate.",
    },
};

/* clang-format on */

size_t mfu_device_count(void)
{
    return MFU__ARRAY_LEN(table);
}

const mfu_device_info *mfu_device_at(size_t i)
{
    return i < MFU__ARRAY_LEN(table) ? &table[i] : NULL;
}
