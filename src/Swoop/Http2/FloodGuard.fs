/// What a client may make an HTTP/2 connection do for nothing, counted per second: frames of
/// no worth (PING, SETTINGS, PRIORITY, empty DATA or CONTINUATION, tiny WINDOW_UPDATEs) and
/// streams reset while their handlers run (Rapid Reset, CVE-2023-44487). Past a bound the
/// connection ends with GOAWAY ENHANCE_YOUR_CALM (docs/reliability.md, "HTTP/2 bounds").
namespace Swoop.Http2

open Swoop

[<Sealed>]
type internal FloodGuard(output: Http2Output) =
    let mutable second = 0L
    let mutable controlFrames = 0
    let mutable resets = 0

    let calm (why: string) : unit =
        raise (Http2ConnectionException(Http2ErrorCode.EnhanceYourCalm, why))

    /// A new second starts both counts afresh.
    let tick () =
        let now = Heartbeat.NowMs / 1000L

        if now <> second then
            second <- now
            controlFrames <- 0
            resets <- 0

    /// One frame of no worth (from the read loop).
    member _.Control() =
        tick ()
        controlFrames <- controlFrames + 1

        if controlFrames > Http2Limits.ControlFramesPerSecond then
            calm "too many control frames"

        // Answers the client does not read pile up: a flood of PINGs by a client that never reads.
        if output.AnswersQueued > 65536 then
            calm "the client does not read the answers to its control frames"

    /// One stream reset (or refused) while work was done for it.
    member _.Reset() =
        tick ()
        resets <- resets + 1

        if resets > Http2Limits.ResetsPerSecond then
            calm "too many streams reset"
