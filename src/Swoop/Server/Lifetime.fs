/// Where a server is in its life, for readiness checks and for the connections: serving,
/// or draining (shutdown has begun: unready, still serving, each response closing its
/// connection, until the drain delay has passed and the listener closes).
namespace Swoop

[<Sealed; AllowNullLiteral>]
type internal Lifetime() =
    [<VolatileField>]
    let mutable draining = false

    /// Shutdown has begun.
    member _.Draining
        with get () = draining
        and set (v: bool) = draining <- v
