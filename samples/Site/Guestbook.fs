/// The guestbook: what the form posts, its validation, and an in-memory store of entries.
module Site.Guestbook

open System

/// What the form posts (application/x-www-form-urlencoded), bound by `bindForm`.
type NewEntry = { Name: string; Message: string }

/// A signed entry, as the pages show it and `/api/entries` answers it.
type Entry = { Name: string; Message: string; Posted: DateTimeOffset }

let maxName = 40
let maxMessage = 280

/// The entry trimmed, or the problems by field name: the form shows each beside its field.
let check (form: NewEntry) : Result<NewEntry, (string * string) list> =
    let name = (form.Name |> Option.ofObj |> Option.defaultValue "").Trim()
    let message = (form.Message |> Option.ofObj |> Option.defaultValue "").Trim()

    [ if name = "" then "name", "Please tell us your name."
      elif name.Length > maxName then "name", sprintf "A name has at most %d characters." maxName
      if message = "" then "message", "Please write a message."
      elif message.Length > maxMessage then "message", sprintf "A message has at most %d characters." maxMessage ]
    |> function
        | [] -> Ok { Name = name; Message = message }
        | errors -> Error errors

/// The latest entries, newest first, safe for concurrent requests (the last 100 are kept).
type Store() =
    let entries = ResizeArray<Entry>()

    member _.Add(entry: NewEntry) =
        lock entries (fun () ->
            entries.Insert(0, { Name = entry.Name; Message = entry.Message; Posted = DateTimeOffset.UtcNow })
            if entries.Count > 100 then entries.RemoveAt 100)

    /// At most `count` entries, newest first.
    member _.Latest(count: int) : Entry list =
        lock entries (fun () -> entries |> Seq.truncate count |> List.ofSeq)
