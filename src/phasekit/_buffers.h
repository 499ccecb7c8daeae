/* phasekit's C kernels: arrays through the buffer protocol, shared by
 * phasekit.periodicity._kernels, phasekit.distance._dtw and phasekit.io._paraver (no numpy
 * headers).
 *
 * An Array is a C-contiguous buffer of the struct codes its taker accepts (take_array);
 * get_array and the converters below take float64 ('d'), int64 ('l' or 'q', 8 bytes) or bool
 * ('?'), the converters as PyArg_ParseTuple "O&" converters that release the buffer again
 * when a later argument fails. */
#ifndef PHASEKIT_BUFFERS_H
#define PHASEKIT_BUFFERS_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <string.h>

typedef struct {
    Py_buffer view;
} Array;

/* ``obj`` as a C-contiguous buffer whose struct code is one of ``formats`` (item size
 * ``itemsize``, 0: any; ``ndim`` dimensions, 0: any); 0 with a TypeError (nothing held) if it
 * is not. */
static inline int take_array(PyObject *obj, Array *array, const char *formats,
                             Py_ssize_t itemsize, int ndim, int writable) {
    int flags = PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | (writable ? PyBUF_WRITABLE : 0);
    if (PyObject_GetBuffer(obj, &array->view, flags) < 0)
        return 0;
    const char *format = array->view.format ? array->view.format : "B";
    if (*format == '@' || *format == '=')
        format++;
    int ok = format[0] != '\0' && format[1] == '\0' && strchr(formats, format[0]) != NULL &&
             (itemsize == 0 || array->view.itemsize == itemsize) &&
             (ndim == 0 || array->view.ndim == ndim);
    if (!ok) {
        const char *kind = !strcmp(formats, "d")    ? "float64"
                           : !strcmp(formats, "lq") ? "int64"
                           : !strcmp(formats, "i")  ? "int32"
                           : !strcmp(formats, "B")  ? "uint8"
                           : !strcmp(formats, "?")  ? "bool"
                                                    : formats;
        char dims[32] = "";
        if (ndim > 0)
            PyOS_snprintf(dims, sizeof dims, "%d-d ", ndim);
        PyErr_Format(PyExc_TypeError,
                     "expected a C-contiguous %s%s%s array, got format '%s' (item size %zd, "
                     "%d-d)",
                     writable ? "writable " : "", dims, kind,
                     array->view.format ? array->view.format : "B", array->view.itemsize,
                     array->view.ndim);
        PyBuffer_Release(&array->view);
        return 0;
    }
    return 1;
}

/* kind 'd' (float64), 'q' (int64) or '?' (bool), any number of dimensions */
static inline int get_array(PyObject *obj, Array *array, char kind, int writable) {
    const char *formats = kind == 'd' ? "d" : kind == 'q' ? "lq" : "?";
    if (!take_array(obj, array, formats, kind == '?' ? 1 : 8, 0, writable))
        return 0;
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
