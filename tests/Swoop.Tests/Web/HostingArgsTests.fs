/// Web.main's own switches (--routes, --dev) are parsed with the server's options: a misspelt
/// one is refused like any unknown option; an app that cannot be prepared is one line too.
module Swoop.Tests.Web.HostingArgsTests

open Xunit
open Swoop.Tests.Support
open Swoop
open Swoop.Web

let private app = choose [ GET >=> route "/hello" >=> text "hi" ]

[<Fact>]
let ``--routes prints the table and exits 0; a misspelt switch exits 2`` () =
    Assert.Equal(0, Web.main [| "--routes" |] app)
    Assert.Equal(2, Web.main [| "--rotues" |] app)
    Assert.Equal(2, Web.main [| "--dev"; "--max-connections"; "-1" |] app)

[<Fact>]
let ``an app's own options reach it, and --help exits 0`` () =
    let mutable seen = ""
    let dataDir = AppOption.value "data-dir" "Where data lives." "./data"

    let code =
        Web.mainCustom [ dataDir ] ServerOptions.defaults WebOptions.defaults [| "--data-dir"; "/srv"; "--routes" |] (fun config ->
            seen <- config.Value "data-dir"
            app)

    Assert.Equal(0, code)
    Assert.Equal("/srv", seen)
    Assert.Equal(0, Web.mainCustom [ dataDir ] ServerOptions.defaults WebOptions.defaults [| "--help" |] (fun _ -> app))

[<Fact>]
let ``a route conflict at start-up is one line on stderr and exit code 2, as a bad option is`` () =
    let conflicting = choose [ GET >=> route "/a" >=> text "one"; GET >=> route "/a" >=> text "two" ]
    let code, err = withStderr (fun () -> Web.main [| "--port"; "0" |] conflicting)
    Assert.Equal(2, code)
    let line = err.Split('\n') |> Array.find (fun l -> l.StartsWith "swoop: conflicting routes")
    Assert.Contains("route \"/a\" and route \"/a\" both answer GET for the same path", line)
    Assert.DoesNotContain("   at ", err)

[<Fact>]
let ``an app whose own function refuses its settings at start-up exits 2 with the message`` () =
    let code, err =
        withStderr (fun () ->
            Web.mainCustom [] ServerOptions.defaults WebOptions.defaults [| "--port"; "0" |] (fun _ ->
                invalidArg "settings" "Db:Port must be an integer (not 'x')"))

    Assert.Equal(2, code)
    Assert.Contains("swoop: Db:Port must be an integer (not 'x')" + System.Environment.NewLine, err)
