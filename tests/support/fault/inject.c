/* Fault injection for the integration tests, loaded with LD_PRELOAD into the tool.
 *
 * Writes, pwrites and ftruncates to a file whose path contains $FAULT_PATH fail: every one with
 * ENOSPC (a full disk), or, with FAULT=kill-second, the first goes through and the process kills
 * itself with SIGKILL just before the second, as a run killed in the middle of an update would
 * be. Other files are untouched. Built by the test that needs it (cc -shared -fPIC). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

static int faulty(int fd) {
    const char *wanted = getenv("FAULT_PATH");
    if (wanted == NULL || *wanted == '\0')
        return 0;
    char link[64], path[4096];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t length = readlink(link, path, sizeof path - 1);
    if (length < 0)
        return 0;
    path[length] = '\0';
    if (strstr(path, wanted) == NULL)
        return 0;
    const char *how = getenv("FAULT");
    if (how != NULL && strcmp(how, "kill-second") == 0) {
        static int calls;
        if (++calls == 2)
            raise(SIGKILL);
        return 0;
    }
    errno = ENOSPC;
    return 1;
}

#define REAL(name) static __typeof__(name) *real; if (!real) real = dlsym(RTLD_NEXT, #name)

ssize_t write(int fd, const void *buffer, size_t count) {
    REAL(write);
    return faulty(fd) ? -1 : real(fd, buffer, count);
}

ssize_t pwrite(int fd, const void *buffer, size_t count, off_t offset) {
    REAL(pwrite);
    return faulty(fd) ? -1 : real(fd, buffer, count, offset);
}

ssize_t pwrite64(int fd, const void *buffer, size_t count, off64_t offset) {
    REAL(pwrite64);
    return faulty(fd) ? -1 : real(fd, buffer, count, offset);
}

int ftruncate(int fd, off_t length) {
    REAL(ftruncate);
    return faulty(fd) ? -1 : real(fd, length);
}

int ftruncate64(int fd, off64_t length) {
    REAL(ftruncate64);
    return faulty(fd) ? -1 : real(fd, length);
}
