/*
 * reader.c - bytes in, logical lines out, in bounded memory.
 *
 * The first bytes decide the codec: 1f 8b is gzip (concatenated members are read one after
 * another), 28 b5 2f fd is zstd (several frames too), anything else is read as is. Decoded
 * bytes are cut into logical lines at every \n and \r: a carriage return is how tqdm and other
 * progress bars redraw, so each redraw is a line of its own, and CRLF gives an empty piece
 * that is dropped. Line numbers count \n only.
 *
 * A line that lies inside one decoded block is handed out in place (no copy; plain input is
 * decoded by reading straight into the block, or by using a memory source as it is). A line
 * that spans blocks is assembled in a buffer that never grows past max_line bytes: a longer
 * line is dropped as soon as it overflows, the rest of it is skipped as it streams by, and the
 * line is reported with too_long set. So a 100 MB line costs max_line bytes, not 100 MB.
 *
 * Binary input (a NUL byte or many control bytes in the first decoded block) is an error:
 * text logs never hold them.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <zlib.h>
#include <zstd.h>

#include "ingest/fast.h"
#include "ingest/internal.h"

enum codec { CODEC_UNKNOWN, CODEC_PLAIN, CODEC_GZIP, CODEC_ZSTD };

struct mfu__reader {
    FILE *f;
    const unsigned char *mem;
    size_t mem_n, mem_pos;
    bool src_eof;

    enum codec codec;
    z_stream z;
    bool z_live;
    ZSTD_DStream *zs;
    size_t zlast; /* the decoder's last answer that made progress (0 = frame complete) */

    unsigned char in[MFU__READER_CHUNK];
    size_t in_n, in_pos;
    unsigned char outbuf[MFU__READER_CHUNK];
    const unsigned char *out; /* the decoded block: outbuf, or the memory block itself */
    size_t out_n, out_pos;
    unsigned char *out_w; /* out when it is the reader's own buffer (lines handed out may be
                             written), NULL for a memory source */
    size_t cr_at;         /* index in out of the next \r at or after cr_from (out_n: none) */
    size_t cr_from;
    bool cr_known; /* cr_at is valid for this block */
    bool dec_eof;
    bool checked_binary;
    size_t decoded; /* decoded bytes of every block so far */

    char *line;
    size_t line_n, max_line, peak;
    bool overflow;
    bool line_has_bytes; /* the current physical line has bytes (for the truncation flag) */
    long lineno;         /* physical line of the current piece */
    long lines;          /* physical lines completed or started */
    bool last_unterminated;
    bool done;
};

static mfu__reader *reader_new(size_t max_line)
{
    mfu__reader *r = calloc(1, sizeof *r);
    if (!r)
        return NULL;
    r->max_line = max_line;
    r->line = malloc(max_line + 1);
    if (!r->line) {
        free(r);
        return NULL;
    }
    r->lineno = 1;
    return r;
}

const char *mfu__reader_compression(const unsigned char *b, size_t n)
{
    if (n >= 2 && b[0] == 0x1f && b[1] == 0x8b)
        return "gzip";
    if (n >= 4 && b[0] == 0x28 && b[1] == 0xb5 && b[2] == 0x2f && b[3] == 0xfd)
        return "zstd";
    return NULL;
}

mfu__reader *mfu__reader_file(FILE *f, size_t max_line)
{
    mfu__reader *r = reader_new(max_line);
    if (r)
        r->f = f;
    return r;
}

mfu__reader *mfu__reader_mem(const void *data, size_t n, size_t max_line)
{
    mfu__reader *r = reader_new(max_line);
    if (r) {
        r->mem = data;
        r->mem_n = n;
    }
    return r;
}

void mfu__reader_free(mfu__reader *r)
{
    if (!r)
        return;
    if (r->z_live)
        inflateEnd(&r->z);
    ZSTD_freeDStream(r->zs);
    free(r->line);
    free(r);
}

/* Refill r->in from the source when it is used up. */
static mfu_status fill_in(mfu__reader *r, mfu_error *err)
{
    if (r->in_pos < r->in_n || r->src_eof)
        return MFU_OK;
    r->in_pos = 0;
    if (r->mem) {
        size_t n = r->mem_n - r->mem_pos;
        if (n > sizeof r->in)
            n = sizeof r->in;
        memcpy(r->in, r->mem + r->mem_pos, n);
        r->mem_pos += n;
        r->in_n = n;
    } else if (r->f) {
        r->in_n = fread(r->in, 1, sizeof r->in, r->f);
        if (r->in_n < sizeof r->in && ferror(r->f))
            return mfu__fail(err, MFU_E_IO, 0, "read error: %s; check the file and retry",
                             strerror(errno));
    } else {
        r->in_n = 0;
    }
    if (r->in_n == 0)
        r->src_eof = true;
    return MFU_OK;
}

static mfu_status pick_codec(mfu__reader *r, mfu_error *err)
{
    /* Gather at least 4 bytes (or the whole input) to look at the magic. */
    mfu_status st = fill_in(r, err);
    if (st != MFU_OK)
        return st;
    size_t have = r->in_n - r->in_pos;
    const unsigned char *b = r->in + r->in_pos;
    const char *z = mfu__reader_compression(b, have);
    if (z && z[0] == 'g') {
        memset(&r->z, 0, sizeof r->z);
        if (inflateInit2(&r->z, 15 + 16) != Z_OK)
            return mfu__fail(err, MFU_E_NOMEM, 0, "cannot start the gzip decoder (out of memory)");
        r->z_live = true;
        r->codec = CODEC_GZIP;
    } else if (z) {
        r->zs = ZSTD_createDStream();
        if (!r->zs)
            return mfu__fail(err, MFU_E_NOMEM, 0, "cannot start the zstd decoder (out of memory)");
        ZSTD_initDStream(r->zs);
        r->codec = CODEC_ZSTD;
    } else {
        r->codec = CODEC_PLAIN;
    }
    return MFU_OK;
}

/* Plain input: the next block without copying it twice. A memory source is used in place;
 * a stream is read straight into outbuf, once the bytes the codec check read are passed on. */
static mfu_status plain_block(mfu__reader *r, mfu_error *err)
{
    if (r->in_pos < r->in_n) { /* what pick_codec read */
        r->out = r->out_w = r->in + r->in_pos;
        r->out_n = r->in_n - r->in_pos;
        r->in_pos = r->in_n;
        return MFU_OK;
    }
    if (r->mem) {
        size_t n = r->mem_n - r->mem_pos;
        if (n > MFU__READER_CHUNK)
            n = MFU__READER_CHUNK;
        r->out = r->mem + r->mem_pos;
        r->out_n = n;
        r->out_w = NULL;
        r->mem_pos += n;
    } else if (r->f && !r->src_eof) {
        r->out = r->outbuf;
        r->out_n = fread(r->outbuf, 1, sizeof r->outbuf, r->f);
        if (r->out_n < sizeof r->outbuf && ferror(r->f))
            return mfu__fail(err, MFU_E_IO, 0, "read error: %s; check the file and retry",
                             strerror(errno));
    } else {
        r->out_n = 0;
    }
    if (r->out_n == 0)
        r->src_eof = r->dec_eof = true;
    return MFU_OK;
}

/* Decode the next block into r->out. Sets dec_eof at the end of the input. */
static mfu_status decode(mfu__reader *r, mfu_error *err)
{
    r->out_n = r->out_pos = 0;
    r->out = r->outbuf;
    r->cr_known = false;
    r->out_w = r->outbuf;
    while (r->out_n == 0 && !r->dec_eof) {
        if (r->codec == CODEC_PLAIN) {
            mfu_status st = plain_block(r, err);
            if (st != MFU_OK)
                return st;
            continue;
        }
        mfu_status st = fill_in(r, err);
        if (st != MFU_OK)
            return st;
        size_t avail = r->in_n - r->in_pos;
        if (r->codec == CODEC_GZIP) {
            if (avail == 0) {
                /* input ended: fine only between members */
                if (r->z.total_in > 0 || r->z.avail_in > 0)
                    return mfu__fail(err, MFU_E_IO, 0,
                                     "gzip data ends early (truncated file); recompress or pass "
                                     "the uncompressed log");
                r->dec_eof = true;
                break;
            }
            r->z.next_in = r->in + r->in_pos;
            r->z.avail_in = (uInt)avail;
            r->z.next_out = r->outbuf;
            r->z.avail_out = sizeof r->outbuf;
            int zr = inflate(&r->z, Z_NO_FLUSH);
            r->in_pos = r->in_n - r->z.avail_in;
            r->out_n = sizeof r->outbuf - r->z.avail_out;
            if (zr == Z_STREAM_END) {
                inflateReset(&r->z); /* total_in = 0: another member may follow */
            } else if (zr != Z_OK && zr != Z_BUF_ERROR) {
                return mfu__fail(err, MFU_E_IO, 0, "corrupt gzip data (%s); check the file",
                                 r->z.msg ? r->z.msg : "inflate failed");
            }
        } else {
            /* called with empty input too: that flushes what the decoder still holds */
            ZSTD_inBuffer zin = {r->in + r->in_pos, avail, 0};
            ZSTD_outBuffer zout = {r->outbuf, sizeof r->outbuf, 0};
            size_t zr = ZSTD_decompressStream(r->zs, &zout, &zin);
            if (ZSTD_isError(zr))
                return mfu__fail(err, MFU_E_IO, 0, "corrupt zstd data (%s); check the file",
                                 ZSTD_getErrorName(zr));
            r->in_pos += zin.pos;
            r->out_n = zout.pos;
            if (zin.pos > 0 || zout.pos > 0)
                r->zlast = zr;
            if (avail == 0 && zout.pos == 0) {
                if (r->zlast != 0) /* 0: the last frame was whole and flushed */
                    return mfu__fail(err, MFU_E_IO, 0,
                                     "zstd data ends early (truncated file); recompress or "
                                     "pass the uncompressed log");
                r->dec_eof = true;
            }
        }
    }
    r->decoded += r->out_n;
    if (!r->checked_binary && r->out_n > 0) {
        r->checked_binary = true;
        size_t ctrl = 0;
        for (size_t i = 0; i < r->out_n; i++) {
            unsigned char c = r->out[i];
            if (c == 0)
                return mfu__fail(err, MFU_E_PARSE, 0,
                                 "binary data (a NUL byte at offset %zu), not a text log; pass "
                                 "the training log itself (.log, .txt, .gz, .zst)",
                                 i);
            if (c < 0x20 && c != '\n' && c != '\r' && c != '\t' && c != '\f' && c != '\v' &&
                c != 0x1b && c != 0x08)
                ctrl++;
        }
        if (ctrl * 20 > r->out_n)
            return mfu__fail(err, MFU_E_PARSE, 0,
                             "binary data (%zu control bytes in the first %zu), not a text log; "
                             "pass the training log itself (.log, .txt, .gz, .zst)",
                             ctrl, r->out_n);
    }
    return MFU_OK;
}

/* Index in r->out of the next \n or \r at or after out_pos, or out_n. memchr finds \n; the
 * block's next \r is looked up once and kept, so a log without \r pays one memchr per block
 * for it. */
static size_t next_sep(mfu__reader *r)
{
    size_t pos = r->out_pos;
    if (!r->cr_known || r->cr_at < pos) {
        const unsigned char *c = memchr(r->out + pos, '\r', r->out_n - pos);
        r->cr_at = c ? (size_t)(c - r->out) : r->out_n;
        r->cr_known = true;
    }
    const unsigned char *nl = memchr(r->out + pos, '\n', r->cr_at - pos);
    return nl ? (size_t)(nl - r->out) : r->cr_at;
}

mfu_status mfu__reader_next(mfu__reader *r, mfu__rline *out, bool *eof, mfu_error *err)
{
    *eof = false;
    if (r->done) {
        *eof = true;
        return MFU_OK;
    }
    if (r->codec == CODEC_UNKNOWN) {
        mfu_status st = pick_codec(r, err);
        if (st != MFU_OK)
            return st;
    }
    for (;;) {
        if (r->out_pos == r->out_n) {
            if (!r->dec_eof) {
                mfu_status st = decode(r, err);
                if (st != MFU_OK)
                    return st;
            }
            if (r->out_pos == r->out_n && r->dec_eof) {
                /* end: deliver a last piece without a newline */
                r->done = true;
                if (r->line_has_bytes) {
                    r->last_unterminated = true;
                    r->lines++;
                }
                if (r->line_n > 0 || r->overflow) {
                    out->text = out->wtext = r->line;
                    out->len = r->overflow ? 0 : r->line_n;
                    out->too_long = r->overflow;
                    out->lineno = r->lineno;
                    out->clean = false;
                    r->line_n = 0;
                    r->overflow = false;
                    return MFU_OK;
                }
                *eof = true;
                return MFU_OK;
            }
            continue;
        }
        /* the next separator in the decoded block */
        const unsigned char *b = r->out + r->out_pos;
        size_t avail = r->out_n - r->out_pos;
        bool fresh = r->line_n == 0 && !r->overflow, clean = false;
        size_t i;
        if (fresh) {
            /* the first control byte: the separator itself when the line holds none, which
             * also tells the cleaner it has nothing to remove */
            i = mfu__ctrl_find((const char *)b, avail);
            if (i < avail && (b[i] == '\n' || b[i] == '\r'))
                clean = true;
            else if (i < avail)
                i = next_sep(r) - r->out_pos;
            /* i == avail: no control byte, so no separator, in the rest of the block */
        } else {
            i = next_sep(r) - r->out_pos;
        }
        if (i > 0)
            r->line_has_bytes = true;
        if (i < avail && fresh && i <= r->max_line) {
            /* a whole line inside the block: hand it out in place */
            unsigned char sep = b[i];
            r->out_pos += i + 1;
            long lineno = r->lineno;
            if (sep == '\n') {
                r->lineno++;
                r->lines++;
                r->line_has_bytes = false;
            } else {
                r->line_has_bytes = true;
            }
            if (i == 0)
                continue; /* empty piece (CRLF, blank line) */
            if (i > r->peak)
                r->peak = i;
            out->text = (const char *)b;
            out->len = i;
            out->too_long = false;
            out->lineno = lineno;
            out->clean = clean;
            out->wtext = r->out_w ? (char *)(r->out_w + (b - r->out)) : NULL;
            return MFU_OK;
        }
        if (!r->overflow) {
            if (r->line_n + i > r->max_line) {
                r->overflow = true; /* drop what was gathered; skip the rest as it comes */
                r->line_n = 0;
            } else {
                memcpy(r->line + r->line_n, b, i);
                r->line_n += i;
                if (r->line_n > r->peak)
                    r->peak = r->line_n;
            }
        }
        r->out_pos += i;
        if (i == avail)
            continue; /* the line goes on in the next block */
        /* a separator */
        unsigned char sep = b[i];
        r->out_pos++;
        long lineno = r->lineno;
        if (sep == '\n') {
            r->lineno++;
            r->lines++;
            r->line_has_bytes = false;
        } else {
            r->line_has_bytes = true; /* a \r piece belongs to a line still open */
        }
        if (r->line_n == 0 && !r->overflow)
            continue; /* empty piece (CRLF, blank line) */
        out->text = out->wtext = r->line;
        out->len = r->overflow ? 0 : r->line_n;
        out->too_long = r->overflow;
        out->lineno = lineno;
        out->clean = false;
        r->line_n = 0;
        r->overflow = false;
        return MFU_OK;
    }
}

mfu_status mfu__reader_block(mfu__reader *r, const char **p, size_t *n, bool *eof, mfu_error *err)
{
    *eof = false;
    *n = 0;
    if (r->codec == CODEC_UNKNOWN) {
        mfu_status st = pick_codec(r, err);
        if (st != MFU_OK)
            return st;
    }
    while (r->out_pos == r->out_n) {
        if (r->dec_eof) {
            r->done = true;
            *eof = true;
            return MFU_OK;
        }
        mfu_status st = decode(r, err);
        if (st != MFU_OK)
            return st;
    }
    *p = (const char *)r->out + r->out_pos;
    *n = r->out_n - r->out_pos;
    r->out_pos = r->out_n;
    return MFU_OK;
}

long mfu__reader_lines(const mfu__reader *r)
{
    return r->lines;
}

bool mfu__reader_truncated(const mfu__reader *r)
{
    return r->last_unterminated;
}

const char *mfu__reader_codec(const mfu__reader *r)
{
    return r->codec == CODEC_GZIP ? "gzip" : r->codec == CODEC_ZSTD ? "zstd" : "";
}

size_t mfu__reader_consumed(const mfu__reader *r)
{
    return r->decoded - (r->out_n - r->out_pos);
}

size_t mfu__reader_peak_line(const mfu__reader *r)
{
    return r->peak;
}
