/* The floor of a wrapper's overhead: spawn the command, wait for it, exit with its status, and
 * nothing else. bench/run.sh links it statically; BENCHMARKS.md has it beside the wrappers. */
#include <spawn.h>
#include <sys/wait.h>

extern char **environ;

int main(int argc, char **argv) {
    pid_t child;
    int status;
    if (argc < 2 || posix_spawnp(&child, argv[1], NULL, NULL, argv + 1, environ) != 0)
        return 127;
    if (waitpid(child, &status, 0) < 0)
        return 125;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
