/// The part of the system's OpenSSL 3 (libssl.so.3 and libcrypto.so.3, the libraries the .NET
/// runtime itself loads on Linux) that Swoop's own TLS engine calls: contexts, connections,
/// the BIO method of Swoop's own (SessionBio.fs) and the error queue. Every signature is blittable (pointers as nativeint), so
/// native AOT needs no marshalling stubs; OpenSSL's macros (SSL_CTX_set_mode and the like) are
/// their ctrl calls with the constants of OpenSSL 3's headers.
module internal Swoop.LibSsl

open System
open System.Runtime.InteropServices

[<Literal>]
let private Ssl = "libssl.so.3"

[<Literal>]
let private Crypto = "libcrypto.so.3"

// ---- constants (openssl/ssl.h, tls1.h, bio.h of OpenSSL 3) ----

[<Literal>]
let SSL_ERROR_SSL = 1

[<Literal>]
let SSL_ERROR_WANT_READ = 2

[<Literal>]
let SSL_ERROR_WANT_WRITE = 3

[<Literal>]
let SSL_ERROR_SYSCALL = 5

[<Literal>]
let SSL_ERROR_ZERO_RETURN = 6

[<Literal>]
let SSL_CTRL_MODE = 33

[<Literal>]
let SSL_CTRL_SET_READ_AHEAD = 41

[<Literal>]
let SSL_CTRL_SET_TLSEXT_SERVERNAME_CB = 53

[<Literal>]
let SSL_CTRL_SET_TLSEXT_SERVERNAME_ARG = 54

[<Literal>]
let SSL_CTRL_SET_MIN_PROTO_VERSION = 123

[<Literal>]
let SSL_CTRL_SET_MAX_PROTO_VERSION = 124

[<Literal>]
let SSL_CTRL_GET_MIN_PROTO_VERSION = 130

[<Literal>]
let TLS1_2_VERSION = 0x0303L

[<Literal>]
let SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER = 0x2L

[<Literal>]
let SSL_MODE_RELEASE_BUFFERS = 0x10L

[<Literal>]
let SSL_OP_NO_RENEGOTIATION = 0x40000000UL

[<Literal>]
let SSL_OP_CIPHER_SERVER_PREFERENCE = 0x400000UL

[<Literal>]
let SSL_FILETYPE_PEM = 1

[<Literal>]
let TLSEXT_NAMETYPE_host_name = 0

[<Literal>]
let SSL_TLSEXT_ERR_OK = 0

[<Literal>]
let SSL_TLSEXT_ERR_ALERT_FATAL = 2

[<Literal>]
let SSL_TLSEXT_ERR_NOACK = 3

[<Literal>]
let OPENSSL_NPN_NEGOTIATED = 1

[<Literal>]
let SSL_KEY_UPDATE_NOT_REQUESTED = 0

[<Literal>]
let SSL_SENT_SHUTDOWN = 1

[<Literal>]
let SSL_RECEIVED_SHUTDOWN = 2

[<Literal>]
let BIO_CTRL_FLUSH = 11

[<Literal>]
let BIO_TYPE_SOURCE_SINK = 0x0400

/// BIO_FLAGS_READ | BIO_FLAGS_SHOULD_RETRY: "nothing to read yet, call again".
[<Literal>]
let BIO_FLAGS_RETRY_READ = 0x09

/// BIO_FLAGS_RWS | BIO_FLAGS_SHOULD_RETRY: every retry flag.
[<Literal>]
let BIO_FLAGS_RETRY_ALL = 0x0F

// ---- contexts ----

[<DllImport(Ssl)>]
extern nativeint TLS_server_method()

[<DllImport(Ssl)>]
extern nativeint SSL_CTX_new(nativeint meth)

[<DllImport(Ssl)>]
extern void SSL_CTX_free(nativeint ctx)

[<DllImport(Ssl)>]
extern int64 SSL_CTX_ctrl(nativeint ctx, int cmd, int64 larg, nativeint parg)

[<DllImport(Ssl)>]
extern int64 SSL_CTX_callback_ctrl(nativeint ctx, int cmd, nativeint fp)

[<DllImport(Ssl)>]
extern uint64 SSL_CTX_set_options(nativeint ctx, uint64 op)

[<DllImport(Ssl)>]
extern int SSL_CTX_set_session_id_context(nativeint ctx, byte& id, uint32 length)

[<DllImport(Ssl)>]
extern int SSL_CTX_set_cipher_list(nativeint ctx, nativeint list)

[<DllImport(Ssl)>]
extern nativeint SSL_CTX_get_ciphers(nativeint ctx)

[<DllImport(Ssl)>]
extern int SSL_CTX_use_certificate_chain_file(nativeint ctx, nativeint file)

[<DllImport(Ssl)>]
extern int SSL_CTX_use_PrivateKey_file(nativeint ctx, nativeint file, int kind)

[<DllImport(Ssl)>]
extern int SSL_CTX_check_private_key(nativeint ctx)

[<DllImport(Ssl)>]
extern void SSL_CTX_set_alpn_select_cb(nativeint ctx, nativeint cb, nativeint arg)

[<DllImport(Ssl)>]
extern int SSL_select_next_proto(nativeint out, nativeint outlen, nativeint server, uint32 serverLength, nativeint client, uint32 clientLength)

// ---- connections ----

[<DllImport(Ssl)>]
extern nativeint SSL_new(nativeint ctx)

[<DllImport(Ssl)>]
extern void SSL_free(nativeint ssl)

[<DllImport(Ssl)>]
extern void SSL_set_bio(nativeint ssl, nativeint rbio, nativeint wbio)


[<DllImport(Ssl)>]
extern void SSL_set_accept_state(nativeint ssl)

[<DllImport(Ssl)>]
extern int SSL_do_handshake(nativeint ssl)

[<DllImport(Ssl)>]
extern int SSL_read(nativeint ssl, byte& buffer, int count)

[<DllImport(Ssl)>]
extern int SSL_write(nativeint ssl, byte& buffer, int count)

[<DllImport(Ssl)>]
extern int SSL_get_error(nativeint ssl, int ret)

[<DllImport(Ssl)>]
extern int SSL_shutdown(nativeint ssl)

[<DllImport(Ssl)>]
extern int SSL_pending(nativeint ssl)

[<DllImport(Ssl)>]
extern int SSL_has_pending(nativeint ssl)

[<DllImport(Ssl)>]
extern int SSL_in_init(nativeint ssl)

[<DllImport(Ssl)>]
extern int SSL_get_shutdown(nativeint ssl)

[<DllImport(Ssl)>]
extern void SSL_set_shutdown(nativeint ssl, int mode)

[<DllImport(Ssl)>]
extern int SSL_session_reused(nativeint ssl)

[<DllImport(Ssl)>]
extern int SSL_get_key_update_type(nativeint ssl)

[<DllImport(Ssl)>]
extern int SSL_key_update(nativeint ssl, int updateType)

[<DllImport(Ssl)>]
extern void SSL_get0_alpn_selected(nativeint ssl, nativeint& data, uint32& length)

[<DllImport(Ssl)>]
extern nativeint SSL_get_servername(nativeint ssl, int kind)

[<DllImport(Ssl)>]
extern nativeint SSL_set_SSL_CTX(nativeint ssl, nativeint ctx)

[<DllImport(Ssl)>]
extern nativeint SSL_get_SSL_CTX(nativeint ssl)

// ---- BIOs of a method of Swoop's own, and errors (libcrypto) ----

[<DllImport(Crypto)>]
extern int BIO_get_new_index()

[<DllImport(Crypto)>]
extern nativeint BIO_meth_new(int kind, nativeint name)

[<DllImport(Crypto)>]
extern int BIO_meth_set_write(nativeint meth, nativeint write)

[<DllImport(Crypto)>]
extern int BIO_meth_set_read(nativeint meth, nativeint read)

[<DllImport(Crypto)>]
extern int BIO_meth_set_ctrl(nativeint meth, nativeint ctrl)

[<DllImport(Crypto)>]
extern nativeint BIO_new(nativeint kind)

[<DllImport(Crypto)>]
extern int BIO_free(nativeint bio)

[<DllImport(Crypto)>]
extern void BIO_set_data(nativeint bio, nativeint data)

[<DllImport(Crypto)>]
extern nativeint BIO_get_data(nativeint bio)

[<DllImport(Crypto)>]
extern void BIO_set_init(nativeint bio, int init)

[<DllImport(Crypto)>]
extern void BIO_set_flags(nativeint bio, int flags)

[<DllImport(Crypto)>]
extern void BIO_clear_flags(nativeint bio, int flags)

[<DllImport(Crypto)>]
extern int OPENSSL_sk_num(nativeint stack)

[<DllImport(Crypto)>]
extern nativeint OPENSSL_sk_value(nativeint stack, int index)

[<DllImport(Crypto)>]
extern uint64 ERR_get_error()

[<DllImport(Crypto)>]
extern void ERR_error_string_n(uint64 code, nativeint buffer, unativeint length)

[<DllImport(Crypto)>]
extern void ERR_clear_error()

/// OpenSSL's reasons for the last failure on this thread, oldest first, in one line; the
/// queue is left empty (as every call of the next operation needs it).
let takeErrors () : string =
    let mutable code = ERR_get_error()

    if code = 0UL then
        ""
    else
        let text = Text.StringBuilder()
        let buffer = Marshal.AllocHGlobal 256

        try
            while code <> 0UL do
                ERR_error_string_n (code, buffer, unativeint 256)

                if text.Length > 0 then
                    text.Append "; " |> ignore

                text.Append(Marshal.PtrToStringUTF8 buffer) |> ignore
                code <- ERR_get_error()
        finally
            Marshal.FreeHGlobal buffer

        ERR_clear_error()
        text.ToString()
