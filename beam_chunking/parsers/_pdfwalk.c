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

static PyMethodDef methods[] = {
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
