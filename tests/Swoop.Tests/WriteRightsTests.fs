/// Who may write, on its own (no socket): one flight at a time, a writer that finds the
/// connection loop sending waits for it, an overlap is refused by name, the claim of a
/// request's answer is decided once, and the server's last answer waits for the running flight
/// and ends every other. The same rules on the wire: TransportTests.
module Swoop.Tests.WriteRightsTests

open System
open System.Threading.Tasks
open Xunit
open Swoop

/// Records the last answers the rights ask for (the transport's part), and says when each went.
type private Recorder() =
    member val Answers = ResizeArray<byte[]>()

    interface ILastAnswer with
        member this.SendLastAnswer(answer: byte[]) = this.Answers.Add answer

let private fresh () =
    let recorder = Recorder()
    let rights = WriteRights()
    rights.Renew recorder
    rights.NextRequest()
    rights, recorder

[<Fact>]
let ``a handler that finds the connection loop sending waits for it, then sends`` () =
    task {
        let rights, _ = fresh ()
        Assert.True(rights.Enter Writer.Connection)
        Assert.False(rights.Enter Writer.Handler)
        let waiting = rights.WaitToEnterAsync Writer.Handler
        Assert.False(waiting.IsCompleted)
        rights.Leave()
        do! waiting.WaitAsync(TimeSpan.FromSeconds 10.0)
        Assert.Equal(int Writer.Handler, rights.InFlight)
        rights.Leave()
        Assert.Equal(0, rights.InFlight)
    }

[<Fact>]
let ``a second handler send while the first still sends is refused by name`` () =
    let rights, _ = fresh ()
    Assert.True(rights.Enter Writer.Handler)
    let e = Assert.Throws<InvalidOperationException>(fun () -> rights.Enter Writer.Handler |> ignore)
    Assert.Contains("await each before the next", e.Message)
    // The connection loop after a handler that did not await its flush: refused too.
    let e = Assert.Throws<InvalidOperationException>(fun () -> rights.Enter Writer.Connection |> ignore)
    Assert.Contains("without awaiting it", e.Message)

[<Fact>]
let ``the server's answer waits for the running flight, then nothing else may send`` () =
    task {
        let rights, recorder = fresh ()
        Assert.True(rights.Enter Writer.Connection)
        Assert.True(rights.AnswerCurrentRequest 503)
        // Queued behind the flight: not sent yet.
        Assert.Empty recorder.Answers
        rights.Leave()
        Assert.Single recorder.Answers |> ignore
        Assert.Equal(int Writer.Server, rights.InFlight)
        Assert.Equal(503, rights.ServerStatus)
        Assert.True(rights.AnsweredByServer)
        Assert.Throws<OperationCanceledException>(fun () -> rights.Enter Writer.Connection |> ignore) |> ignore
        Assert.False(rights.TryEnter Writer.Connection)
        let quiet = rights.QuietAsync()
        Assert.False(quiet.IsCompleted)
        rights.LastAnswerSent()
        do! quiet.WaitAsync(TimeSpan.FromSeconds 10.0)
    }

[<Fact>]
let ``the claim is decided once: the handler's first send or the server's answer`` () =
    let rights, recorder = fresh ()
    let claim = rights.Claim
    Assert.True(rights.ClaimForHandler())
    Assert.True(rights.ClaimForHandler())
    Assert.False(rights.AnswerRequest(claim, 503))
    Assert.Empty recorder.Answers

    let rights, recorder = fresh ()
    Assert.True(rights.AnswerCurrentRequest 408)
    Assert.False(rights.ClaimForHandler())
    Assert.Throws<OperationCanceledException>(fun () -> rights.Enter Writer.Handler |> ignore) |> ignore
    Assert.Single recorder.Answers |> ignore

[<Fact>]
let ``a late look at one request never answers the next`` () =
    let rights, recorder = fresh ()
    let stale = rights.Claim
    rights.NextRequest()
    Assert.Equal((stale >>> 2) + 1L, rights.RequestNumber)
    Assert.False(rights.AnswerRequest(stale, 503))
    Assert.Empty recorder.Answers
    Assert.False(rights.AnsweredByServer)

[<Fact>]
let ``a retired connection takes no flight until it serves a new socket`` () =
    let rights, recorder = fresh ()
    rights.Retire()
    Assert.Throws<OperationCanceledException>(fun () -> rights.Enter Writer.Connection |> ignore) |> ignore
    Assert.False(rights.TryEnter Writer.Connection)
    rights.Renew recorder
    Assert.True(rights.Enter Writer.Connection)
    rights.Leave()
