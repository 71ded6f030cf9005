/// The request line's method and path, copied when a request begins into an array of the
/// context's own (no allocation): the heartbeat's reports (a blocking handler, a request
/// timeout) read it from another thread, where the input buffer may already be back in the
/// pool or another request's.
namespace Swoop

open System
open System.Text
open System.Threading

[<Sealed>]
type internal RequestLineCopy() =
    // Grows (never shrinks) up to 256 bytes as longer request lines come: most are short, and
    // an idle HTTP/2 stream's context holds it.
    let mutable logLine: byte[] = Array.zeroCreate 32
    let mutable logLineLength = 0
    let mutable logLineCut = false

    /// The copy as text, "..." after a path cut short ("unknown request" before the first).
    member _.Text: string =
        let length = Volatile.Read(&logLineLength)

        if length <= 0 then "unknown request"
        else Encoding.Latin1.GetString(Volatile.Read(&logLine), 0, length) + (if logLineCut then "..." else "")

    /// Copies the method (16 bytes at most) and the path of `head`, whose bytes are in `array`
    /// from `offset`.
    member _.Take(head: RequestHead, array: byte[], offset: int) =
        let methodLength = min head.MethodLength 16
        Volatile.Write(&logLineLength, 0)
        let needed = methodLength + 1 + head.PathLength

        // A reader on another thread sees an array at least as long as the length it read.
        if needed > logLine.Length && logLine.Length < 256 then
            logLine <- Array.zeroCreate (min 256 (max needed (logLine.Length * 2)))

        let pathLength = min head.PathLength (logLine.Length - methodLength - 1)
        ReadOnlySpan<byte>(array, offset + head.MethodStart, methodLength).CopyTo(Span<byte>(logLine, 0, methodLength))
        logLine[methodLength] <- 32uy
        ReadOnlySpan<byte>(array, offset + head.PathStart, pathLength).CopyTo(Span<byte>(logLine, methodLength + 1, pathLength))
        logLineCut <- pathLength < head.PathLength
        Volatile.Write(&logLineLength, methodLength + 1 + pathLength)
