/* A latency meter: keep-alive GETs of PATH on CONNS connections for SECONDS.
 *
 * Closed loop (RATE 0, as wrk): each connection sends its next request when the last answer
 * is in; an answer is timed from its request's write to its last byte.
 * Paced (RATE > 0, open loop, as wrk2): RATE requests a second in all, each connection on its
 * own fixed schedule (staggered). A request that had to wait behind a late answer is timed
 * from when it was *due*, so it counts its wait (no coordinated omission); one sent late
 * because the meter itself woke late (another process had its core) is timed from its write:
 * the meter's own delays are not the server's. Paced, the meter has idle time: its latencies
 * are the server's, not the meter's own queue at its limit.
 *
 * Prints, to stdout, a line per 100 ms (seconds, answers, over 1 ms, over 2 ms, slowest µs);
 * to stderr the run's percentiles (10 µs bins, exact max), then the same as one JSON line
 * (LATJSON ...) for tests/faults/lib.
 *
 *   cc -O2 -o /tmp/lat tests/faults/lat.c
 *   taskset -c 1 /tmp/lat PORT 32 15              closed loop, GET /
 *   taskset -c 1 /tmp/lat PORT 32 15 20000 /x     paced: 20,000 requests a second, GET /x
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
    int busy;      /* a request is out */
    double timed;  /* its latency counts from here: the write (closed) or the due time (paced) */
    double due;    /* paced: when the next request is due */
    double done;   /* when the last answer was read */
    int len;
    char buf[65536];
} Conn;

#define BINS 2000 /* 10 µs bins; the last holds everything from 20 ms */
static long hist[BINS + 1];
static char request[512];
static int request_len;

static int send_request(Conn *c) {
    if (write(c->fd, request, request_len) != request_len) { perror("write"); return -1; }
    c->busy = 1;
    return 0;
}

int main(int argc, char **argv) {
    if (argc < 4) { fprintf(stderr, "usage: lat PORT CONNS SECONDS [RATE [PATH]]\n"); return 2; }
    int port = atoi(argv[1]), n = atoi(argv[2]);
    double secs = atof(argv[3]), rate = argc > 4 ? atof(argv[4]) : 0;
    request_len = snprintf(request, sizeof request, "GET %s HTTP/1.1\r\nHost: lat\r\n\r\n",
                           argc > 5 ? argv[5] : "/");
    double period = rate > 0 ? n / rate : 0; /* paced: seconds between one connection's requests */
    int slots = (int)(secs * 10) + 2;
    long *count = calloc(slots, sizeof(long)), *over1 = calloc(slots, sizeof(long));
    long *over2 = calloc(slots, sizeof(long)), *slowest = calloc(slots, sizeof(long));
    long blocked = 0, self_late = 0, max_us = 0;
    Conn *conns = calloc(n, sizeof(Conn));
    int ep = epoll_create1(0);
    struct sockaddr_in addr = {0};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    addr.sin_addr.s_addr = htonl(0x7f000001);

    for (int i = 0; i < n; i++) {
        int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1;
        if (connect(fd, (struct sockaddr *)&addr, sizeof addr) != 0) { perror("connect"); return 1; }
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        struct epoll_event e = {.events = EPOLLIN, .data.u32 = i};
        epoll_ctl(ep, EPOLL_CTL_ADD, fd, &e);
        conns[i].fd = fd;
    }

    double start = now();
    for (int i = 0; i < n; i++) {
        conns[i].due = start + period * (i + 0.5) / n;
        if (period == 0) {
            conns[i].timed = now();
            if (send_request(&conns[i]) < 0) return 1;
        }
    }

    struct epoll_event ready[64];
    while (now() - start < secs) {
        struct timespec wait = {0, 100 * 1000 * 1000};
        if (period > 0) {
            /* Send what is due; sleep until the next due time. */
            double t = now(), next = t + 0.1;
            for (int i = 0; i < n; i++) {
                Conn *c = &conns[i];
                if (c->busy) continue;
                if (c->due <= t) {
                    if (c->done > c->due) {
                        blocked++; /* the last answer came after this request was due */
                        c->timed = c->due;
                    } else {
                        if (t - c->due > 0.001) self_late++;
                        c->timed = t;
                    }
                    c->due += period;
                    if (send_request(c) < 0) return 1;
                } else if (c->due < next) {
                    next = c->due;
                }
            }
            double d = next - now();
            if (d < 0) d = 0;
            wait.tv_sec = (time_t)d;
            wait.tv_nsec = (long)((d - (double)wait.tv_sec) * 1e9);
        }
        int k = epoll_pwait2(ep, ready, 64, &wait, NULL);
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
            long us = (long)((t - c->timed) * 1e6);
            hist[us / 10 > BINS ? BINS : us / 10]++;
            if (us > max_us) max_us = us;
            int s = (int)((t - start) * 10);
            if (s < slots) {
                count[s]++;
                if (us > 1000) over1[s]++;
                if (us > 2000) over2[s]++;
                if (us > slowest[s]) slowest[s] = us;
            }
            memmove(c->buf, c->buf + whole, c->len - whole);
            c->len -= whole;
            c->busy = 0;
            c->done = t;
            if (period == 0) {
                c->timed = now();
                if (send_request(c) < 0) return 1;
            }
        }
    }
    double elapsed = now() - start;

    long total = 0;
    for (int i = 0; i <= BINS; i++) total += hist[i];
    double wanted[] = {50, 90, 99, 99.9};
    int at[4];
    for (int p = 0; p < 4; p++) {
        long need = (long)(total * wanted[p] / 100.0), seen = 0;
        int i = 0;
        for (; i < BINS; i++) { seen += hist[i]; if (seen >= need) break; }
        at[p] = i * 10;
        fprintf(stderr, "p%g=%dus ", wanted[p], at[p]);
    }
    fprintf(stderr, "max=%ldus n=%ld rps=%.0f blocked=%ld meter_late=%ld\n", max_us, total, total / elapsed,
            blocked, self_late);
    fprintf(stderr,
            "LATJSON {\"requests\":%ld,\"duration_us\":%.0f,\"rate\":%.0f,\"conns\":%d,\"p50_us\":%d,"
            "\"p90_us\":%d,\"p99_us\":%d,\"p999_us\":%d,\"max_us\":%ld,\"blocked\":%ld,\"meter_late\":%ld}\n",
            total, elapsed * 1e6, rate, n, at[0], at[1], at[2], at[3], max_us, blocked, self_late);
    for (int s = 0; s < slots - 2; s++)
        printf("%.1f %ld %ld %ld %ld\n", s / 10.0, count[s], over1[s], over2[s], slowest[s]);
    return 0;
}
