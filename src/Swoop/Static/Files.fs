namespace Swoop.Web

open System
open System.Threading.Tasks
open Swoop

[<RequireQualifiedAccess>]
module Files =
    let private refuse (ctx: HttpContext) (status: int) =
        Problem.write ctx status null (if status = 400 then "this path is not allowed" else "not found") []
        Results.handled

    /// The handler; `rootMounted`: it takes every method itself (no prefix route can tell the
    /// router which paths are files), and a method other than GET or HEAD on a path that
    /// names a file or folder records GET as allowed and skips, so that the host answers 405
    /// with Allow, as under a prefix; any other path falls through (404 at the end).
    let internal ofFiles (files: StaticFiles) (rootMounted: bool) : HttpHandler =
        let options = files.Options
        let cache = files.Cache

        // On the thread pool: opening a file may wait (a slow disk, a network file system),
        // and the event loop must not. Once per file, not per request.
        let findOnPool (key: string) = Task.Run<struct (FileEntry * int)>(fun () -> files.Find key)

        let miss (ctx: HttpContext) (key: string) : Task<bool> =
            task {
                let! struct (entry, status) = findOnPool key

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

        let otherMethod (state: RequestState) : Task<bool> =
            let rest = state.Rest

            if rest.IsEmpty || rest[0] <> '/' || SafePath.check rest options.AllowDotfiles <> PathVerdict.Fine then
                Results.skip
            elif not (isNull (cache.Find rest)) then
                state.Allowed <- state.Allowed ||| Methods.bit HttpMethod.Get
                Results.skip
            else
                let key = String rest

                task {
                    // Only whether GET would find something: nothing opened, read,
                    // compressed or kept (on the pool: a stat may wait).
                    let! exists = Task.Run(fun () -> files.Exists key)

                    if exists then
                        state.Allowed <- state.Allowed ||| Methods.bit HttpMethod.Get

                    return false
                }

        fun _ ctx ->
            let state = RequestState.Of ctx

            if rootMounted && ctx.Method <> HttpMethod.Get && ctx.Method <> HttpMethod.Head then
                otherMethod state
            elif not state.PathValid then
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

    /// The files are prepared when the app is compiled (Web.handler, Web.run: at start-up,
    /// where a missing root is one line from Web.main), once for every place the handler is
    /// used; not when the handler value is made, which may be a module's initialisation (a
    /// failure there is a TypeInitializationException before `main` runs).
    let private make (options: StaticFileOptions) (root: string) (rootMounted: bool) : HttpHandler =
        let files = lazy (StaticFiles(options, root))
        fun next -> ofFiles files.Value rootMounted next

    let handler (options: StaticFileOptions) (root: string) : HttpHandler = make options root false

    let serve (options: StaticFileOptions) (prefix: string) (root: string) : HttpHandler =
        let trimmed = prefix.TrimEnd '/'
        if trimmed = "" then make options root true else subRoute trimmed (GET >=> make options root false)
