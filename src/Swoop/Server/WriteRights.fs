/// Who may write to a connection: the one place that decides it. Every byte the server sends
/// on a connection leaves while one writer holds its flight (Enter ... Leave); the current
/// request's answer is owned by the handler or by the server, decided once (Claim); and after
/// the server's own last answer (a timeout's 408 or 503) nobody sends again. Each of these
/// facts changes with one compare-and-swap. This holds no socket and sends nothing itself:
/// the transport (Transport.fs) sends, and gives the server's last answer when told to (see
/// ILastAnswer). One per connection object, reused for every socket it serves (see Renew).
namespace Swoop

open System
open System.Threading
open System.Threading.Tasks

/// Who sends on a connection (see WriteRights.Enter).
type internal Writer =
    /// The connection loop: answers of requests whose handlers ended, parse errors.
    | Connection = 1
    /// The running handler: its response (it claims it), a file, the upgraded stream.
    | Handler = 2
    /// The server on the handler's behalf before its response: 100 Continue, answers
    /// queued before a body read waits.
    | Interim = 3
    /// The server's own last answer (a timeout's 408 or 503).
    | Server = 4

/// What sends the server's last answer (the transport): appends `answer` to the output,
/// sends it all, half-closes (closes on failure), then calls LastAnswerSent. Called holding a
/// Server flight, which stays taken: nothing may follow the last answer.
[<AllowNullLiteral>]
type internal ILastAnswer =
    abstract SendLastAnswer: answer: byte[] -> unit

// Three facts, each changed with one compare-and-swap, decide every byte that leaves:
// - Claim: who owns the current request's response (nobody yet, the handler, or the
//   server, which answers it itself after a timeout). Decided once per request.
// - flight: who is sending now (a Writer); one at a time. A Handler or Interim writer that
//   finds the connection loop sending earlier answers waits for it; any other overlap is
//   refused with an exception that names it.
// - final: the server gave the connection its last answer (a timeout's 408 or 503): no
//   other writer may send after it.
// Output bytes are appended only by the flight's holder, or by the response's owner on
// its own path while no flight runs (the loop's Complete, after its handler ended).
[<Sealed; AllowNullLiteral>]
type internal WriteRights() =
    let mutable flight = 0
    let mutable final = 0
    let mutable serverAnswer: byte[] = null
    let mutable serverStatus = 0
    let mutable serverDone = TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously)
    let mutable flightWaiter: TaskCompletionSource = null
    // The transport, which sends the server's last answer (see Renew).
    let mutable lastAnswer: ILastAnswer = null

    /// The server's fixed fields for its own answers (see FixedFields; null: none).
    member val FixedLines: byte[] = null with get, set

    /// A new socket: nobody sends, no last answer given; `sender` sends the server's last
    /// answer on it.
    member _.Renew(sender: ILastAnswer) =
        lastAnswer <- sender
        flight <- 0
        final <- 0
        serverAnswer <- null
        flightWaiter <- null
        serverStatus <- 0

    // ---- the flight: who is sending now ----

    /// Who is sending now (a Writer), 0 when nobody is.
    member _.InFlight = Volatile.Read(&flight)

    /// Takes the right to send for `writer`: true when taken now (send, then Leave); false
    /// when the connection loop is sending earlier answers (then WaitToEnterAsync); raises
    /// when the writer may not send at all, naming why.
    member r.Enter(writer: Writer) : bool =
        if Volatile.Read(&final) <> 0 then
            raise (OperationCanceledException WriteRights.AfterLast)

        if writer = Writer.Handler && not (r.ClaimForHandler()) then
            raise (OperationCanceledException "the request ran past RequestTimeout and was answered 503: this response can no longer be sent")

        let holder = Interlocked.CompareExchange(&flight, int writer, 0)

        if holder = 0 then
            // A last answer decided meanwhile waits for this flight: nothing may go before it.
            if Volatile.Read(&final) <> 0 then
                r.Leave()
                raise (OperationCanceledException WriteRights.AfterLast)

            true
        elif holder = int Writer.Connection && writer <> Writer.Connection then
            false
        else
            raise (WriteRights.Overlap(writer, enum<Writer> holder))

    static member private AfterLast: string =
        "the server already gave this connection its last answer (a timeout): nothing more can be sent on it"

    static member private Overlap(writer: Writer, holder: Writer) : exn =
        match holder with
        | Writer.Server -> OperationCanceledException "the server is sending its own last answer on this connection (a timeout)"
        | Writer.Handler when writer = Writer.Handler ->
            InvalidOperationException "a FlushAsync, SendFileAsync or upgraded-stream write was started while the previous flush was still sending: await each before the next"
        | Writer.Handler ->
            InvalidOperationException "the handler's FlushAsync, SendFileAsync or upgraded-stream write was still sending when the server had to send (it returned, or read its body, without awaiting it)"
        | Writer.Interim ->
            InvalidOperationException "a send was started while a body read was still sending (100 Continue, or earlier answers): await the read first"
        | _ -> InvalidOperationException("a " + string writer + " send overlapped a " + string holder + " send on one connection")

    /// Takes the right to send for `writer` whatever the claim and the last answer say (an
    /// upgraded connection's write, whose response is the handler's already: the transport
    /// checks its socket instead, see Transport.EnterUpgraded); raises if a write still sends.
    member _.EnterAlone(writer: Writer) =
        let holder = Interlocked.CompareExchange(&flight, int writer, 0)

        if holder <> 0 then
            raise (WriteRights.Overlap(writer, enum<Writer> holder))

    /// Takes the right to send for `writer` only if nobody sends now and no last answer was
    /// given (TLS's close_notify at the end); never waits, never raises.
    member _.TryEnter(writer: Writer) : bool =
        Volatile.Read(&final) = 0 && Interlocked.CompareExchange(&flight, int writer, 0) = 0

    /// Completes when the running flight ends (at once if none runs).
    member private _.FlightEnded() : Task =
        let woken = TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously)
        let prior = Interlocked.Exchange(&flightWaiter, woken)
        if not (isNull prior) then prior.TrySetResult() |> ignore

        // Published before looking: a Leave after this look completes it; one before, we see.
        if Volatile.Read(&flight) = 0 then
            woken.TrySetResult() |> ignore

        woken.Task

    /// Waits for the connection loop's flight to end, then takes the right to send (as Enter).
    member r.WaitToEnterAsync(writer: Writer) : Task =
        task {
            do! r.FlightEnded()

            while not (r.Enter writer) do
                do! r.FlightEnded()
        }

    /// Gives up the right to send; a last answer the server queued meanwhile goes now.
    member r.Leave() =
        // A full fence, then a plain look: a waiter publishes itself, then looks at the flight
        // (see FlightEnded), so one of the two sees the other.
        Interlocked.Exchange(&flight, 0) |> ignore

        if not (isNull (Volatile.Read(&flightWaiter))) then
            let waiter = Interlocked.Exchange(&flightWaiter, null)
            if not (isNull waiter) then waiter.TrySetResult() |> ignore

        if not (isNull (Volatile.Read(&serverAnswer))) then r.RunServerAnswer()

    /// Leaves once `sending` ends (however it ends).
    member r.LeaveAfter(sending: ValueTask) : ValueTask =
        if sending.IsCompleted then
            r.Leave()
            sending
        else
            ValueTask(r.LeaveAfterAsync sending)

    member private r.LeaveAfterAsync(sending: ValueTask) : Task =
        task {
            try
                do! sending
            finally
                r.Leave()
        }

    // ---- the claim: who answers the current request ----

    /// The current request's number on this connection and who owns its response, in one
    /// value changed with Interlocked: number * 4 + owner (0: nobody yet; 1: the handler, which
    /// started streaming or finished; 2: the server, which answers it itself). One value, so
    /// that a late look at one request can never claim the next one's response.
    [<DefaultValue>]
    val mutable Claim: int64

    /// When the running handler's request times out, on the heartbeat's clock (0: not timed).
    [<DefaultValue>]
    val mutable RequestDeadline: int64

    /// The current request's number on this connection.
    member r.RequestNumber = Volatile.Read(&r.Claim) >>> 2

    /// A new request: the next number; nobody owns its response; not timed.
    member r.NextRequest() =
        r.RequestDeadline <- 0L
        Volatile.Write(&r.Claim, (r.RequestNumber + 1L) <<< 2)

    /// The handler takes the response (its first send, or its end): false if the server took it first.
    member r.ClaimForHandler() : bool =
        let c = Volatile.Read(&r.Claim)

        match c &&& 3L with
        | 0L -> Interlocked.CompareExchange(&r.Claim, c + 1L, c) = c || Volatile.Read(&r.Claim) &&& 3L = 1L
        | 1L -> true
        | _ -> false

    /// Whether the server answered the current request itself.
    member r.AnsweredByServer = Volatile.Read(&r.Claim) &&& 3L = 2L

    /// The status of the server's last answer on this connection (0: none).
    member _.ServerStatus = serverStatus

    /// At the connection's end: no writer may start a flight any more, until the next Renew
    /// (see Transport.Retire).
    member _.Retire() = Interlocked.Exchange(&final, 1) |> ignore

    /// From the heartbeat: the server takes request `claim`'s response (as read, owner 0) and
    /// answers it `status` after the answers queued before it, then half-closes. False if the
    /// handler owns the response, or the request is another one by now.
    member r.AnswerRequest(claim: int64, status: int) : bool =
        lock r (fun () ->
            if claim &&& 3L = 0L && Interlocked.CompareExchange(&r.Claim, claim + 2L, claim) = claim then
                r.AnswerLast status
                true
            else
                false)

    /// As AnswerRequest, for the current request (a body that timed out).
    member r.AnswerCurrentRequest(status: int) : bool = r.AnswerRequest(Volatile.Read(&r.Claim), status)

    /// From the loop, once its handler ended: null if the handler owns the response (claimed
    /// now), else the server's answer, to await before lingering.
    member r.FinishHandler() : Task =
        lock r (fun () -> if r.ClaimForHandler() then null else serverDone.Task)

    /// The server's last answer on this connection (also a head timeout's 408, where no
    /// handler runs): after whatever flight is running, then a half-close; nothing after it.
    member r.AnswerLast(status: int) =
        lock r (fun () ->
            if Volatile.Read(&final) = 0 then
                serverDone <- TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously)
                serverStatus <- status
                Volatile.Write(&serverAnswer, Response.errorAnswer status r.FixedLines)
                Interlocked.Exchange(&final, 1) |> ignore)

        r.RunServerAnswer()

    /// Sends the queued last answer if no flight runs (else that flight's Leave does).
    member private _.RunServerAnswer() =
        let mutable go = true

        while go && not (isNull (Volatile.Read(&serverAnswer))) do
            if Interlocked.CompareExchange(&flight, int Writer.Server, 0) = 0 then
                let answer = Interlocked.Exchange(&serverAnswer, null)

                if isNull answer then
                    Interlocked.Exchange(&flight, 0) |> ignore
                else
                    go <- false
                    lastAnswer.SendLastAnswer answer
            else
                go <- false

    /// The server's last answer went (or failed): QuietAsync and FinishHandler's waits end.
    /// The flight stays the server's: nothing may follow the last answer.
    member _.LastAnswerSent() = serverDone.TrySetResult() |> ignore

    /// After the socket's close: completes once no flight runs (a send waiting on the socket
    /// fails at the close), so that nothing of this socket's can touch the buffers or the next
    /// socket.
    member r.QuietAsync() : Task =
        let holder = Volatile.Read(&flight)

        if holder = 0 then Task.CompletedTask
        elif holder = int Writer.Server then serverDone.Task
        else r.QuietSlowAsync()

    member private r.QuietSlowAsync() : Task =
        task {
            while Volatile.Read(&flight) <> 0 && Volatile.Read(&flight) <> int Writer.Server do
                do! r.FlightEnded()

            if Volatile.Read(&flight) = int Writer.Server then
                do! serverDone.Task
        }
