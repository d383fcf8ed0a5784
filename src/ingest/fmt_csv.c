/*
 * fmt_csv.c - generic CSV / TSV with a header row, fields by column name or the user's --map
 * (ingest/fieldmap.h). For CSV loggers (Lightning's metrics.csv, spreadsheets, exports).
 *
 *   iter,loss,dt_ms          with --map step=iter,step_time_s=dt_ms*0.001
 *   10,2.5,410
 *
 * The first line is the header; the delimiter is a tab when the header has tabs and no
 * commas, else a comma. Cells may be quoted ("a,b" with "" for a quote). An empty cell is an
 * absent value; cells may carry units ("76 ms"). A row whose cell count differs from the
 * header's, or without a step value, is skipped with the reason. Rows that repeat a step
 * (Lightning writes train and validation metrics on separate rows) merge in the run.
 * Detection gives only hints: a line of comma-separated numbers / identifiers.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ingest/fieldmap.h"

#define CSV_MAX_COLUMNS 1024

typedef struct csv_state {
    mfu__fieldmap fm;
    bool have_header;
    char delim;
    int col[MFU__F_COUNT]; /* column index of each field, -1 when absent */
    size_t ncols;
    char header[256];                 /* the header as read (for messages) */
    mfu__span cells[CSV_MAX_COLUMNS]; /* the cells of the current line */
    char *buf;                        /* their unquoted text (grown to the longest line) */
    size_t cap;
} csv_state;

/* A cell that may appear in a CSV line: empty, a number, or an identifier-like name. */
static bool csv_cell_ok(mfu__span c)
{
    c = mfu__span_trim(c);
    if (c.n == 0)
        return true;
    mfu__num n;
    if (mfu__num_parse(c, &n) && n.unit == MFU__UNIT_NONE)
        return true;
    if (!(isalpha((unsigned char)c.p[0]) || c.p[0] == '_'))
        return false;
    for (size_t i = 0; i < c.n; i++) {
        unsigned char ch = (unsigned char)c.p[i];
        if (!(isalnum(ch) || ch == '_' || ch == '/' || ch == '.' || ch == '-' || ch == '@'))
            return false;
    }
    return true;
}

static int csv_detect(const mfu__line *ln)
{
    mfu__span s = {ln->text, ln->len};
    char d = (memchr(s.p, '\t', s.n) && !memchr(s.p, ',', s.n)) ? '\t' : ',';
    if (!memchr(s.p, d, s.n))
        return MFU__DETECT_NONE;
    char sep[2] = {d, '\0'};
    mfu__span rest = s, cell;
    bool any = false;
    while (mfu__split_next(&rest, sep, &cell)) {
        if (!csv_cell_ok(cell))
            return MFU__DETECT_NONE;
        any = any || mfu__span_trim(cell).n > 0;
    }
    return any ? MFU__DETECT_HINT : MFU__DETECT_NONE;
}

static mfu_status csv_init(void *state, const mfu_ingest_opts *opts, mfu_error *err)
{
    csv_state *st = state;
    return mfu__fieldmap_parse(&st->fm, opts->map, opts->nmap, err);
}

/* Split a CSV line into cells (unquoted into buf, which has room for len + 1 bytes). Returns
 * the number of cells (at most max), or -1 on an unterminated quote. */
static long split_cells(const char *p, size_t len, char delim, char *buf, mfu__span *cells,
                        size_t max)
{
    size_t i = 0, k = 0;
    long n = 0;
    for (;;) {
        size_t start = k;
        if (i < len && p[i] == '"') {
            i++;
            for (;;) {
                if (i >= len)
                    return -1;
                if (p[i] == '"') {
                    if (i + 1 < len && p[i + 1] == '"') {
                        buf[k++] = '"';
                        i += 2;
                        continue;
                    }
                    i++;
                    break;
                }
                buf[k++] = p[i++];
            }
            while (i < len && p[i] != delim) /* junk after the closing quote is kept */
                buf[k++] = p[i++];
        } else {
            while (i < len && p[i] != delim)
                buf[k++] = p[i++];
        }
        if ((size_t)n < max) {
            cells[n].p = buf + start;
            cells[n].n = k - start;
        }
        n++;
        buf[k++] = '\0';
        if (i >= len)
            break;
        i++; /* the delimiter */
    }
    return n;
}

static mfu_status read_header(csv_state *st, mfu__ictx *c, const mfu__line *ln,
                              const mfu__span *cells, long n)
{
    st->have_header = true;
    st->ncols = (size_t)n;
    mfu__span_copy((mfu__span){ln->text, ln->len}, st->header, sizeof st->header);
    for (int f = 0; f < MFU__F_COUNT; f++) {
        st->col[f] = -1;
        const char *cand[MFU__FIELDMAP_MAX_ALIASES];
        size_t nc =
            mfu__fieldmap_candidates(&st->fm, (mfu__field)f, cand, MFU__FIELDMAP_MAX_ALIASES);
        for (size_t i = 0; i < nc && st->col[f] < 0; i++)
            for (long j = 0; j < n && j < CSV_MAX_COLUMNS; j++)
                if (mfu__span_eq(mfu__span_trim(cells[j]), cand[i])) {
                    st->col[f] = (int)j;
                    break;
                }
    }
    if (st->col[MFU__F_STEP] < 0)
        return mfu__fail_line(c, MFU_E_MISSING,
                              "the CSV header has no step column (header: %s); map one with "
                              "--map step=COLUMN",
                              st->header);
    /* a column the user mapped by name must exist */
    for (int f = 0; f < MFU__F_COUNT; f++)
        if (st->fm.column[f][0] && st->col[f] < 0)
            return mfu__fail_line(
                c, MFU_E_MISSING, "--map %s=%s: no such column in the CSV header (%s)",
                mfu__fieldmap_field_name((mfu__field)f), st->fm.column[f], st->header);
    mfu__used(c);
    return MFU_OK;
}

/* Whether a cell that is not a value is a number too large for a double ("1e309",
 * "99999...9" of 400 digits): such a value was printed, so it is not absent. */
static bool csv_overflows(mfu__span cell)
{
    char b[512];
    if (cell.n == 0 || cell.n >= sizeof b)
        return false;
    memcpy(b, cell.p, cell.n);
    b[cell.n] = '\0';
    errno = 0;
    char *end = NULL;
    double v = strtod(b, &end);
    return end == b + cell.n && isinf(v) && errno == ERANGE;
}

static mfu_status csv_line(void *state, mfu__ictx *c, const mfu__line *ln)
{
    csv_state *st = state;
    if (!st->have_header) {
        st->delim =
            (memchr(ln->text, '\t', ln->len) && !memchr(ln->text, ',', ln->len)) ? '\t' : ',';
        if (!memchr(ln->text, st->delim, ln->len))
            return MFU_OK; /* not a header: a banner before the table */
    }
    if (ln->len + 1 > st->cap) {
        char *nb = realloc(st->buf, ln->len + 1);
        if (!nb)
            return mfu__fail_line(c, MFU_E_NOMEM, "out of memory reading a CSV row");
        st->buf = nb;
        st->cap = ln->len + 1;
    }
    char *buf = st->buf;
    mfu__span *cells = st->cells;
    mfu_status rc = MFU_OK;
    long n = split_cells(ln->text, ln->len, st->delim, buf, cells, CSV_MAX_COLUMNS);
    if (n < 0) {
        mfu__skip(c, "CSV row with an unterminated quote");
    } else if (n > CSV_MAX_COLUMNS) {
        mfu__skip(c, "CSV row with more than %d columns", CSV_MAX_COLUMNS);
    } else if (!st->have_header) {
        rc = read_header(st, c, ln, cells, n);
    } else if ((size_t)n != st->ncols) {
        mfu__skip(c, "CSV row with %ld cells, the header has %zu", n, st->ncols);
    } else {
        mfu_step s;
        mfu_step_init(&s);
        bool have_step = false;
        int overflow = -1; /* a field whose cell is a number too large to read */
        for (int f = 0; f < MFU__F_COUNT; f++) {
            if (st->col[f] < 0)
                continue;
            mfu__span cell = mfu__span_trim(cells[st->col[f]]);
            mfu__num num;
            if (cell.n == 0)
                continue;
            if (f == MFU__F_TIME_S && mfu__datetime_scan(cell, &num.value, NULL)) {
                num.printed = num.value;
                num.unit = MFU__UNIT_SECONDS;
                num.kind = MFU__NUM_FINITE;
            } else if (!mfu__num_parse(cell, &num)) {
                if (overflow < 0 && csv_overflows(cell))
                    overflow = f;
                continue;
            }
            if (mfu__fieldmap_store(&st->fm, (mfu__field)f, &num, &s) && f == MFU__F_STEP)
                have_step = true;
        }
        mfu__span step_cell = mfu__span_trim(cells[st->col[MFU__F_STEP]]);
        if (overflow >= 0) {
            mfu__span cell = mfu__span_trim(cells[st->col[overflow]]);
            mfu__skip(c, "CSV row whose %s '%.*s' (column %d) is too large a number",
                      mfu__fieldmap_field_name((mfu__field)overflow),
                      (int)(cell.n > 40 ? 40 : cell.n), cell.p, st->col[overflow] + 1);
        } else if (!have_step && step_cell.n > 0) {
            mfu__skip(
                c, "CSV row whose step '%.*s' (column %d) is not a whole number from 0 to 9e15",
                (int)(step_cell.n > 40 ? 40 : step_cell.n), step_cell.p, st->col[MFU__F_STEP] + 1);
        } else if (!have_step) {
            mfu__skip(c, "CSV row without a step value in column %d", st->col[MFU__F_STEP] + 1);
        } else {
            rc = mfu__emit(c, &s);
        }
    }
    return rc;
}

static void csv_cleanup(void *state)
{
    free(((csv_state *)state)->buf);
}

const mfu__format mfu__fmt_csv = {
    .name = "csv",
    .summary = "generic CSV/TSV with a header row; fields by column name or --map FIELD=COLUMN",
    .detect = csv_detect,
    .state_size = sizeof(csv_state),
    .init = csv_init,
    .line = csv_line,
    .cleanup = csv_cleanup,
    .generic = true,
};
