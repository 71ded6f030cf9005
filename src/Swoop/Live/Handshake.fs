/// The server's half of the RFC 6455 opening handshake: is this a WebSocket request, which
/// subprotocol, whether per-message deflate (RFC 7692) is on, and the Sec-WebSocket-Accept
/// value. Pure functions of the request's headers; the upgrade itself is the server's.
module internal Swoop.Live.Handshake

open System
open System.Net.WebSockets
open System.Security.Cryptography
open System.Text
open Swoop

/// Every value of the header `name` (a header may come on several lines), in order.
let values (ctx: HttpContext) (name: string) =
    [ for i in 0 .. ctx.HeaderCount - 1 do
          if String.Equals(ctx.HeaderName i, name, StringComparison.OrdinalIgnoreCase) then
              ctx.HeaderValue i ]

/// The comma-separated elements of a header's values, trimmed, empty ones left out.
let elements (headerValues: string list) =
    [ for v in headerValues do
          for e in v.Split ',' do
              let t = e.Trim()
              if t <> "" then t ]

let private hasToken (token: string) (headerValues: string list) =
    elements headerValues |> List.exists (fun e -> String.Equals(e, token, StringComparison.OrdinalIgnoreCase))

/// Sec-WebSocket-Accept for a key: base64(SHA-1(key + the RFC's GUID)).
let acceptFor (key: string) =
    Convert.ToBase64String(SHA1.HashData(Encoding.ASCII.GetBytes(key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11")))

/// A key is 16 random bytes in base64 (24 characters).
let validKey (key: string) =
    let decoded = Span<byte>(Array.zeroCreate<byte> 18)
    let mutable written = 0
    key.Length = 24 && Convert.TryFromBase64String(key, decoded, &written) && written = 16

/// The first of the server's subprotocols (its order of preference) the client offered; null: none.
let chooseProtocol (server: string list) (offered: string list) =
    server
    |> List.tryFind (fun p -> offered |> List.exists (fun o -> String.Equals(o, p, StringComparison.Ordinal)))
    |> Option.toObj

/// One permessage-deflate offer's parameters, or None when the offer cannot be accepted
/// (an unknown or repeated parameter, a bad value, a server window under 9 bits).
let private readOffer (parameters: string list) =
    let seen = Collections.Generic.HashSet<string>(StringComparer.OrdinalIgnoreCase)
    let mutable ok = true
    let mutable serverBits = 15
    // Offered: the answer must carry it back (RFC 7692, 7.1.2.1), at 15 too.
    let mutable serverBitsOffered = false
    let mutable clientNoContext = false

    let bits (value: string) =
        match Int32.TryParse(value.Trim('"')) with
        | true, n when n >= 8 && n <= 15 -> n
        | _ -> -1

    for p in parameters do
        let name, value =
            match p.IndexOf '=' with
            | -1 -> p.Trim(), null
            | i -> p.Substring(0, i).Trim(), p.Substring(i + 1).Trim()

        if not (seen.Add name) then
            ok <- false
        else
            match name.ToLowerInvariant() with
            | "client_max_window_bits" -> if not (isNull value) && bits value < 0 then ok <- false
            | "server_max_window_bits" ->
                let n = if isNull value then -1 else bits value
                // The base library's deflater needs 9 bits or more.
                if n < 9 then
                    ok <- false
                else
                    serverBits <- n
                    serverBitsOffered <- true
            | "client_no_context_takeover" -> if isNull value then clientNoContext <- true else ok <- false
            | "server_no_context_takeover" -> if not (isNull value) then ok <- false
            | _ -> ok <- false

    if ok then Some(serverBits, serverBitsOffered, clientNoContext) else None

/// The first permessage-deflate offer the server can take: the response's extension header and
/// the options for the base library. The server never keeps its compression context between
/// messages (server_no_context_takeover): an idle socket then holds no deflater state.
let negotiateDeflate (extensionValues: string list) : (string * WebSocketDeflateOptions) option =
    elements extensionValues
    |> List.tryPick (fun offer ->
        match offer.Split ';' |> Array.map (fun s -> s.Trim()) |> List.ofArray with
        | name :: parameters when String.Equals(name, "permessage-deflate", StringComparison.OrdinalIgnoreCase) ->
            readOffer parameters
            |> Option.map (fun (serverBits, serverBitsOffered, clientNoContext) ->
                let header =
                    "permessage-deflate; server_no_context_takeover"
                    + (if serverBitsOffered || serverBits < 15 then "; server_max_window_bits=" + string serverBits else "")
                    + (if clientNoContext then "; client_no_context_takeover" else "")

                let options =
                    WebSocketDeflateOptions(
                        ServerMaxWindowBits = serverBits,
                        ServerContextTakeover = false,
                        ClientMaxWindowBits = 15,
                        ClientContextTakeover = not clientNoContext
                    )

                header, options)
        | _ -> None)

/// What the handshake decided.
type Outcome =
    /// Switch: the accept value, the subprotocol (null: none), deflate's header and options.
    | Accept of accept: string * protocol: string * deflate: (string * WebSocketDeflateOptions) option
    /// Refuse with a status and why; `versionHeader`: add Sec-WebSocket-Version: 13 (426).
    | Refuse of status: int * detail: string * versionHeader: bool

/// Checks the request as RFC 6455 section 4.2.1 asks.
let check (subProtocols: string list) (allowOrigin: string -> bool) (deflate: bool) (ctx: HttpContext) =
    // RFC 6455, 11.3.1: the key comes once; two are refused, not the first believed.
    let keys = values ctx "Sec-WebSocket-Key"
    let key = match keys with [ one ] -> ValueSome one | _ -> ValueNone

    if ctx.Method <> HttpMethod.Get then
        Refuse(405, "a WebSocket handshake is a GET request", false)
    elif ctx.Version <> HttpVersion.Http11 then
        Refuse(400, "a WebSocket handshake needs HTTP/1.1", false)
    elif not (hasToken "websocket" (values ctx "Upgrade")) || not (hasToken "upgrade" (values ctx "Connection")) then
        Refuse(400, "not a WebSocket handshake: Upgrade: websocket and Connection: Upgrade are required", false)
    elif ctx.HasRequestBody then
        Refuse(400, "a WebSocket handshake has no body", false)
    elif ctx.Header "Sec-WebSocket-Version" <> ValueSome "13" then
        Refuse(426, "Sec-WebSocket-Version must be 13", true)
    elif key.IsNone || not (validKey key.Value) then
        Refuse(400, (if keys.Length > 1 then "Sec-WebSocket-Key must come once" else "Sec-WebSocket-Key must be 16 bytes in base64"), false)
    else
        match ctx.Header "Origin" with
        | ValueSome origin when not (allowOrigin origin) -> Refuse(403, "this origin may not open a WebSocket here", false)
        | _ ->
            let protocol = chooseProtocol subProtocols (elements (values ctx "Sec-WebSocket-Protocol"))
            let deflateChoice = if deflate then negotiateDeflate (values ctx "Sec-WebSocket-Extensions") else None
            Accept(acceptFor key.Value, protocol, deflateChoice)
