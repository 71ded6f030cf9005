module Swoop.Tests.ParserTests

open System
open System.Text
open Xunit
open FsCheck
open FsCheck.FSharp
open Swoop
open Swoop.Tests.Support

let internal limits = Parser.defaultLimits

let private slice (input: byte[]) start length =
    Encoding.Latin1.GetString(input, start, length)

/// Everything the parser understood, as one comparable line.
let internal summarize (input: byte[]) (result: Parser.ParseResult) (head: RequestHead) =
    match result with
    | Parser.ParseResult.Done ->
        let headers =
            [ for i in 0 .. head.HeaderCount - 1 do
                  let h = head.Headers[i]
                  slice input h.NameStart h.NameLength + ":" + slice input h.ValueStart h.ValueLength ]
            |> String.concat "|"

        let query = if head.QueryStart < 0 then "-" else slice input head.QueryStart head.QueryLength

        sprintf
            "%s %s %O path=%s query=%s [%s] body=%O/%d keepalive=%b continue=%b length=%d"
            (slice input head.MethodStart head.MethodLength)
            (slice input head.TargetStart head.TargetLength)
            head.Version
            (slice input head.PathStart head.PathLength)
            query
            headers
            head.Body
            head.ContentLength
            head.KeepAlive
            head.ExpectContinue
            head.HeadLength
    | Parser.ParseResult.Error -> sprintf "error %d" head.ErrorStatus
    | _ -> "need more"

/// Parses the whole input in one call.
let parseWhole (input: byte[]) =
    let head = RequestHead(limits.MaxHeaderCount)
    head.Reset()
    let r = Parser.parse (ReadOnlySpan input) limits head
    summarize input r head

/// Parses as a connection would: the input grows by the given cuts, one call each time.
let parseInPieces (input: byte[]) (cuts: int list) =
    let head = RequestHead(limits.MaxHeaderCount)
    head.Reset()
    let ends = (cuts |> List.filter (fun c -> c > 0 && c < input.Length) |> List.sort) @ [ input.Length ]
    let mutable outcome = "need more"
    let mutable finished = false

    for e in ends do
        if not finished then
            let r = Parser.parse (ReadOnlySpan(input, 0, e)) limits head

            if r <> Parser.ParseResult.NeedMore then
                outcome <- summarize input r head
                finished <- true

    outcome

/// Requests every parser must accept, with what it must understand.
let valid: (string * string) list =
    [ "GET / HTTP/1.1\r\nHost: a\r\n\r\n",
      "GET / Http11 path=/ query=- [Host:a] body=NoBody/-1 keepalive=true continue=false length=27"
      "GET /p?q=1&r HTTP/1.1\r\nHost: example.com:8080\r\nAccept: */*\r\n\r\n",
      "GET /p?q=1&r Http11 path=/p query=q=1&r [Host:example.com:8080|Accept:*/*] body=NoBody/-1 keepalive=true continue=false length=62"
      "\r\n\r\nGET / HTTP/1.1\r\nHost: a\r\n\r\n",
      "GET / Http11 path=/ query=- [Host:a] body=NoBody/-1 keepalive=true continue=false length=31"
      "POST /x HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\n",
      "POST /x Http11 path=/x query=- [Host:a|Content-Length:5] body=Sized/5 keepalive=true continue=false length=48"
      "POST /x HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\n\r\n",
      "POST /x Http11 path=/x query=- [Host:a|Content-Length:0] body=NoBody/0 keepalive=true continue=false length=48"
      "POST /x HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n",
      "POST /x Http11 path=/x query=- [Host:a|Transfer-Encoding:chunked] body=Chunked/-1 keepalive=true continue=false length=57"
      "POST /x HTTP/1.1\r\nHost: a\r\ntransfer-encoding:  Chunked \r\n\r\n",
      "POST /x Http11 path=/x query=- [Host:a|transfer-encoding:Chunked] body=Chunked/-1 keepalive=true continue=false length=59"
      "GET / HTTP/1.0\r\n\r\n", "GET / Http10 path=/ query=- [] body=NoBody/-1 keepalive=false continue=false length=18"
      "GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n",
      "GET / Http10 path=/ query=- [Connection:keep-alive] body=NoBody/-1 keepalive=true continue=false length=42"
      "GET / HTTP/1.1\r\nHost: a\r\nConnection: Keep-Alive, Close\r\n\r\n",
      "GET / Http11 path=/ query=- [Host:a|Connection:Keep-Alive, Close] body=NoBody/-1 keepalive=false continue=false length=58"
      "PUT /u HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\nContent-Length: 3\r\n\r\n",
      "PUT /u Http11 path=/u query=- [Host:a|Expect:100-continue|Content-Length:3] body=Sized/3 keepalive=true continue=true length=69"
      "OPTIONS * HTTP/1.1\r\nHost: a\r\n\r\n",
      "OPTIONS * Http11 path=* query=- [Host:a] body=NoBody/-1 keepalive=true continue=false length=31"
      "GET http://example.com/a/b?c HTTP/1.1\r\nHost: example.com\r\n\r\n",
      "GET http://example.com/a/b?c Http11 path=/a/b query=c [Host:example.com] body=NoBody/-1 keepalive=true continue=false length=60"
      "GET https://example.com HTTP/1.1\r\nHost: example.com\r\n\r\n",
      "GET https://example.com Http11 path= query=- [Host:example.com] body=NoBody/-1 keepalive=true continue=false length=55"
      "CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n",
      "CONNECT example.com:443 Http11 path= query=- [Host:example.com:443] body=NoBody/-1 keepalive=true continue=false length=59"
      "CONNECT [::1]:443 HTTP/1.1\r\nHost: [::1]:443\r\n\r\n",
      "CONNECT [::1]:443 Http11 path= query=- [Host:[::1]:443] body=NoBody/-1 keepalive=true continue=false length=47"
      "M-SEARCH * HTTP/1.1\r\nHost: a\r\n\r\n",
      "error 400" // asterisk-form is for OPTIONS only
      "PROPFIND /dav HTTP/1.1\r\nHost: a\r\nX-Empty:\r\nX-Tab:\tv\t\r\n\r\n",
      "PROPFIND /dav Http11 path=/dav query=- [Host:a|X-Empty:|X-Tab:v] body=NoBody/-1 keepalive=true continue=false length=56"
      "GET /caf\xc3\xa9 HTTP/1.1\r\nHost: a\r\n\r\n", "error 400"
      "GET / HTTP/1.1\r\nHost: a\r\nX-Latin: caf\xe9\r\n\r\n",
      "GET / Http11 path=/ query=- [Host:a|X-Latin:caf\xe9] body=NoBody/-1 keepalive=true continue=false length=42"
      "GET / HTTP/1.1\r\nX-Utf8: \tcaf\xc3\xa9 \t na\xc3\xafve\t\r\nHost: a\r\n\r\n",
      "GET / Http11 path=/ query=- [X-Utf8:caf\xc3\xa9 \t na\xc3\xafve|Host:a] body=NoBody/-1 keepalive=true continue=false length=53"
      "GET / HTTP/1.1\r\nHost:\r\n\r\n",
      "GET / Http11 path=/ query=- [Host:] body=NoBody/-1 keepalive=true continue=false length=25" ]

/// Requests that must be refused, with the status to answer.
let invalid: (string * int) list =
    [ "GET / HTTP/1.1\r\n\r\n", 400 // no Host
      "GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", 400
      "GET / HTTP/1.1\r\nHost: a b\r\n\r\n", 400
      "GET / HTTP/1.1\r\nHost: a/b\r\n\r\n", 400
      "GET / HTTP/1.1\nHost: a\n\n", 400 // bare LF
      "GET / HTTP/1.1\r\nHost: a\n\r\n", 400
      "GET / HTTP/1.1\r\nHost: a\r\n\n", 400
      "GET / HTTP/1.1\r\nHost: a\rX: b\r\n\r\n", 400 // bare CR
      "GET / HTTP/1.1\r\nHost : a\r\n\r\n", 400 // whitespace before colon
      "GET / HTTP/1.1\r\nHost\t: a\r\n\r\n", 400
      "GET / HTTP/1.1\r\nHost: a\r\nX: 1\r\n  continued\r\n\r\n", 400 // obs-fold
      "GET / HTTP/1.1\r\n Host: a\r\n\r\n", 400
      "GET / HTTP/1.1\r\nHost: a\r\nNoColon\r\n\r\n", 400
      "GET / HTTP/1.1\r\nHost: a\r\n: empty\r\n\r\n", 400
      "GET / HTTP/1.1\r\nHost: a\r\nX-\x01: v\r\n\r\n", 400
      "GET / HTTP/1.1\r\nHost: a\r\nX: v\x00w\r\n\r\n", 400
      "GET / HTTP/1.1\r\nHost: a\r\nX: v\x7f\r\n\r\n", 400
      "G(T / HTTP/1.1\r\nHost: a\r\n\r\n", 400 // non-token method
      " GET / HTTP/1.1\r\nHost: a\r\n\r\n", 400
      "GET  / HTTP/1.1\r\nHost: a\r\n\r\n", 400
      "GET / HTTP/1.1 \r\nHost: a\r\n\r\n", 400
      "GET /a b HTTP/1.1\r\nHost: a\r\n\r\n", 400
      "GET /a#frag HTTP/1.1\r\nHost: a\r\n\r\n", 400
      "GET / http/1.1\r\nHost: a\r\n\r\n", 400
      "GET / HTTP/1.1x\r\nHost: a\r\n\r\n", 400
      "GET / HTTP/2.0\r\nHost: a\r\n\r\n", 505
      "GET / HTTP/0.9\r\nHost: a\r\n\r\n", 505
      "GET / HTTP/1.2\r\nHost: a\r\n\r\n", 505
      "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", 505
      "GET\r\n\r\n", 400
      "GET /\r\n\r\n", 400
      "GET x HTTP/1.1\r\nHost: a\r\n\r\n", 400
      "GET ftp://a/b HTTP/1.1\r\nHost: a\r\n\r\n", 400
      "CONNECT /a HTTP/1.1\r\nHost: a\r\n\r\n", 400
      "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\nContent-Length: 1\r\n\r\n", 400
      "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 1, 1\r\n\r\n", 400
      "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: -1\r\n\r\n", 400
      "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: +1\r\n\r\n", 400
      "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 0x1\r\n\r\n", 400
      "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 1 2\r\n\r\n", 400
      "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 99999999999999999999\r\n\r\n", 400
      "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n", 400
      "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n", 400
      "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip\r\n\r\n", 400
      "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked, gzip\r\n\r\n", 400
      "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n", 400
      "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", 501
      "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: identity\r\n\r\n", 400
      "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunkedx\r\n\r\n", 400
      "POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n", 400
      "\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03", 400 // a TLS ClientHello, refused before any LF
      "\n", 400
      "CONNECT example.com HTTP/1.1\r\nHost: example.com\r\n\r\n", 400 // authority-form needs a port
      "CONNECT example.com:x HTTP/1.1\r\nHost: example.com\r\n\r\n", 400
      "GET http://user@example.com/ HTTP/1.1\r\nHost: example.com\r\n\r\n", 400
      // Found by the differential fuzzer (tests/Swoop.Fuzz): bytes outside uri-host in the
      // authority of an absolute-form or authority-form target were taken.
      "GET https://example.co}m HTTP/1.1\r\nHost: example.com\r\n\r\n", 400
      "GET http://a\"b/c HTTP/1.1\r\nHost: a\r\n\r\n", 400
      "GET http://a b/ HTTP/1.1\r\nHost: a\r\n\r\n", 400
      "CONNECT example^.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n", 400
      "GET /a\tb HTTP/1.1\r\nHost: a\r\n\r\n", 400 // HTAB is for field values only
      "GET /a\x7fb HTTP/1.1\r\nHost: a\r\n\r\n", 400
      "GE\x00T / HTTP/1.1\r\nHost: a\r\n\r\n", 400
      "GET / HTTP/1.1\rX\nHost: a\r\n\r\n", 400 // bare CR in the request line
      "GET / HTTP/1.1\r\nHost: a\r\nX-\xe9: v\r\n\r\n", 400 // obs-text in a name
      "GET / HTTP/1.1\r\nHost: a\r\nX: a\x1bb\r\n\r\n", 400
      "GET / HTTP/1.1\r\nHost: a\r\nX: \xe9\tb\x00c\r\n\r\n", 400 // a control after obs-text
      "GET / HTTP/1.1\r\nHost: a\r\nX: \xe9\x7f\r\n\r\n", 400
      "GET / HTTP/1.1\r\nHost: a\r\nX: \xe9\nY: b\r\n\r\n", 400 // bare LF after obs-text
      "GET / HTTP/1.1\r\nHost: a\r\nX: \t\xe9\rY: b\r\n\r\n", 400 ]

let bytesOf (s: string) = Encoding.Latin1.GetBytes s

[<Fact>]
let ``valid requests parse to what they mean`` () =
    for input, expected in valid do
        Assert.Equal(expected, parseWhole (bytesOf input))

[<Fact>]
let ``invalid requests get the right status`` () =
    for input, status in invalid do
        let outcome = parseWhole (bytesOf input)
        Assert.True((outcome = sprintf "error %d" status), sprintf "%A: expected %d, got %s" input status outcome)

[<Fact>]
let ``every prefix of a request needs more`` () =
    for input, _ in valid do
        let bytes = bytesOf input

        for n in 0 .. bytes.Length - 1 do
            let outcome = parseWhole bytes[.. n - 1]
            Assert.True(outcome = "need more" || outcome.StartsWith "error", sprintf "%A cut at %d: %s" input n outcome)

[<Fact>]
let ``a request split at any byte, or fed one byte at a time, parses the same`` () =
    for input, _ in valid @ (invalid |> List.map (fun (i, s) -> i, string s)) do
        let bytes = bytesOf input
        let whole = parseWhole bytes
        Assert.Equal(whole, parseInPieces bytes [ 1 .. bytes.Length - 1 ])

        for cut in 1 .. bytes.Length - 1 do
            Assert.Equal(whole, parseInPieces bytes [ cut ])

[<Fact>]
let ``the body and the next request are not part of the head`` () =
    let input = bytesOf "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 4\r\n\r\nbodyGET / HTTP/1.1\r\n"
    let head = RequestHead(100)
    head.Reset()
    Assert.Equal(Parser.ParseResult.Done, Parser.parse (ReadOnlySpan input) limits head)
    Assert.Equal("body", Encoding.ASCII.GetString(input, head.HeadLength, 4))

[<Fact>]
let ``a request line of exactly the limit is accepted however it is split`` () =
    let target = "/" + String('a', 8192 - "GET  HTTP/1.1".Length - 1)
    let bytes = bytesOf ("GET " + target + " HTTP/1.1\r\nHost: a\r\n\r\n")
    let whole = parseWhole bytes
    Assert.StartsWith("GET /aaa", whole)
    let crAt = Array.IndexOf(bytes, 13uy)
    Assert.Equal(whole, parseInPieces bytes [ crAt + 1 ])
    Assert.Equal(whole, parseInPieces bytes [ crAt ])

[<Fact>]
let ``a head with more header lines than the table starts with keeps every line`` () =
    // The table grows as lines come (16, 32, 64, 128 places); the limit stays MaxHeaderCount.
    let input = "GET / HTTP/1.1\r\nHost: a\r\n" + String.concat "" [ for i in 1..99 -> "X-" + string i + ": v" + string i + "\r\n" ] + "\r\n"
    let expected = "[Host:a|" + String.concat "|" [ for i in 1..99 -> "X-" + string i + ":v" + string i ] + "]"
    let whole = parseWhole (bytesOf input)
    Assert.Contains(expected, whole)
    Assert.Equal(whole, parseInPieces (bytesOf input) [ 40; 300; 301; 700 ])

[<Fact>]
let ``limits give 414 and 431`` () =
    let longLine = "GET /" + String('a', 8200) + " HTTP/1.1\r\nHost: a\r\n\r\n"
    Assert.Equal("error 414", parseWhole (bytesOf longLine))
    // Without a line end yet: refused as soon as the line is too long.
    Assert.Equal("error 414", parseWhole (bytesOf ("GET /" + String('a', 8200))))
    let bigHeaders = "GET / HTTP/1.1\r\nHost: a\r\nX: " + String('b', 33000) + "\r\n\r\n"
    Assert.Equal("error 431", parseWhole (bytesOf bigHeaders))
    Assert.Equal("error 431", parseWhole (bytesOf ("GET / HTTP/1.1\r\nHost: a\r\nX: " + String('b', 33000))))

    let many =
        "GET / HTTP/1.1\r\nHost: a\r\n"
        + String.concat "" [ for i in 1..100 -> sprintf "X-%d: v\r\n" i ]
        + "\r\n"

    Assert.Equal("error 431", parseWhole (bytesOf many))

    let ninetyNine =
        "GET / HTTP/1.1\r\nHost: a\r\n"
        + String.concat "" [ for i in 1..99 -> sprintf "X-%d: v\r\n" i ]
        + "\r\n"

    Assert.StartsWith("GET", parseWhole (bytesOf ninetyNine))

[<Fact>]
let ``past a limit, the limit decides, however the bytes arrive`` () =
    // Found by the mutation fuzzer (tests/Swoop.Fuzz): a bad byte past a limit gave 400 when
    // it came in the same receive as the bytes before it, and 414 or 431 when it came later.
    let line = String('a', 8200)
    let section = String('b', 33000)

    let cases =
        [ "GET /" + line + "\x01 HTTP/1.1\r\nHost: a\r\n\r\n", "error 414" // a control byte past the limit
          "GET /" + line + "\n", "error 414" // a bare LF past it
          "GET" + line + "( / HTTP/1.1\r\nHost: a\r\n\r\n", "error 414" // a method broken only past it
          "G(T" + line + " / HTTP/1.1\r\nHost: a\r\n\r\n", "error 400" // a method broken before it
          "GET / HTTP/1.1\r\nHost: a\r\nX: " + section + "\x01\r\n\r\n", "error 431"
          "GET / HTTP/1.1\r\nHost: a\r\nX: " + section + "\rY\r\n\r\n", "error 431" ]

    for input, expected in cases do
        let bytes = bytesOf input
        Assert.Equal(expected, parseWhole bytes)

        for cut in 8190..8210 do
            Assert.Equal(expected, parseInPieces bytes [ cut ])

        for cut in 32780..32800 do
            Assert.Equal(expected, parseInPieces bytes [ cut ])

    // A bare CR just past the header-section limit is a line byte past it (431); just
    // inside it, a bare CR (400).
    for fill, expected in [ 32768 - 2 - "Host: a\r\n".Length, "error 431"; 32767 - 2 - "Host: a\r\n".Length, "error 400" ] do
        let bytes = bytesOf ("GET / HTTP/1.1\r\nHost: a\r\nX:" + String('c', fill) + "\rY\r\n\r\n")
        Assert.Equal(expected, parseWhole bytes)
        Assert.Equal(expected, parseInPieces bytes [ bytes.Length - 5 ])

/// Random valid requests: method, path, headers with awkward whitespace, random cuts.
let genRequest =
    gen {
        let! methodName = Gen.elements [ "GET"; "POST"; "DELETE"; "PATCH"; "X-CUSTOM" ]
        let! segments = Gen.listOfLength 3 (Gen.elements [ "a"; "b%20c"; "~x"; "1"; "" ])
        let! query = Gen.elements [ ""; "?q=1"; "?a=b&c=d"; "?" ]
        let! headerCount = Gen.choose (0, 12)

        let! headers =
            Gen.listOfLength
                headerCount
                (gen {
                    let! name = Gen.elements [ "Accept"; "X-Thing"; "user-agent"; "Cookie"; "X_Under" ]
                    let! lead = Gen.elements [ ""; " "; "  "; "\t" ]
                    let! value = Gen.elements [ "v"; "a b c"; "text/html,*/*;q=0.8"; ""; "\xff\x80" ]
                    let! trail = Gen.elements [ ""; " "; "\t " ]
                    return name + ":" + lead + value + trail
                })

        let! leadingEmpty = Gen.elements [ ""; "\r\n" ]
        let request =
            leadingEmpty
            + methodName + " /" + String.Join("/", segments) + query + " HTTP/1.1\r\nHost: h\r\n"
            + String.concat "" [ for h in headers -> h + "\r\n" ]
            + "\r\n"

        let bytes = bytesOf request
        let! cuts = Gen.listOf (Gen.choose (1, bytes.Length - 1))
        return bytes, cuts
    }

[<Fact>]
let ``property: random valid requests parse, and parse the same however they are cut`` () =
    let property (bytes: byte[], cuts: int list) =
        let whole = parseWhole bytes
        whole.StartsWith "error" |> not && whole <> "need more" && parseInPieces bytes cuts = whole

    Check.One(Config.QuickThrowOnFailure.WithMaxTest(500), Prop.forAll (Arb.fromGen genRequest) property)

[<Fact>]
let ``property: random bytes never crash the parser and are refused or need more`` () =
    let property (bytes: byte[]) =
        let outcome = parseWhole bytes
        outcome = "need more" || outcome.StartsWith "error" || outcome.Contains " path="

    Check.One(Config.QuickThrowOnFailure.WithMaxTest(2000), Prop.forAll (ArbMap.defaults |> ArbMap.arbitrary<byte[]>) property)
