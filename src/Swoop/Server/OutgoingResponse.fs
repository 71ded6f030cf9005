/// The response as a handler builds it, whatever protocol carries it: the status and fields
/// (ResponseHead), the body written and not yet handed to the protocol, whether the head went
/// out, and how many body bytes did. The context changes it; an exchange (HTTP/1.1's, an
/// HTTP/2 stream's) frames and sends it.
namespace Swoop

[<Sealed>]
type internal OutgoingResponse(pool: BufferPool) =
    member val Head = ResponseHead()
    /// Body bytes written and not yet moved to the output.
    member val Body = BufferChain(pool)
    /// The head was sent (a flush, a file, a switch of protocols).
    member val Started = false with get, set
    /// Body bytes moved to the output after the head was streamed (to hold a handler to its
    /// Content-Length).
    member val Streamed = 0L with get, set
    /// The request was HEAD: the head says what a GET would get, no body goes.
    member val IsHead = false with get, set
    /// The handler ended and the rest of the response went to the protocol.
    member val Finished = false with get, set
    /// Trailer fields to send after the body (null: none; made on the first).
    member val Trailers: ResizeArray<struct (string * string)> = null with get, set

    member this.HasTrailers = not (isNull this.Trailers) && this.Trailers.Count > 0

    /// Adds a trailer field (checked by Response.checkTrailer).
    member this.AddTrailer(name: string, value: string) =
        Response.checkTrailer name value
        this.PutTrailer(name, value)

    /// AddTrailer, the field already checked (a library's constant name and a value it made).
    member this.PutTrailer(name: string, value: string) =
        if isNull this.Trailers then this.Trailers <- ResizeArray<struct (string * string)>(2)
        this.Trailers.Add(struct (name, value))

    /// Whether a body goes with this response (not HEAD, not 1xx/204/304).
    member this.SendsBody = not this.IsHead && Response.statusHasBody this.Head.Status

    /// The Content-Length a complete, not streamed response gets (-1: none).
    member this.FinalLength =
        let status = this.Head.Status
        let explicitLength = this.Head.ExplicitLength

        if status < 200 || status = 204 then -1L
        elif status = 304 then explicitLength
        elif this.IsHead && explicitLength >= 0L then explicitLength
        else this.Body.Length

    /// The length a streamed head announces (-1: unknown; the protocol frames the body itself).
    member this.StreamedLength =
        if not this.SendsBody then
            // HEAD (or 204/304) streamed: the length is unknown unless the handler set it.
            if this.IsHead && Response.statusHasBody this.Head.Status then this.Head.ExplicitLength
            else this.FinalLength
        else
            this.Head.ExplicitLength

    /// Counts the body written so far as streamed, raising if it goes past the handler's own
    /// Content-Length; the caller then moves `Body` to the output (when `SendsBody`).
    member this.CountStreamed() =
        let explicitLength = this.Head.ExplicitLength

        if explicitLength >= 0L && this.Streamed + this.Body.Length > explicitLength then
            invalidOp (
                "the handler wrote " + string (this.Streamed + this.Body.Length) + " bytes, more than the Content-Length it set (" + string explicitLength + ")"
            )

        this.Streamed <- this.Streamed + this.Body.Length

    /// A streamed body that kept its own Content-Length (or had none to keep).
    member this.LengthKept =
        not this.Started || not this.SendsBody || this.Head.ExplicitLength < 0L || this.Streamed = this.Head.ExplicitLength

    /// For a new request.
    member this.Clear(isHead: bool) =
        this.Head.Clear()
        this.Head.CloseRequested <- false
        this.Body.Release()
        this.Started <- false
        this.Streamed <- 0L
        this.IsHead <- isHead
        this.Finished <- false
        if not (isNull this.Trailers) then this.Trailers.Clear()
