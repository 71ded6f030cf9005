/// Every disagreement between Swoop and llhttp goes into a bucket that says why they differ
/// and what was decided: a deliberate, RFC-backed choice of Swoop's, llhttp's own choice that
/// Swoop does not share, or a Swoop bug (fixed, with a test in ParserTests.fs). A disagreement
/// no bucket explains is a failure of the differential fuzzer.
///
/// A disagreement is looked at one aspect at a time: the verdict ("kind": accepted, refused,
/// incomplete), then for two accepted requests each of method, target, version, headers and
/// keep-alive, and the body (its verdict, data and trailers). Buckets recognise an aspect from
/// the input read loosely (lines split at LF) and from where each parser stopped: llhttp says
/// where; for Swoop it is the shortest prefix it refuses.
module internal Swoop.Fuzz.Buckets

open System
open System.Text
open Swoop
open Swoop.Fuzz.Llhttp

/// One line of the input: its text (CR LF or LF removed, Latin-1), where it starts, and
/// whether it is the request line, a field line of the head, the head's end, or in the body.
type Line =
    { Text: string
      Start: int
      Role: string }

/// What one aspect of a disagreement looks like.
type Facts =
    { Input: byte[]
      Swoop: Verdict
      Llhttp: Verdict
      /// "kind", "method", "target", "version", "headers", "keep-alive" or "body".
      Aspect: string
      Lines: Line[] }

    member f.RequestLine = f.Lines |> Array.tryFind (fun l -> l.Role = "request") |> Option.map (fun l -> l.Text) |> Option.defaultValue ""
    member f.Fields = f.Lines |> Array.filter (fun l -> l.Role = "field") |> Array.map (fun l -> l.Text)

    /// The line holding byte `offset` (the last line if past the end).
    member f.LineAt(offset: int) =
        f.Lines |> Array.findBack (fun l -> l.Start <= max 0 offset)

    /// The method, target and version of the request line, split at SP.
    member f.Parts = f.RequestLine.Split(' ')

let private split (input: byte[]) =
    let text = Encoding.Latin1.GetString input
    let lines = ResizeArray<Line>()
    let mutable start = 0
    let mutable role = "leading"

    while start <= text.Length do
        let lf = text.IndexOf('\n', start)
        let stop = if lf < 0 then text.Length else lf
        let t = text.Substring(start, stop - start).TrimEnd('\r')

        role <-
            match role with
            | "leading" when t <> "" -> "request"
            | "request" | "field" when t = "" -> "end"
            | "request" -> "field"
            | "end" | "body" -> "body"
            | r -> r

        lines.Add { Text = t; Start = start; Role = role }
        start <- if lf < 0 then text.Length + 1 else lf + 1

    lines.ToArray()

let facts (input: byte[]) (swoop: Verdict) (llhttp: Verdict) (aspect: string) =
    { Input = input
      Swoop = swoop
      Llhttp = llhttp
      Aspect = aspect
      Lines = split input }

/// The aspects on which two verdicts differ (see the module's summary).
let aspects (differences: string list) =
    if List.contains "kind" differences then
        [ "kind" ]
    else
        [ for d in [ "method"; "target"; "version"; "headers"; "keep-alive" ] do
              if List.contains d differences then d
          if differences |> List.exists (fun d -> d = "body" || d = "data" || d = "trailers") then "body" ]

/// Swoop's verdict on some bytes ("accept", "incomplete" or "reject NNN").
let swoopOn (input: byte[]) =
    let head = RequestHead(Checks.limits.MaxHeaderCount)
    head.Reset()

    match Parser.parse (ReadOnlySpan input) Checks.limits head with
    | Parser.ParseResult.Done -> "accept"
    | Parser.ParseResult.Error -> sprintf "reject %d" head.ErrorStatus
    | _ -> "incomplete"

/// Where Swoop's parser refused the head: the shortest prefix it refuses, less one (its
/// verdict on a prefix never changes once it refuses: the mutation fuzzer checks that).
let swoopStop (input: byte[]) =
    let mutable lo = 1
    let mutable hi = input.Length

    while lo < hi do
        let mid = (lo + hi) / 2
        if (swoopOn input[.. mid - 1]).StartsWith "reject" then hi <- mid else lo <- mid + 1

    lo - 1

// Helpers for the rules.
let private lower (s: string) = s.ToLowerInvariant()

let private name (field: string) =
    let colon = field.IndexOf(':')
    if colon < 0 then "" else lower (field.Substring(0, colon))

let private value (field: string) =
    let colon = field.IndexOf(':')
    if colon < 0 then "" else field.Substring(colon + 1)

let private trimOws (s: string) = s.Trim(' ', '\t')
let private fieldsNamed n (f: Facts) = f.Fields |> Array.filter (fun l -> name l = n)
let private isTchar (c: char) = Char.IsAsciiLetterOrDigit c || "!#$%&'*+-.^_`|~".Contains c
let private isToken (s: string) = s.Length > 0 && s |> Seq.forall isTchar
let private version (f: Facts) = let p = f.Parts in if p.Length >= 3 then p[p.Length - 1] else ""
let private target (f: Facts) = let p = f.Parts in if p.Length >= 3 then p[1] else ""
let private methodOf (f: Facts) = f.Parts[0]
let private swoopRejects status (f: Facts) = f.Swoop.K = "reject" && f.Swoop.E = status
let private llhttpRejects code (f: Facts) = f.Llhttp.K = "reject" && f.Llhttp.E = code
let private swoopStopLine (f: Facts) = f.LineAt(swoopStop f.Input)
let private llhttpStopLine (f: Facts) = f.LineAt(f.Llhttp.At)

/// The methods llhttp knows (node 20's llhttp 9): it refuses every other token.
let private llhttpMethods =
    set [ "DELETE"; "GET"; "HEAD"; "POST"; "PUT"; "CONNECT"; "OPTIONS"; "TRACE"; "COPY"; "LOCK"; "MKCOL"; "MOVE"
          "PROPFIND"; "PROPPATCH"; "SEARCH"; "UNLOCK"; "BIND"; "REBIND"; "UNBIND"; "ACL"; "REPORT"; "MKACTIVITY"
          "CHECKOUT"; "MERGE"; "M-SEARCH"; "NOTIFY"; "SUBSCRIBE"; "UNSUBSCRIBE"; "PATCH"; "PURGE"; "MKCALENDAR"
          "LINK"; "UNLINK"; "SOURCE"; "QUERY"; "PRI" ]

/// A kind of disagreement, what was decided about it, and how to recognise it.
type Bucket =
    { Name: string
      Decision: string
      Matches: Facts -> bool }

let private deliberate = "deliberate: "
let private llhttpOwn = "llhttp's choice, not Swoop's: "

/// Transfer codings named in every Transfer-Encoding field, empty elements left out.
let private codings (f: Facts) =
    [ for l in fieldsNamed "transfer-encoding" f do
          for item in (value l).Split(',') do
              let t = lower (trimOws item)
              if t <> "" then t ]

let private swoopRefusesHead (f: Facts) = f.Swoop.K = "reject" && f.Llhttp.K <> "reject"
let private llhttpRefusesHead (f: Facts) = f.Llhttp.K = "reject" && f.Swoop.K <> "reject"
let private stoppedAt role (f: Facts) = (swoopStopLine f).Role = role
let private hostValueOk (v: string) = v |> Seq.forall (fun c -> Char.IsAsciiLetterOrDigit c || "-._~!$&'()*+,;=:[]%".Contains c)
let private hasFieldOws (fieldValue: string) = fieldValue.Length > 0 && (fieldValue.EndsWith "\t" || fieldValue.EndsWith " ")

/// Swoop's refusals of heads llhttp takes (or is still reading).
let private swoopStricter: Bucket list =
    [ { Name = "Swoop's size limits: request line over 8 KiB (414), header section over 32 KiB or over 100 fields (431), trailer section over 32 KiB (431), chunk line over 4 KiB (400)"
        Decision = deliberate + "RFC 9112 2.3 and 3 (a server bounds what it reads; 414 per RFC 9110 15.5.15, 431 per RFC 6585 5); llhttp ran with a 1 MiB limit here (Node's default is 16 KiB)"
        Matches =
          fun f ->
              f.Aspect = "kind" && swoopRefusesHead f && (f.Swoop.E = "414" || f.Swoop.E = "431")
              || f.Aspect = "body" && f.Swoop.B = "error"
                 && (f.Swoop.E = "431" || f.Lines |> Array.exists (fun l -> l.Role = "body" && l.Text.Length > 4096)) }
      { Name = "HTTP versions other than 1.0 and 1.1: Swoop 505, llhttp takes any digit.digit"
        Decision = deliberate + "RFC 9110 15.6.6 (505 for a major version the server does not support) and RFC 9112 2.3 (HTTP/1.x only on this syntax)"
        Matches = fun f -> f.Aspect = "kind" && swoopRefusesHead f && f.Swoop.E = "505" }
      { Name = "transfer codings other than chunked before chunked: Swoop 501, llhttp reads the body as chunked"
        Decision = deliberate + "RFC 9112 6.1 (a server that receives a transfer coding it does not understand SHOULD answer 501); Swoop decodes chunked only"
        Matches = fun f -> f.Aspect = "kind" && swoopRefusesHead f && f.Swoop.E = "501" }
      { Name = "HTTP/1.1 request without Host: Swoop 400, llhttp leaves it to Node's server (which also answers 400)"
        Decision = deliberate + "RFC 9112 3.2 (a server MUST answer 400 to an HTTP/1.1 request without Host)"
        Matches = fun f -> f.Aspect = "kind" && swoopRefusesHead f && stoppedAt "end" f && version f = "HTTP/1.1" && (fieldsNamed "host" f).Length = 0 }
      { Name = "more than one Host field: Swoop 400, llhttp takes them"
        Decision = deliberate + "RFC 9112 3.2 (a server MUST answer 400 to more than one Host field)"
        Matches = fun f -> f.Aspect = "kind" && swoopRefusesHead f && name (swoopStopLine f).Text = "host" && (fieldsNamed "host" f).Length > 1 }
      { Name = "Host value that is not uri-host[:port]: Swoop 400, llhttp takes any field value"
        Decision = deliberate + "RFC 9112 3.2 (400 for an invalid Host value) with RFC 3986 3.2.2 host syntax"
        Matches = fun f -> f.Aspect = "kind" && swoopRefusesHead f && name (swoopStopLine f).Text = "host" && not (hostValueOk (trimOws (value (swoopStopLine f).Text))) }
      { Name = "Transfer-Encoding on HTTP/1.0: Swoop 400, llhttp reads the body as chunked"
        Decision = deliberate + "RFC 9112 6.1 (a Transfer-Encoding in an HTTP/1.0 message MUST be treated as faulty framing)"
        Matches = fun f -> f.Aspect = "kind" && swoopRefusesHead f && stoppedAt "end" f && version f = "HTTP/1.0" && (fieldsNamed "transfer-encoding" f).Length > 0 }
      { Name = "chunked applied more than once: Swoop 400, llhttp takes it"
        Decision = deliberate + "RFC 9112 6.1 (a sender MUST NOT apply chunked more than once): a smuggling vector"
        Matches = fun f -> f.Aspect = "kind" && swoopRefusesHead f && stoppedAt "end" f && (codings f |> List.filter ((=) "chunked")).Length > 1 }
      { Name = "more than one SP between the parts of the request line: Swoop 400, llhttp takes it"
        Decision = deliberate + "RFC 9112 3 (single SP; parsing on whitespace boundaries MAY be done but invites smuggling when recipients differ)"
        Matches = fun f -> f.Aspect = "kind" && swoopRefusesHead f && stoppedAt "request" f && (f.RequestLine.Contains "  " || f.RequestLine.EndsWith " ") }
      { Name = "request line without a version (HTTP/0.9's simple request): Swoop 400, llhttp takes it as HTTP/0.9"
        Decision = deliberate + "RFC 9112 3 (request-line = method SP request-target SP HTTP-version); HTTP/0.9 is not spoken"
        Matches = fun f -> f.Aspect = "kind" && swoopRefusesHead f && stoppedAt "request" f && (f.Parts.Length = 2 || f.Llhttp.V = "0.9") }
      { Name = "asterisk-form target with a method other than OPTIONS: Swoop 400, llhttp takes it"
        Decision = deliberate + "RFC 9112 3.2.4 (the asterisk-form is only for OPTIONS)"
        Matches = fun f -> f.Aspect = "kind" && swoopRefusesHead f && stoppedAt "request" f && target f = "*" && methodOf f <> "OPTIONS" }
      { Name = "fragment (#) in the target: Swoop 400, llhttp takes it"
        Decision = deliberate + "RFC 9112 3.2 (request-target has no fragment; RFC 9110 4.2.5: a client never sends one)"
        Matches = fun f -> f.Aspect = "kind" && swoopRefusesHead f && stoppedAt "request" f && (target f).Contains '#' }
      { Name = "CONNECT without an authority-form target (uri-host:port), or authority-form without CONNECT: Swoop 400, llhttp takes it"
        Decision = deliberate + "RFC 9112 3.2.3 (authority-form is uri-host:port, only for CONNECT)"
        Matches = fun f -> f.Aspect = "kind" && swoopRefusesHead f && stoppedAt "request" f && target f <> "" && (methodOf f = "CONNECT" || not ((target f).StartsWith "/" || (target f).Contains "://" || target f = "*")) }
      { Name = "absolute-form target with a scheme other than http or https, with userinfo, or with an authority that is not uri-host[:port]: Swoop 400, llhttp takes it"
        Decision = deliberate + "RFC 9112 3.2.2 with RFC 9110 4.2 (an origin server serves http and https URIs; userinfo is refused per RFC 9110 4.2.4; RFC 3986 3.2.2 host syntax)"
        Matches = fun f -> f.Aspect = "kind" && swoopRefusesHead f && stoppedAt "request" f && (target f).Contains "://" }
      { Name = "Transfer-Encoding whose last coding is not chunked: Swoop 400, llhttp reads no body"
        Decision = deliberate + "RFC 9112 6.3 item 4 (a request whose final coding is not chunked: the server MUST answer 400 and close)"
        Matches = fun f -> f.Aspect = "kind" && swoopRefusesHead f && stoppedAt "end" f && (let c = codings f in c.IsEmpty || List.last c <> "chunked") && (fieldsNamed "transfer-encoding" f).Length > 0 }
      { Name = "bare LF or bare CR before the request line: Swoop 400, llhttp skips it"
        Decision = deliberate + "RFC 9112 2.2 (empty lines before the request line are CRLF) and 2.2's bare-LF allowance not taken: Swoop never takes a bare CR or LF as a line end"
        Matches = fun f -> f.Aspect = "kind" && swoopRefusesHead f && (stoppedAt "leading" f || f.RequestLine.StartsWith "\r") }
      { Name = "more than one Content-Length, or a list of them, even with equal values: Swoop 400, llhttp takes equal ones"
        Decision = deliberate + "RFC 9110 8.6 (a recipient MAY reject a repeated Content-Length) and RFC 9112 6.3 item 5 (invalid Content-Length is unrecoverable): no smuggling through duplicates"
        Matches = fun f -> f.Aspect = "kind" && swoopRefusesHead f && name (swoopStopLine f).Text = "content-length" }
      { Name = "Swoop refuses a head llhttp is still reading: a bad byte, a non-token method or a limit, seen before the line ends"
        Decision = deliberate + "both refuse; Swoop refuses as soon as a line can no longer be valid (garbage such as TLS or HTTP/2 frames before any LF) and llhttp later"
        Matches = fun f -> f.Aspect = "kind" && f.Swoop.K = "reject" && f.Llhttp.K = "incomplete" && not (stoppedAt "end" f) } ]

/// llhttp's refusals of heads Swoop takes.
let private llhttpStricter: Bucket list =
    [ { Name = "extension methods: Swoop accepts any token, llhttp only its own list"
        Decision = deliberate + "RFC 9110 9.1 (method = token; the set is extensible); an unknown method is the application's 501 or 405"
        Matches = fun f -> f.Aspect = "kind" && llhttpRefusesHead f && f.Llhttp.E = "HPE_INVALID_METHOD" && isToken (methodOf f) && not (llhttpMethods.Contains(methodOf f)) }
      { Name = "PRI as the method of an HTTP/1.x request: Swoop takes the token, llhttp expects the HTTP/2 preface"
        Decision = deliberate + "RFC 9110 9.1 (PRI is a token); the real preface (PRI * HTTP/2.0) gets 505 from Swoop (RFC 9113 3.4)"
        Matches = fun f -> f.Aspect = "kind" && f.Swoop.K = "accept" && f.Llhttp.K <> "accept" && methodOf f = "PRI" }
      { Name = "empty list elements or trailing whitespace in Transfer-Encoding: Swoop takes them, llhttp refuses"
        Decision = deliberate + "RFC 9110 5.6.1 (a recipient MUST ignore empty list elements) and 5.5 (OWS around a field value is not part of it); the codings are the same"
        Matches =
          fun f ->
              (f.Aspect = "kind" && llhttpRefusesHead f || f.Aspect = "body" && f.Llhttp.B = "error")
              && f.Llhttp.E = "HPE_INVALID_TRANSFER_ENCODING"
              && (fieldsNamed "transfer-encoding" f |> Array.exists (fun l -> let v = value l in hasFieldOws v || (trimOws v).EndsWith "," || (trimOws v).StartsWith ",")) }
      { Name = "whitespace after the Content-Length digits: Swoop takes it (OWS), llhttp refuses"
        Decision = deliberate + "RFC 9112 5 (field-line = field-name \":\" OWS field-value OWS): HTAB after the digits is OWS, not part of the value"
        Matches = fun f -> f.Aspect = "kind" && llhttpRefusesHead f && f.Llhttp.E = "HPE_INVALID_CONTENT_LENGTH" && name (llhttpStopLine f).Text = "content-length" && hasFieldOws (value (llhttpStopLine f).Text) } ]

/// The chunk line or trailer line where llhttp stopped in the body.
let private llhttpBodyLine (f: Facts) = let l = llhttpStopLine f in if l.Role = "body" then l.Text else ""

/// Differences in keep-alive and in bodies.
let private otherAspects: Bucket list =
    [ { Name = "Connection: close or keep-alive followed by HTAB: Swoop sees the option, llhttp does not"
        Decision = deliberate + "RFC 9110 5.5 and 5.6.1 (OWS, HTAB included, around list elements is not part of them)"
        Matches =
          fun f ->
              f.Aspect = "keep-alive"
              && (fieldsNamed "connection" f
                  |> Array.exists (fun l ->
                      (value l).Split(',') |> Array.exists (fun o -> (lower (trimOws o) = "close" || lower (trimOws o) = "keep-alive") && o.Contains '\t'))) }
      { Name = "Connection with both close and keep-alive on HTTP/1.0: Swoop closes, llhttp keeps the connection"
        Decision = deliberate + "RFC 9112 9.3 and 9.6 (with the close option the connection does not persist, whatever else is listed)"
        Matches =
          fun f ->
              let options = [ for l in fieldsNamed "connection" f do for o in (value l).Split(',') -> lower (trimOws o) ]
              f.Aspect = "keep-alive" && not f.Swoop.Ka && f.Llhttp.Ka && List.contains "close" options && List.contains "keep-alive" options }
      { Name = "Proxy-Connection: keep-alive on HTTP/1.0: llhttp keeps the connection, Swoop reads Connection only"
        Decision = deliberate + "RFC 9110 7.6.1 (Connection is the field for connection options; Proxy-Connection was never standardised)"
        Matches = fun f -> f.Aspect = "keep-alive" && not f.Swoop.Ka && f.Llhttp.Ka && (fieldsNamed "proxy-connection" f).Length > 0 }
      { Name = "whitespace (BWS) around ';' and '=' in chunk extensions: Swoop takes it, llhttp refuses"
        Decision = deliberate + "RFC 9112 7.1.1 (chunk-ext = *( BWS \";\" BWS chunk-ext-name [ BWS \"=\" BWS chunk-ext-val ] )) and RFC 9110 5.6.3 (recipients MUST accept BWS)"
        Matches =
          fun f ->
              f.Aspect = "body" && f.Llhttp.B = "error" && f.Swoop.B <> "error"
              && (f.Llhttp.E = "HPE_INVALID_CHUNK_SIZE" || f.Llhttp.E = "HPE_STRICT")
              && (let l = llhttpBodyLine f in l.Contains ';' && (l.Contains ' ' || l.Contains '\t')) }
      { Name = "quoted-pair or obs-text in a quoted chunk extension value: Swoop takes it, llhttp refuses"
        Decision = deliberate + "RFC 9112 7.1.1 (chunk-ext-val = token / quoted-string) and RFC 9110 5.6.4 (quoted-string holds quoted-pair and obs-text)"
        Matches =
          fun f ->
              f.Aspect = "body" && f.Llhttp.B = "error" && f.Swoop.B <> "error" && f.Llhttp.E = "HPE_STRICT"
              && (let l = llhttpBodyLine f in l.Contains '"' && (l.Contains '\\' || l |> Seq.exists (fun c -> c >= '\x80'))) }
      { Name = "framing fields (Content-Length, Transfer-Encoding) in trailers: Swoop keeps them apart as trailers, llhttp refuses"
        Decision = deliberate + "RFC 9110 6.5.1 and 6.5.2 (trailers are kept apart from the header section; framing fields there never change framing): the body's framing was fixed by the head"
        Matches =
          fun f ->
              f.Aspect = "body" && f.Llhttp.B = "error"
              && (f.Llhttp.E = "HPE_INVALID_CONTENT_LENGTH" || f.Llhttp.E = "HPE_INVALID_TRANSFER_ENCODING" || f.Llhttp.E = "HPE_UNEXPECTED_CONTENT_LENGTH")
              && (let n = name (llhttpStopLine f).Text in n = "content-length" || n = "transfer-encoding") }
      { Name = "a chunk extension without a name or without a value (\";=\", \";;\", \";a=\"): Swoop 400, llhttp takes it"
        Decision = deliberate + "RFC 9112 7.1.1 (chunk-ext-name = token; chunk-ext-val = token / quoted-string: neither is empty)"
        Matches =
          fun f ->
              f.Aspect = "body" && f.Swoop.B = "error" && f.Llhttp.B <> "error"
              && f.Lines |> Array.exists (fun l -> l.Role = "body" && (l.Text.Contains ";=" || l.Text.Contains ";;" || l.Text.TrimEnd(' ', '\t').EndsWith ";" || l.Text.TrimEnd(' ', '\t').EndsWith "=" || l.Text.Contains "; =")) }
      { Name = "a chunk extension value that is a token and a quoted-string run together (a=x\"y\"): Swoop 400, llhttp takes it"
        Decision = deliberate + "RFC 9112 7.1.1 (chunk-ext-val = token / quoted-string, one or the other)"
        Matches =
          fun f ->
              f.Aspect = "body" && f.Swoop.B = "error" && f.Llhttp.B <> "error"
              && f.Lines |> Array.exists (fun l -> l.Role = "body" && Text.RegularExpressions.Regex.IsMatch(l.Text, "=[ \\t]*[-!#$%&'*+.^_`|~0-9A-Za-z]+\"")) }
      { Name = "chunk sizes over 15 hex digits (leading zeros count): Swoop 400, llhttp reads on"
        Decision = deliberate + "RFC 9112 7.1 (recipients MUST guard against overflow): Swoop bounds the digits (15 hex, 18 decimal for Content-Length), leading zeros included"
        Matches =
          fun f ->
              f.Aspect = "body" && f.Swoop.B = "error" && f.Llhttp.B <> "error"
              && f.Lines |> Array.exists (fun l -> l.Role = "body" && (l.Text |> Seq.takeWhile (fun c -> Uri.IsHexDigit c) |> Seq.length) > 15) } ]

/// The buckets, most specific first.
let all: Bucket list = swoopStricter @ llhttpStricter @ otherAspects

/// Both refuse; llhttp sooner.
let private llhttpSooner =
    { Name = "llhttp refuses at the bad byte, Swoop when the line ends (and then refuses too)"
      Decision = deliberate + "Swoop checks a line once its end is here, in one vectorised pass; what it holds meanwhile is bounded by its limits (8 KiB, 32 KiB) and the 30 s head timeout"
      Matches = fun _ -> false }

let private swoopSide = lazy (Verdicts.SwoopSide())

/// The bucket of one aspect of a disagreement, or a name for an unexplained one. When
/// llhttp refuses what Swoop has not finished reading, the input is completed (with CR LF
/// CR LF, with a Host first, ...): if Swoop refuses every completion, both refuse; if it
/// takes one, that completion's disagreement is classified.
let rec classify (f: Facts) : Choice<Bucket, string> =
    match all |> List.tryFind (fun b -> b.Matches f) with
    | Some b -> Choice1Of2 b
    | None when f.Aspect = "kind" && f.Swoop.K = "incomplete" && f.Llhttp.K = "reject" ->
        let completions = [ "\r\n\r\n"; "\n\r\n"; "\r\nHost: a\r\n\r\n"; "\nHost: a\r\n\r\n"; " HTTP/1.1\r\nHost: a\r\n\r\n"; "\r\n" ]

        let taken =
            completions
            |> List.tryPick (fun c ->
                let bytes = Array.append f.Input (Encoding.Latin1.GetBytes c)
                if swoopOn bytes = "accept" then Some bytes else None)

        match taken with
        | Some bytes -> classify { f with Input = bytes; Swoop = swoopSide.Value.Verdict bytes; Lines = split bytes }
        | None -> Choice1Of2 llhttpSooner
    | None when f.Aspect = "body" && f.Swoop.B = "incomplete" && f.Llhttp.B = "error" ->
        let completions = [ "\r\n\r\n"; "\n\r\n"; "\r\n0\r\n\r\n"; "0\r\n\r\n" ]
        let completed = completions |> List.map (fun c -> Array.append f.Input (Encoding.Latin1.GetBytes c))
        let verdicts = completed |> List.map (fun bytes -> bytes, swoopSide.Value.Verdict bytes)

        match verdicts |> List.tryFind (fun (_, v) -> v.B = "done") with
        | Some(bytes, v) -> classify { f with Input = bytes; Swoop = v; Lines = split bytes }
        | None when verdicts |> List.forall (fun (_, v) -> v.B = "error") -> Choice1Of2 llhttpSooner
        | None -> Choice2Of2(sprintf "body: Swoop body incomplete, llhttp body error %s (%s)" f.Llhttp.E f.Llhttp.R)
    | None ->
        let side (v: Verdict) =
            match v.K with
            | "reject" when obj.ReferenceEquals(v, f.Swoop) -> sprintf "rejects %s at its %s line" v.E (swoopStopLine f).Role
            | "reject" -> sprintf "rejects %s (%s) at its %s line" v.E v.R (llhttpStopLine f).Role
            | "accept" when f.Aspect = "body" -> sprintf "body %s%s" v.B (if v.B = "error" then sprintf " %s (%s)" v.E v.R else "")
            | k -> k

        Choice2Of2(sprintf "%s: Swoop %s, llhttp %s" f.Aspect (side f.Swoop) (side f.Llhttp))

/// Every bucket, for the report.
let every = all @ [ llhttpSooner ]
