/// Structure-aware mutations of HTTP/1.1 messages. A message is looked at as lines (the head),
/// numbers (Content-Length, chunk sizes) and chunks (the body), and mutated at each level:
/// bytes inserted, dropped or duplicated; line ends and folds changed; header lines
/// inserted, dropped, duplicated and shuffled; numbers grown; chunks shuffled, resized and
/// given extensions and trailers; two messages spliced at line boundaries.
module internal Swoop.Fuzz.Mutations

open System

let private b (s: string) = Seeds.latin1 s

/// Single bytes worth trying anywhere: line ends, NUL and other controls, whitespace,
/// obs-text, and the delimiters of the grammar.
let interestingBytes =
    b "\r\n\000\t \x7f\x80\xff\xe9\xc3:;,\"\\=/?#@%*aAzZ09fFx-+.\x0b\x0c\x01\x1b()<>[]{}|!~'`^_&$"

/// Short strings worth inserting: line ends and folds, and pieces of the grammar.
let private fragments =
    [| "\r\n"; "\n"; "\r"; "\r\n\r\n"; "\n\n"; "\r\r\n"; "\n\r"; " "; "\t"; "  "; "\r\n "; "\r\n\t"
       ":"; ": "; " :"; ";"; "="; ","; ", "; "\""; "\\"; "chunked"; "identity"; "gzip"; "close"
       "keep-alive"; "upgrade"; "100-continue"; "HTTP/1.1"; "HTTP/1.0"; "http://"; "https://"; "*"
       "%00"; "%"; "\xc3\xa9"; "\xff"; "\x00"; "0"; "-"; "+"; "0x"; "@"; "#"; "?"; "/"; "//"; ".." |]
    |> Array.map b

/// Header lines (without their line end) worth inserting or swapping in.
let private headerLines =
    [| "Host: a"; "Host: b"; "host:a"; "Host:"; "Host: a:80"; "Host: [::1]:8080"; "Host: a b"; "Host: a@b"
       "Content-Length: 0"; "Content-Length: 5"; "Content-Length: 100"; "content-length:  3 "
       "Content-Length: 1, 1"; "Content-Length: -1"; "Content-Length: 18446744073709551616"
       "Content-Length: 007"; "Content-Length:"; "Content-Length: 5 "; "Content-Length: \t2"
       "Transfer-Encoding: chunked"; "Transfer-Encoding: gzip, chunked"; "Transfer-Encoding: chunked, identity"
       "Transfer-Encoding: identity"; "Transfer-Encoding:"; "transfer-encoding: Chunked"
       "Transfer-Encoding: chunked ,"; "Transfer-Encoding: ,chunked"; "Transfer-Encoding: chunked;q=1"
       "Transfer-Encoding: \"chunked\""; "Transfer-Encoding: chunked\t"; "Transfer-Encoding: xchunked"
       "Connection: close"; "Connection: keep-alive"; "Connection: upgrade"; "Connection: Keep-Alive, close"
       "Connection: close, upgrade"; "Connection:"; "Upgrade: websocket"; "Upgrade: h2c"
       "Expect: 100-continue"; "Expect: 100-Continue"; "X: \x80\xff"; "X:\t\tv\t"; "X-Empty:"
       " folded"; "\tfolded"; "X : v"; "X\t: v"; ": v"; "X"; "X:v\x00"; "X: \"quoted\\\"\""; "X-\xe9: v"
       "Proxy-Connection: keep-alive"; "Keep-Alive: timeout=5"; "TE: trailers"; "Trailer: X"
       "X: a\x7fb"; "X: \x01"; "X:" + String('v', 300); "Cookie: a=b; c=d" |]
    |> Array.map b

/// Numbers worth putting where a number stands (decimal and hex).
let private numbers =
    [| "0"; "1"; "00"; "01"; "000000000000000000001"; "9"; "99"; "999999999999999999"
       "9999999999999999999"; "99999999999999999999"; "18446744073709551615"; "18446744073709551616"
       "9223372036854775807"; "9223372036854775808"; "f"; "F"; "ff"; "fffffff"; "fffffffffffffff"
       "ffffffffffffffff"; "7fffffffffffffff"; "8000000000000000"; "10000000000000000"; "-1"; "+1"
       "1 1"; "1,1"; "0x10"; "1e3"; "1.0"; ""; " 1"; "1 " |]
    |> Array.map b

/// Methods, request targets and versions worth swapping into the request line.
let private methods =
    [| "GET"; "HEAD"; "POST"; "PUT"; "DELETE"; "OPTIONS"; "TRACE"; "CONNECT"; "PATCH"; "get"; "Get"
       "PROPFIND"; "M-SEARCH"; "QUERY"; "PRI"; "FOO"; "G_T"; "X!#$%&'*+-.^_`|~"; "GE T"; "G\x80T"; "" |]
    |> Array.map b

let private targets =
    [| "/"; "*"; "/a?b=c"; "/a#b"; "http://a/b"; "https://a:443"; "HTTP://A/"; "a:443"; "[::1]:80"
       "//"; "/%00"; "/a b"; "/\xe9"; "/a\\b"; "/a|b"; "/a{b}"; "/a^b"; "/a`b"; "/a\"b"; "/<>"
       "http://u@a/"; "http://a?x"; "ftp://a/"; "?"; "/?#"; "" |]
    |> Array.map b

let private versions =
    [| "HTTP/1.1"; "HTTP/1.0"; "HTTP/2.0"; "HTTP/0.9"; "HTTP/1.2"; "HTTP/1"; "HTTP/1.10"; "http/1.1"
       "HTTP/11"; "HTTP/1.1 "; " HTTP/1.1"; "HTTP/9.9"; "HTTP/1.x"; "" |]
    |> Array.map b

let private extensions =
    [| ";a"; ";a=b"; "; a = \"q\\\"\""; ";x;y=z"; " ;a"; ";a ;b"; ";a = b ;c"; ";"; ";="; ";a="; ";a=\""
       ";a=\"\x80\""; ";a=\"\\\x00\""; " "; "\t"; ";a=b c"; ";\xe9"; ";a=" + String('x', 200) |]
    |> Array.map b

let private trailerLines =
    [| "T: v"; "X-Sum: 42"; "Bad Name: x"; "T:"; " folded"; "T: a\rb"; "Content-Length: 5"; ": v" |]
    |> Array.map b

let private hexDigit (c: byte) =
    if c >= '0'B && c <= '9'B then int c - int '0'B
    elif c >= 'a'B && c <= 'f'B then int c - int 'a'B + 10
    elif c >= 'A'B && c <= 'F'B then int c - int 'A'B + 10
    else -1

let inline private pick (rng: Random) (xs: 'a[]) = xs[rng.Next xs.Length]

let private insertAt (a: byte[]) (i: int) (ins: byte[]) = Array.concat [ a[.. i - 1]; ins; a[i..] ]

let private replaceRange (a: byte[]) (start: int) (length: int) (ins: byte[]) =
    Array.concat [ a[.. start - 1]; ins; a[start + length ..] ]

/// Where each line starts and ends (its LF included); the last line may have no LF.
let private lines (a: byte[]) =
    let result = ResizeArray<struct (int * int)>()
    let mutable start = 0

    for i in 0 .. a.Length - 1 do
        if a[i] = 10uy then
            result.Add(struct (start, i + 1 - start))
            start <- i + 1

    if start < a.Length then
        result.Add(struct (start, a.Length - start))

    result

/// Where the head ends (after its empty line), or the input's length if it has none.
let headEnd (a: byte[]) =
    let i = a.AsSpan().IndexOf("\r\n\r\n"B)
    if i < 0 then a.Length else i + 4

let private lineOps (rng: Random) (a: byte[]) =
    let ls = lines a

    if ls.Count = 0 then
        a
    else
        let struct (s, n) = pick rng (ls.ToArray())

        match rng.Next 10 with
        | 0 -> insertAt a s a[s .. s + n - 1] // duplicate a line
        | 1 -> replaceRange a s n [||] // drop a line
        | 2 ->
            // swap with another line
            let struct (s2, n2) = pick rng (ls.ToArray())

            if s2 = s then
                a
            else
                let struct (first, firstLength), struct (second, secondLength) =
                    if s < s2 then struct (s, n), struct (s2, n2) else struct (s2, n2), struct (s, n)

                Array.concat
                    [ a[.. first - 1]
                      a[second .. second + secondLength - 1]
                      a[first + firstLength .. second - 1]
                      a[first .. first + firstLength - 1]
                      a[second + secondLength ..] ]
        | 3 -> insertAt a s (Array.append (pick rng headerLines) (b "\r\n")) // a header line
        | 4 ->
            // change the line's end
            let content = if n >= 2 && a[s + n - 2] = 13uy then n - 2 elif n >= 1 && a[s + n - 1] = 10uy then n - 1 else n
            replaceRange a (s + content) (n - content) (pick rng [| b "\n"; b "\r"; b "\r\r\n"; b "\n\r"; b "\r\n"; b ""; b "\r\n\r\n" |])
        | 5 -> insertAt a s (pick rng [| b " "; b "\t"; b "  "; b " \t" |]) // fold it onto the previous one
        | 6 ->
            // whitespace before the colon
            let colon = a.AsSpan(s, n).IndexOf(byte ':')
            if colon < 0 then a else insertAt a (s + colon) (pick rng [| b " "; b "\t" |])
        | 7 ->
            // flip the case of the line's letters
            let copy = Array.copy a
            for i in s .. s + n - 1 do
                let c = copy[i]
                if (c >= 'a'B && c <= 'z'B) || (c >= 'A'B && c <= 'Z'B) then copy[i] <- c ^^^ 0x20uy
            copy
        | 8 -> replaceRange a s n (Array.append (pick rng headerLines) (b "\r\n")) // replace the line
        | _ ->
            // move the line elsewhere
            let line = a[s .. s + n - 1]
            let rest = replaceRange a s n [||]
            let struct (t, _) = pick rng ((lines rest).ToArray() |> Array.append [| struct (rest.Length, 0) |])
            insertAt rest t line

/// Replaces one run of hex digits (a Content-Length, a chunk size, a version digit...) with
/// another number, or grows it.
let private numberOps (rng: Random) (a: byte[]) =
    let isHex (c: byte) = (c >= '0'B && c <= '9'B) || (c >= 'a'B && c <= 'f'B) || (c >= 'A'B && c <= 'F'B)
    let runs = ResizeArray<struct (int * int)>()
    let mutable i = 0

    while i < a.Length do
        if isHex a[i] then
            let start = i
            while i < a.Length && isHex a[i] do
                i <- i + 1
            runs.Add(struct (start, i - start))
        else
            i <- i + 1

    if runs.Count = 0 then
        a
    else
        let struct (s, n) = pick rng (runs.ToArray())

        match rng.Next 4 with
        | 0 -> insertAt a (s + n) (Array.init (1 + rng.Next 20) (fun _ -> pick rng (b "0123456789abcdef"))) // grow
        | 1 -> insertAt a s (Array.create (1 + rng.Next 20) '0'B) // leading zeros
        | _ -> replaceRange a s n (pick rng numbers)

/// Parses the body after the head loosely into chunks (size line, data with its CRLF), then
/// shuffles, duplicates, drops or resizes them, or gives them extensions and trailers.
let private chunkOps (rng: Random) (isBody: bool) (a: byte[]) =
    let start = if isBody then 0 else headEnd a

    let chunks = ResizeArray<byte[]>()
    let mutable pos = start
    let mutable go = true

    while go && pos < a.Length do
        let lf = a.AsSpan(pos).IndexOf(10uy)

        if lf < 0 then
            go <- false
        else
            let mutable size = 0
            let mutable j = pos

            while j < pos + lf && hexDigit a[j] >= 0 && size < 0x100000 do
                size <- size * 16 + hexDigit a[j]
                j <- j + 1

            let length = min (a.Length - pos) (lf + 1 + (if size > 0 then size + 2 else 0))
            chunks.Add a[pos .. pos + length - 1]
            pos <- pos + length

            if size = 0 then go <- false

    let rest = a[pos..]

    if chunks.Count = 0 then
        Array.append a (b "5\r\nhello\r\n0\r\n\r\n")
    else
        let k = rng.Next chunks.Count

        match rng.Next 7 with
        | 0 ->
            let j = rng.Next chunks.Count
            let t = chunks[k]
            chunks[k] <- chunks[j]
            chunks[j] <- t
        | 1 -> chunks.Insert(k, chunks[k])
        | 2 -> chunks.RemoveAt k
        | 3 ->
            // an extension after the size
            let c = chunks[k]
            let sizeEnd = max 0 (c.AsSpan().IndexOfAnyExcept("0123456789abcdefABCDEF"B))
            chunks[k] <- insertAt c sizeEnd (pick rng extensions)
        | 4 ->
            // a chunk whose size and data disagree
            let data = Array.init (rng.Next 20) (fun _ -> pick rng (b "xyz\r\n"))
            chunks.Insert(k, Array.concat [ b (sprintf "%x\r\n" (max 0 (data.Length + rng.Next 3 - 1))); data; b "\r\n" ])
        | 5 ->
            // trailer lines after the last chunk
            chunks.Add(Array.concat [ pick rng trailerLines; b "\r\n" ])
        | _ ->
            // a new chunk of random size with matching data
            let n = 1 + rng.Next 64
            chunks.Insert(k, Array.concat [ b (sprintf "%x\r\n" n); Array.create n 'd'B; b "\r\n" ])

        Array.concat [ a[.. start - 1]; Array.concat chunks; rest ]

/// Swaps the method, target or version of the request line.
let private requestLineOps (rng: Random) (a: byte[]) =
    let lf = a.AsSpan().IndexOf(10uy)
    let lineEnd = if lf < 0 then a.Length elif lf > 0 && a[lf - 1] = 13uy then lf - 1 else lf
    let sp1 = a.AsSpan(0, lineEnd).IndexOf(32uy)
    let sp2 = a.AsSpan(0, lineEnd).LastIndexOf(32uy)

    if sp1 < 0 then
        replaceRange a 0 lineEnd (pick rng methods)
    else
        match rng.Next 3 with
        | 0 -> replaceRange a 0 sp1 (pick rng methods)
        | 1 when sp2 > sp1 -> replaceRange a (sp1 + 1) (sp2 - sp1 - 1) (pick rng targets)
        | _ -> replaceRange a (sp2 + 1) (lineEnd - sp2 - 1) (pick rng versions)

/// One mutation of `a` (a whole message, or a chunked body alone when `isBody`); `other`
/// is another seed to splice with.
let mutateOnce (rng: Random) (isBody: bool) (other: byte[]) (a: byte[]) : byte[] =
    let at () = rng.Next(a.Length + 1)

    match rng.Next 20 with
    | 0 | 1 -> insertAt a (at ()) [| pick rng interestingBytes |]
    | 2 -> insertAt a (at ()) [| byte (rng.Next 256) |]
    | 3 when a.Length > 0 -> replaceRange a (rng.Next a.Length) 1 [||] // drop a byte
    | 4 when a.Length > 0 ->
        let i = rng.Next a.Length
        insertAt a i [| a[i] |] // duplicate a byte
    | 5 when a.Length > 0 ->
        let copy = Array.copy a
        copy[rng.Next a.Length] <- pick rng interestingBytes
        copy
    | 6 -> insertAt a (at ()) (pick rng fragments)
    | 7 when a.Length > 1 ->
        // drop or duplicate a short range
        let s = rng.Next a.Length
        let n = 1 + rng.Next(min 16 (a.Length - s))
        if rng.Next 2 = 0 then replaceRange a s n [||] else insertAt a s a[s .. s + n - 1]
    | 8 | 9 | 10 -> lineOps rng a
    | 11 | 12 -> numberOps rng a
    | 13 | 14 -> chunkOps rng isBody a
    | 15 -> requestLineOps rng a
    | 16 ->
        // splice: this message up to a line boundary, the other from one
        let mine = lines a
        let theirs = lines other
        let cut = if mine.Count = 0 then 0 else (let struct (s, _) = pick rng (mine.ToArray()) in s)
        let from = if theirs.Count = 0 then 0 else (let struct (s, _) = pick rng (theirs.ToArray()) in s)
        Array.append a[.. cut - 1] other[from..]
    | 17 ->
        // obs-text and controls sprinkled into a line
        let n = 1 + rng.Next 4
        let mutable r = a
        for _ in 1..n do
            r <- insertAt r (rng.Next(r.Length + 1)) [| pick rng [| 0x80uy; 0xffuy; 0xe9uy; 0xc3uy; 0uy; 1uy; 0x7fuy; 9uy |] |]
        r
    | 18 when a.Length > 0 && rng.Next 8 = 0 ->
        // a segment repeated many times: long lines, many headers, deep limits
        let s = rng.Next a.Length
        let n = 1 + rng.Next(min 24 (a.Length - s))
        let times = 1 + rng.Next 2500
        let seg = a[s .. s + n - 1]
        insertAt a s (Array.init (seg.Length * times) (fun i -> seg[i % seg.Length]))
    | _ -> insertAt a (at ()) (pick rng [| b "\r\n"; b "\n"; b "\r"; b " "; b "\t"; b "\x00" |])

/// One to eight stacked mutations (fewer more often).
let mutate (rng: Random) (isBody: bool) (other: byte[]) (a: byte[]) =
    let mutable r = mutateOnce rng isBody other a
    let mutable more = rng.Next 2 = 0
    let mutable n = 1

    while more && n < 8 do
        r <- mutateOnce rng isBody other r
        n <- n + 1
        more <- rng.Next 2 = 0

    r
