/* The live group's floor: the least a server can do for its two scenarios, in C, one thread,
 * epoll, no runtime. It tells what the machine's kernel charges for them (the TCP send path,
 * loopback delivery, the client's wake-up, all on the server's core) apart from what any
 * framework adds on top, so that the ratios between Swoop and Kestrel can be read against it.
 *
 *   GET /sse                    200 text/event-stream, chunked, then idle until a broadcast
 *   GET /broadcast?size=N&seq=K  one event ("data: " N 'x' "#K", as swoop-live's) framed once,
 *                               then one send() per open stream in a loop; answers the count
 *   GET /ws                     RFC 6455 handshake, then every data frame echoed unmasked
 *   GET /plaintext, /json, /time   as every subject (the runner's probe and checks)
 *
 * Not a web server: no limits, no timeouts, a stream whose socket is full is closed rather than
 * queued (an idle stream's never is). Keep-alive for the plain endpoints; pipelining is not needed.
 *
 *   cc -O2 -o live bench/subjects/c-live/live.c && taskset -c 0 ./live --port 18080
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAX_FDS 65536
#define BUF 8192

enum { HEAD, SSE, WS };

typedef struct {
    int state;
    int len;
    unsigned char *buf; /* the head being read, or a WebSocket frame not yet whole */
} conn;

static conn conns[MAX_FDS];
static int max_fd;
static int epfd;

static void drop(int fd) {
    epoll_ctl(epfd, EPOLL_CTL_DEL, fd, NULL);
    close(fd);
    free(conns[fd].buf);
    conns[fd].buf = NULL;
    conns[fd].state = HEAD;
    conns[fd].len = 0;
}

/* Writes all of it or gives the connection up (the floor queues nothing). */
static int send_all(int fd, const void *p, size_t n) {
    ssize_t w = send(fd, p, n, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (w == (ssize_t)n) return 0;
    drop(fd);
    return -1;
}

/* ---- SHA-1 (FIPS 180-4), for the handshake's accept value only ---- */
static uint32_t rol(uint32_t x, int n) { return (x << n) | (x >> (32 - n)); }

static void sha1(const unsigned char *msg, size_t len, unsigned char out[20]) {
    uint32_t h[5] = {0x67452301, 0xEFCDAB89, 0x98BADCFE, 0x10325476, 0xC3D2E1F0};
    size_t total = ((len + 8) / 64 + 1) * 64;
    unsigned char *m = calloc(total, 1);
    memcpy(m, msg, len);
    m[len] = 0x80;
    uint64_t bits = (uint64_t)len * 8;
    for (int i = 0; i < 8; i++) m[total - 1 - i] = (unsigned char)(bits >> (8 * i));
    for (size_t off = 0; off < total; off += 64) {
        uint32_t w[80];
        for (int i = 0; i < 16; i++)
            w[i] = (uint32_t)m[off + 4 * i] << 24 | (uint32_t)m[off + 4 * i + 1] << 16 |
                   (uint32_t)m[off + 4 * i + 2] << 8 | m[off + 4 * i + 3];
        for (int i = 16; i < 80; i++) w[i] = rol(w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16], 1);
        uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4];
        for (int i = 0; i < 80; i++) {
            uint32_t f, k;
            if (i < 20) { f = (b & c) | (~b & d); k = 0x5A827999; }
            else if (i < 40) { f = b ^ c ^ d; k = 0x6ED9EBA1; }
            else if (i < 60) { f = (b & c) | (b & d) | (c & d); k = 0x8F1BBCDC; }
            else { f = b ^ c ^ d; k = 0xCA62C1D6; }
            uint32_t t = rol(a, 5) + f + e + k + w[i];
            e = d; d = c; c = rol(b, 30); b = a; a = t;
        }
        h[0] += a; h[1] += b; h[2] += c; h[3] += d; h[4] += e;
    }
    free(m);
    for (int i = 0; i < 5; i++)
        for (int j = 0; j < 4; j++) out[4 * i + j] = (unsigned char)(h[i] >> (24 - 8 * j));
}

static void base64(const unsigned char *in, int n, char *out) {
    static const char t[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    int o = 0;
    for (int i = 0; i < n; i += 3) {
        uint32_t v = (uint32_t)in[i] << 16 | (i + 1 < n ? (uint32_t)in[i + 1] << 8 : 0) | (i + 2 < n ? in[i + 2] : 0);
        out[o++] = t[v >> 18 & 63];
        out[o++] = t[v >> 12 & 63];
        out[o++] = i + 1 < n ? t[v >> 6 & 63] : '=';
        out[o++] = i + 2 < n ? t[v & 63] : '=';
    }
    out[o] = 0;
}

/* A header's value in a head (case-insensitive name), copied into out; 0 when absent. */
static int header(const char *head, const char *name, char *out, int cap) {
    size_t nl = strlen(name);
    for (const char *p = strstr(head, "\r\n"); p; p = strstr(p + 2, "\r\n")) {
        const char *line = p + 2;
        if (strncasecmp(line, name, nl) == 0 && line[nl] == ':') {
            const char *v = line + nl + 1;
            while (*v == ' ' || *v == '\t') v++;
            int n = 0;
            while (v[n] && v[n] != '\r' && n < cap - 1) { out[n] = v[n]; n++; }
            while (n > 0 && (out[n - 1] == ' ' || out[n - 1] == '\t')) n--;
            out[n] = 0;
            return 1;
        }
    }
    return 0;
}

static long query_int(const char *target, const char *name, long fallback) {
    char key[32];
    snprintf(key, sizeof key, "%s=", name);
    const char *q = strchr(target, '?');
    while (q) {
        q++;
        if (strncmp(q, key, strlen(key)) == 0) return strtol(q + strlen(key), NULL, 10);
        q = strchr(q, '&');
    }
    return fallback;
}

static void answer(int fd, const char *type, const char *body) {
    char out[512];
    int n = snprintf(out, sizeof out, "HTTP/1.1 200 OK\r\nContent-Type: %s\r\nContent-Length: %zu\r\n\r\n%s",
                     type, strlen(body), body);
    send_all(fd, out, (size_t)n);
}

static void broadcast(int fd, const char *target) {
    long size = query_int(target, "size", 32), seq = query_int(target, "seq", 0);
    if (size < 0 || size > 60000) size = 32;
    char *event = malloc((size_t)size + 128);
    /* The chunk: "<hex>\r\n" "data: " x...x "#K\n\n" "\r\n", made once for every stream. */
    char suffix[32];
    int sl = snprintf(suffix, sizeof suffix, "#%ld\n\n", seq);
    long payload = 6 + size + sl;
    int hl = sprintf(event, "%lx\r\n", payload);
    memcpy(event + hl, "data: ", 6);
    memset(event + hl + 6, 'x', (size_t)size);
    memcpy(event + hl + 6 + size, suffix, (size_t)sl);
    memcpy(event + hl + payload, "\r\n", 2);
    size_t len = (size_t)(hl + payload + 2);
    int count = 0;
    for (int s = 0; s <= max_fd; s++)
        if (conns[s].state == SSE && send_all(s, event, len) == 0) count++;
    free(event);
    char body[32];
    snprintf(body, sizeof body, "%d", count);
    answer(fd, "text/plain", body);
}

static void upgrade(int fd, const char *head) {
    char key[128], version[16];
    if (!header(head, "Sec-WebSocket-Key", key, sizeof key) || !header(head, "Sec-WebSocket-Version", version, sizeof version)
        || strcmp(version, "13") != 0) {
        static const char bad[] = "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n";
        send_all(fd, bad, sizeof bad - 1);
        return;
    }
    char joined[256];
    int n = snprintf(joined, sizeof joined, "%s258EAFA5-E914-47DA-95CA-C5AB0DC85B11", key);
    unsigned char digest[20];
    sha1((unsigned char *)joined, (size_t)n, digest);
    char accept_value[32];
    base64(digest, 20, accept_value);
    char out[256];
    n = snprintf(out, sizeof out,
                 "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                 "Sec-WebSocket-Accept: %s\r\n\r\n", accept_value);
    if (send_all(fd, out, (size_t)n) == 0) conns[fd].state = WS;
}

/* Echoes every whole frame in the buffer; keeps a partial one. -1 when the connection ended. */
static int frames(int fd) {
    conn *c = &conns[fd];
    int at = 0;
    unsigned char out[BUF + 16];
    while (c->len - at >= 2) {
        unsigned char *f = c->buf + at;
        int opcode = f[0] & 0x0F, masked = f[1] & 0x80;
        uint64_t plen = f[1] & 0x7F;
        int hl = 2;
        if (plen == 126) {
            if (c->len - at < 4) break;
            plen = (uint64_t)f[2] << 8 | f[3];
            hl = 4;
        } else if (plen == 127) {
            drop(fd); /* the floor's messages are small */
            return -1;
        }
        if (!masked || plen > BUF) { drop(fd); return -1; }
        if ((uint64_t)(c->len - at) < hl + 4 + plen) break;
        const unsigned char *mask = f + hl;
        unsigned char *p = f + hl + 4;
        int oh = 2;
        out[0] = (unsigned char)(0x80 | opcode);
        if (plen < 126) out[1] = (unsigned char)plen;
        else { out[1] = 126; out[2] = (unsigned char)(plen >> 8); out[3] = (unsigned char)plen; oh = 4; }
        for (uint64_t i = 0; i < plen; i++) out[oh + i] = p[i] ^ mask[i & 3];
        at += hl + 4 + (int)plen;
        if (opcode == 8) { /* close: answer it with the same status, then end */
            send_all(fd, out, (size_t)oh + plen);
            drop(fd);
            return -1;
        }
        if (opcode == 9) out[0] = 0x8A;          /* ping: pong */
        else if (opcode == 10) continue;          /* pong: nothing */
        if (send_all(fd, out, (size_t)oh + plen) != 0) return -1;
    }
    memmove(c->buf, c->buf + at, (size_t)(c->len - at));
    c->len -= at;
    return 0;
}

static void time_body(char *out, size_t cap) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    struct tm tm;
    gmtime_r(&ts.tv_sec, &tm);
    char iso[40];
    strftime(iso, sizeof iso, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(out, cap, "{\"time\":\"%s.%07dZ\"}", iso, (int)(ts.tv_nsec / 100));
}

/* A whole head arrived: route it. */
static void request(int fd, int head_len) {
    conn *c = &conns[fd];
    char *head = (char *)c->buf;
    head[head_len - 1] = 0; /* the head's last \n: a string for the parsing above */
    char target[1024] = "";
    sscanf(head, "%*s %1023s", target);
    int rest = c->len - head_len;
    if (strncmp(target, "/sse", 4) == 0 && (target[4] == 0 || target[4] == '?')) {
        static const char h[] = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\n"
                                "Transfer-Encoding: chunked\r\n\r\n";
        if (send_all(fd, h, sizeof h - 1) == 0) {
            c->state = SSE; /* idle from here on: no buffer held */
            c->len = 0;
            free(c->buf);
            c->buf = NULL;
        }
        return;
    }
    if (strncmp(target, "/ws", 3) == 0 && (target[3] == 0 || target[3] == '?')) {
        upgrade(fd, head);
        if (c->state == WS) {
            memmove(c->buf, c->buf + head_len, (size_t)rest);
            c->len = rest;
            frames(fd);
        }
        return;
    }
    if (strncmp(target, "/broadcast", 10) == 0) broadcast(fd, target);
    else if (strcmp(target, "/plaintext") == 0) answer(fd, "text/plain", "Hello, World!");
    else if (strcmp(target, "/json") == 0) answer(fd, "application/json", "{\"message\":\"Hello, World!\"}");
    else if (strcmp(target, "/time") == 0) {
        char body[96];
        time_body(body, sizeof body);
        answer(fd, "application/json", body);
    } else {
        static const char nf[] = "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n";
        send_all(fd, nf, sizeof nf - 1);
    }
    if (c->buf) { /* still open: keep what followed the head */
        memmove(c->buf, c->buf + head_len, (size_t)rest);
        c->len = rest;
    }
}

static void readable(int fd) {
    conn *c = &conns[fd];
    for (;;) {
        if (!c->buf) c->buf = malloc(BUF);
        if (c->len == BUF) { drop(fd); return; }
        ssize_t r = recv(fd, c->buf + c->len, (size_t)(BUF - c->len), MSG_DONTWAIT);
        if (r == 0 || (r < 0 && errno != EAGAIN && errno != EINTR)) { drop(fd); return; }
        if (r < 0) {
            if (errno == EINTR) continue;
            return;
        }
        c->len += (int)r;
        if (c->state == SSE) c->len = 0; /* a stream's client sends nothing that matters */
        else if (c->state == WS) { if (frames(fd) != 0) return; }
        else {
            unsigned char *end = memmem(c->buf, (size_t)c->len, "\r\n\r\n", 4);
            if (end) {
                request(fd, (int)(end - c->buf) + 4);
                if (!conns[fd].buf) return;
            }
        }
        if (r < BUF / 2) return; /* a short read: drained (edge-triggered) */
    }
}

int main(int argc, char **argv) {
    int port = 18080;
    const char *host = "127.0.0.1";
    for (int i = 1; i + 1 < argc; i++) {
        if (strcmp(argv[i], "--port") == 0) port = atoi(argv[++i]);
        else if (strcmp(argv[i], "--host") == 0) host = argv[++i];
    }
    signal(SIGPIPE, SIG_IGN);
    int ls = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    int one = 1;
    setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    inet_pton(AF_INET, host, &a.sin_addr);
    if (bind(ls, (struct sockaddr *)&a, sizeof a) != 0 || listen(ls, 4096) != 0) {
        perror("live: bind/listen");
        return 2;
    }
    epfd = epoll_create1(0);
    struct epoll_event ev = {.events = EPOLLIN, .data.fd = ls};
    epoll_ctl(epfd, EPOLL_CTL_ADD, ls, &ev);
    struct epoll_event evs[512];
    for (;;) {
        int n = epoll_wait(epfd, evs, 512, -1);
        for (int i = 0; i < n; i++) {
            int fd = evs[i].data.fd;
            if (fd == ls) {
                int cfd;
                while ((cfd = accept4(ls, NULL, NULL, SOCK_NONBLOCK)) >= 0) {
                    if (cfd >= MAX_FDS) { close(cfd); continue; }
                    setsockopt(cfd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
                    if (cfd > max_fd) max_fd = cfd;
                    conns[cfd] = (conn){HEAD, 0, NULL};
                    struct epoll_event cev = {.events = EPOLLIN | EPOLLRDHUP | EPOLLET, .data.fd = cfd};
                    epoll_ctl(epfd, EPOLL_CTL_ADD, cfd, &cev);
                }
            } else {
                readable(fd);
            }
        }
    }
}
