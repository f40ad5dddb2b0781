
#include <stdio.h>
#include <stdlib.h>
struct type_info { void *vtable; const char *name; };
char *__cxa_demangle(const char *mangled, char *buf, unsigned long *n, int *status);
void *__cxa_allocate_exception(unsigned long size) { return calloc(1, size + 64); }
void __cxa_free_exception(void *p) { free(p); }
__attribute__((noreturn)) void __cxa_throw(void *obj, struct type_info *tinfo, void (*dest)(void *)) {
    (void)obj; (void)dest;
    const char *mangled = tinfo && tinfo->name ? tinfo->name : "?";
    int status = -1;
    char *name = __cxa_demangle(mangled, 0, 0, &status);
    /* The host puts this line into the ISOLATE_FAILURE message. */
    fprintf(stderr, "forge: a native extension threw a C++ exception (%s), which this engine "
            "cannot catch; the instance stopped\n", status == 0 && name ? name : mangled);
    fflush(stderr);
    __builtin_trap();
}
