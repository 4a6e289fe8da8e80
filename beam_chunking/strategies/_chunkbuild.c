/* Chunk objects for a run of spans, built in C.
 *
 * make_chunks (base.py) is where every strategy's chunks are made. Chunk is a frozen dataclass
 * with slots; building one in Python costs a call and nine slot writes through descriptors,
 * about 0.75 us, a quarter of RecursiveChunker's time on small documents. builder(cls, names)
 * reads the offsets of cls's slots once (they are the member descriptors Python made for
 * __slots__) and returns a function that allocates instances the way object.__new__ does,
 * fills the slots directly and leaves the instances to reference counting alone.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>

#define N_FIELDS 9  /* document_id, index, start, end, text, token_count, metadata, embedding, ordinal */

typedef struct {
    PyTypeObject *cls;
    Py_ssize_t offsets[N_FIELDS];
} Layout;

static void
layout_free(PyObject *capsule)
{
    Layout *layout = PyCapsule_GetPointer(capsule, "beam_chunking.chunk_layout");
    if (layout != NULL) {
        Py_XDECREF(layout->cls);
        PyMem_Free(layout);
    }
}

#define SLOT(obj, layout, k) (*(PyObject **)((char *)(obj) + (layout)->offsets[k]))

/* An offset as a Py_ssize_t, and the int stored in the slot (a new reference); NULL on error.
 * Out-of-range values (beyond 64 bits) are a ValueError, as the Python loop raises. */
static PyObject *
offset(PyObject *value, Py_ssize_t *out)
{
    PyObject *number = PyNumber_Index(value);  /* an int, or what an int stands for */
    if (number == NULL)
        return NULL;
    *out = PyLong_AsSsize_t(number);
    if (*out == -1 && PyErr_Occurred()) {
        Py_DECREF(number);
        if (PyErr_ExceptionMatches(PyExc_OverflowError)) {
            PyErr_Clear();
            PyErr_Format(PyExc_ValueError, "make_chunks: the offset %R is outside the text", value);
        }
        return NULL;
    }
    return number;
}

static PyObject *
build(PyObject *capsule, PyObject *args)
{
    PyObject *doc_id, *text, *given, *metadata;
    Py_ssize_t index;
    if (!PyArg_ParseTuple(args, "UUOOn:make_chunks", &doc_id, &text, &given, &metadata, &index))
        return NULL;
    Layout *layout = PyCapsule_GetPointer(capsule, "beam_chunking.chunk_layout");
    if (layout == NULL)
        return NULL;
    /* A tuple of our own: code run by __index__ below cannot change or free what we walk. */
    PyObject *spans = PySequence_Tuple(given);
    if (spans == NULL)
        return NULL;
    Py_ssize_t n = PyTuple_GET_SIZE(spans), length = PyUnicode_GET_LENGTH(text), done = 0;
    /* Chunks are collected here and put in a list only when all are built, so no Python code
     * (an __index__) ever sees a list with empty places. */
    PyObject **built = PyMem_Calloc(n ? n : 1, sizeof(PyObject *));
    PyObject *zero = PyLong_FromLong(0), *out = NULL;
    if (built == NULL || zero == NULL) {
        if (built == NULL)
            PyErr_NoMemory();
        goto done;
    }
    for (; done < n; done++) {
        PyObject *span = PySequence_Fast(PyTuple_GET_ITEM(spans, done),
                                         "make_chunks: spans must be (start, end, token_count)");
        if (span == NULL)
            goto done;
        if (PySequence_Fast_GET_SIZE(span) != 3) {
            Py_DECREF(span);
            PyErr_SetString(PyExc_ValueError, "make_chunks: spans must be (start, end, token_count)");
            goto done;
        }
        Py_ssize_t s, e;
        PyObject *start = offset(PySequence_Fast_GET_ITEM(span, 0), &s);
        PyObject *end = start ? offset(PySequence_Fast_GET_ITEM(span, 1), &e) : NULL;
        PyObject *count = Py_NewRef(PySequence_Fast_GET_ITEM(span, 2));
        Py_DECREF(span);
        if (end != NULL && (s < 0 || e < s || e > length)) {
            PyErr_Format(PyExc_ValueError, "make_chunks: span [%zd, %zd) is outside the text of %zd characters",
                         s, e, length);
            Py_CLEAR(end);
        }
        PyObject *piece = end ? PyUnicode_Substring(text, s, e) : NULL;
        PyObject *number = piece ? PyLong_FromSsize_t(index + done) : NULL;
        PyObject *chunk = number ? layout->cls->tp_alloc(layout->cls, 0) : NULL;
        if (chunk == NULL) {
            Py_XDECREF(start);
            Py_XDECREF(end);
            Py_DECREF(count);
            Py_XDECREF(piece);
            Py_XDECREF(number);
            goto done;
        }
        /* No Python code runs from here until the slots are full. */
        SLOT(chunk, layout, 0) = Py_NewRef(doc_id);
        SLOT(chunk, layout, 1) = number;
        SLOT(chunk, layout, 2) = start;
        SLOT(chunk, layout, 3) = end;
        SLOT(chunk, layout, 4) = piece;
        SLOT(chunk, layout, 5) = count;
        SLOT(chunk, layout, 6) = Py_NewRef(metadata);
        SLOT(chunk, layout, 7) = Py_NewRef(Py_None);
        SLOT(chunk, layout, 8) = Py_NewRef(zero);
        /* A chunk is a frozen value whose metadata was built before it, so nothing it refers to
         * can refer back to it: it cannot be part of a cycle, and the cycle collector need not
         * walk it (as CPython untracks tuples of atoms). Tracked, the chunks a worker holds made
         * every full collection walk them, up to half of a chunker's time on small documents
         * (bench/README.md, "The collector and the chunks"). */
        PyObject_GC_UnTrack(chunk);
        built[done] = chunk;
    }
    out = PyList_New(n);
    if (out == NULL)
        goto done;
    for (Py_ssize_t k = 0; k < n; k++)
        PyList_SET_ITEM(out, k, built[k]);  /* the list takes the references */
    done = 0;
done:
    for (Py_ssize_t k = 0; k < done; k++)
        Py_DECREF(built[k]);
    PyMem_Free(built);
    Py_XDECREF(zero);
    Py_DECREF(spans);
    return out;
}

static PyMethodDef build_def = {
    "make_chunks", build, METH_VARARGS,
    "make_chunks(document_id, text, spans, metadata, index)\n--\n\n"
    "Chunks for (start, end, token_count) spans of text, numbered from index, sharing metadata.",
};

static PyObject *
builder(PyObject *module, PyObject *args)
{
    PyTypeObject *cls;
    PyObject *names;
    if (!PyArg_ParseTuple(args, "O!O!:builder", &PyType_Type, &cls, &PyTuple_Type, &names))
        return NULL;
    if (PyTuple_GET_SIZE(names) != N_FIELDS) {
        PyErr_Format(PyExc_ValueError, "builder: expected %d field names", N_FIELDS);
        return NULL;
    }
    Layout *layout = PyMem_Calloc(1, sizeof(Layout));
    if (layout == NULL)
        return PyErr_NoMemory();
    for (Py_ssize_t k = 0; k < N_FIELDS; k++) {
        PyObject *descr = PyObject_GetAttr((PyObject *)cls, PyTuple_GET_ITEM(names, k));
        if (descr == NULL) {
            PyMem_Free(layout);
            return NULL;
        }
        int ok = Py_IS_TYPE(descr, &PyMemberDescr_Type);
        PyMemberDef *member = ok ? ((PyMemberDescrObject *)descr)->d_member : NULL;
        ok = ok && member->type == T_OBJECT_EX && ((PyMemberDescrObject *)descr)->d_common.d_type == cls;
        if (ok)
            layout->offsets[k] = member->offset;
        Py_DECREF(descr);
        if (!ok) {
            PyMem_Free(layout);
            PyErr_Format(PyExc_TypeError, "builder: %R is not a slot of %R", PyTuple_GET_ITEM(names, k), cls);
            return NULL;
        }
    }
    layout->cls = (PyTypeObject *)Py_NewRef(cls);
    PyObject *capsule = PyCapsule_New(layout, "beam_chunking.chunk_layout", layout_free);
    if (capsule == NULL) {
        Py_DECREF(cls);
        PyMem_Free(layout);
        return NULL;
    }
    PyObject *fn = PyCFunction_New(&build_def, capsule);
    Py_DECREF(capsule);
    return fn;
}

static PyMethodDef methods[] = {
    {"builder", builder, METH_VARARGS,
     "builder(cls, field_names)\n--\n\n"
     "A make_chunks function for cls, a slotted class whose slots are field_names in that order."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_chunkbuild", "Chunk objects for a run of spans, built in C.", -1, methods,
};

PyMODINIT_FUNC
PyInit__chunkbuild(void)
{
    return PyModule_Create(&module);
}
