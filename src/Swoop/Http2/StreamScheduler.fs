/// Fair output between the streams of one HTTP/2 connection. A stream with response bytes to
/// send (and window for them) waits in a ready queue; the connection's writer takes a slice of
/// at most one quantum from the stream at the head, puts the stream back at the tail if it has
/// more, and goes on round the queue until its batch for the socket is full. No response fills
/// the socket ahead of the others: a small answer among large downloads waits for one batch,
/// not for every byte queued before it.
namespace Swoop.Http2

open System.Collections.Generic
open Swoop

/// A stream's side of the scheduler (Http2Stream), called under the writer's Gate.
[<AllowNullLiteral>]
type internal IStreamSender =
    /// Whether the stream waits in the ready queue now.
    abstract Queued: bool with get, set
    /// Writes the stream's next slice (at most `most` octets of DATA, as its window and the
    /// connection's allow; its END_STREAM or trailers once its bytes are out). True when it has
    /// more to send and window for it (it goes back to the tail).
    abstract SendSlice: most: int -> bool

[<Sealed>]
type internal StreamScheduler() =
    let ready = Queue<IStreamSender>()

    /// What one stream may send in its turn: one frame at the protocol's default size.
    static member Quantum = 16384

    /// A stream has something to send: it joins the tail, unless it waits already. Under Gate.
    member _.Ready(sender: IStreamSender) =
        if not sender.Queued then
            sender.Queued <- true
            ready.Enqueue sender

    /// Streams waiting.
    member _.Count = ready.Count

    /// Takes slices round the queue into `output` until it holds `batch` octets or a whole pass
    /// wrote nothing (every stream waits on the connection's window). Under Gate.
    member _.Fill(output: BufferChain, batch: int64) =
        let mutable go = true

        while go && ready.Count > 0 && output.Length < batch do
            let before = output.Length
            let mutable turns = ready.Count

            while turns > 0 && output.Length < batch do
                turns <- turns - 1
                let sender = ready.Dequeue()

                if sender.SendSlice StreamScheduler.Quantum then
                    ready.Enqueue sender
                else
                    sender.Queued <- false

            if output.Length = before then go <- false

    /// Forgets every stream (the connection closed).
    member _.Clear() =
        for sender in ready do
            sender.Queued <- false

        ready.Clear()
