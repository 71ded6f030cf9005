/// The certificates a TLS endpoint presents: PEM files (a chain, then a key) loaded into
/// handshake options once, checked before anything binds, picked by the client's SNI name,
/// and loaded again when their files change (connections already open keep theirs).
namespace Swoop

open System
open System.Collections.Generic
open System.IO
open System.Net.Security
open System.Security.Authentication
open System.Security.Cryptography
open System.Security.Cryptography.X509Certificates

/// One certificate with its chain and key, as handshakes use it.
[<Sealed; AllowNullLiteral>]
type internal LoadedCertificate
    (certPath: string, keyPath: string, options: SslServerAuthenticationOptions, leaf: X509Certificate2, stamp: string, native: SslContextHandle) =
    member _.CertPath = certPath
    member _.KeyPath = keyPath
    /// The handshake options that present it (shared by every handshake; never changed).
    member _.Options = options
    member _.Leaf = leaf
    /// The files' sizes and write times when loaded: a change means "load again".
    member _.Stamp = stamp
    /// Its OpenSSL context for Swoop's own TLS engine (null: SslStream serves it).
    member _.Native = native

[<RequireQualifiedAccess>]
module internal Certificates =
    /// The files' sizes and last write times, or "" when one is missing.
    let stamp (certPath: string) (keyPath: string) =
        try
            let c, k = FileInfo certPath, FileInfo keyPath

            if c.Exists && k.Exists then
                String.Join("|", c.Length, c.LastWriteTimeUtc.Ticks, k.Length, k.LastWriteTimeUtc.Ticks)
            else
                ""
        with _ ->
            ""

    /// TLS 1.2 and 1.3 only. The ciphers are the system OpenSSL's (no CipherSuitesPolicy: on
    /// Linux, .NET shares its OpenSSL context, and so its session cache, only among
    /// connections without one; with a policy no session would ever be resumed).
    let protocols = SslProtocols.Tls12 ||| SslProtocols.Tls13

    /// Loads `certPath` (the certificate first, then its chain, PEM) and `keyPath` (its
    /// private key, PEM), checking that they exist, parse, match and are valid now; the error
    /// says which file is wrong and why, in one line.
    /// With `native`, its context for Swoop's own TLS engine too, whose SNI callback reads
    /// `table` (null: a single certificate).
    let load (certPath: string) (keyPath: string) (alpn: SslApplicationProtocol list) (native: bool) (table: SniTable) : Result<LoadedCertificate, string> =
        let stampBefore = stamp certPath keyPath

        if not (File.Exists certPath) then
            Error("TLS certificate file '" + certPath + "' not found")
        elif not (File.Exists keyPath) then
            Error("TLS key file '" + keyPath + "' not found")
        else
            let parsed =
                try
                    let leaf = X509Certificate2.CreateFromPemFile(certPath, keyPath)
                    let all = X509Certificate2Collection()
                    all.ImportFromPemFile certPath
                    Ok(leaf, all)
                with
                | :? CryptographicException
                | :? ArgumentException as e ->
                    Error("TLS certificate '" + certPath + "' with key '" + keyPath + "' cannot be used: " + e.Message.TrimEnd('.'))
                | :? IOException
                | :? UnauthorizedAccessException as e -> Error("TLS certificate or key cannot be read: " + e.Message.TrimEnd('.'))

            match parsed with
            | Error e -> Error e
            | Ok(leaf, all) ->
                let now = DateTime.Now

                if leaf.NotAfter < now then
                    Error("TLS certificate '" + certPath + "' expired on " + leaf.NotAfter.ToUniversalTime().ToString("yyyy-MM-dd HH:mm:ss 'UTC'"))
                elif leaf.NotBefore > now then
                    Error("TLS certificate '" + certPath + "' is not valid before " + leaf.NotBefore.ToUniversalTime().ToString("yyyy-MM-dd HH:mm:ss 'UTC'"))
                else
                    // The rest of the file is the chain, sent whole (without the root, if
                    // the file holds it, clients need not be sent it; sending it is harmless).
                    let chain = X509Certificate2Collection()

                    for i in 1 .. all.Count - 1 do
                        chain.Add all[i] |> ignore

                    let context = SslStreamCertificateContext.Create(leaf, chain, offline = true)

                    let options =
                        SslServerAuthenticationOptions(
                            ServerCertificateContext = context,
                            EnabledSslProtocols = protocols,
                            ApplicationProtocols = List<SslApplicationProtocol>(alpn),
                            ClientCertificateRequired = false,
                            CertificateRevocationCheckMode = X509RevocationMode.NoCheck,
                            AllowRenegotiation = false,
                            AllowTlsResume = true
                        )

                    if native then
                        let protocols = alpn |> List.map (fun p -> p.Protocol.ToArray())

                        match SslContexts.create certPath keyPath protocols table with
                        | Ok context -> Ok(LoadedCertificate(certPath, keyPath, options, leaf, stampBefore, context))
                        | Error e -> Error e
                    else
                        Ok(LoadedCertificate(certPath, keyPath, options, leaf, stampBefore, null))

/// The certificates of one server's HTTPS endpoints: the client's SNI name picks the first
/// whose DNS names match it (the first is the default); each is loaded again when its files
/// change (see Refresh). `native`: each also gets an OpenSSL context for Swoop's own engine.
[<Sealed>]
type internal CertificateStore(pairs: (string * string) list, alpn: SslApplicationProtocol list, log: ServerLog, native: bool) =
    let pairs = Array.ofList pairs

    do if pairs.Length = 0 then raise (ArgumentException "no TLS certificate: give --tls-cert and --tls-key")

    // The native engine's SNI choice, with more than one certificate.
    let table = if native && pairs.Length > 1 then SslContexts.register () else null

    let loadOrFail (cert: string, key: string) =
        match Certificates.load cert key alpn native table with
        | Ok c -> c
        | Error e -> raise (ArgumentException e) // one line for Server.run, no parameter suffix

    let publish (certificates: LoadedCertificate[]) =
        if not (isNull table) then
            table.Entries <- certificates |> Array.map (fun c -> struct (c.Leaf, c.Native))

    // Replaced whole on a reload (readers see the old array or the new one).
    let mutable loaded: LoadedCertificate[] = pairs |> Array.map loadOrFail
    do publish loaded
    // The stamp of files that failed to load, per pair: reported once, not at every look.
    let failed: string[] = Array.create pairs.Length ""
    let lockObj = obj ()

    /// The handshake options for a client that asked for `serverName` (null or empty: none).
    member _.Select(serverName: string) : SslServerAuthenticationOptions =
        let current = loaded

        if String.IsNullOrEmpty serverName || current.Length = 1 then
            current[0].Options
        else
            let mutable found = 0
            let mutable i = 0

            while found = 0 && i < current.Length do
                if current[i].Leaf.MatchesHostname(serverName, true, false) then
                    found <- i + 1

                i <- i + 1

            current[max 0 (found - 1)].Options

    /// The certificates in use, the default first.
    member _.Loaded = loaded

    /// Loads again the certificates whose files changed; one that fails to load keeps the
    /// one in use, and the log says why once (a half-written file is tried again when it
    /// changes again).
    member _.Refresh() =
        lock lockObj (fun () ->
            let current = loaded
            let mutable next = current

            for i in 0 .. pairs.Length - 1 do
                let cert, key = pairs[i]
                let now = Certificates.stamp cert key

                if now <> "" && now <> current[i].Stamp && now <> failed[i] then
                    match Certificates.load cert key alpn native table with
                    | Ok c when c.Stamp = now ->
                        if obj.ReferenceEquals(next, current) then
                            next <- Array.copy current

                        next[i] <- c
                        log.CertificateReloaded(cert, c.Leaf.Subject, c.Leaf.NotAfter)
                    | Ok _ -> () // changed again while loading: next time
                    | Error e ->
                        failed[i] <- now
                        log.CertificateReloadFailed(cert, e)

            publish next
            loaded <- next)

    /// Whether the certificates have contexts for Swoop's own TLS engine.
    member _.Native = native

    /// The native engine's context a handshake starts with (the default certificate's; the
    /// SNI callback may switch to another).
    member _.NativeContext = loaded[0].Native

    /// The server stopped: its SNI table is no longer reachable from OpenSSL's callback.
    member _.Forget() =
        if not (isNull table) then SslContexts.forget table
