module My_App.Program

open Swoop.Web

/// `--port N` (or $PORT; 8080 by default), `--host`, `--routes` to print the route table,
/// `--dev` to put exception details in 500 answers. Ctrl-C or SIGTERM stops it gracefully.
/// The gRPC service goes over HTTP/2 on the same port (h2c by prior knowledge; h2 by ALPN
/// with `--tls-cert`/`--tls-key`), the JSON API over HTTP/1.1 or HTTP/2.
[<EntryPoint>]
let main argv =
    Web.main argv (choose [ Greeter.service; Api.app (Api.TodoStore()) ])
