/// Who the client is behind a proxy: `X-Forwarded-For` / `X-Forwarded-Proto`, or RFC 7239's
/// `Forwarded` (whichever one the operator says the proxies write; the other is ignored),
/// believed only when the connection comes from a proxy the server trusts. Each trusted hop
/// is peeled from the right: the client is the first address, from the right, not trusted.
module internal Swoop.Forwarded

open System
open System.Net
open System.Net.Sockets

/// Which header the trusted proxies write; the other is ignored, whoever sent it.
[<RequireQualifiedAccess>]
type Header =
    /// `X-Forwarded-For`, with `X-Forwarded-Proto` (nginx's, HAProxy's, the cloud balancers').
    | XForwardedFor
    /// RFC 7239's `Forwarded` (its `for` and `proto`).
    | Forwarded

/// Strict readings of an address and a prefix length: "10.0.0.1", never "10.1" or "010.0.0.1".
module Strict =
    let private isDigits (t: string) = t.Length > 0 && t |> Seq.forall Char.IsAsciiDigit

    /// A whole number of decimal digits, without sign, spaces or a leading zero (but "0"),
    /// at most `most`; None otherwise.
    let number (most: int) (t: string) =
        if isDigits t && t.Length <= 3 && (t = "0" || t[0] <> '0') then
            let n = int t
            if n <= most then Some n else None
        else
            None

    /// Four dotted decimal parts 0-255 without leading zeros, or an IPv6 address without a
    /// zone; None for anything else (IPAddress.Parse also takes "10.1", "017.0.0.1", "0x0a.1").
    let address (t: string) : IPAddress =
        if t.Contains ':' then
            match IPAddress.TryParse t with
            | true, ip when ip.AddressFamily = AddressFamily.InterNetworkV6 && not (t.Contains '%') -> ip
            | _ -> null
        else
            let parts = t.Split '.'

            if parts.Length = 4 && parts |> Array.forall (number 255 >> Option.isSome) then
                IPAddress(parts |> Array.map (number 255 >> Option.get >> byte))
            else
                null

/// The proxies a server trusts (single addresses and networks, CIDR) and the header they write.
[<Sealed; AllowNullLiteral>]
type TrustedProxies(entries: (IPAddress * int) list, header: Header) =
    static let normalize (a: IPAddress) = if a.IsIPv4MappedToIPv6 then a.MapToIPv4() else a

    static let inNetwork (address: IPAddress) (network: IPAddress, prefix: int) =
        let a = (normalize address).GetAddressBytes()
        let n = network.GetAddressBytes()

        if a.Length <> n.Length then
            false
        else
            let full = prefix / 8
            let rest = prefix % 8
            let mutable same = true

            for i in 0 .. full - 1 do
                if a[i] <> n[i] then same <- false

            if same && rest > 0 then
                let mask = byte (0xFF <<< (8 - rest))
                same <- (a[full] &&& mask) = (n[full] &&& mask)

            same

    member _.IsEmpty = List.isEmpty entries
    member _.Header = header
    member _.Contains(address: IPAddress) = not (isNull address) && entries |> List.exists (inNetwork address)

    /// Parses "10.0.0.1", "::1", "10.0.0.0/8", "fd00::/8" strictly (four dotted decimal parts
    /// without leading zeros; a prefix of 0-32 or 0-128); raises ArgumentException naming a bad one.
    static member Parse(texts: string list, header: Header) =
        let parse (text: string) =
            let address, prefix =
                match text.Split '/' with
                | [| a |] -> a, None
                | [| a; p |] ->
                    match Strict.number 128 p with
                    | Some n -> a, Some n
                    | None -> invalidArg "TrustedProxies" ("not a network prefix length (0-32, 0-128 for IPv6): " + text)
                | _ -> invalidArg "TrustedProxies" ("not an address or network: " + text)

            match Strict.address address with
            | null -> invalidArg "TrustedProxies" ("not an IP address (IPv4 as four decimal numbers): " + text)
            | ip ->
                let ip = normalize ip
                let bits = if ip.AddressFamily = AddressFamily.InterNetwork then 32 else 128
                let prefix = defaultArg prefix bits

                if prefix > bits then
                    invalidArg "TrustedProxies" ("network prefix longer than the address: " + text)

                ip, prefix

        TrustedProxies(texts |> List.map parse, header)

    /// `Parse` for proxies that write X-Forwarded-For (the default).
    static member Parse(texts: string list) = TrustedProxies.Parse(texts, Header.XForwardedFor)

/// An address as a proxy writes it: "203.0.113.7", "203.0.113.7:4711", "[2001:db8::1]:80",
/// or RFC 7239's quoted form; null when it is none ("unknown", an obfuscated "_id", "10.1").
let parseAddress (text: string) : IPAddress =
    let t = text.Trim().Trim('"')

    let host =
        if t.StartsWith "[" then
            let close = t.IndexOf ']'
            if close > 0 then t.Substring(1, close - 1) else t
        elif t.Split(':').Length = 2 then
            t.Substring(0, t.IndexOf ':')
        else
            t

    Strict.address host

/// The `for` and `proto` values of a Forwarded header value, hop by hop (left to right).
let forwardedElements (value: string) =
    [ for element in value.Split ',' do
          let mutable forValue = null
          let mutable proto = null

          for pair in element.Split ';' do
              let i = pair.IndexOf '='

              if i > 0 then
                  let name = pair.Substring(0, i).Trim()
                  let v = pair.Substring(i + 1).Trim().Trim('"')

                  if String.Equals(name, "for", StringComparison.OrdinalIgnoreCase) then forValue <- v
                  elif String.Equals(name, "proto", StringComparison.OrdinalIgnoreCase) then proto <- v

          forValue, proto ]

/// The hops the chosen header lists, left to right: (address text or null, scheme or null).
/// X-Forwarded-Proto's entries pair with X-Forwarded-For's from the right (as ASP.NET Core's
/// ForwardedHeaders pairs them); either may be longer, or absent.
let hops (header: Header) (forwarded: string) (forwardedFor: string) (forwardedProto: string) =
    match header with
    | Header.Forwarded -> if isNull forwarded then [] else forwardedElements forwarded
    | Header.XForwardedFor ->
        let split (v: string) = if isNull v then [||] else v.Split ',' |> Array.map _.Trim()
        let fors = split forwardedFor
        let protos = split forwardedProto
        let count = max fors.Length protos.Length

        [ for i in 0 .. count - 1 ->
              let fromRight = count - 1 - i
              let at (a: string[]) = if fromRight < a.Length then a[a.Length - 1 - fromRight] else null
              at fors, at protos ]

/// The client's address and scheme: the peer's and the connection's own (`own`: "http", or
/// "https" over TLS), unless the peer is trusted; then the hops the
/// trusted proxies' header lists are walked from the right, each taken while the address
/// before it (the peer, then each hop taken) is trusted, as ASP.NET Core's ForwardedHeaders
/// walks them. A hop without an address (a proxy sending the protocol alone) keeps the
/// address; an unreadable one ("unknown", "_hidden") stops the walk. Only the header
/// `trusted.Header` names is read: with X-Forwarded-For, `Forwarded` is ignored; with
/// Forwarded, X-Forwarded-For and X-Forwarded-Proto are. Headers are all their lines joined
/// with commas (null when absent).
let resolve
    (trusted: TrustedProxies)
    (own: string)
    (peer: IPAddress)
    (forwarded: string)
    (forwardedFor: string)
    (forwardedProto: string)
    : IPAddress * string =
    if isNull trusted || trusted.IsEmpty || not (trusted.Contains peer) then
        peer, own
    else
        let mutable client = peer
        let mutable scheme = own
        let mutable go = true

        for (forValue, proto) in List.rev (hops trusted.Header forwarded forwardedFor forwardedProto) do
            if go then
                let address = if String.IsNullOrEmpty forValue then null else parseAddress forValue

                if not (String.IsNullOrEmpty forValue) && isNull address then
                    go <- false
                else
                    if not (isNull address) then client <- address

                    match (if isNull proto then "" else proto.ToLowerInvariant()) with
                    | "https" -> scheme <- "https"
                    | "http" -> scheme <- "http"
                    | _ -> ()

                    go <- trusted.Contains client

        client, scheme
