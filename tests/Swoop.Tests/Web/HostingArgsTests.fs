/// Web.main's own switches (--routes, --dev) are parsed with the server's options: a misspelt
/// one is refused like any unknown option.
module Swoop.Tests.Web.HostingArgsTests

open Xunit
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
