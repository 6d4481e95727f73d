/* The ways to start a process, each timed over many starts of /bin/true from a parent whose memory
 * is as large as asked: fork then exec (which copies the parent's page tables, then every page
 * either side writes); clone(CLONE_VM | CLONE_VFORK) on a stack of its own, then exec, as the
 * tool's src/sys/spawn/clone.rs starts an attempt; and posix_spawn, which glibc builds on that
 * same clone. Prints one line a way: its name and the mean microseconds per start and wait.
 *
 *   starts MIB COUNT      e.g. starts 4 2000: a parent of 4 MiB, 2000 starts each way
 */
#define _GNU_SOURCE
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static char *const true_argv[] = {"/bin/true", NULL};

static void wait_for(pid_t child) {
    int status;
    if (child < 0 || waitpid(child, &status, 0) != child || status != 0) {
        perror("start or wait");
        exit(1);
    }
}

static void by_fork(void) {
    pid_t child = fork();
    if (child == 0) {
        execve(true_argv[0], true_argv, environ);
        _exit(127);
    }
    wait_for(child);
}

static int exec_true(void *unused) {
    (void)unused;
    execve(true_argv[0], true_argv, environ);
    _exit(127);
}

static void by_clone(void) {
    static char stack[64 * 1024];
    wait_for(clone(exec_true, stack + sizeof stack, CLONE_VM | CLONE_VFORK | SIGCHLD, NULL));
}

static void by_posix_spawn(void) {
    pid_t child;
    if (posix_spawn(&child, true_argv[0], NULL, NULL, true_argv, environ) != 0)
        child = -1;
    wait_for(child);
}

static double microseconds_each(void (*start)(void), long count) {
    struct timespec begin, end;
    clock_gettime(CLOCK_MONOTONIC, &begin);
    for (long i = 0; i < count; i++)
        start();
    clock_gettime(CLOCK_MONOTONIC, &end);
    return ((end.tv_sec - begin.tv_sec) * 1e6 + (end.tv_nsec - begin.tv_nsec) / 1e3) / count;
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: starts MIB COUNT\n");
        return 2;
    }
    size_t bytes = strtoul(argv[1], NULL, 10) << 20;
    long count = strtol(argv[2], NULL, 10);
    /* The parent's memory, in ordinary pages (a huge page would hide what a copy of the page
     * tables costs), every page written, as a running program's is. */
    char *memory = mmap(NULL, bytes + 1, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (memory == MAP_FAILED || madvise(memory, bytes + 1, MADV_NOHUGEPAGE) != 0) {
        perror("mmap");
        return 1;
    }
    memset(memory, 1, bytes);
    printf("fork %.1f\n", microseconds_each(by_fork, count));
    printf("clone %.1f\n", microseconds_each(by_clone, count));
    printf("posix_spawn %.1f\n", microseconds_each(by_posix_spawn, count));
    munmap(memory, bytes + 1);
    return 0;
}
