/* The floor of the `slowloris` scenario: the smallest server that handles the slow clients as
 * Swoop's defaults do, to tell what the attack costs the machine from what it costs through
 * Swoop. One thread, epoll, no allocation per request, no runtime: keep-alive "ok" answers
 * (pipelined too), a request head cut at HEAD_S seconds after its first byte, a body cut once
 * GRACE_S seconds have passed when it arrived slower than 240 bytes a second; a cut is a 408
 * with its FIN in one segment, then the connection reads until the client closes (2 s at most).
 * As Swoop's heartbeat, it looks at each connection once a second, a tenth of them every 100 ms,
 * so that its cuts come as late as Swoop's and the slow clients come back as often, and in runs
 * of 200 µs at most between its turns at the ready sockets. Not a web
 * server: a control for the scenario and for probes (see docs/reliability.md, K3).
 *
 *   cc -O2 -o /tmp/floor tests/faults/floor.c && taskset -c 0 /tmp/floor PORT [HEAD_S [GRACE_S]]
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
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

#define MAX_FDS 65536
#define BUF 16384
#define MIN_RATE 240.0

enum { IDLE, HEAD, BODY, LINGER };

typedef struct {
    int state;
    double since;   /* head: its first byte; body: its start; linger: the cut */
    long body_left; /* body bytes still to come */
    long body_got;
    int len;
    char *buf;
} Conn;

static Conn *conns[MAX_FDS];
static int top; /* above the highest descriptor seen */
static const char OK[] = "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 3\r\n\r\nok\n";
static const char TIMEOUT[] =
    "HTTP/1.1 408 Request Timeout\r\nConnection: close\r\nContent-Length: 0\r\n\r\n";

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

static void drop(int ep, int fd) {
    epoll_ctl(ep, EPOLL_CTL_DEL, fd, NULL);
    close(fd);
    free(conns[fd]->buf);
    free(conns[fd]);
    conns[fd] = NULL;
}

static void cut(int fd, double t) {
    send(fd, TIMEOUT, sizeof TIMEOUT - 1, MSG_DONTWAIT | MSG_NOSIGNAL | MSG_MORE);
    shutdown(fd, SHUT_WR);
    conns[fd]->state = LINGER;
    conns[fd]->since = t;
}

/* Answers the complete requests in the buffer; leaves the state for what remains. */
static int serve(int fd, double t) {
    Conn *c = conns[fd];
    char out[BUF];
    int out_len = 0, at = 0;
    for (;;) {
        if (c->state == BODY) {
            long take = c->len - at < c->body_left ? c->len - at : c->body_left;
            at += take;
            c->body_left -= take;
            c->body_got += take;
            if (c->body_left > 0) break;
            memcpy(out + out_len, OK, sizeof OK - 1);
            out_len += sizeof OK - 1;
            c->state = IDLE;
            continue;
        }
        if (at == c->len) break;
        char *end = memmem(c->buf + at, c->len - at, "\r\n\r\n", 4);
        if (!end) {
            if (c->state == IDLE) { c->state = HEAD; c->since = t; }
            break;
        }
        char *cl = memmem(c->buf + at, end - (c->buf + at), "Content-Length: ", 16);
        long length = cl ? atol(cl + 16) : 0;
        at = (int)(end + 4 - c->buf);
        if (length > 0) {
            c->state = BODY;
            c->since = t;
            c->body_left = length;
            c->body_got = 0;
        } else {
            memcpy(out + out_len, OK, sizeof OK - 1);
            out_len += sizeof OK - 1;
            c->state = IDLE;
        }
        if (out_len > BUF - 128) {
            if (send(fd, out, out_len, MSG_DONTWAIT | MSG_NOSIGNAL) < 0) return -1;
            out_len = 0;
        }
    }
    memmove(c->buf, c->buf + at, c->len - at);
    c->len -= at;
    if (out_len > 0 && send(fd, out, out_len, MSG_DONTWAIT | MSG_NOSIGNAL) < 0) return -1;
    return 0;
}

int main(int argc, char **argv) {
    if (argc < 2) { fprintf(stderr, "usage: floor PORT [HEAD_S [GRACE_S]]\n"); return 2; }
    int port = atoi(argv[1]);
    double head_s = argc > 2 ? atof(argv[2]) : 30, grace_s = argc > 3 ? atof(argv[3]) : 5;
    signal(SIGPIPE, SIG_IGN);
    int lfd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0), one = 1;
    setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = htons(port), .sin_addr.s_addr = htonl(0x7f000001)};
    if (bind(lfd, (struct sockaddr *)&addr, sizeof addr) || listen(lfd, 4096)) { perror("listen"); return 1; }
    int ep = epoll_create1(0);
    struct epoll_event e = {.events = EPOLLIN, .data.fd = lfd};
    epoll_ctl(ep, EPOLL_CTL_ADD, lfd, &e);
    fprintf(stderr, "floor: port %d, head %gs, grace %gs\n", port, head_s, grace_s);
    struct epoll_event ready[256];
    double last_check = now();
    int slice = 0, scan = MAX_FDS;
    for (;;) {
        int k = epoll_wait(ep, ready, 256, scan < top ? 0 : 100);
        double t = now();
        for (int j = 0; j < k; j++) {
            int fd = ready[j].data.fd;
            if (fd == lfd) {
                int c;
                while ((c = accept4(lfd, NULL, NULL, SOCK_NONBLOCK)) >= 0) {
                    if (c >= MAX_FDS) { close(c); continue; }
                    if (c >= top) top = c + 1;
                    setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
                    conns[c] = calloc(1, sizeof(Conn));
                    conns[c]->buf = malloc(BUF);
                    struct epoll_event ce = {.events = EPOLLIN, .data.fd = c};
                    epoll_ctl(ep, EPOLL_CTL_ADD, c, &ce);
                }
                continue;
            }
            Conn *c = conns[fd];
            if (!c) continue;
            int n;
            if (c->state == LINGER) {
                char sink[4096];
                n = recv(fd, sink, sizeof sink, MSG_DONTWAIT);
                if (n == 0 || (n < 0 && errno != EAGAIN)) drop(ep, fd);
                continue;
            }
            n = recv(fd, c->buf + c->len, BUF - c->len, MSG_DONTWAIT);
            if (n == 0 || (n < 0 && errno != EAGAIN)) { drop(ep, fd); continue; }
            if (n < 0) continue;
            c->len += n;
            if (serve(fd, t) < 0 || c->len == BUF) drop(ep, fd);
        }
        if (t - last_check >= 0.1) {
            last_check = t;
            slice = (slice + 1) % 10;
            scan = slice;
        }
        /* 200 µs of deadline work at most, then back to the ready sockets (as Swoop's heartbeat
         * yields its core every 200 µs): a burst of cuts does not hold every request. */
        double until = now() + 0.0002;
        for (; scan < top && now() < until; scan += 10) {
            Conn *c = conns[scan];
            if (!c) continue;
            if (c->state == HEAD && t - c->since > head_s) cut(scan, t);
            else if (c->state == BODY && t - c->since > grace_s && c->body_got / (t - c->since) < MIN_RATE) cut(scan, t);
            else if (c->state == LINGER && t - c->since > 2) drop(ep, scan);
        }
    }
}
