#!/usr/bin/env python3
"""Where a TLS server's CPU goes, from `perf script` output (perf record -g of the server):
each sample is put in the first bucket whose marker appears in its stack (leaf to root order
of the rules below), and the buckets are printed as shares of all samples, with CPU µs per
handshake when HANDSHAKES and CPU_SECONDS are given. Usage:
  perf script -i perf.data | bench/tls/classify.py [HANDSHAKES CPU_SECONDS]"""
import sys

# (bucket, markers): a sample goes to the first bucket any of whose markers is in a frame.
RULES = [
    ("thread pool: idle workers spinning/sleeping", ["LowLevelSpinWaiter", "LowLevelLifoSemaphore__Wait"]),
    ("exceptions thrown and unwound", ["libunwind", "RhThrowEx", "DispatchEx", "RhpThrowEx", "StackFrameIterator", "EH_"]),
    ("GC", ["gc_heap", "WKS::", "SVR::", "GCHeap", "RhpGcAlloc", "RhpNewFast", "RhpNewArray", "GarbageCollect"]),
    ("OpenSSL: signature (server key)", ["EVP_DigestSign", "EVP_PKEY_sign", "ECDSA_do_sign", "ossl_ecdsa_", "RSA_sign", "rsa_ossl_private", "EVP_SignFinal", "tls_construct_cert_verify", "tls_construct_server_key_exchange"]),
    ("OpenSSL: key exchange (ECDHE X25519/P-256)", ["EVP_PKEY_derive", "EVP_PKEY_keygen", "ossl_x25519", "x25519", "X25519", "ecx_", "ecdh_", "ssl_generate_pkey", "ssl_derive", "EVP_PKEY_generate"]),
    ("OpenSSL: context/session set-up (SSL_new, SSL_free, ctx)", ["SSL_new", "SSL_free", "SSL_CTX_new", "SSL_CTX_free", "SSL_CTX_use", "SSL_use_", "SSL_set_", "SSL_CTX_set", "CryptoNative_SslCreate", "CryptoNative_SslCtx", "CryptoNative_SslDestroy", "CryptoNative_SslSet", "CryptoNative_SslCtxSet", "AllocateSslHandle", "X509_STORE", "PEM_", "d2i_", "EVP_PKEY_free", "EVP_PKEY_up_ref"]),
    ("OpenSSL: rest of the handshake (hashes, record layer, tickets)", ["SSL_do_handshake", "SSL_read", "SSL_write", "SSL_shutdown", "CryptoNative_SslDoHandshake", "CryptoNative_SslRead", "CryptoNative_SslWrite", "CryptoNative_SslShutdown", "BIO_", "CryptoNative_Bio"]),
    ("OpenSSL: other (libssl/libcrypto, error queue, init)", ["libssl.so", "libcrypto.so", "CryptoNative_", "ERR_"]),
    ("SslStream managed code", ["System_Net_Security"]),
    ("kernel: accept and TCP connection set-up/teardown", ["accept", "tcp_close", "tcp_v4_", "inet_release", "__sock_release", "tcp_fin", "tcp_rcv_state_process", "tcp_time_wait"]),
    ("kernel: send and receive", ["sendmsg", "recvmsg", "sys_sendto", "sys_recvfrom", "__x64_sys_write", "__x64_sys_read", "tcp_sendmsg", "tcp_recvmsg"]),
    ("epoll and event-loop wakeups", ["epoll", "EventLoops__run", "eventfd"]),
    ("thread pool: dispatch and wakeups (futex, queueing)", ["ThreadPool", "futex", "LowLevelLifoSemaphore", "PortableThreadPool", "sched_yield"]),
    ("Swoop's connection, parser, response (managed)", ["Swoop_"]),
    ("other managed (async machinery, runtime)", ["S_P_CoreLib", "Rhp", "Api "]),
    ("kernel: other (scheduler, interrupts)", ["[kernel.kallsyms]"]),
    # libc leaves whose callers perf could not unwind (no frame pointers): malloc, locks and
    # strcmp, nearly all OpenSSL 3.0's own (its provider look-ups by name).
    ("libc (malloc, locks, strcmp: mostly OpenSSL's)", ["libc.so"]),
]

counts, total, frames = {}, 0, []

def flush():
    global total
    if not frames:
        return
    stack = "\n".join(frames) + "\n"
    total += 1
    for bucket, markers in RULES:
        if any(m in stack for m in markers):
            counts[bucket] = counts.get(bucket, 0) + 1
            break
    else:
        counts["unattributed"] = counts.get("unattributed", 0) + 1
    frames.clear()

for line in sys.stdin:
    if not line.strip():
        flush()
    elif line.startswith((" ", "\t")):
        frames.append(line.strip())
flush()

per = None
if len(sys.argv) == 3:
    per = float(sys.argv[2]) * 1e6 / float(sys.argv[1])
print(f"| where | share of server CPU |" + (" µs per handshake |" if per else ""))
print("| --- | ---: |" + (" ---: |" if per else ""))
for bucket, n in sorted(counts.items(), key=lambda kv: -kv[1]):
    share = n / max(total, 1)
    print(f"| {bucket} | {100 * share:.1f}% |" + (f" {share * per:.0f} |" if per else ""))
print(f"| all ({total} samples) | 100% |" + (f" {per:.0f} |" if per else ""))
