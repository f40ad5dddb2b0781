#include <Python.h>
#include <stdexcept>
static PyObject *boom(PyObject *, PyObject *) { throw std::runtime_error("boom from C++"); Py_RETURN_NONE; }
static PyMethodDef methods[] = {{"boom", boom, METH_NOARGS, nullptr}, {nullptr, nullptr, 0, nullptr}};
static PyModuleDef mod = {PyModuleDef_HEAD_INIT, "_cxxtrap", nullptr, -1, methods};
extern "C" __attribute__((visibility("default"))) PyObject *PyInit__cxxtrap(void) { return PyModule_Create(&mod); }
