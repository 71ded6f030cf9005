/// Swoop's verdict on one request in llhttp's shape, and where two verdicts differ.
module internal Swoop.Fuzz.Verdicts

open System
open System.Text
open Swoop
open Swoop.Fuzz.Llhttp

let private latin1 (input: byte[]) start length = Encoding.Latin1.GetString(input, start, length)

/// Parses `input` as Swoop's connection would: the head, then its body (Content-Length
/// bytes, or chunked through the decoder with the server's limits).
type SwoopSide() =
    let head = RequestHead(Checks.limits.MaxHeaderCount)
    let decoder = ChunkedDecoder(4096, 32768, 100, 16384)
    let output = Array.zeroCreate<byte> 65536
    let sink = Checks.Sink()

    member _.Verdict(input: byte[]) : Verdict =
        head.Reset()
        let v = Verdict()

        match Parser.parse (ReadOnlySpan input) Checks.limits head with
        | Parser.ParseResult.Error ->
            v.K <- "reject"
            v.E <- string head.ErrorStatus
        | Parser.ParseResult.Done ->
            v.K <- "accept"
            v.M <- latin1 input head.MethodStart head.MethodLength
            v.U <- latin1 input head.TargetStart head.TargetLength
            v.V <- (if head.Version = HttpVersion.Http11 then "1.1" else "1.0")

            v.H <-
                [| for i in 0 .. head.HeaderCount - 1 do
                       let h = head.Headers[i]
                       latin1 input h.NameStart h.NameLength
                       latin1 input h.ValueStart h.ValueLength |]

            v.Ka <- head.KeepAlive
            let rest = input.Length - head.HeadLength

            match head.Body with
            | BodyKind.Sized when int64 rest < head.ContentLength -> v.B <- "incomplete"
            | BodyKind.Sized ->
                v.B <- "done"
                v.D <- latin1 input head.HeadLength (int head.ContentLength)
            | BodyKind.Chunked ->
                let ends = [| input.Length |]
                let o = Checks.decodeChunked decoder input head.HeadLength (ReadOnlySpan ends) output output.Length sink

                match o.Result with
                | ChunkedResult.Done ->
                    v.B <- "done"
                    v.D <- Encoding.Latin1.GetString sink.Data

                    v.T <-
                        [| for t in decoder.Trailers do
                               latin1 decoder.TrailerBytes t.NameStart t.NameLength
                               latin1 decoder.TrailerBytes t.ValueStart t.ValueLength |]
                | ChunkedResult.Error ->
                    v.B <- "error"
                    v.E <- string o.Status
                | _ -> v.B <- "incomplete"
            | _ -> v.B <- "done"
        | _ -> ()

        v

/// The fields on which two verdicts differ ("kind", "method", "target", "version", "headers",
/// "keep-alive", "body", "data", "trailers"); empty when they agree. Two refusals agree
/// whatever their reasons; an upgrade's body is not compared (llhttp stops at its head).
let differences (swoop: Verdict) (llhttp: Verdict) : string list =
    if swoop.K <> llhttp.K then
        [ "kind" ]
    elif swoop.K <> "accept" then
        []
    else
        [ if swoop.M <> llhttp.M then "method"
          if swoop.U <> llhttp.U then "target"
          if swoop.V <> llhttp.V then "version"
          if swoop.H <> llhttp.H then "headers"
          if swoop.Ka <> llhttp.Ka then "keep-alive"
          if not llhttp.Up then
              if swoop.B <> llhttp.B then "body"
              elif swoop.B = "done" && swoop.D <> llhttp.D then "data"
              elif swoop.B = "done" && swoop.T <> llhttp.T then "trailers" ]

/// A verdict in one line, for reports.
let show (v: Verdict) =
    let esc (s: string) = if isNull s then "-" else Seeds.describe (Encoding.Latin1.GetBytes s)

    match v.K with
    | "accept" ->
        let headers = String.Join(" | ", [ for i in 0..2 .. v.H.Length - 2 -> esc v.H[i] + ": " + esc v.H[i + 1] ])

        let body =
            match v.B with
            | "done" -> sprintf "body done (%d bytes%s)" v.D.Length (if v.T.Length > 0 then sprintf ", %d trailers" (v.T.Length / 2) else "")
            | "error" -> sprintf "body error %s%s" v.E (if isNull v.R then "" else sprintf " (%s)" v.R)
            | b -> sprintf "body %s" b

        sprintf "accept %s %s HTTP/%s [%s] keep-alive=%b%s, %s" (esc v.M) (esc v.U) v.V headers v.Ka (if v.Up then " upgrade" else "") body
    | "reject" -> sprintf "reject %s%s" v.E (if isNull v.R then "" else sprintf " (%s, at byte %d)" v.R v.At)
    | k -> k
