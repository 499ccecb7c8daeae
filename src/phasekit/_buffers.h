/* phasekit's C kernels: arrays through the buffer protocol, shared by
 * phasekit.periodicity._kernels and phasekit.distance._dtw (no numpy headers).
 *
 * An Array is a C-contiguous buffer of float64 ('d'), int64 ('l' or 'q', 8 bytes) or bool
 * ('?'); the converters below are PyArg_ParseTuple "O&" converters that check the format and
 * release the buffer again when a later argument fails. */
#ifndef PHASEKIT_BUFFERS_H
#define PHASEKIT_BUFFERS_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

typedef struct {
    Py_buffer view;
} Array;

static inline int get_array(PyObject *obj, Array *array, char kind, int writable) {
    int flags = PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | (writable ? PyBUF_WRITABLE : 0);
    if (PyObject_GetBuffer(obj, &array->view, flags) < 0)
        return 0;
    const char *format = array->view.format ? array->view.format : "B";
    if (*format == '@' || *format == '=')
        format++;
    int ok = format[0] != '\0' && format[1] == '\0';
    if (kind == 'd')
        ok = ok && format[0] == 'd' && array->view.itemsize == 8;
    else if (kind == 'q')
        ok = ok && (format[0] == 'q' || format[0] == 'l') && array->view.itemsize == 8;
    else
        ok = ok && format[0] == '?' && array->view.itemsize == 1;
    if (!ok) {
        PyErr_Format(PyExc_TypeError, "expected a C-contiguous %s%s array, got format '%s'",
                     writable ? "writable " : "",
                     kind == 'd' ? "float64" : kind == 'q' ? "int64" : "bool",
                     array->view.format ? array->view.format : "B");
        PyBuffer_Release(&array->view);
        return 0;
    }
    return Py_CLEANUP_SUPPORTED;
}

/* PyArg_ParseTuple "O&" converters; called again with NULL to release on a later failure */
#define CONVERTER(name, kind, writable)                                                        \
    static inline int name(PyObject *obj, void *address) {                                     \
        Array *array = address;                                                                \
        if (obj == NULL) {                                                                     \
            PyBuffer_Release(&array->view);                                                    \
            return 1;                                                                          \
        }                                                                                      \
        return get_array(obj, array, kind, writable);                                          \
    }
CONVERTER(f64_in, 'd', 0)
CONVERTER(f64_out, 'd', 1)
CONVERTER(i64_in, 'q', 0)
CONVERTER(i64_out, 'q', 1)
CONVERTER(bool_out, '?', 1)
#undef CONVERTER

static inline void release(Array *arrays, int count) {
    for (int i = 0; i < count; i++)
        PyBuffer_Release(&arrays[i].view);
}

/* the length of ``axis`` (1 past the array's dimensions) */
static inline Py_ssize_t dim(const Array *array, int axis) {
    return axis < array->view.ndim ? array->view.shape[axis] : 1;
}

#endif
