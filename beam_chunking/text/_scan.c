/* The first and the last set entry of a range of a boolean array, in C.
 *
 * Token windows ask, a dozen times per window, for the last boundary of a kind before a
 * position and the first after one, always within one window's reach. A walk over at most that
 * many bytes costs less than any numpy call, so these replace index arrays and searchsorted
 * (tokens.TokenIndex.first and .last; bench/README.md, "Token windows: the boundary search").
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

/* The mask's bytes, or NULL with an error: a contiguous array of one-byte items (numpy bool). */
static const char *
mask_bytes(PyObject *mask, Py_buffer *view)
{
    if (PyObject_GetBuffer(mask, view, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0)
        return NULL;
    if (view->itemsize != 1 || view->ndim != 1 || view->format == NULL ||
        (strcmp(view->format, "?") != 0 && strcmp(view->format, "B") != 0)) {
        PyBuffer_Release(view);
        PyErr_SetString(PyExc_TypeError, "the mask must be a one-dimensional array of bool or uint8");
        return NULL;
    }
    return (const char *)view->buf;
}

static PyObject *
scan(PyObject *args, int backwards)
{
    PyObject *mask;
    Py_ssize_t lo, hi;
    if (!PyArg_ParseTuple(args, "Onn", &mask, &lo, &hi))
        return NULL;
    Py_buffer view;
    const char *bytes = mask_bytes(mask, &view);
    if (bytes == NULL)
        return NULL;
    Py_ssize_t found = -1;
    if (lo < 0)
        lo = 0;
    if (hi > view.len - 1)
        hi = view.len - 1;
    if (backwards) {
        for (Py_ssize_t k = hi; k >= lo; k--) {
            if (bytes[k]) {
                found = k;
                break;
            }
        }
    } else {
        for (Py_ssize_t k = lo; k <= hi; k++) {
            if (bytes[k]) {
                found = k;
                break;
            }
        }
    }
    PyBuffer_Release(&view);
    return PyLong_FromSsize_t(found);
}

static PyObject *
last_set(PyObject *module, PyObject *args)
{
    return scan(args, 1);
}

static PyObject *
first_set(PyObject *module, PyObject *args)
{
    return scan(args, 0);
}

static PyMethodDef methods[] = {
    {"last_set", last_set, METH_VARARGS,
     "last_set(mask, lo, hi)\n--\n\nThe largest k in [lo, hi] with mask[k] set, or -1."},
    {"first_set", first_set, METH_VARARGS,
     "first_set(mask, lo, hi)\n--\n\nThe smallest k in [lo, hi] with mask[k] set, or -1."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_scan", "The first and the last set entry of a range of a boolean array.", -1, methods,
};

PyMODINIT_FUNC
PyInit__scan(void)
{
    return PyModule_Create(&module);
}
