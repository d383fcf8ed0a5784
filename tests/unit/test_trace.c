/*
 * test_trace.c - src/trace: the JSON tokenizer (pieces of any size, escapes, errors with their
 * line and column, numbers), the kernel classes and matmul FLOPs, the timeline's parts, a
 * synthetic trace whose every figure is known, every error a reader names, the bounded memory
 * of a long trace, every bundled trace's invariants, and the set: ranks, straggler, the run
 * of the steps and the waterfall.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "mfu/mfu.h"
#include "trace/internal.h"
#include "trace_test.h"

/* ---- the tokenizer ------------------------------------------------------------------------ */

typedef struct toklog {
    char text[8192];
    size_t n;
    bool cut; /* a token was cut */
} toklog;

static mfu_status log_tok(void *ctx, const mfu__jt *t, mfu_error *err)
{
    (void)err;
    toklog *l = ctx;
    l->cut = l->cut || t->cut;
    static const char kinds[] = "{}[]KSNtfn";
    int w = snprintf(l->text + l->n, sizeof l->text - l->n, "%c%d:%s%s|", kinds[t->kind], t->depth,
                     t->text, t->cut ? "~" : "");
    if (w > 0 && (size_t)w < sizeof l->text - l->n)
        l->n += (size_t)w;
    return MFU_OK;
}

/* Tokens of doc fed in pieces of `piece` bytes (0: whole); the status of the end. */
static mfu_status tokens(const char *doc, size_t len, size_t piece, toklog *l, mfu_error *e)
{
    memset(l, 0, sizeof *l);
    memset(e, 0, sizeof *e);
    mfu__jtok j;
    assert_true(mfu__jtok_init(&j, log_tok, l));
    mfu_status st = MFU_OK;
    size_t step = piece ? piece : (len ? len : 1);
    for (size_t i = 0; i < len && st == MFU_OK; i += step)
        st = mfu__jtok_feed(&j, doc + i, len - i < step ? len - i : step, e);
    if (st == MFU_OK)
        st = mfu__jtok_end(&j, e);
    mfu__jtok_free(&j);
    return st;
}

static void test_jtok_pieces(void **state)
{
    (void)state;
    const char *doc = "{\"traceEvents\": [ {\"ph\":\"X\", \"ts\": 12.5e3, \"a\": [true, false,"
                      " null, -0.5, NaN, Infinity, -Infinity], \"s\": \"x\\\"y\\u00e9\"} ],\n"
                      "  \"k\": {} }  \n";
    toklog whole, bytes;
    mfu_error e;
    assert_int_equal(tokens(doc, strlen(doc), 0, &whole, &e), MFU_OK);
    assert_int_equal(tokens(doc, strlen(doc), 1, &bytes, &e), MFU_OK);
    assert_string_equal(whole.text, bytes.text);
    assert_string_equal(whole.text,
                        "{0:{|K1:traceEvents|[1:[|{2:{|K3:ph|S3:X|K3:ts|N3:12.5e3|K3:a|[3:[|"
                        "t4:true|f4:false|n4:null|N4:-0.5|N4:NaN|N4:Infinity|N4:-Infinity|]3:]|"
                        "K3:s|S3:x\"y\xc3\xa9|}2:}|]1:]|K1:k|{1:{|}1:}|}0:}|");
    for (size_t p = 2; p < 9; p++) {
        toklog l;
        assert_int_equal(tokens(doc, strlen(doc), p, &l, &e), MFU_OK);
        assert_string_equal(l.text, whole.text);
    }
}

static void test_jtok_strings(void **state)
{
    (void)state;
    toklog l;
    mfu_error e;
    const char *doc =
        "[\"a\\n\\t\\\\\\/\\b\\f\\r\", \"\\ud83d\\ude00\", \"\\udc00x\", \"\\ud83dy\"]";
    assert_int_equal(tokens(doc, strlen(doc), 3, &l, &e), MFU_OK);
    assert_string_equal(l.text, "[0:[|S1:a\n\t\\/\b\f\r|S1:\xf0\x9f\x98\x80|S1:\xef\xbf\xbdx|"
                                "S1:\xef\xbf\xbdy|]0:]|");
    /* a string longer than the limit is cut and flagged, not an error */
    size_t n = MFU_TRACE_MAX_STRING + 100;
    char *big = malloc(n + 8);
    assert_non_null(big);
    big[0] = '[';
    big[1] = '"';
    memset(big + 2, 'q', n);
    memcpy(big + 2 + n, "\"]", 3);
    mfu__jtok j;
    toklog *lg = calloc(1, sizeof *lg);
    assert_non_null(lg);
    assert_true(mfu__jtok_init(&j, log_tok, lg));
    assert_int_equal(mfu__jtok_feed(&j, big, strlen(big), &e), MFU_OK);
    assert_int_equal(mfu__jtok_end(&j, &e), MFU_OK);
    mfu__jtok_free(&j);
    assert_true(lg->cut);
    free(lg);
    free(big);
}

static void test_jtok_errors(void **state)
{
    (void)state;
    static const struct {
        const char *doc;
        long line, col;
        const char *words;
    } cases[] = {
        {"{\"a\":1,}", 1, 8, "expected a string key, got '}'"},
        {"{\"a\" 1}", 1, 6, "expected ':' after the key, got '1'"},
        {"[1 2]", 1, 4, "expected ',' or the closing bracket"},
        {"{\"a\":tru}", 1, 6, "got 'tru'"},
        {"[01]", 1, 2, "got '01'"},
        {"]", 1, 1, "got ']'"},
        {"{\"a\":1}}", 1, 8, "expected the end of the document"},
        {"\n\n  [1,\n  {\"x\": \"a\nb\"}]", 4, 11, "a raw newline inside a string"},
        {"[\"\\q\"]", 1, 4, "an unknown escape"},
        {"[\"\\u12g4\"]", 1, 7, "four hex digits"},
        {"[1] x", 1, 5, "expected the end of the document"},
        {"", 0, 0, "empty: no JSON at all"},
        {"   \n ", 0, 0, "empty: no JSON at all"},
        {"[", 1, 2, "truncated"},
        {"{\"traceEvents\": [{\"a\": \"bc", 1, 27, "inside a string"},
        {"{\"traceEvents\": [{\"a\": 1", 1, 25, "ends early (inside 3 open arrays and objects)"},
        {"[1e]", 1, 2, "got '1e'"},
        {"[-]", 1, 2, "got '-'"},
        {"[\x01]", 1, 2, "got byte 0x01"},
    };
    for (size_t i = 0; i < MFU__ARRAY_LEN(cases); i++) {
        toklog l;
        mfu_error e;
        for (size_t piece = 0; piece < 3; piece++) {
            mfu_status st = tokens(cases[i].doc, strlen(cases[i].doc), piece, &l, &e);
            if (st != MFU_E_PARSE || e.line != cases[i].line || e.column != cases[i].col ||
                !strstr(e.message, cases[i].words))
                fail_msg("case %zu (%s), piece %zu: status %d line %ld col %ld: %s", i,
                         cases[i].doc, piece, st, e.line, e.column, e.message);
        }
    }
    /* nesting deeper than the limit */
    char deep[MFU_TRACE_MAX_DEPTH + 2];
    memset(deep, '[', sizeof deep - 1);
    deep[sizeof deep - 1] = '\0';
    toklog l;
    mfu_error e;
    assert_int_equal(tokens(deep, strlen(deep), 0, &l, &e), MFU_E_PARSE);
    assert_non_null(strstr(e.message, "MFU_TRACE_MAX_DEPTH"));
    assert_int_equal(e.column, MFU_TRACE_MAX_DEPTH + 1);
    /* a number longer than the word limit */
    char num[MFU__JT_MAX_WORD + 8];
    num[0] = '[';
    memset(num + 1, '7', MFU__JT_MAX_WORD + 2);
    num[MFU__JT_MAX_WORD + 3] = ']';
    num[MFU__JT_MAX_WORD + 4] = '\0';
    assert_int_equal(tokens(num, strlen(num), 5, &l, &e), MFU_E_PARSE);
    assert_non_null(strstr(e.message, "longer than"));
}

static void test_jtok_numbers(void **state)
{
    (void)state;
    static const struct {
        const char *s;
        bool ok;
        int64_t ns;
    } us[] = {
        {"1712195495519689.047", true, 1712195495519689047LL},
        {"1712195495519689", true, 1712195495519689000LL},
        {"63.813", true, 63813},
        {"1.28", true, 1280},
        {"0.0005", true, 1}, /* 0.5 ns rounds up */
        {"0.0004", true, 0},
        {"12.3456", true, 12346},
        {"-3.5", true, -3500},
        {"1.5e3", true, 1500000},
        {"2E-3", true, 2},
        {"1e20", false, 0},
        {"4000000000000001", false, 0},
        {"4000000000000000", true, 4000000000000000000LL},
        {"NaN", false, 0},
        {"Infinity", false, 0},
        {"abc", false, 0},
    };
    for (size_t i = 0; i < MFU__ARRAY_LEN(us); i++) {
        int64_t v = -777;
        bool ok = mfu__jt_us_to_ns(us[i].s, &v);
        if (ok != us[i].ok || (ok && v != us[i].ns))
            fail_msg("us_to_ns(%s) = %d, %lld", us[i].s, ok, (long long)v);
    }
    int64_t v;
    assert_true(mfu__jt_int("123", &v) && v == 123);
    assert_true(mfu__jt_int("-5", &v) && v == -5);
    assert_true(mfu__jt_int("5.0", &v) && v == 5);
    assert_true(mfu__jt_int("0x1f", &v) && v == 31);
    assert_false(mfu__jt_int("5.5", &v));
    assert_false(mfu__jt_int("0xzz", &v));
    assert_false(mfu__jt_int("", &v));
}

/* ---- classes and FLOPs ------------------------------------------------------------------- */

static void test_classify(void **state)
{
    (void)state;
    static const struct {
        const char *cat, *name;
        mfu_trace_class cls;
    } cases[] = {
        /* names as the bundled traces write them */
        {"kernel",
         "ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclDevComm*, unsigned long, ncclWork*)",
         MFU_TRACE_CLASS_COMMUNICATION},
        {"kernel", "ncclDevKernel_AllGather_RING_LL(ncclDevComm*, unsigned long, ncclWork*)",
         MFU_TRACE_CLASS_COMMUNICATION},
        {"kernel", "volta_sgemm_128x32_nt", MFU_TRACE_CLASS_MATMUL},
        {"kernel", "ampere_sgemm_128x64_nn", MFU_TRACE_CLASS_MATMUL},
        {"kernel",
         "void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_64x64_16x6_tn_align4>(cutlass_80_"
         "tensorop_s1688gemm_64x64_16x6_tn_align4::Params)",
         MFU_TRACE_CLASS_MATMUL},
        {"kernel", "Cijk_Alik_Bljk_SB_MT64x64x16_SN_1LDSB0_APM1", MFU_TRACE_CLASS_MATMUL},
        {"kernel", "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x256x64",
         MFU_TRACE_CLASS_MATMUL},
        {"kernel", "triton_tem_fused_mm_0", MFU_TRACE_CLASS_MATMUL},
        {"kernel", "void gemv2T_kernel_val<int, int, float, float, float, 128, 16, 4, 4>",
         MFU_TRACE_CLASS_MATMUL},
        /* FBGEMM's embedding kernels are lookups; their parameters name fbgemm_gpu types */
        {"kernel",
         "void split_embedding_codegen_forward_unweighted_kernel<c10::Half, c10::Half, float, "
         "false, long, 2ul, 8ul>(at::GenericPackedTensorAccessor<fbgemm_gpu::Half, 1ul>, long)",
         MFU_TRACE_CLASS_OTHER},
        {"kernel", "void fbgemm_gpu::permute_2D_lengths_kernel<int>(int, int, int const*)",
         MFU_TRACE_CLASS_OTHER},
        {"kernel",
         "void flash_fwd_kernel<Flash_fwd_kernel_traits<128, 64, 64, 4, false>>(Flash_fwd_params)",
         MFU_TRACE_CLASS_ATTENTION},
        {"kernel",
         "fmha_cutlassF_f16_aligned_64x64_rf_sm80(PyTorchMemEffAttention::AttentionKernel)",
         MFU_TRACE_CLASS_ATTENTION},
        {"kernel", "void at::native::(anonymous namespace)::cunn_SoftMaxForward<4, float>(float*)",
         MFU_TRACE_CLASS_OTHER},
        /* a parameter type does not make a kernel attention */
        {"kernel", "void at::native::elementwise_kernel<128, 2>(int, AttentionMask)",
         MFU_TRACE_CLASS_OTHER},
        {"gpu_memcpy", "Memcpy HtoD (Pinned -> Device)", MFU_TRACE_CLASS_MEMCPY},
        {"gpu_memset", "Memset (Device)", MFU_TRACE_CLASS_MEMCPY},
        {"kernel", "Memcpy DtoD (Device -> Device)", MFU_TRACE_CLASS_MEMCPY},
        {"kernel",
         "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>>",
         MFU_TRACE_CLASS_OTHER},
        {NULL, NULL, MFU_TRACE_CLASS_OTHER},
    };
    for (size_t i = 0; i < MFU__ARRAY_LEN(cases); i++) {
        mfu_trace_class c = mfu_trace_classify(cases[i].cat, cases[i].name);
        if (c != cases[i].cls)
            fail_msg("%s: %s, want %s", cases[i].name ? cases[i].name : "(null)",
                     mfu_trace_class_name(c), mfu_trace_class_name(cases[i].cls));
    }
    assert_string_equal(mfu_trace_class_name(MFU_TRACE_CLASS_COUNT_), "?");
    assert_string_equal(mfu_trace_part_name(MFU_TRACE_COMM_EXPOSED), "communication_exposed_s");
    assert_string_equal(mfu_trace_part_name(MFU_TRACE_PARTS_), "?");
}

static void test_matmul_flops(void **state)
{
    (void)state;
    int64_t d[MFU__TRACE_DIMS_INPUTS][MFU__TRACE_DIMS_RANK] = {{64, 128}, {128, 256}};
    int nd[MFU__TRACE_DIMS_INPUTS] = {2, 2};
    assert_true(mfu__trace_matmul_flops("aten::mm", d, nd, 2) == 2.0 * 64 * 128 * 256);
    assert_true(mfu__trace_matmul_flops("aten::_scaled_mm", d, nd, 2) == 2.0 * 64 * 128 * 256);
    assert_true(isnan(mfu__trace_matmul_flops("aten::add", d, nd, 2)));
    assert_true(isnan(mfu__trace_matmul_flops("aten::mm", d, nd, 1)));
    int64_t a[MFU__TRACE_DIMS_INPUTS][MFU__TRACE_DIMS_RANK] = {{512}, {1024, 1705}, {1705, 512}};
    int na[MFU__TRACE_DIMS_INPUTS] = {1, 2, 2, -1};
    assert_true(mfu__trace_matmul_flops("aten::addmm", a, na, 3) == 2.0 * 1024 * 1705 * 512);
    int64_t b[MFU__TRACE_DIMS_INPUTS][MFU__TRACE_DIMS_RANK] = {{8, 64, 32}, {8, 32, 16}};
    int nb[MFU__TRACE_DIMS_INPUTS] = {3, 3};
    assert_true(mfu__trace_matmul_flops("aten::bmm", b, nb, 2) == 2.0 * 8 * 64 * 32 * 16);
    int64_t c[MFU__TRACE_DIMS_INPUTS][MFU__TRACE_DIMS_RANK] = {
        {8, 64, 16}, {8, 64, 32}, {8, 32, 16}};
    int nc[MFU__TRACE_DIMS_INPUTS] = {3, 3, 3};
    assert_true(mfu__trace_matmul_flops("aten::baddbmm", c, nc, 3) == 2.0 * 8 * 64 * 32 * 16);
    /* inner dimensions that do not agree, a bad rank */
    d[1][0] = 129;
    assert_true(isnan(mfu__trace_matmul_flops("aten::mm", d, nd, 2)));
    nb[0] = -1;
    assert_true(isnan(mfu__trace_matmul_flops("aten::bmm", b, nb, 2)));
    assert_true(mfu__trace_is_matmul_op("aten::baddbmm"));
    assert_false(mfu__trace_is_matmul_op("aten::matmul"));
}

/* ---- the timeline --------------------------------------------------------------------------- */

static void test_timeline(void **state)
{
    (void)state;
    /* matmul [0,10), communication [5,20), memcpy [18,30), nothing [30,40), other [40,50),
     * attention [45,55) */
    mfu__tspan s[] = {{0, 10, MFU_TRACE_CLASS_MATMUL},
                      {5, 20, MFU_TRACE_CLASS_COMMUNICATION},
                      {18, 30, MFU_TRACE_CLASS_MEMCPY},
                      {40, 50, MFU_TRACE_CLASS_OTHER},
                      {45, 55, MFU_TRACE_CLASS_ATTENTION}};
    size_t n = MFU__ARRAY_LEN(s);
    mfu__sweep_pt pt[10];
    mfu__seg seg[10];
    size_t ns = mfu__trace_timeline(s, n, pt, seg);
    mfu_trace_breakdown b;
    mfu__trace_window(seg, ns, 0, 55, &b);
    assert_true(trace_breakdown_ok(&b));
    assert_true(fabs(b.span_s - 55e-9) < 1e-18);
    assert_true(fabs(b.part_s[MFU_TRACE_MATMUL] - 10e-9) < 1e-18);
    assert_true(fabs(b.part_s[MFU_TRACE_COMM_EXPOSED] - 10e-9) < 1e-18); /* [10,20) */
    assert_true(fabs(b.part_s[MFU_TRACE_MEMCPY] - 10e-9) < 1e-18);       /* [20,30) */
    assert_true(fabs(b.part_s[MFU_TRACE_IDLE] - 10e-9) < 1e-18);         /* [30,40) */
    assert_true(fabs(b.part_s[MFU_TRACE_OTHER] - 5e-9) < 1e-18);         /* [40,45) */
    assert_true(fabs(b.part_s[MFU_TRACE_ATTENTION] - 10e-9) < 1e-18);    /* [45,55) */
    assert_true(fabs(b.communication_overlapped_s - 5e-9) < 1e-18);      /* [5,10) */
    assert_true(fabs(b.compute_s - 25e-9) < 1e-18);
    /* a window inside, and one past the ends (idle there) */
    mfu__trace_window(seg, ns, 8, 42, &b);
    assert_true(trace_breakdown_ok(&b));
    assert_true(fabs(b.part_s[MFU_TRACE_MATMUL] - 2e-9) < 1e-18);
    assert_true(fabs(b.part_s[MFU_TRACE_OTHER] - 2e-9) < 1e-18);
    assert_true(fabs(b.communication_overlapped_s - 2e-9) < 1e-18);
    mfu__trace_window(seg, ns, -10, 65, &b);
    assert_true(trace_breakdown_ok(&b));
    assert_true(fabs(b.part_s[MFU_TRACE_IDLE] - 30e-9) < 1e-18);
    mfu__trace_window(seg, ns, 5, 5, &b);
    assert_true(b.span_s == 0);
    assert_int_equal(mfu__trace_timeline(s, 0, pt, seg), 0);
}

/* ---- a synthetic trace ---------------------------------------------------------------------- */

typedef struct sb {
    char *p;
    size_t n, cap;
} sb;

static void sbf(sb *b, const char *fmt, ...) MFU__PRINTF(2, 3);
static void sbf(sb *b, const char *fmt, ...)
{
    va_list ap;
    for (;;) {
        va_start(ap, fmt);
        int w = vsnprintf(b->p ? b->p + b->n : NULL, b->p ? b->cap - b->n : 0, fmt, ap);
        va_end(ap);
        assert_true(w >= 0);
        if (b->p && (size_t)w < b->cap - b->n) {
            b->n += (size_t)w;
            return;
        }
        b->cap = b->cap * 2 + (size_t)w + 1024;
        b->p = realloc(b->p, b->cap);
        assert_non_null(b->p);
    }
}

static void ev_runtime(sb *b, double ts, long corr)
{
    sbf(b,
        "{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", \"pid\": 1,"
        " \"tid\": 1, \"ts\": %.3f, \"dur\": 2, \"args\": {\"correlation\": %ld, \"External "
        "id\": %ld}},\n",
        ts, corr, corr + 1000);
}

static void ev_gpu(sb *b, const char *cat, const char *name, double ts, double dur, long corr,
                   long ext)
{
    sbf(b,
        "{\"ph\": \"X\", \"cat\": \"%s\", \"name\": \"%s\", \"pid\": 0, \"tid\": 7, \"ts\": "
        "%.3f, \"dur\": %.3f, \"args\": {\"device\": 3, \"stream\": 7, \"correlation\": %ld, "
        "\"External id\": %ld}},\n",
        cat, name, ts, dur, corr, ext);
}

/* Two steps (ProfilerStep#7 [100, 200), #8 [200, 300) on the CPU, microseconds):
 *   step 7: gemm [1000,1010) of aten::mm 64x128x256 (ext 50), nccl [1005,1030), memcpy
 *           [1028,1040), then an unlaunched kernel [1045,1050);
 *   step 8: gemm [1100,1120) launched with an ac2g flow only, other [1125,1130);
 *   a kernel launched at CPU 350 (outside the windows), one kernel named by a flow outside.
 * Step 7's span [1000,1050) has matmul 10, exposed comm 20 ([1010,1030)), memcpy 10
 * ([1030,1040)), idle 5 ([1040,1045)), other 5; overlapped 5. Step 8's [1100,1130): matmul 20,
 * idle 5, other 5. The window [1000,1130): those plus 50 idle between the steps. */
static char *synthetic(bool object, size_t *len)
{
    sb b = {0};
    if (object)
        sbf(&b, "{\"schemaVersion\": 1, \"distributedInfo\": {\"backend\": \"nccl\", \"rank\": 2, "
                "\"world_size\": 4}, \"deviceProperties\": [{\"id\": 0, \"name\": \"GPU zero\"}, "
                "{\"id\": 3, \"name\": \"NVIDIA H100 80GB HBM3\"}], \"traceEvents\": [\n");
    else
        sbf(&b, "[\n");
    sbf(&b, "{\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"ProfilerStep#8\", \"pid\": "
            "1, \"tid\": 1, \"ts\": 200, \"dur\": 100, \"args\": {}},\n");
    sbf(&b, "{\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"ProfilerStep#7\", \"pid\": "
            "1, \"tid\": 1, \"ts\": 100, \"dur\": 100, \"args\": {}},\n");
    sbf(&b, "{\"ph\": \"X\", \"cat\": \"gpu_user_annotation\", \"name\": \"ProfilerStep#7\", "
            "\"pid\": 0, \"tid\": 7, \"ts\": 1000, \"dur\": 50},\n");
    sbf(&b, "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::mm\", \"pid\": 1, \"tid\": 1,"
            " \"ts\": 110, \"dur\": 5, \"args\": {\"External id\": 50, \"Input Dims\": [[64, "
            "128], [128, 256]], \"Input type\": [\"float\", \"float\"]}},\n");
    ev_runtime(&b, 111, 1);
    ev_runtime(&b, 120, 2);
    ev_runtime(&b, 130, 3);
    ev_gpu(&b, "kernel", "ampere_sgemm_128x64_nn", 1000, 10, 1, 50);
    ev_gpu(&b, "kernel", "ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*)", 1005, 25, 2, 2);
    ev_gpu(&b, "gpu_memcpy", "Memcpy DtoH (Device -> Pageable)", 1028, 12, 3, 3);
    ev_gpu(&b, "kernel", "void at::native::vectorized_elementwise_kernel<4>()", 1045, 5, 90, 90);
    sbf(&b, "{\"ph\": \"s\", \"id\": 4, \"pid\": 1, \"tid\": 1, \"ts\": 210, \"cat\": \"ac2g\", "
            "\"name\": \"ac2g\"},\n");
    ev_gpu(&b, "kernel", "ampere_sgemm_128x64_nn", 1100, 20, 4, 4);
    ev_runtime(&b, 220, 5);
    ev_gpu(&b, "kernel", "void at::native::reduce_kernel<512, 1>()", 1125, 5, 5, 5);
    ev_runtime(&b, 350, 6);
    ev_gpu(&b, "kernel", "ampere_sgemm_128x64_nn", 1300, 10, 6, 6);
    sbf(&b, "{\"ph\": \"M\", \"name\": \"process_name\", \"pid\": 1, \"tid\": 0, \"args\": "
            "{\"name\": \"python\"}}\n");
    sbf(&b, object ? "], \"traceName\": \"synthetic\"}\n" : "]\n");
    *len = b.n;
    return b.p;
}

static const double NS = 1e-9;

static void check_synthetic(const mfu_trace *t, bool object)
{
    trace_check(t, "synthetic");
    assert_int_equal(mfu_trace_rank(t), object ? 2 : -1);
    assert_int_equal(mfu_trace_world_size(t), object ? 4 : -1);
    assert_string_equal(mfu_trace_device(t), object ? "NVIDIA H100 80GB HBM3" : "");
    assert_int_equal(mfu_trace_step_count(t), 2);
    const mfu_trace_step *s7 = mfu_trace_step_at(t, 0), *s8 = mfu_trace_step_at(t, 1);
    assert_int_equal(s7->step, 7);
    assert_int_equal(s8->step, 8);
    assert_int_equal(s7->activities, 4);
    assert_int_equal(s8->activities, 2);
    assert_true(fabs(s7->step_time_s - 50e3 * NS) < 1e-15);
    assert_true(fabs(s7->gpu_start_s - 1000e3 * NS) < 1e-12);
    assert_true(fabs(s7->interval_s - 100e3 * NS) < 1e-15); /* to step 8's first kernel */
    assert_true(s7->gpu_offset_s == 0);
    assert_true(fabs(s8->interval_s - 30e3 * NS) < 1e-15); /* the last: its span */
    assert_true(fabs(s8->gpu_offset_s - 100e3 * NS) < 1e-15);
    assert_true(fabs(s7->cpu_s - 100e3 * NS) < 1e-15);
    const mfu_trace_breakdown *b = &s7->breakdown;
    assert_true(fabs(b->part_s[MFU_TRACE_MATMUL] - 10e3 * NS) < 1e-15);
    assert_true(fabs(b->part_s[MFU_TRACE_COMM_EXPOSED] - 20e3 * NS) < 1e-15);
    assert_true(fabs(b->part_s[MFU_TRACE_MEMCPY] - 10e3 * NS) < 1e-15);
    assert_true(fabs(b->part_s[MFU_TRACE_IDLE] - 5e3 * NS) < 1e-15);
    assert_true(fabs(b->part_s[MFU_TRACE_OTHER] - 5e3 * NS) < 1e-15);
    assert_true(fabs(b->communication_overlapped_s - 5e3 * NS) < 1e-15);
    b = &s8->breakdown;
    assert_true(fabs(b->span_s - 30e3 * NS) < 1e-15);
    assert_true(fabs(b->part_s[MFU_TRACE_MATMUL] - 20e3 * NS) < 1e-15);
    assert_true(fabs(b->part_s[MFU_TRACE_IDLE] - 5e3 * NS) < 1e-15);
    mfu_trace_breakdown tot = mfu_trace_total(t);
    assert_true(fabs(tot.span_s - 130e3 * NS) < 1e-15);
    assert_true(fabs(tot.part_s[MFU_TRACE_IDLE] - 60e3 * NS) < 1e-15);
    mfu_trace_counts c = mfu_trace_get_counts(t);
    assert_int_equal(c.activities, 7);
    assert_int_equal(c.attributed, 6);
    assert_int_equal(c.placed_by_time, 1);
    assert_int_equal(c.outside, 1);
    assert_int_equal(c.no_launch, 0);
    assert_int_equal(c.shaped_ops, 1);
    assert_int_equal(c.launches, 6);
    /* the gemm kernel name: 2 activities in steps, 30 us; FLOPs of the one with a shape */
    const mfu_trace_kernel *k = mfu_trace_kernel_at(t, 1);
    assert_string_equal(k->name, "ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*)");
    assert_int_equal(k->cls, MFU_TRACE_CLASS_COMMUNICATION);
    assert_true(isnan(k->flops) && isnan(k->flops_per_s));
    k = mfu_trace_kernel_at(t, 0);
    assert_string_equal(k->name, "ampere_sgemm_128x64_nn");
    assert_int_equal(k->cls, MFU_TRACE_CLASS_MATMUL);
    assert_int_equal(k->count, 2);
    assert_true(fabs(k->time_s - 30e3 * NS) < 1e-15);
    assert_true(k->flops == 2.0 * 64 * 128 * 256);
    assert_true(fabs(k->flops_time_s - 10e3 * NS) < 1e-15);
    assert_true(fabs(k->flops_per_s - 2.0 * 64 * 128 * 256 / 10e-6) < 1);
}

static void test_synthetic(void **state)
{
    (void)state;
    for (int object = 0; object < 2; object++) {
        size_t n;
        char *doc = synthetic(object, &n);
        mfu_trace *t = NULL;
        mfu_error e;
        memset(&e, 0, sizeof e);
        assert_int_equal(mfu_trace_read_mem(doc, n, "synthetic", NULL, &t, &e), MFU_OK);
        check_synthetic(t, object);
        assert_string_equal(mfu_trace_name(t), "synthetic");
        mfu_trace_free(t);
        /* through a stream: the same */
        FILE *f = tmpfile();
        assert_non_null(f);
        assert_int_equal(fwrite(doc, 1, n, f), n);
        rewind(f);
        assert_int_equal(mfu_trace_read_file(f, "file", NULL, &t, &e), MFU_OK);
        check_synthetic(t, object);
        mfu_trace_free(t);
        fclose(f);
        /* launched only: the unlaunched kernel is left out */
        mfu_trace_options o = {0, true};
        assert_int_equal(mfu_trace_read_mem(doc, n, "x", &o, &t, &e), MFU_OK);
        trace_check(t, "launched only");
        assert_int_equal(mfu_trace_get_counts(t).no_launch, 1);
        assert_int_equal(mfu_trace_step_at(t, 0)->activities, 3);
        assert_true(fabs(mfu_trace_step_at(t, 0)->step_time_s - 40e3 * NS) < 1e-15);
        mfu_trace_free(t);
        free(doc);
    }
    assert_null(mfu_trace_step_at(NULL, 0));
    assert_int_equal(mfu_trace_rank(NULL), -1);
    assert_string_equal(mfu_trace_name(NULL), "");
    mfu_trace_free(NULL);
}

/* ---- errors ------------------------------------------------------------------------------ */

static void expect_error(const char *doc, const mfu_trace_options *o, mfu_status want,
                         const char *words)
{
    mfu_trace *t = (mfu_trace *)(uintptr_t)1; /* overwritten: NULL on failure */
    mfu_error e;
    memset(&e, 0, sizeof e);
    mfu_status st = mfu_trace_read_mem(doc, strlen(doc), "t.json", o, &t, &e);
    if (st != want || t != NULL || !strstr(e.message, words) || strchr(e.message, '\n'))
        fail_msg("%.60s: status %d (want %d): %s", doc, st, want, e.message);
}

static void test_errors(void **state)
{
    (void)state;
    const char *step = "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"ProfilerStep#1\","
                       "\"ts\":0,\"dur\":10}";
    const char *kern = "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"ts\":20,\"dur\":5,"
                       "\"args\":{\"correlation\":1}}";
    const char *rt = "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\","
                     "\"ts\":2,\"dur\":1,\"args\":{\"correlation\":1}}";
    char doc[2048];
    snprintf(doc, sizeof doc, "{\"traceEvents\": [%s]}", step);
    expect_error(doc, NULL, MFU_E_EMPTY, "CPU-only trace: t.json has 1 events and 1 ProfilerStep");
    snprintf(doc, sizeof doc, "{\"traceEvents\": [%s, %s]}", kern, rt);
    expect_error(doc, NULL, MFU_E_EMPTY, "no ProfilerStep#N window in t.json (2 events, 1 GPU");
    snprintf(doc, sizeof doc, "{\"traceEvents\": [%s, %s]}", step, kern);
    expect_error(doc, NULL, MFU_E_EMPTY, "none of the 1 GPU activities of t.json was launched");
    expect_error("{\"traceEvents\": []}", NULL, MFU_E_EMPTY, "no trace event");
    expect_error("{\"schemaVersion\": 1}", NULL, MFU_E_PARSE, "not a Chrome trace");
    expect_error("\"text\"", NULL, MFU_E_PARSE, "not a Chrome trace: the JSON is a single string");
    expect_error("{\"traceEvents\": 5}", NULL, MFU_E_PARSE, "\"traceEvents\" is not an array");
    expect_error("{\"traceEvents\": [", NULL, MFU_E_PARSE, "truncated");
    expect_error("step 1 loss 2.0\n", NULL, MFU_E_PARSE, "invalid JSON");
    expect_error("", NULL, MFU_E_PARSE, "empty");
    /* a NUL byte: binary */
    mfu_trace *t = NULL;
    mfu_error e;
    memset(&e, 0, sizeof e);
    assert_int_equal(mfu_trace_read_mem("[\0]", 3, "b", NULL, &t, &e), MFU_E_PARSE);
    assert_non_null(strstr(e.message, "binary data, not JSON"));
    assert_null(t);
    /* the activity limit */
    snprintf(doc, sizeof doc, "{\"traceEvents\": [%s, %s, %s, %s]}", step, rt, kern, kern);
    mfu_trace_options o = {1, false};
    expect_error(doc, &o, MFU_E_LIMIT,
                 "more than 1 GPU activities in one trace "
                 "(MFU_TRACE_MAX_ACTIVITIES)");
    o.max_activities = 2;
    assert_int_equal(mfu_trace_read_mem(doc, strlen(doc), "x", &o, &t, &e), MFU_OK);
    mfu_trace_free(t);
    /* a truncated gzip */
    char path[1024];
    trace_data_path(path, sizeof path, "hta-amd-mi250/mi250_minitoy_train_ROCm6_2_kineto.json.gz");
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    char gz[4096];
    size_t n = fread(gz, 1, sizeof gz, f);
    fclose(f);
    assert_int_equal(mfu_trace_read_mem(gz, n, "cut.gz", NULL, &t, &e), MFU_E_IO);
    assert_non_null(strstr(e.message, "gzip data ends early"));
    assert_int_equal(mfu_trace_read_path("/nonexistent/x.json", NULL, &t, &e), MFU_E_IO);
    assert_non_null(strstr(e.message, "cannot open it"));
    assert_int_equal(mfu_trace_read_mem(NULL, 0, "x", NULL, NULL, &e), MFU_E_INVALID);
}

/* ---- bounded memory ------------------------------------------------------------------------ */

static void test_bounded_memory(void **state)
{
    (void)state;
    /* about 40 MB of CPU operators around one step with a kernel: the reader's own memory
     * stays at its fixed buffers, whatever the length of the document */
    FILE *f = tmpfile();
    assert_non_null(f);
    fputs("{\"traceEvents\": [\n{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":"
          "\"ProfilerStep#1\",\"ts\":0,\"dur\":1e9},\n{\"ph\":\"X\",\"cat\":\"cuda_runtime\","
          "\"name\":\"cudaLaunchKernel\",\"ts\":5,\"dur\":1,\"args\":{\"correlation\":1}},\n",
          f);
    size_t bytes = 0;
    for (long i = 0; bytes < 40u << 20; i++) {
        int w =
            fprintf(f,
                    "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::add_\", \"pid\": 9, "
                    "\"tid\": 9, \"ts\": %ld.125, \"dur\": 3.5, \"args\": {\"External id\": "
                    "%ld, \"Input Dims\": [[1024, 1024], [1024, 1024], []], \"Input type\": "
                    "[\"float\", \"float\", \"Scalar\"], \"Call stack\": \"train.py(12): "
                    "step\\ntrain.py(40): <module>\"}},\n",
                    10 + i, i);
        assert_true(w > 0);
        bytes += (size_t)w;
    }
    fputs("{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"ts\":20,\"dur\":5,\"args\":"
          "{\"correlation\":1}}]}\n",
          f);
    rewind(f);
    mfu_trace *t = NULL;
    mfu_error e;
    memset(&e, 0, sizeof e);
    assert_int_equal(mfu_trace_read_file(f, "long", NULL, &t, &e), MFU_OK);
    fclose(f);
    mfu_trace_counts c = mfu_trace_get_counts(t);
    assert_true(c.bytes > 40u << 20);
    assert_true(c.events > 100000);
    if (c.held_bytes > 1u << 20)
        fail_msg("the reader held %zu bytes for a %zu-byte trace", c.held_bytes, c.bytes);
    mfu_trace_free(t);
}

/* ---- the bundled traces -----------------------------------------------------------------------
 */

static void test_bundled(void **state)
{
    (void)state;
    static char paths[TRACE_MAX_FIXTURES][1024];
    size_t n = trace_fixtures(paths, TRACE_MAX_FIXTURES);
    assert_true(n >= 11);
    size_t good = 0;
    for (size_t i = 0; i < n; i++) {
        mfu_trace *t = NULL;
        mfu_error e;
        memset(&e, 0, sizeof e);
        mfu_status st = mfu_trace_read_path(paths[i], NULL, &t, &e);
        bool cpu = strstr(paths[i], "cpu-") || strstr(paths[i], "cpu_only") ||
                   strstr(paths[i], "hta-cpu-only");
        bool nostep = strstr(paths[i], "nostep") != NULL;
        if (cpu) {
            if (st != MFU_E_EMPTY || !strstr(e.message, "CPU-only trace"))
                fail_msg("%s: %d %s", paths[i], st, e.message);
        } else if (nostep) {
            if (st != MFU_E_EMPTY || !strstr(e.message, "no ProfilerStep"))
                fail_msg("%s: %d %s", paths[i], st, e.message);
        } else {
            if (st != MFU_OK)
                fail_msg("%s: %s", paths[i], e.message);
            trace_check(t, paths[i]);
            mfu_trace_counts c = mfu_trace_get_counts(t);
            assert_true(c.held_bytes < c.bytes + (1u << 20));
            good++;
        }
        mfu_trace_free(t);
    }
    assert_int_equal(good, 7);
}

/* ---- sets -------------------------------------------------------------------------------------
 */

static mfu_trace *bundled(const char *rel)
{
    char path[1024];
    trace_data_path(path, sizeof path, rel);
    mfu_trace *t = NULL;
    mfu_error e;
    memset(&e, 0, sizeof e);
    if (mfu_trace_read_path(path, NULL, &t, &e) != MFU_OK)
        fail_msg("%s: %s", path, e.message);
    return t;
}

static void test_set(void **state)
{
    (void)state;
    mfu_trace *r0 = bundled("hta-sampled-2ranks/rank-0.json.gz");
    mfu_trace *r1 = bundled("hta-sampled-2ranks/rank-1.json.gz");
    mfu_trace *amd = bundled("hta-amd-mi250/mi250_minitoy_train_ROCm6_2_kineto.json.gz");
    mfu_trace *ctl = bundled("hta-diff/control.json.gz");
    const mfu_trace *set[] = {r1, r0};
    mfu_trace_ranks rk;
    mfu_error e;
    memset(&e, 0, sizeof e);
    assert_int_equal(mfu_trace_check_ranks(set, 2, &rk, &e), MFU_OK);
    assert_int_equal(rk.world_size, 128);
    assert_int_equal(rk.missing, 126);
    assert_int_equal(rk.missing_rank[0], 2);
    const mfu_trace *dup[] = {r0, r0};
    assert_int_equal(mfu_trace_check_ranks(dup, 2, &rk, &e), MFU_E_INVALID);
    assert_non_null(strstr(e.message, "are both rank 0"));
    const mfu_trace *norank[] = {r0, amd};
    assert_int_equal(mfu_trace_check_ranks(norank, 2, &rk, &e), MFU_E_INVALID);
    assert_non_null(strstr(e.message, "does not name its rank"));
    const mfu_trace *worlds[] = {r0, ctl};
    assert_int_equal(mfu_trace_check_ranks(worlds, 2, &rk, &e), MFU_E_INVALID);
    assert_non_null(strstr(e.message, "world size"));
    const mfu_trace *one[] = {amd};
    assert_int_equal(mfu_trace_check_ranks(one, 1, &rk, &e), MFU_OK); /* alone: no rank needed */
    assert_int_equal(mfu_trace_check_ranks(one, 0, &rk, &e), MFU_E_INVALID);

    /* the straggler: rank 1, the longer compute; rank 0 waits for it */
    mfu_trace_straggler sg;
    mfu_trace_find_straggler(set, 2, &sg);
    assert_true(sg.found);
    assert_int_equal(sg.rank, 1);
    assert_int_equal(sg.index, 0);
    assert_int_equal(sg.steps, 2);
    double c0 = 0, c1 = 0, x0 = 0, x1 = 0, sp0 = 0;
    for (size_t i = 0; i < 2; i++) {
        c0 += mfu_trace_step_at(r0, i)->breakdown.compute_s / 2;
        c1 += mfu_trace_step_at(r1, i)->breakdown.compute_s / 2;
        x0 += mfu_trace_step_at(r0, i)->breakdown.part_s[MFU_TRACE_COMM_EXPOSED] / 2;
        x1 += mfu_trace_step_at(r1, i)->breakdown.part_s[MFU_TRACE_COMM_EXPOSED] / 2;
        sp0 += mfu_trace_step_at(r0, i)->breakdown.span_s / 2;
    }
    assert_true(c1 > c0);
    assert_true(fabs(sg.compute_s - c1) < 1e-12);
    assert_true(fabs(sg.median_compute_s - (c0 + c1) / 2) < 1e-12);
    assert_true(fabs(sg.wait_s - (x0 - x1)) < 1e-12);
    assert_true(fabs(sg.wait_points - 100 * (x0 - x1) / sp0) < 1e-9);
    mfu_trace_find_straggler(one, 1, &sg);
    assert_false(sg.found);

    /* the run of the steps: the mean span per step number */
    mfu_run *run = NULL;
    assert_int_equal(mfu_trace_to_run(set, 2, &run, &e), MFU_OK);
    assert_int_equal(mfu_run_count(run), 2);
    mfu_step s;
    assert_true(mfu_run_get(run, 1, &s));
    assert_int_equal(s.step, 552);
    double want = (mfu_trace_step_at(r0, 1)->interval_s + mfu_trace_step_at(r1, 1)->interval_s) / 2;
    assert_true(fabs(s.step_time_s - want) < 1e-15);
    assert_string_equal(mfu_run_meta_get(run)->format, "kineto");
    assert_int_equal(mfu_run_meta_get(run)->world_size, 128);
    mfu_run_free(run);
    const mfu_trace *c1set[] = {ctl};
    assert_int_equal(mfu_trace_to_run(c1set, 1, &run, &e), MFU_OK);
    assert_string_equal(mfu_run_meta_get(run)->device, "NVIDIA A100-PG509-200");
    mfu_run_free(run);

    /* the waterfall adds up to 100 - MFU, and its steps are the parts' shares */
    size_t rs = 0;
    mfu_trace_breakdown tot = mfu_trace_set_total(set, 2, &rs);
    assert_int_equal(rs, 4);
    mfu_trace_waterfall w;
    assert_int_equal(mfu_trace_waterfall_compute(&tot, rs, 0.02, &w, &e), MFU_OK);
    double lost = w.idle + w.communication + w.memcpy + w.non_matmul + w.matmul_below_peak;
    assert_true(fabs(lost - 98) < 1e-9);
    assert_true(fabs(w.idle - 100 * tot.part_s[MFU_TRACE_IDLE] / tot.span_s) < 1e-12);
    assert_true(fabs(w.step_time_s - tot.span_s / 4) < 1e-15);
    assert_int_equal(mfu_trace_waterfall_compute(&tot, rs, 0, &w, &e), MFU_E_INVALID);
    assert_int_equal(mfu_trace_waterfall_compute(&tot, rs, NAN, &w, &e), MFU_E_INVALID);
    mfu_trace_breakdown zero;
    memset(&zero, 0, sizeof zero);
    assert_int_equal(mfu_trace_waterfall_compute(&zero, 0, 0.3, &w, &e), MFU_E_INVALID);

    /* the view with a report of the steps: the report's MFU */
    mfu_trace_view v;
    assert_int_equal(mfu_trace_view_make(set, 2, NULL, NULL, &v, &e), MFU_OK);
    assert_false(v.has_waterfall);
    assert_non_null(strstr(v.missing, "--tokens-per-step"));
    assert_true(v.straggler.found);
    assert_int_equal(mfu_trace_to_run(set, 2, &run, &e), MFU_OK);
    mfu_report_input in;
    memset(&in, 0, sizeof in);
    in.has_arch = true;
    assert_int_equal(mfu_preset_find("gpt2", &in.arch, &e), MFU_OK);
    in.workload.seq = 1024;
    in.device = "a100-sxm";
    in.devices = 2;
    in.tokens_per_step = 8192;
    in.no_analysis = true;
    mfu_report *rep = NULL;
    assert_int_equal(mfu_report_compute(run, &in, &rep, &e), MFU_OK);
    assert_int_equal(mfu_trace_view_make(set, 2, rep, "test", &v, &e), MFU_OK);
    assert_true(v.has_waterfall);
    assert_true(v.waterfall.mfu == mfu_report_summary(rep, MFU_RS_MFU).median);
    assert_string_equal(v.mfu_source, "test");
    assert_true(v.peak_flops_per_s > 0);
    json_t *j = mfu__trace_json(&v, 3);
    assert_non_null(j);
    assert_int_equal(json_array_size(json_object_get(j, "ranks")), 2);
    assert_true(json_real_value(json_object_get(json_object_get(j, "waterfall"), "mfu")) ==
                v.waterfall.mfu);
    assert_int_equal(json_integer_value(json_object_get(json_object_get(j, "straggler"), "rank")),
                     1);
    json_decref(j);
    mfu_report_free(rep);
    /* a report without tokens: no MFU, the missing pieces said */
    in.tokens_per_step = 0;
    assert_int_equal(mfu_report_compute(run, &in, &rep, &e), MFU_OK);
    assert_int_equal(mfu_trace_view_make(set, 2, rep, "test", &v, &e), MFU_OK);
    assert_false(v.has_waterfall);
    assert_non_null(strstr(v.missing, "no MFU for the waterfall: missing"));
    mfu_report_free(rep);
    mfu_run_free(run);
    mfu_trace_free(r0);
    mfu_trace_free(r1);
    mfu_trace_free(amd);
    mfu_trace_free(ctl);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_jtok_pieces), cmocka_unit_test(test_jtok_strings),
        cmocka_unit_test(test_jtok_errors), cmocka_unit_test(test_jtok_numbers),
        cmocka_unit_test(test_classify),    cmocka_unit_test(test_matmul_flops),
        cmocka_unit_test(test_timeline),    cmocka_unit_test(test_synthetic),
        cmocka_unit_test(test_errors),      cmocka_unit_test(test_bounded_memory),
        cmocka_unit_test(test_bundled),     cmocka_unit_test(test_set),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
