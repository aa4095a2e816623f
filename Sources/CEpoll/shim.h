/* Linux's readiness and socket headers that Swift's Glibc module leaves out: epoll, eventfd and TCP options.
   Headers only; nothing is linked beyond libc. */
#include <sys/types.h>
#include <sys/socket.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <netinet/in.h>
#include <netinet/tcp.h>

/* accept4 is declared only under _GNU_SOURCE, which the Glibc module's <sys/socket.h> was not parsed with. */
extern int accept4(int fd, struct sockaddr *addr, socklen_t *length, int flags);
