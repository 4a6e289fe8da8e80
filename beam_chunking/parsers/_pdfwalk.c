/* PDFium calls made once per page object or text run, looped in C.
 *
 * The table finder asks every page object for its type (to find the few paths among the
 * thousands of text objects of a page printed by Chromium, one per word) and every text run
 * for its box. From Python each is a ctypes call of about a microsecond, which no PDFium
 * function batches; here the same calls cost a few nanoseconds each (pdf_tables._rules and
 * _text_runs; bench/README.md). PDFium is not linked: the caller passes the addresses of
 * the functions pypdfium2 already loaded, so this module builds without PDFium's headers and
 * calls the very library the parser uses. The pure-Python loops in pdf_tables serve when it
 * is not built, with the same results.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <limits.h>
#include <string.h>

/* PDFium's calling convention: __stdcall on 32-bit Windows, the platform's default elsewhere. */
#if defined(_WIN32) && !defined(_WIN64)
#define FPDF_CALLCONV __stdcall
#else
#define FPDF_CALLCONV
#endif

typedef void *(FPDF_CALLCONV *get_object_fn)(void *holder, int index);
typedef int (FPDF_CALLCONV *get_type_fn)(void *object);
typedef int (FPDF_CALLCONV *get_rect_fn)(void *textpage, int index, double *left, double *top, double *right,
                                         double *bottom);

/* A function or handle address from Python (an int); NULL with an error when it is none. */
static void *
address(PyObject *value, const char *what)
{
    void *p = PyLong_AsVoidPtr(value);
    if (p == NULL && !PyErr_Occurred())
        PyErr_Format(PyExc_ValueError, "%s: a null address", what);
    return p;
}

static PyObject *
object_types(PyObject *self, PyObject *args)
{
    PyObject *get_object_obj, *get_type_obj, *holder_obj;
    int count;
    if (!PyArg_ParseTuple(args, "OOOi", &get_object_obj, &get_type_obj, &holder_obj, &count))
        return NULL;
    get_object_fn get_object = (get_object_fn)address(get_object_obj, "get_object");
    if (get_object == NULL)
        return NULL;
    get_type_fn get_type = (get_type_fn)address(get_type_obj, "get_type");
    if (get_type == NULL)
        return NULL;
    void *holder = address(holder_obj, "holder");
    if (holder == NULL)
        return NULL;
    if (count < 0)
        count = 0;
    PyObject *out = PyBytes_FromStringAndSize(NULL, count);
    if (out == NULL)
        return NULL;
    unsigned char *types = (unsigned char *)PyBytes_AS_STRING(out);
    for (int k = 0; k < count; k++) {
        void *object = get_object(holder, k);
        /* FPDF_PAGEOBJ_UNKNOWN (0) for a missing object or a type past one byte */
        int kind = object == NULL ? 0 : get_type(object);
        types[k] = (unsigned char)(kind >= 0 && kind < 256 ? kind : 0);
    }
    return out;
}

static PyObject *
text_rects(PyObject *self, PyObject *args)
{
    PyObject *get_rect_obj, *textpage_obj;
    int count;
    Py_buffer view;
    if (!PyArg_ParseTuple(args, "OOiw*", &get_rect_obj, &textpage_obj, &count, &view))
        return NULL;
    PyObject *result = NULL;
    get_rect_fn get_rect = (get_rect_fn)address(get_rect_obj, "get_rect");
    void *textpage = get_rect == NULL ? NULL : address(textpage_obj, "textpage");
    if (textpage == NULL)
        goto done;
    if (count < 0 || (size_t)view.len < (size_t)count * 4 * sizeof(double)) {
        PyErr_Format(PyExc_ValueError, "the buffer holds %zd bytes, %d rects need %zu", view.len, count,
                     (size_t)(count < 0 ? 0 : count) * 4 * sizeof(double));
        goto done;
    }
    double *out = (double *)view.buf;
    for (int k = 0; k < count; k++) {
        double *r = out + 4 * k;
        get_rect(textpage, k, r, r + 1, r + 2, r + 3);
    }
    result = Py_None;
    Py_INCREF(result);
done:
    PyBuffer_Release(&view);
    return result;
}

typedef int (FPDF_CALLCONV *char_box_fn)(void *tp, int index, double *left, double *right, double *bottom,
                                         double *top);
typedef int (FPDF_CALLCONV *loose_box_fn)(void *tp, int index, float *rect);
typedef int (FPDF_CALLCONV *origin_fn)(void *tp, int index, double *x, double *y);
typedef double (FPDF_CALLCONV *font_size_fn)(void *tp, int index);
typedef int (FPDF_CALLCONV *font_weight_fn)(void *tp, int index);
typedef unsigned long (FPDF_CALLCONV *font_info_fn)(void *tp, int index, void *buffer, unsigned long buflen,
                                                    int *flags);
typedef int (FPDF_CALLCONV *matrix_fn)(void *tp, int index, float *matrix);

#define NAME_SIZE 128
#define BOLD_WEIGHT 600
#define FIXED_PITCH 1

/* What pdf_lines._Reader keeps between calls: the out-parameters are reused, page by page,
 * so a call that fails leaves the previous values, as it does in Python. */
typedef struct {
    void *tp;
    char_box_fn char_box;
    loose_box_fn loose_box;
    origin_fn origin;
    font_size_fn font_size;
    font_weight_fn font_weight;
    font_info_fn font_info;
    matrix_fn matrix;
    PyObject *named;
    double values[4];
    float rect[4];
    float m[6];
    int flags;
    char name[NAME_SIZE];
} Reader;

/* _Reader.style: (bold, monospaced) of a char's font, by its name (judged by the Python callable
 * named, cached there), else by its weight or its fixed-pitch flag; -1 on error. */
static int
reader_style(Reader *r, int index, int *bold, int *mono)
{
    r->font_info(r->tp, index, r->name, NAME_SIZE, &r->flags);
    size_t n = 0;
    while (n < NAME_SIZE && r->name[n])
        n++;
    PyObject *name = PyBytes_FromStringAndSize(r->name, (Py_ssize_t)n);
    if (name == NULL)
        return -1;
    PyObject *known = PyObject_CallOneArg(r->named, name);
    Py_DECREF(name);
    if (known == NULL)
        return -1;
    if (!PyTuple_Check(known) || PyTuple_GET_SIZE(known) != 2) {
        Py_DECREF(known);
        PyErr_SetString(PyExc_TypeError, "named must return a (bold, monospaced) tuple");
        return -1;
    }
    int bold_name = PyObject_IsTrue(PyTuple_GET_ITEM(known, 0));
    int mono_name = bold_name < 0 ? -1 : PyObject_IsTrue(PyTuple_GET_ITEM(known, 1));
    Py_DECREF(known);
    if (mono_name < 0)
        return -1;
    *bold = bold_name || r->font_weight(r->tp, index) >= BOLD_WEIGHT;
    *mono = (r->flags & FIXED_PITCH) || mono_name;
    return 0;
}

/* One line's facts, as pdf_lines._Reader.facts returns them (the size unscaled, the text
 * matrix after it); NULL with an error. */
static PyObject *
reader_facts(Reader *r, double height, int i0, int i1, int iw, int i_font)
{
    double *v = r->values;
    r->char_box(r->tp, i0, v, v + 1, v + 2, v + 3);
    double a0 = v[0], a1 = v[1];
    r->char_box(r->tp, i1, v, v + 1, v + 2, v + 3);
    double b0 = v[0], b1 = v[1];
    r->loose_box(r->tp, i0, r->rect);
    double top = height - (double)r->rect[1], bottom = height - (double)r->rect[3];
    r->loose_box(r->tp, i1, r->rect);
    double top1 = height - (double)r->rect[1], bottom1 = height - (double)r->rect[3];
    PyObject *w0, *w1;
    if (iw != INT_MIN) {
        r->char_box(r->tp, iw, v, v + 1, v + 2, v + 3);
        w0 = PyFloat_FromDouble(v[0]);
        w1 = w0 == NULL ? NULL : PyFloat_FromDouble(v[1]);
        if (w1 == NULL) {
            Py_XDECREF(w0);
            return NULL;
        }
    } else {
        w0 = Py_None;
        w1 = Py_None;
        Py_INCREF(w0);
        Py_INCREF(w1);
    }
    int bold, mono, bold1, mono1;
    if (reader_style(r, i_font, &bold, &mono) < 0 || reader_style(r, i1, &bold1, &mono1) < 0) {
        Py_DECREF(w0);
        Py_DECREF(w1);
        return NULL;
    }
    r->origin(r->tp, i_font, v, v + 1);
    double baseline = height - v[1];
    double a = r->font_size(r->tp, i_font), b = r->font_size(r->tp, i1);
    double size = b > a ? b : a; /* Python's max(a, b) */
    /* The text matrix's scale is left to Python (pdf_lines._scaled): a compiler may fuse a
     * product and a sum here (an FMA), and the size would differ in its last bit. */
    PyObject *matrix;
    if (r->matrix(r->tp, i_font, r->m)) {
        matrix = Py_BuildValue("(dddd)", (double)r->m[0], (double)r->m[1], (double)r->m[2], (double)r->m[3]);
        if (matrix == NULL) {
            Py_DECREF(w0);
            Py_DECREF(w1);
            return NULL;
        }
    } else {
        matrix = Py_None;
        Py_INCREF(matrix);
    }
    return Py_BuildValue("(ddddddddNNOOOOddN)", a0, a1, b0, b1, top, bottom, top1, bottom1, w0, w1,
                         bold ? Py_True : Py_False, mono ? Py_True : Py_False, bold1 ? Py_True : Py_False,
                         mono1 ? Py_True : Py_False, baseline, size, matrix);
}

static PyObject *
line_facts(PyObject *self, PyObject *args)
{
    PyObject *fns, *tp_obj, *indices, *named;
    double height;
    if (!PyArg_ParseTuple(args, "O!OdOO", &PyTuple_Type, &fns, &tp_obj, &height, &indices, &named))
        return NULL;
    if (PyTuple_GET_SIZE(fns) != 7) {
        PyErr_SetString(PyExc_ValueError, "fns: 7 function addresses are needed");
        return NULL;
    }
    Reader r;
    memset(&r, 0, sizeof(r));
    void *f[7];
    for (int k = 0; k < 7; k++) {
        f[k] = address(PyTuple_GET_ITEM(fns, k), "fns");
        if (f[k] == NULL)
            return NULL;
    }
    r.char_box = (char_box_fn)f[0];
    r.loose_box = (loose_box_fn)f[1];
    r.origin = (origin_fn)f[2];
    r.font_size = (font_size_fn)f[3];
    r.font_weight = (font_weight_fn)f[4];
    r.font_info = (font_info_fn)f[5];
    r.matrix = (matrix_fn)f[6];
    r.named = named;
    r.tp = address(tp_obj, "textpage");
    if (r.tp == NULL)
        return NULL;
    PyObject *seq = PySequence_Fast(indices, "indices must be a sequence of ints");
    if (seq == NULL)
        return NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    if (n % 4) {
        Py_DECREF(seq);
        PyErr_SetString(PyExc_ValueError, "indices: 4 per line are needed");
        return NULL;
    }
    PyObject *out = PyList_New(n / 4);
    if (out == NULL) {
        Py_DECREF(seq);
        return NULL;
    }
    PyObject **items = PySequence_Fast_ITEMS(seq);
    for (Py_ssize_t k = 0; k < n; k += 4) {
        int idx[4];
        for (int j = 0; j < 4; j++) {
            long value = PyLong_AsLong(items[k + j]);
            if (value == -1 && PyErr_Occurred())
                goto fail;
            idx[j] = (int)value;
        }
        PyObject *facts = reader_facts(&r, height, idx[0], idx[1], idx[2], idx[3]);
        if (facts == NULL)
            goto fail;
        PyList_SET_ITEM(out, k / 4, facts);
    }
    Py_DECREF(seq);
    return out;
fail:
    Py_DECREF(seq);
    Py_DECREF(out);
    return NULL;
}

static PyMethodDef methods[] = {
    {"line_facts", line_facts, METH_VARARGS,
     "line_facts(fns, textpage, height, indices, named)\n--\n\n"
     "pdf_lines._Reader.facts of every line, its 4 char indices given in turn in indices (first, last, end of "
     "the first word or INT_MIN, font), with the font size unscaled and the text matrix's a, b, c, d (None "
     "without one) after it; fns are the addresses of FPDFText_GetCharBox, GetLooseCharBox, "
     "GetCharOrigin, GetFontSize, GetFontWeight, GetFontInfo and GetMatrix; named(name) gives (bold, monospaced) "
     "by a font's name."},
    {"object_types", object_types, METH_VARARGS,
     "object_types(get_object, get_type, holder, count)\n--\n\n"
     "The type of each of the holder's first count objects (FPDFPage_GetObject or FPDFFormObj_GetObject, then "
     "FPDFPageObj_GetType, given as addresses), one byte each; 0 for a missing object."},
    {"text_rects", text_rects, METH_VARARGS,
     "text_rects(get_rect, textpage, count, out)\n--\n\n"
     "FPDFText_GetRect (an address) of runs 0..count-1 into out, a writable buffer of 4 * count doubles: "
     "left, top, right, bottom of each run in turn."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_pdfwalk", "PDFium calls made once per page object or text run, looped in C.", -1,
    methods,
};

PyMODINIT_FUNC
PyInit__pdfwalk(void)
{
    return PyModule_Create(&module);
}
