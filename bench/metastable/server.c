/* The service of bench/metastable: an HTTP server on loopback with a finite capacity, as the
 * primary of Huang et al.'s retry experiment (OSDI 2022; lexiangh/Metastability,
 * Retry_Metastability/) is one.
 *
 *   server PORT WORK_MS LOG
 *
 * One thread accepts connections and reads each request; one worker answers them in the order
 * they came, each after WORK_MS milliseconds of CPU work (a busy loop, so that a cgroup's CPU
 * cap slows it as it slowed the paper's MongoDB). The worker does the work of every request it
 * was sent, even one whose client has stopped waiting: the answer then meets a closed socket.
 * That wasted work is what can keep the server overloaded after a trigger. LOG gets a line for
 * each request when it arrives, `a ARRIVED`, and one when it is answered, `d ARRIVED ANSWERED
 * WAITING`: times in seconds since the epoch, and whether its client was still waiting for the
 * answer (1) or had gone, the work wasted (0). */
#define _GNU_SOURCE
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

struct request {
    int fd;
    double arrived;
};

/* The queue between the thread that accepts and the worker: unbounded, as a server's backlog
 * of connections is, FIFO. */
static struct request *queue;
static size_t queue_head, queue_tail, queue_room;
static pthread_mutex_t queue_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t queue_filled = PTHREAD_COND_INITIALIZER;

static double now(void) {
    struct timespec at;
    clock_gettime(CLOCK_REALTIME, &at);
    return at.tv_sec + at.tv_nsec / 1e9;
}

static double cpu_seconds(void) {
    struct timespec used;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &used);
    return used.tv_sec + used.tv_nsec / 1e9;
}

static void push(struct request request) {
    pthread_mutex_lock(&queue_lock);
    if (queue_tail == queue_room) {
        size_t held = queue_tail - queue_head;
        memmove(queue, queue + queue_head, held * sizeof *queue);
        queue_head = 0;
        queue_tail = held;
        if (held * 2 >= queue_room) {
            queue_room = queue_room * 2 + 1024;
            queue = realloc(queue, queue_room * sizeof *queue);
            if (!queue) {
                perror("server: the queue");
                exit(1);
            }
        }
    }
    queue[queue_tail++] = request;
    pthread_cond_signal(&queue_filled);
    pthread_mutex_unlock(&queue_lock);
}

static struct request pop(void) {
    pthread_mutex_lock(&queue_lock);
    while (queue_head == queue_tail)
        pthread_cond_wait(&queue_filled, &queue_lock);
    struct request request = queue[queue_head++];
    pthread_mutex_unlock(&queue_lock);
    return request;
}

/* Burn `seconds` of this thread's CPU time. */
static void work(double seconds) {
    volatile unsigned long sink = 0;
    double until = cpu_seconds() + seconds;
    while (cpu_seconds() < until)
        for (int i = 0; i < 1000; i++)
            sink += i * sink + 1;
}

/* Whether the client has closed its end of `fd` (a client whose time limit passed). */
static int client_gone(int fd) {
    struct pollfd peer = {.fd = fd, .events = POLLRDHUP};
    return poll(&peer, 1, 0) > 0 && (peer.revents & (POLLRDHUP | POLLHUP | POLLERR));
}

static double work_seconds;
static FILE *log_file;

static void *worker(void *unused) {
    (void)unused;
    static const char answer[] =
        "HTTP/1.1 200 OK\r\nContent-Length: 3\r\nConnection: close\r\n\r\nok\n";
    for (;;) {
        struct request request = pop();
        work(work_seconds);
        /* A send to a client that has closed its end still succeeds (the reset comes later),
         * so whether it had gone is asked of the socket before answering. */
        int waiting = !client_gone(request.fd) &&
                      send(request.fd, answer, sizeof answer - 1, MSG_NOSIGNAL) == sizeof answer - 1;
        close(request.fd);
        fprintf(log_file, "d %.6f %.6f %d\n", request.arrived, now(), waiting);
    }
    return NULL;
}

/* Read a request's head (up to the blank line) so that the answer does not reset it. */
static int read_head(int fd) {
    char buffer[4096];
    size_t held = 0;
    while (held < sizeof buffer - 1) {
        ssize_t got = recv(fd, buffer + held, sizeof buffer - 1 - held, 0);
        if (got <= 0)
            return -1;
        held += got;
        buffer[held] = 0;
        if (strstr(buffer, "\r\n\r\n"))
            return 0;
    }
    return -1;
}

int main(int argc, char **argv) {
    if (argc != 4) {
        fprintf(stderr, "usage: server PORT WORK_MS LOG\n");
        return 2;
    }
    work_seconds = atof(argv[2]) / 1000.0;
    log_file = fopen(argv[3], "w");
    if (!log_file) {
        perror(argv[3]);
        return 1;
    }
    setvbuf(log_file, NULL, _IOLBF, 0);
    int listener = socket(AF_INET, SOCK_STREAM, 0);
    int yes = 1;
    setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
    struct sockaddr_in address = {.sin_family = AF_INET,
                                  .sin_port = htons(atoi(argv[1])),
                                  .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    if (bind(listener, (struct sockaddr *)&address, sizeof address) || listen(listener, 4096)) {
        perror("server: listen");
        return 1;
    }
    pthread_t thread;
    pthread_create(&thread, NULL, worker, NULL);
    for (;;) {
        int fd = accept(listener, NULL, NULL);
        if (fd < 0)
            continue;
        double arrived = now();
        if (read_head(fd) != 0) {
            close(fd);
            continue;
        }
        fprintf(log_file, "a %.6f\n", arrived);
        push((struct request){fd, arrived});
    }
}
