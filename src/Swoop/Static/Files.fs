namespace Swoop.Web

open System
open System.Threading.Tasks
open Swoop

[<RequireQualifiedAccess>]
module Files =
    let private refuse (ctx: HttpContext) (status: int) =
        Problem.write ctx status null (if status = 400 then "this path is not allowed" else "not found") []
        Results.handled

    let handler (options: StaticFileOptions) (root: string) : HttpHandler =
        let files = StaticFiles(options, root)
        let cache = files.Cache

        let miss (ctx: HttpContext) (key: string) : Task<bool> =
            task {
                // On the thread pool: opening a file may wait (a slow disk, a network file
                // system), and the event loop must not. Once per file, not per request.
                let! struct (entry, status) = Task.Run<struct (FileEntry * int)>(fun () -> files.Find key)

                if isNull entry then
                    if status = 0 then return false else return! refuse ctx status
                elif cache.Add(key, entry) then
                    return!
                        if entry.Kind = EntryKind.Folder then FileAnswer.redirect ctx
                        else FileAnswer.file ctx entry
                else
                    // No room to keep it: used for this request only.
                    try
                        if entry.Kind = EntryKind.Folder then
                            return! FileAnswer.redirect ctx
                        else
                            return! FileAnswer.file ctx entry
                    finally
                        cache.Unreserve entry.MemoryBytes
                        entry.Dispose()
            }

        fun _ ctx ->
            let state = RequestState.Of ctx

            if not state.PathValid then
                refuse ctx 400
            else
                let rest = state.Rest

                if rest.IsEmpty then
                    // The prefix itself ("/static"): its folder, with the slash.
                    FileAnswer.redirect ctx
                elif rest[0] <> '/' then
                    // Not under the prefix's folder ("/staticfoo" after "/static").
                    Results.skip
                else
                    let entry = cache.Find rest

                    if not (isNull entry) then
                        if entry.Kind = EntryKind.Folder then FileAnswer.redirect ctx else FileAnswer.file ctx entry
                    else
                        match SafePath.check rest options.AllowDotfiles with
                        | PathVerdict.Bad -> refuse ctx 400
                        | PathVerdict.Hidden -> refuse ctx 404
                        | _ -> miss ctx (String rest)

    let serve (options: StaticFileOptions) (prefix: string) (root: string) : HttpHandler =
        let files = handler options root
        let trimmed = prefix.TrimEnd '/'
        if trimmed = "" then GET >=> files else subRoute trimmed (GET >=> files)
