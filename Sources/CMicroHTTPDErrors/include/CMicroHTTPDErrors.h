#ifndef ENROUTE_CMICROHTTPD_ERRORS_H
#define ENROUTE_CMICROHTTPD_ERRORS_H

#include <stdbool.h>

struct MHD_Response;

/* Builds the answer for an error libmicrohttpd raises itself (400, 413, 414, 431, 505...), or NULL to keep its own. */
typedef struct MHD_Response *(*enroute_mhd_error_responder)(unsigned int status);

/* Installs the responder; returns false when the interposer is not in effect (libmicrohttpd's own bodies stay). */
bool enroute_mhd_set_error_responder(enroute_mhd_error_responder responder);

#endif
