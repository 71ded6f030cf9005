/// The one exception that says the client left: raised under a read or a send, and let
/// through to the connection, which closes quietly.
namespace Swoop

open System

/// Raised when the connection's own socket fails under a read or a send: the client reset or
/// closed it, or stopped reading until a timeout cut it. Nothing can be answered any more; the
/// server closes the connection quietly (it is not the handler's failure, and is not logged).
type ClientDisconnectedException(message: string, inner: exn) =
    inherit IO.IOException(message, inner)

    /// Whether a failure is, or wraps, such an exception.
    static member IsIn(e: exn) : bool =
        match e with
        | null -> false
        | :? ClientDisconnectedException -> true
        | :? AggregateException as a -> a.InnerExceptions |> Seq.exists ClientDisconnectedException.IsIn
        | e -> ClientDisconnectedException.IsIn e.InnerException
