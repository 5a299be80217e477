/* The deals rows of the export's fast path (datasets/pgcopy.py): PostgreSQL sends each price's
 * columns in COPY's binary format, this writes its deals.json item and deals.csv line.
 *
 * One function, format(data, tables) -> (items, lines, records, consumed):
 * - data: binary COPY tuples (the stream's header already read), possibly ending in part of
 *   a tuple (left for the next call: `consumed` says how many bytes were used) or in the
 *   trailer (-1 as field count: `consumed` stops before it);
 * - tables: the labels written once per distinct value, lists of bytes indexed by the label
 *   numbers the query sends (1-based, as WITH ORDINALITY numbers them), in TABLE_NAMES's order
 *   (pgcopy.DealRows builds them);
 * - returns the JSON items (each ending in ",\n"), the CSV lines (each ending in CRLF) and
 *   one index record per row (datasets.patch.RECORD: id, bar, JSON length, CSV length).
 *
 * The bytes are those of datasets.rows + orjson + csv (the portable path), which
 * datasets/tests/test_pgcopy.py holds the two to. The columns are COLUMNS in pgcopy.DealRows.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

enum {
    T_BEER_JSON, T_BEER_CSV, T_BRAND_JSON, T_BRAND_CSV, T_SERVING_JSON, T_SERVING_CODE,
    T_SERVING_LABEL, T_WHEN_JSON, T_WHEN_LABEL, T_WHEN_FROM, T_WHEN_UNTIL, N_TABLES
};

enum {
    C_ID, C_VENUE, C_BEER, C_BRAND, C_SERVING, C_WHEN, C_KIND, C_UNITS, C_VOLUME, C_PACKAGING,
    C_PRICE, C_OPEN_BAR, C_SERVICE, C_COUVERT, C_CONDITIONS, C_VERIFIED, C_CREATED,
    C_CONFIRMATIONS, C_DISPUTES, C_STATUS, C_VENUE_SLUG, C_HOOD, C_VERIFIED_ON, N_COLUMNS
};

/* PostgreSQL's epoch (2000-01-01) in Unix seconds and in days since 1970-01-01. */
#define PG_EPOCH_UNIX 946684800LL
#define PG_EPOCH_DAYS 10957LL

typedef struct {
    char *buf;
    Py_ssize_t len, cap;
} Out;

static int grow(Out *o, Py_ssize_t need)
{
    if (o->len + need <= o->cap)
        return 0;
    Py_ssize_t cap = o->cap ? o->cap : 1 << 16;
    while (cap < o->len + need)
        cap *= 2;
    char *buf = PyMem_Realloc(o->buf, cap);
    if (buf == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    o->buf = buf;
    o->cap = cap;
    return 0;
}

/* Writers assume room was made (grow) for the row's worst case beforehand. */
static inline void put(Out *o, const char *s, Py_ssize_t n)
{
    memcpy(o->buf + o->len, s, n);
    o->len += n;
}

#define PUT_LIT(o, s) put((o), (s), (Py_ssize_t)(sizeof(s) - 1))

static inline void put_int(Out *o, long long v)
{
    char tmp[24];
    int n = 0;
    unsigned long long u = v < 0 ? 0ULL - (unsigned long long)v : (unsigned long long)v;
    do {
        tmp[n++] = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    if (v < 0)
        tmp[n++] = '-';
    while (n)
        o->buf[o->len++] = tmp[--n];
}

/* Cents as reais: 1290 -> 12.90 (never negative here: CHECK constraints). */
static inline void put_brl(Out *o, long long cents)
{
    if (cents < 0) {
        o->buf[o->len++] = '-';
        cents = -cents;
    }
    put_int(o, cents / 100);
    o->buf[o->len++] = '.';
    o->buf[o->len++] = (char)('0' + (cents % 100) / 10);
    o->buf[o->len++] = (char)('0' + cents % 10);
}

/* millilitres as litres in plain notation, trailing zeros cut: 600 -> 0.6, 1000 -> 1. */
static inline void put_litres(Out *o, long long ml)
{
    put_int(o, ml / 1000);
    int frac = (int)(ml % 1000);
    if (frac) {
        char d[3] = {(char)('0' + frac / 100), (char)('0' + frac / 10 % 10), (char)('0' + frac % 10)};
        int n = d[2] != '0' ? 3 : d[1] != '0' ? 2 : 1;
        o->buf[o->len++] = '.';
        put(o, d, n);
    }
}

/* days since 2000-01-01 as YYYY-MM-DD (the proleptic Gregorian calendar, as both PostgreSQL
 * and Python's date use). */
static inline int put_date(Out *o, long long pg_days)
{
    long long z = pg_days + PG_EPOCH_DAYS + 719468;
    long long era = (z >= 0 ? z : z - 146096) / 146097;
    long long doe = z - era * 146097;
    long long yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    long long y = yoe + era * 400;
    long long doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    long long mp = (5 * doy + 2) / 153;
    long long d = doy - (153 * mp + 2) / 5 + 1;
    long long m = mp < 10 ? mp + 3 : mp - 9;
    if (m <= 2)
        y += 1;
    if (y < 1 || y > 9999) {
        PyErr_Format(PyExc_ValueError, "date out of range (year %lld)", y);
        return -1;
    }
    char s[10] = {(char)('0' + y / 1000), (char)('0' + y / 100 % 10), (char)('0' + y / 10 % 10),
                  (char)('0' + y % 10), '-', (char)('0' + m / 10), (char)('0' + m % 10), '-',
                  (char)('0' + d / 10), (char)('0' + d % 10)};
    put(o, s, 10);
    return 0;
}

/* A string as orjson writes it: '"' and '\' escaped, control characters as \b \t \n \f \r
 * or \u00xx, the rest (UTF-8 included) as is. Room: 6 bytes per input byte + 2. */
static inline void put_json_string(Out *o, const char *s, Py_ssize_t n)
{
    static const char hex[] = "0123456789abcdef";
    o->buf[o->len++] = '"';
    for (Py_ssize_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x20 && c != '"' && c != '\\') {
            o->buf[o->len++] = (char)c;
            continue;
        }
        o->buf[o->len++] = '\\';
        switch (c) {
        case '"': o->buf[o->len++] = '"'; break;
        case '\\': o->buf[o->len++] = '\\'; break;
        case '\b': o->buf[o->len++] = 'b'; break;
        case '\t': o->buf[o->len++] = 't'; break;
        case '\n': o->buf[o->len++] = 'n'; break;
        case '\f': o->buf[o->len++] = 'f'; break;
        case '\r': o->buf[o->len++] = 'r'; break;
        default:
            PUT_LIT(o, "u00");
            o->buf[o->len++] = hex[c >> 4];
            o->buf[o->len++] = hex[c & 15];
        }
    }
    o->buf[o->len++] = '"';
}

/* A CSV text cell as Python's csv module writes it (QUOTE_MINIMAL): quoted, its quotes
 * doubled, when it holds a comma, a quote, CR or LF. Room: 2 bytes per input byte + 2. */
static inline void put_csv_text(Out *o, const char *s, Py_ssize_t n)
{
    int quote = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        char c = s[i];
        if (c == ',' || c == '"' || c == '\r' || c == '\n') {
            quote = 1;
            break;
        }
    }
    if (!quote) {
        put(o, s, n);
        return;
    }
    o->buf[o->len++] = '"';
    for (Py_ssize_t i = 0; i < n; i++) {
        if (s[i] == '"')
            o->buf[o->len++] = '"';
        o->buf[o->len++] = s[i];
    }
    o->buf[o->len++] = '"';
}

static inline uint32_t be32(const unsigned char *p)
{
    return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
}

static inline uint64_t be64(const unsigned char *p)
{
    return ((uint64_t)be32(p) << 32) | be32(p + 4);
}

typedef struct {
    const char *p; /* NULL for SQL NULL */
    int32_t n;
} Field;

/* An integer column (int2, int4 or int8 in binary). */
static int as_int(const Field *f, int column, long long *v)
{
    const unsigned char *p = (const unsigned char *)f->p;
    if (f->n == 8)
        *v = (long long)(int64_t)be64(p);
    else if (f->n == 4)
        *v = (long long)(int32_t)be32(p);
    else if (f->n == 2)
        *v = (long long)(int16_t)(((uint16_t)p[0] << 8) | p[1]);
    else {
        PyErr_Format(PyExc_ValueError, "column %d: not an integer (%d bytes)", column, f->n);
        return -1;
    }
    return 0;
}

/* A label from a table: its 1-based number in the row, or NULL (the table's entry None). */
static int label(PyObject *table, const Field *f, int column, const char **s, Py_ssize_t *n)
{
    long long i;
    if (as_int(f, column, &i) < 0)
        return -1;
    if (i < 1 || i > PyList_GET_SIZE(table)) {
        PyErr_Format(PyExc_ValueError, "column %d: label %lld out of range", column, i);
        return -1;
    }
    PyObject *item = PyList_GET_ITEM(table, i - 1);
    if (!PyBytes_Check(item)) {
        PyErr_Format(PyExc_TypeError, "column %d: labels must be bytes", column);
        return -1;
    }
    *s = PyBytes_AS_STRING(item);
    *n = PyBytes_GET_SIZE(item);
    return 0;
}

static Py_ssize_t longest(PyObject **tables)
{
    Py_ssize_t most = 0;
    for (int t = 0; t < N_TABLES; t++)
        for (Py_ssize_t i = 0; i < PyList_GET_SIZE(tables[t]); i++) {
            PyObject *item = PyList_GET_ITEM(tables[t], i);
            if (PyBytes_Check(item) && PyBytes_GET_SIZE(item) > most)
                most = PyBytes_GET_SIZE(item);
        }
    return most;
}

static const int NOT_NULL[N_COLUMNS] = {
    [C_ID] = 1, [C_VENUE] = 1, [C_SERVING] = 1, [C_WHEN] = 1, [C_KIND] = 1, [C_UNITS] = 1,
    [C_VOLUME] = 1, [C_PACKAGING] = 1, [C_PRICE] = 1, [C_CONDITIONS] = 1, [C_VERIFIED] = 1,
    [C_CREATED] = 1, [C_CONFIRMATIONS] = 1, [C_DISPUTES] = 1, [C_STATUS] = 1,
    [C_VENUE_SLUG] = 1, [C_VERIFIED_ON] = 1,
};

/* One row: its JSON item into `js`, its CSV line into `cs`. */
static int format_row(const Field *f, PyObject **tables, Py_ssize_t room_labels, Out *js,
                      Out *cs, long long *id, long long *venue)
{
    long long units, volume, price, v, seconds;
    const char *s;
    Py_ssize_t n;
    for (int c = 0; c < N_COLUMNS; c++)
        if (NOT_NULL[c] && f[c].p == NULL) {
            PyErr_Format(PyExc_ValueError, "column %d came out NULL", c);
            return -1;
        }
    Py_ssize_t text = f[C_KIND].n + f[C_PACKAGING].n + f[C_CONDITIONS].n + f[C_STATUS].n +
                      f[C_VENUE_SLUG].n + (f[C_HOOD].p ? f[C_HOOD].n : 0);
    Py_ssize_t room = 6 * text + 8 * room_labels + 600;
    if (grow(js, room) < 0 || grow(cs, room) < 0)
        return -1;
    if (as_int(&f[C_ID], C_ID, id) < 0 || as_int(&f[C_VENUE], C_VENUE, venue) < 0 ||
        as_int(&f[C_UNITS], C_UNITS, &units) < 0 || as_int(&f[C_VOLUME], C_VOLUME, &volume) < 0 ||
        as_int(&f[C_PRICE], C_PRICE, &price) < 0)
        return -1;
    int open_bar = f[C_KIND].n == 8 && memcmp(f[C_KIND].p, "open_bar", 8) == 0;
    long long den = units * volume;
    if (den <= 0) {
        PyErr_SetString(PyExc_ValueError, "a serving of no volume");
        return -1;
    }
    long long per_litre = (2000 * price + den) / (2 * den);

    /* deals.json: datasets.rows.DEAL_KEYS */
    PUT_LIT(js, "{\"id\":");
    put_int(js, *id);
    PUT_LIT(js, ",\"venue_id\":");
    put_int(js, *venue);
    if (f[C_BEER].p == NULL)
        PUT_LIT(js, ",\"beer\":null");
    else {
        if (label(tables[T_BEER_JSON], &f[C_BEER], C_BEER, &s, &n) < 0)
            return -1;
        put(js, s, n);
    }
    if (f[C_BRAND].p == NULL)
        PUT_LIT(js, ",\"brand\":null");
    else {
        if (label(tables[T_BRAND_JSON], &f[C_BRAND], C_BRAND, &s, &n) < 0)
            return -1;
        put(js, s, n);
    }
    if (label(tables[T_SERVING_JSON], &f[C_SERVING], C_SERVING, &s, &n) < 0)
        return -1;
    put(js, s, n);
    PUT_LIT(js, ",\"kind\":");
    put_json_string(js, f[C_KIND].p, f[C_KIND].n);
    PUT_LIT(js, ",\"price_cents\":");
    put_int(js, price);
    PUT_LIT(js, ",\"price_per_litre_cents\":");
    if (open_bar)
        PUT_LIT(js, "null");
    else
        put_int(js, per_litre);
    static const int nullable[3] = {C_OPEN_BAR, C_SERVICE, C_COUVERT};
    static const char *keys[3] = {",\"open_bar_minutes\":", ",\"service_charge_pct\":",
                                  ",\"couvert_cents\":"};
    for (int k = 0; k < 3; k++) {
        put(js, keys[k], (Py_ssize_t)strlen(keys[k]));
        if (f[nullable[k]].p == NULL)
            PUT_LIT(js, "null");
        else {
            if (as_int(&f[nullable[k]], nullable[k], &v) < 0)
                return -1;
            put_int(js, v);
        }
    }
    PUT_LIT(js, ",\"conditions\":");
    if (f[C_CONDITIONS].n == 0)
        PUT_LIT(js, "null");
    else
        put_json_string(js, f[C_CONDITIONS].p, f[C_CONDITIONS].n);
    if (label(tables[T_WHEN_JSON], &f[C_WHEN], C_WHEN, &s, &n) < 0)
        return -1;
    put(js, s, n);
    static const int stamps[2] = {C_VERIFIED, C_CREATED};
    static const char *stamp_keys[2] = {",\"verified_at\":", ",\"created_at\":"};
    for (int k = 0; k < 2; k++) {
        const Field *t = &f[stamps[k]];
        if (t->n != 8) {
            PyErr_Format(PyExc_ValueError, "column %d: not a timestamp", stamps[k]);
            return -1;
        }
        long long us = (long long)(int64_t)be64((const unsigned char *)t->p);
        /* whole seconds, rounded down (before 1970 too) */
        seconds = us >= 0 ? us / 1000000 : -((-us + 999999) / 1000000);
        put(js, stamp_keys[k], (Py_ssize_t)strlen(stamp_keys[k]));
        put_int(js, seconds + PG_EPOCH_UNIX);
    }
    long long confirmations, disputes;
    if (as_int(&f[C_CONFIRMATIONS], C_CONFIRMATIONS, &confirmations) < 0 ||
        as_int(&f[C_DISPUTES], C_DISPUTES, &disputes) < 0)
        return -1;
    PUT_LIT(js, ",\"confirmations\":");
    put_int(js, confirmations);
    PUT_LIT(js, ",\"open_disputes\":");
    put_int(js, disputes);
    PUT_LIT(js, ",\"status\":");
    put_json_string(js, f[C_STATUS].p, f[C_STATUS].n);
    PUT_LIT(js, "},\n");

    /* deals.csv: datasets.rows.DEALS_CSV_COLUMNS */
    put_int(cs, *id);
    cs->buf[cs->len++] = ',';
    put_int(cs, *venue);
    cs->buf[cs->len++] = ',';
    put_csv_text(cs, f[C_VENUE_SLUG].p, f[C_VENUE_SLUG].n);
    cs->buf[cs->len++] = ',';
    if (f[C_HOOD].p != NULL)
        put_csv_text(cs, f[C_HOOD].p, f[C_HOOD].n);
    cs->buf[cs->len++] = ',';
    if (f[C_BEER].p != NULL) {
        if (label(tables[T_BEER_CSV], &f[C_BEER], C_BEER, &s, &n) < 0)
            return -1;
        put(cs, s, n);
    }
    cs->buf[cs->len++] = ',';
    if (f[C_BRAND].p != NULL) {
        if (label(tables[T_BRAND_CSV], &f[C_BRAND], C_BRAND, &s, &n) < 0)
            return -1;
        put(cs, s, n);
    }
    cs->buf[cs->len++] = ',';
    if (label(tables[T_SERVING_CODE], &f[C_SERVING], C_SERVING, &s, &n) < 0)
        return -1;
    put(cs, s, n);
    cs->buf[cs->len++] = ',';
    if (label(tables[T_SERVING_LABEL], &f[C_SERVING], C_SERVING, &s, &n) < 0)
        return -1;
    put(cs, s, n);
    cs->buf[cs->len++] = ',';
    put_int(cs, units);
    cs->buf[cs->len++] = ',';
    put_litres(cs, den);
    cs->buf[cs->len++] = ',';
    put_csv_text(cs, f[C_PACKAGING].p, f[C_PACKAGING].n);
    cs->buf[cs->len++] = ',';
    put_csv_text(cs, f[C_KIND].p, f[C_KIND].n);
    cs->buf[cs->len++] = ',';
    put_brl(cs, price);
    cs->buf[cs->len++] = ',';
    if (!open_bar)
        put_brl(cs, per_litre);
    static const int when_tables[3] = {T_WHEN_LABEL, T_WHEN_FROM, T_WHEN_UNTIL};
    for (int k = 0; k < 3; k++) {
        cs->buf[cs->len++] = ',';
        if (label(tables[when_tables[k]], &f[C_WHEN], C_WHEN, &s, &n) < 0)
            return -1;
        put(cs, s, n);
    }
    cs->buf[cs->len++] = ',';
    if (f[C_SERVICE].p != NULL) {
        if (as_int(&f[C_SERVICE], C_SERVICE, &v) < 0)
            return -1;
        put_int(cs, v);
    }
    cs->buf[cs->len++] = ',';
    if (f[C_COUVERT].p != NULL) {
        if (as_int(&f[C_COUVERT], C_COUVERT, &v) < 0)
            return -1;
        put_brl(cs, v);
    }
    cs->buf[cs->len++] = ',';
    put_csv_text(cs, f[C_CONDITIONS].p, f[C_CONDITIONS].n);
    cs->buf[cs->len++] = ',';
    if (as_int(&f[C_VERIFIED_ON], C_VERIFIED_ON, &v) < 0 || put_date(cs, v) < 0)
        return -1;
    cs->buf[cs->len++] = ',';
    put_int(cs, confirmations);
    cs->buf[cs->len++] = ',';
    put_csv_text(cs, f[C_STATUS].p, f[C_STATUS].n);
    PUT_LIT(cs, "\r\n");
    return 0;
}

static PyObject *format_rows(PyObject *self, PyObject *args)
{
    (void)self;
    Py_buffer data;
    PyObject *tables_arg;
    if (!PyArg_ParseTuple(args, "y*O!", &data, &PyTuple_Type, &tables_arg))
        return NULL;
    PyObject *result = NULL;
    Out js = {0}, cs = {0}, rec = {0};
    PyObject *tables[N_TABLES];
    if (PyTuple_GET_SIZE(tables_arg) != N_TABLES) {
        PyErr_Format(PyExc_ValueError, "%d tables expected", N_TABLES);
        goto done;
    }
    for (int t = 0; t < N_TABLES; t++) {
        tables[t] = PyTuple_GET_ITEM(tables_arg, t);
        if (!PyList_Check(tables[t])) {
            PyErr_SetString(PyExc_TypeError, "tables must be lists");
            goto done;
        }
    }
    Py_ssize_t room_labels = longest(tables);
    const unsigned char *p = data.buf, *end = p + data.len, *row;
    Field f[N_COLUMNS];
    for (;;) {
        row = p;
        if (end - p < 2)
            break;
        int16_t count = (int16_t)(((uint16_t)p[0] << 8) | p[1]);
        if (count == -1) /* the trailer */
            break;
        if (count != N_COLUMNS) {
            PyErr_Format(PyExc_ValueError, "%d columns, %d expected", (int)count, N_COLUMNS);
            goto done;
        }
        p += 2;
        int complete = 1;
        for (int c = 0; c < N_COLUMNS; c++) {
            if (end - p < 4) {
                complete = 0;
                break;
            }
            int32_t n = (int32_t)be32(p);
            p += 4;
            if (n == -1) {
                f[c].p = NULL;
                f[c].n = 0;
                continue;
            }
            if (n < 0) {
                PyErr_Format(PyExc_ValueError, "column %d: a length of %d", c, (int)n);
                goto done;
            }
            if (end - p < n) {
                complete = 0;
                break;
            }
            f[c].p = (const char *)p;
            f[c].n = n;
            p += n;
        }
        if (!complete) {
            p = row;
            break;
        }
        long long id, venue;
        Py_ssize_t js_before = js.len, cs_before = cs.len;
        if (format_row(f, tables, room_labels, &js, &cs, &id, &venue) < 0)
            goto done;
        if (grow(&rec, 32) < 0)
            goto done;
        long long r[4] = {id, venue, js.len - js_before, cs.len - cs_before};
        for (int k = 0; k < 4; k++) /* little-endian, whatever the machine's (patch.RECORD) */
            for (int b = 0; b < 8; b++)
                rec.buf[rec.len++] = (char)(((unsigned long long)r[k] >> (8 * b)) & 0xff);
    }
    result = Py_BuildValue("(y#y#y#n)", js.buf ? js.buf : "", js.len, cs.buf ? cs.buf : "",
                           cs.len, rec.buf ? rec.buf : "", rec.len, (Py_ssize_t)(p - (const unsigned char *)data.buf));
done:
    PyMem_Free(js.buf);
    PyMem_Free(cs.buf);
    PyMem_Free(rec.buf);
    PyBuffer_Release(&data);
    return result;
}

static PyMethodDef methods[] = {
    {"format", format_rows, METH_VARARGS,
     "format(data, tables) -> (items, lines, records, consumed): deals rows from binary COPY "
     "tuples."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_dealrows", NULL, -1, methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__dealrows(void)
{
    PyObject *m = PyModule_Create(&module);
    if (m == NULL)
        return NULL;
    if (PyModule_AddIntConstant(m, "COLUMNS", N_COLUMNS) < 0 ||
        PyModule_AddIntConstant(m, "TABLES", N_TABLES) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
