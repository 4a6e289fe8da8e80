/* Recursive separator splitting in C: the same spans as separators.python_separator_spans.
 *
 * A Python loop spends about a microsecond per chunk on calls into the string methods and the
 * regex engine; on documents of a few kilobytes that is most of a chunker's time. This file
 * walks the code points directly. The rare grapheme-aware steps (a hard cut, an overlap in
 * text without spaces) call back into Python, so there is one definition of a grapheme
 * boundary.
 *
 * Whitespace is Py_UNICODE_ISSPACE, which is what str.isspace, str.rstrip and the re module's
 * \s use for str patterns.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

typedef struct {
    PyObject *text;
    int kind;
    const void *data;
    PyObject *const *seps;  /* borrowed from the separators tuple */
    Py_ssize_t *seps_len;
    Py_ssize_t *seps_keep;  /* length of each separator without its trailing whitespace */
    Py_ssize_t n_seps;
    Py_ssize_t size;
    Py_ssize_t later;
    PyObject *safe_cut;
    PyObject *out;          /* list of (start, end) pairs kept as two Py_ssize_t values */
    Py_ssize_t *starts;
    Py_ssize_t *ends;
    Py_ssize_t count;
    Py_ssize_t capacity;
} Splitter;

static inline int
is_space(const Splitter *sp, Py_ssize_t i)
{
    return Py_UNICODE_ISSPACE(PyUnicode_READ(sp->kind, sp->data, i));
}

static Py_ssize_t
trim_end(const Splitter *sp, Py_ssize_t start, Py_ssize_t end)
{
    while (end > start && is_space(sp, end - 1))
        end--;
    return end;
}

static int
push(Splitter *sp, Py_ssize_t s, Py_ssize_t e)
{
    if (sp->count == sp->capacity) {
        Py_ssize_t cap = sp->capacity ? sp->capacity * 2 : 64;
        Py_ssize_t *starts = PyMem_Realloc(sp->starts, cap * sizeof(Py_ssize_t));
        if (starts == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        sp->starts = starts;
        Py_ssize_t *ends = PyMem_Realloc(sp->ends, cap * sizeof(Py_ssize_t));
        if (ends == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        sp->ends = ends;
        sp->capacity = cap;
    }
    sp->starts[sp->count] = s;
    sp->ends[sp->count] = e;
    sp->count++;
    return 0;
}

/* A Python callback f(text, a, b) that returns an offset. */
static Py_ssize_t
call_offset(PyObject *f, PyObject *text, Py_ssize_t a, Py_ssize_t b)
{
    PyObject *r = PyObject_CallFunction(f, "Onn", text, a, b);
    if (r == NULL)
        return -1;
    Py_ssize_t v = PyLong_AsSsize_t(r);
    Py_DECREF(r);
    return v;
}

static int
split(Splitter *sp, Py_ssize_t s, Py_ssize_t e, Py_ssize_t level)
{
    PyObject *sep = level < sp->n_seps ? sp->seps[level] : NULL;
    Py_ssize_t n_sep = sep ? sp->seps_len[level] : 0;
    Py_ssize_t keep = sep ? sp->seps_keep[level] : 0;
    e = trim_end(sp, s, e);
    for (;;) {
        while (s < e && is_space(sp, s))
            s++;
        if (s >= e)
            return 0;
        Py_ssize_t limit = s + (sp->count ? sp->later : sp->size);
        if (limit >= e)
            return push(sp, s, e);
        if (!n_sep) {
            Py_ssize_t cut = call_offset(sp->safe_cut, sp->text, limit, s);
            if (cut == -1 && PyErr_Occurred())
                return -1;
            if (cut <= s || cut > e) {  /* the offsets index the buffer: never trust them blindly */
                PyErr_Format(PyExc_ValueError, "separator_spans: a hard cut at %zd is outside (%zd, %zd]", cut, s, e);
                return -1;
            }
            if (push(sp, s, trim_end(sp, s, cut)) < 0)
                return -1;
            s = cut;
            continue;
        }
        Py_ssize_t bound = limit - keep + n_sep;
        Py_ssize_t idx = PyUnicode_Find(sp->text, sep, s, bound < e ? bound : e, -1);
        if (idx == -2)
            return -1;
        if (idx >= 0) {
            if (push(sp, s, keep ? idx + keep : trim_end(sp, s, idx)) < 0)
                return -1;
            s = idx + n_sep;
            continue;
        }
        Py_ssize_t nxt = PyUnicode_Find(sp->text, sep, s, e, 1);
        if (nxt == -2)
            return -1;
        Py_ssize_t part_end = nxt < 0 ? e : nxt + n_sep;
        /* One level per separator: a caller's list of thousands would otherwise exhaust the C stack. */
        if (Py_EnterRecursiveCall(" in separator_spans"))
            return -1;
        int failed = split(sp, s, part_end, level + 1) < 0;
        Py_LeaveRecursiveCall();
        if (failed)
            return -1;
        s = part_end;
    }
}

static PyObject *
span(Py_ssize_t s, Py_ssize_t e)
{
    PyObject *a = PyLong_FromSsize_t(s);
    PyObject *b = PyLong_FromSsize_t(e);
    if (a == NULL || b == NULL) {
        Py_XDECREF(a);
        Py_XDECREF(b);
        return NULL;
    }
    PyObject *t = PyTuple_New(3);
    if (t == NULL) {
        Py_DECREF(a);
        Py_DECREF(b);
        return NULL;
    }
    PyTuple_SET_ITEM(t, 0, a);
    PyTuple_SET_ITEM(t, 1, b);
    PyTuple_SET_ITEM(t, 2, Py_NewRef(Py_None));
    return t;
}

/* Where an overlap before content at s starts: the first word start in [lo, s), else the
 * caller's unaligned rule. */
static Py_ssize_t
overlap_start(Splitter *sp, PyObject *unaligned, Py_ssize_t lo, Py_ssize_t s)
{
    for (Py_ssize_t p = lo; p < s; p++) {
        if (p > 0 && !is_space(sp, p) && is_space(sp, p - 1))
            return p;
    }
    Py_ssize_t p = call_offset(unaligned, sp->text, lo, s);
    if (p == -1 && PyErr_Occurred())
        return -1;
    if (p < lo || p > s) {
        PyErr_Format(PyExc_ValueError, "separator_spans: an overlap start at %zd is outside [%zd, %zd]", p, lo, s);
        return -1;
    }
    return p;
}

static PyObject *
separator_spans(PyObject *module, PyObject *args)
{
    PyObject *text, *seps, *safe_cut, *unaligned;
    Py_ssize_t start, end, size, overlap;
    if (!PyArg_ParseTuple(args, "UnnO!nnOO:separator_spans", &text, &start, &end, &PyTuple_Type, &seps,
                          &size, &overlap, &safe_cut, &unaligned))
        return NULL;
    Py_ssize_t length = PyUnicode_GET_LENGTH(text);
    if (start < 0 || end > length || start > end || size < 1 || overlap < 0 || overlap >= size) {
        PyErr_SetString(PyExc_ValueError, "separator_spans: bounds or sizes out of range");
        return NULL;
    }
    Py_ssize_t n_seps = PyTuple_GET_SIZE(seps);
    Splitter sp = {0};
    sp.text = text;
    sp.kind = PyUnicode_KIND(text);
    sp.data = PyUnicode_DATA(text);
    sp.size = size;
    sp.later = size - overlap;
    sp.safe_cut = safe_cut;
    sp.n_seps = n_seps;
    sp.seps = &PyTuple_GET_ITEM(seps, 0);
    PyObject *result = NULL;
    sp.seps_len = PyMem_Malloc((n_seps + 1) * sizeof(Py_ssize_t));
    sp.seps_keep = PyMem_Malloc((n_seps + 1) * sizeof(Py_ssize_t));
    if (sp.seps_len == NULL || sp.seps_keep == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t i = 0; i < n_seps; i++) {
        PyObject *sep = sp.seps[i];
        if (!PyUnicode_Check(sep)) {
            PyErr_SetString(PyExc_TypeError, "separator_spans: separators must be strings");
            goto done;
        }
        Py_ssize_t n = PyUnicode_GET_LENGTH(sep), keep = n;
        int kind = PyUnicode_KIND(sep);
        const void *data = PyUnicode_DATA(sep);
        while (keep > 0 && Py_UNICODE_ISSPACE(PyUnicode_READ(kind, data, keep - 1)))
            keep--;
        sp.seps_len[i] = n;
        sp.seps_keep[i] = keep;
    }
    /* An empty separator means a hard cut: the levels after it are never reached. */
    for (Py_ssize_t i = 0; i < n_seps; i++) {
        if (sp.seps_len[i] == 0) {
            sp.n_seps = i;
            break;
        }
    }
    if (split(&sp, start, end, 0) < 0)
        goto done;
    /* Overlaps first (they may call back into Python), so the list is built with no Python code
     * running while it has empty places. Later starts move back, never before the previous
     * content's start + 1, so each rule reads the content starts it needs. */
    if (overlap) {
        for (Py_ssize_t k = sp.count - 1; k >= 1; k--) {
            Py_ssize_t s = sp.starts[k], e = sp.ends[k];
            Py_ssize_t room = size - (e - s);
            room = room < overlap ? room : overlap;
            Py_ssize_t lo = s - room, floor = sp.starts[k - 1] + 1;
            lo = lo > floor ? lo : floor;
            if (room > 0 && lo < s) {
                s = overlap_start(&sp, unaligned, lo, s);
                if (s == -1)
                    goto done;
                sp.starts[k] = s;
            }
        }
    }
    result = PyList_New(sp.count);
    if (result == NULL)
        goto done;
    for (Py_ssize_t k = 0; k < sp.count; k++) {
        PyObject *t = span(sp.starts[k], sp.ends[k]);
        if (t == NULL) {
            Py_CLEAR(result);
            goto done;
        }
        PyList_SET_ITEM(result, k, t);
    }
done:
    PyMem_Free(sp.seps_len);
    PyMem_Free(sp.seps_keep);
    PyMem_Free(sp.starts);
    PyMem_Free(sp.ends);
    return result;
}

static PyMethodDef methods[] = {
    {"separator_spans", separator_spans, METH_VARARGS,
     "separator_spans(text, start, end, separators, size, overlap, safe_cut, unaligned_overlap)\n--\n\n"
     "The spans of separators.python_separator_spans, computed in C."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_separators", "Recursive separator splitting in C.", -1, methods,
};

PyMODINIT_FUNC
PyInit__separators(void)
{
    return PyModule_Create(&module);
}
