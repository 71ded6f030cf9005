module My_App.Program

open Swoop.Web

/// `--port N` (or $PORT; 8080 by default), `--host`, `--routes` to print the route table,
/// `--dev` to put exception details in 500 answers. Ctrl-C or SIGTERM stops it gracefully.
[<EntryPoint>]
let main argv = Web.main argv (Api.app (Api.TodoStore()))
