/// Suave with its default configuration and logging turned down. Never built
/// here so far: the NuGet feed this suite ran against did not serve Suave.
module SuaveSubject

open System
open SubjectArgs
open Suave
open Suave.Filters
open Suave.Operators
open Suave.Successful
open Suave.Writers

let debugEnabled =
    Environment.GetEnvironmentVariable "BENCH_DEBUG" = "1"
    || Environment.GetEnvironmentVariable "SWOOP_DEBUG" = "1"

let jsonType = setMimeType "application/json"

let app =
    choose
        [ GET >=> path "/plaintext" >=> setMimeType "text/plain" >=> OK "Hello, World!"
          GET >=> path "/json" >=> jsonType >=> OK "{\"message\":\"Hello, World!\"}"
          GET >=> path "/time" >=> jsonType
              >=> request (fun _ -> OK(sprintf "{\"time\":\"%s\"}" (DateTime.UtcNow.ToString "o")))
          GET >=> path "/debug/gc" >=> jsonType
              >=> request (fun _ ->
                  if debugEnabled then
                      OK(sprintf "{\"allocatedBytes\":%d,\"gen0\":%d,\"gen1\":%d,\"gen2\":%d}"
                          (GC.GetTotalAllocatedBytes true) (GC.CollectionCount 0) (GC.CollectionCount 1) (GC.CollectionCount 2))
                  else RequestErrors.NOT_FOUND "")
          RequestErrors.NOT_FOUND "" ]

[<EntryPoint>]
let main argv =
    let host = option argv "--host" "HOST" "127.0.0.1"
    let port = int (option argv "--port" "PORT" "8080")
    let config =
        { defaultConfig with
            bindings = [ HttpBinding.createSimple HTTP host port ] }
    startWebServer config app
    0
