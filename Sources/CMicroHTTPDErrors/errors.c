/*
 * libmicrohttpd 0.9.75 answers requests it cannot parse (a request line or header block over the
 * connection's memory, a malformed request line or chunk, a bad Content-Length, an unsupported
 * HTTP version) with built-in HTML bodies fixed at its compile time, before any callback of ours
 * runs. It queues them through its own exported MHD_queue_response, which it calls through its
 * PLT, so a definition here takes those calls first. Calls that come from inside libmicrohttpd with
 * a body that has no Content-Type (ours always carry one) get the responder's problem document
 * instead; every other call goes straight to the real function.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/socket.h>
#include <microhttpd.h>
#include "CMicroHTTPDErrors.h"

typedef enum MHD_Result (*queue_function)(struct MHD_Connection *, unsigned int, struct MHD_Response *);

static enroute_mhd_error_responder responder;
static queue_function real_queue;
static void *library_base;

static queue_function real(void) {
    queue_function found = __atomic_load_n(&real_queue, __ATOMIC_ACQUIRE);
    if (found == NULL) {
        found = (queue_function)dlsym(RTLD_NEXT, "MHD_queue_response");
        Dl_info info;
        if (found != NULL && dladdr((void *)found, &info) != 0) {
            __atomic_store_n(&library_base, info.dli_fbase, __ATOMIC_RELEASE);
        }
        __atomic_store_n(&real_queue, found, __ATOMIC_RELEASE);
    }
    return found;
}

static bool called_from_library(const void *caller) {
    Dl_info info;
    void *base = __atomic_load_n(&library_base, __ATOMIC_ACQUIRE);
    return base != NULL && dladdr(caller, &info) != 0 && info.dli_fbase == base;
}

enum MHD_Result MHD_queue_response(struct MHD_Connection *connection, unsigned int status_code,
                                   struct MHD_Response *response) {
    queue_function queue = real();
    if (queue == NULL) return MHD_NO;
    enroute_mhd_error_responder make = __atomic_load_n(&responder, __ATOMIC_ACQUIRE);
    if (make != NULL && status_code >= 400 && response != NULL
        && MHD_get_response_header(response, MHD_HTTP_HEADER_CONTENT_TYPE) == NULL
        && called_from_library(__builtin_return_address(0))) {
        struct MHD_Response *problem = make(status_code);
        if (problem != NULL) {
            enum MHD_Result result = queue(connection, status_code, problem);
            MHD_destroy_response(problem);
            return result;
        }
    }
    return queue(connection, status_code, response);
}

bool enroute_mhd_set_error_responder(enroute_mhd_error_responder make) {
    __atomic_store_n(&responder, make, __ATOMIC_RELEASE);
    (void)real();
    /* In effect only if the process resolves the name to this definition (the executable exports it). */
    return dlsym(RTLD_DEFAULT, "MHD_queue_response") == (void *)&MHD_queue_response;
}
