/* A second latency meter for probes (not used by the scenarios): keep-alive GET / on CONNS
 * connections for SECONDS, each answer timed from its request's write to its last byte.
 * Prints, to stdout, a line per 100 ms (seconds, answers, over 1 ms, over 2 ms, slowest µs),
 * and to stderr the percentiles of the whole run (10 µs bins). Its use: to see *when* the slow
 * answers come (the slowloris waves), and to check wrk's tail against another client's.
 *
 *   cc -O2 -o /tmp/lat tests/faults/lat.c && taskset -c 1 /tmp/lat PORT 32 15
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

typedef struct {
    int fd;
    double sent;
    int len;
    char buf[65536];
} Conn;

static const char REQUEST[] = "GET / HTTP/1.1\r\nHost: lat\r\n\r\n";
static long hist[2001]; /* 10 µs bins; the last holds everything from 20 ms */

int main(int argc, char **argv) {
    if (argc < 4) { fprintf(stderr, "usage: lat PORT CONNS SECONDS\n"); return 2; }
    int port = atoi(argv[1]), n = atoi(argv[2]);
    double secs = atof(argv[3]);
    int slots = (int)(secs * 10) + 2;
    long *count = calloc(slots, sizeof(long)), *over1 = calloc(slots, sizeof(long));
    long *over2 = calloc(slots, sizeof(long)), *slowest = calloc(slots, sizeof(long));
    Conn *conns = calloc(n, sizeof(Conn));
    int ep = epoll_create1(0);
    struct sockaddr_in addr = {0};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    addr.sin_addr.s_addr = htonl(0x7f000001);
    double start = now();

    for (int i = 0; i < n; i++) {
        int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1;
        if (connect(fd, (struct sockaddr *)&addr, sizeof addr) != 0) { perror("connect"); return 1; }
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        struct epoll_event e = {.events = EPOLLIN, .data.u32 = i};
        epoll_ctl(ep, EPOLL_CTL_ADD, fd, &e);
        conns[i].fd = fd;
        conns[i].sent = now();
        if (write(fd, REQUEST, sizeof REQUEST - 1) < 0) { perror("write"); return 1; }
    }

    struct epoll_event ready[64];
    while (now() - start < secs) {
        int k = epoll_wait(ep, ready, 64, 100);
        for (int j = 0; j < k; j++) {
            Conn *c = &conns[ready[j].data.u32];
            int r = read(c->fd, c->buf + c->len, sizeof c->buf - c->len - 1);
            if (r <= 0) { fprintf(stderr, "a connection closed\n"); return 1; }
            c->len += r;
            c->buf[c->len] = 0;
            char *end = strstr(c->buf, "\r\n\r\n");
            if (!end) continue;
            char *cl = strcasestr(c->buf, "content-length:");
            int whole = (int)(end + 4 - c->buf) + (cl && cl < end ? atoi(cl + 15) : 0);
            if (c->len < whole) continue;
            double t = now();
            long us = (long)((t - c->sent) * 1e6);
            hist[us / 10 > 2000 ? 2000 : us / 10]++;
            int s = (int)((t - start) * 10);
            if (s < slots) {
                count[s]++;
                if (us > 1000) over1[s]++;
                if (us > 2000) over2[s]++;
                if (us > slowest[s]) slowest[s] = us;
            }
            memmove(c->buf, c->buf + whole, c->len - whole);
            c->len -= whole;
            c->sent = now();
            if (write(c->fd, REQUEST, sizeof REQUEST - 1) < 0) { perror("write"); return 1; }
        }
    }

    long total = 0;
    for (int i = 0; i <= 2000; i++) total += hist[i];
    double wanted[] = {50, 90, 99, 99.9};
    for (int p = 0; p < 4; p++) {
        long need = (long)(total * wanted[p] / 100.0), seen = 0;
        int i = 0;
        for (; i < 2000; i++) { seen += hist[i]; if (seen >= need) break; }
        fprintf(stderr, "p%g=%dus ", wanted[p], i * 10);
    }
    fprintf(stderr, "n=%ld\n", total);
    for (int s = 0; s < slots - 2; s++)
        printf("%.1f %ld %ld %ld %ld\n", s / 10.0, count[s], over1[s], over2[s], slowest[s]);
    return 0;
}
