/// The state an ILogger receives for one Swoop event: its fields as key/value pairs, with the
/// message template as "{OriginalFormat}" last, as LoggerMessage's own states do, so that
/// structured providers (Serilog, OpenTelemetry) keep the template and every field.
namespace Swoop.Logging

open System.Collections
open System.Collections.Generic
open Swoop

[<Sealed>]
type internal LogState(e: LogEvent) =
    member _.Event = e

    override _.ToString() = e.Message

    interface IReadOnlyList<KeyValuePair<string, obj>> with
        member _.Count = e.Fields.Length + 1

        member _.Item
            with get (index: int) =
                if index < e.Fields.Length then e.Fields[index]
                elif index = e.Fields.Length then KeyValuePair("{OriginalFormat}", box e.Template)
                else raise (System.ArgumentOutOfRangeException "index")

        member this.GetEnumerator() : IEnumerator<KeyValuePair<string, obj>> =
            let list = this :> IReadOnlyList<KeyValuePair<string, obj>>
            (Seq.init list.Count (fun i -> list[i])).GetEnumerator()

        member this.GetEnumerator() : IEnumerator =
            ((this :> IEnumerable<KeyValuePair<string, obj>>).GetEnumerator()) :> IEnumerator
