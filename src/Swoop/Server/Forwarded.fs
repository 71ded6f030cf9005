/// Who the client is behind a proxy: `X-Forwarded-For` / `X-Forwarded-Proto` and RFC 7239's
/// `Forwarded`, believed only when the connection comes from a proxy the server trusts.
/// Each trusted hop is peeled from the right: the client is the last address not trusted.
module internal Swoop.Forwarded

open System
open System.Net
open System.Net.Sockets

/// The proxies a server trusts: single addresses and networks (CIDR).
[<Sealed; AllowNullLiteral>]
type TrustedProxies(entries: (IPAddress * int) list) =
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
    member _.Contains(address: IPAddress) = not (isNull address) && entries |> List.exists (inNetwork address)

    /// Parses "10.0.0.1", "::1", "10.0.0.0/8", "fd00::/8"; raises ArgumentException naming a bad one.
    static member Parse(texts: string list) =
        let parse (text: string) =
            let address, prefix =
                match text.Split '/' with
                | [| a |] -> a, -1
                | [| a; p |] ->
                    match Int32.TryParse p with
                    | true, n -> a, n
                    | _ -> invalidArg "TrustedProxies" ("not a network prefix length: " + text)
                | _ -> invalidArg "TrustedProxies" ("not an address or network: " + text)

            match IPAddress.TryParse address with
            | true, ip ->
                let ip = normalize ip
                let bits = if ip.AddressFamily = AddressFamily.InterNetwork then 32 else 128
                let prefix = if prefix < 0 then bits else prefix

                if prefix > bits then
                    invalidArg "TrustedProxies" ("network prefix longer than the address: " + text)

                ip, prefix
            | _ -> invalidArg "TrustedProxies" ("not an IP address: " + text)

        TrustedProxies(texts |> List.map parse)

/// An address as a proxy writes it: "203.0.113.7", "203.0.113.7:4711", "[2001:db8::1]:80",
/// or RFC 7239's quoted form; null when it is none ("unknown", an obfuscated "_id").
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

    match IPAddress.TryParse host with
    | true, ip -> ip
    | _ -> null

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

/// The client's address and scheme: the peer's, unless the peer is trusted; then each hop
/// listed by the proxies is peeled from the right while it is trusted too. `forwarded` is the
/// Forwarded header (preferred when present), `forwardedFor`/`forwardedProto` the X- ones
/// (all lines joined with commas; null when absent).
let resolve
    (trusted: TrustedProxies)
    (peer: IPAddress)
    (forwarded: string)
    (forwardedFor: string)
    (forwardedProto: string)
    : IPAddress * string =
    if isNull trusted || trusted.IsEmpty || not (trusted.Contains peer) then
        peer, "http"
    else
        let hops =
            if not (isNull forwarded) then
                forwardedElements forwarded
            else
                let fors = if isNull forwardedFor then [||] else forwardedFor.Split ','
                let protos = if isNull forwardedProto then [||] else forwardedProto.Split ','
                // Protocols pair with addresses from the right; a single one stands for all.
                [ for i in 0 .. fors.Length - 1 ->
                      let j = protos.Length - (fors.Length - i)
                      let proto =
                          if protos.Length = 1 then protos[0]
                          elif j >= 0 && j < protos.Length then protos[j]
                          else null

                      fors[i], (if isNull proto then null else proto.Trim()) ]

        let mutable client = peer
        // A proxy may send the protocol alone (nginx's usual configuration).
        let mutable scheme =
            match forwardedProto with
            | null -> "http"
            | p ->
                match p.Split(',') |> Array.last |> _.Trim().ToLowerInvariant() with
                | "https" -> "https"
                | _ -> "http"

        let mutable go = true

        for (forValue, proto) in List.rev hops do
            if go then
                let address = if isNull forValue then null else parseAddress forValue

                if isNull address then
                    go <- false
                else
                    client <- address

                    if not (isNull proto) && (proto = "https" || proto = "http") then
                        scheme <- proto

                    go <- trusted.Contains address

        client, scheme
