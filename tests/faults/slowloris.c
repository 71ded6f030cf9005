/* The slowloris attacker of tests/faults (scenario `slowloris`), in C so that its own CPU use
 * is a small fraction of the Python client's: it shares the load generator's core, and wrk's
 * latencies should measure the server beside the slow connections, not wrk queued behind
 * the attacker.
 *
 *   slowloris PORT COUNT LIMIT_S [head|body]
 *
 * Keeps COUNT connections open to 127.0.0.1:PORT, half dripping a request head, half a request
 * body (or all one kind), one byte a second each (spread over the second); a connection the server cuts is
 * replaced at once, until a line arrives on stdin (or stdin closes): then nothing is replaced
 * and the program ends when every connection has ended. A connection still open LIMIT_S seconds
 * after its first byte ends as "not cut". Output, one line each:
 *   S <open> <failed opens>                     status, every second
 *   R <head|body> <seconds> <outcome> <bytes>   a connection that ended: seconds from its first
 *                                               byte to the end, closed|reset|not-cut, and the
 *                                               first answer bytes received (hex, or -)
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static const char HEAD_START[] = "GET /slowloris HTTP/1.1\r\nHost: faults\r\nX-Drip: ";
static const char BODY_START[] =
    "POST /slowloris HTTP/1.1\r\nHost: faults\r\nContent-Length: 100000\r\n\r\n";

typedef struct {
    int fd;          /* -1: free slot */
    int body;        /* 1: drips a body, 0: a head */
    int started;     /* the opening bytes went out */
    double first;    /* when the opening bytes went out */
    double next;     /* when the next byte is due */
    int got;         /* answer bytes kept */
    unsigned char answer[12];
} Conn;

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int port, count, open_now, failed, only;
static double limit;
static Conn *conns;
static int epfd;

static int open_one(Conn *c, int body) {
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    if (fd < 0) return -1;
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    struct sockaddr_in a = {0};
    a.sin_family = AF_INET;
    a.sin_port = htons((unsigned short)port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, (struct sockaddr *)&a, sizeof a) < 0 && errno != EINPROGRESS) {
        close(fd);
        return -1;
    }
    memset(c, 0, sizeof *c);
    c->fd = fd;
    c->body = body;
    struct epoll_event ev = {.events = EPOLLIN | EPOLLOUT | EPOLLRDHUP, .data.ptr = c};
    epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev);
    open_now++;
    return 0;
}

static void finish(Conn *c, const char *outcome) {
    if (c->started) {
        printf("R %s %.3f %s ", c->body ? "body" : "head", now() - c->first, outcome);
        if (c->got == 0) printf("-");
        for (int i = 0; i < c->got; i++) printf("%02x", c->answer[i]);
        printf("\n");
    } else {
        failed++; /* never connected (refused, or no server there): a failed open */
    }
    epoll_ctl(epfd, EPOLL_CTL_DEL, c->fd, NULL);
    close(c->fd);
    c->fd = -1;
    open_now--;
    /* A cut connection is replaced at once; a failed open is retried in half a second (no
     * busy loop, no flood of lines when the server is not there). */
    c->next = c->started ? 0 : now() + 0.5;
}

/* Sends the opening bytes once connected, then one byte whenever one is due. */
static void drip(Conn *c, double t) {
    if (!c->started) {
        const char *s = c->body ? BODY_START : HEAD_START;
        size_t n = c->body ? sizeof BODY_START - 1 : sizeof HEAD_START - 1;
        ssize_t w = send(c->fd, s, n, MSG_NOSIGNAL);
        if (w < 0 && errno == EAGAIN) return; /* still connecting */
        if (w != (ssize_t)n) { finish(c, "reset"); return; }
        c->started = 1;
        c->first = t;
        c->next = t + 1.0;
        struct epoll_event ev = {.events = EPOLLIN | EPOLLRDHUP, .data.ptr = c};
        epoll_ctl(epfd, EPOLL_CTL_MOD, c->fd, &ev);
        return;
    }
    if (t - c->first >= limit) { finish(c, "not-cut"); return; }
    if (send(c->fd, "a", 1, MSG_NOSIGNAL) < 0 && errno != EAGAIN) { finish(c, "reset"); return; }
    c->next += 1.0;
}

static void readable(Conn *c) {
    unsigned char buf[4096];
    for (;;) {
        ssize_t n = recv(c->fd, buf, sizeof buf, 0);
        if (n > 0) {
            for (ssize_t i = 0; i < n && c->got < (int)sizeof c->answer; i++) c->answer[c->got++] = buf[i];
            continue;
        }
        if (n == 0) { finish(c, "closed"); return; }
        if (errno == EAGAIN || errno == EINTR) return;
        finish(c, "reset");
        return;
    }
}

int main(int argc, char **argv) {
    if (argc < 4) {
        fprintf(stderr, "usage: slowloris PORT COUNT LIMIT_S [head|body]\n");
        return 2;
    }
    port = atoi(argv[1]);
    count = atoi(argv[2]);
    limit = atof(argv[3]);
    only = argc > 4 ? (strcmp(argv[4], "body") == 0 ? 1 : 0) : -1;
    signal(SIGPIPE, SIG_IGN);
    setvbuf(stdout, NULL, _IOLBF, 0);
    conns = calloc((size_t)count, sizeof *conns);
    epfd = epoll_create1(0);
    struct epoll_event in = {.events = EPOLLIN | EPOLLHUP, .data.ptr = NULL};
    epoll_ctl(epfd, EPOLL_CTL_ADD, 0, &in);

    double start = now();
    int active = 1;
    for (int i = 0; i < count; i++) conns[i].fd = -1;
    double next_status = start + 1.0;
    struct epoll_event events[256];
    while (active || open_now > 0) {
        int n = epoll_wait(epfd, events, 256, 10);
        double t = now();
        for (int i = 0; i < n; i++) {
            Conn *c = events[i].data.ptr;
            if (c == NULL) {
                char line[64];
                (void)!read(0, line, sizeof line); /* a line, or the end of stdin: stop */
                active = 0;
                epoll_ctl(epfd, EPOLL_CTL_DEL, 0, NULL);
                continue;
            }
            if (c->fd < 0) continue;
            if (events[i].events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR)) readable(c);
            if (c->fd >= 0 && !c->started && (events[i].events & EPOLLOUT)) drip(c, t);
        }
        for (int i = 0; i < count; i++) {
            Conn *c = &conns[i];
            if (c->fd < 0) {
                /* The first connections open staggered over the first second, as drips are. */
                if (active && t >= start + (double)i / count && t >= c->next &&
                    open_one(c, only >= 0 ? only : i % 2) < 0) {
                    failed++;
                    c->next = t + 0.5;
                }
                continue;
            }
            if (c->started && t >= c->next) drip(c, t);
        }
        if (t >= next_status) {
            printf("S %d %d\n", open_now, failed);
            next_status += 1.0;
        }
    }
    return 0;
}
