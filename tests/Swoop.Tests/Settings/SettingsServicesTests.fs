/// AddAppSettings: IConfiguration and IOptions<'T> from ctx.GetService (and in services'
/// constructors), as a Giraffe app on ASP.NET Core reads them.
module Swoop.Tests.SettingsServicesTests

open System
open System.Collections.Generic
open Microsoft.Extensions.Configuration
open Microsoft.Extensions.DependencyInjection
open Microsoft.Extensions.Options
open Xunit
open Swoop.Web
open Swoop.Settings
open Swoop.DependencyInjection
open Swoop.Tests.WebSupport

type Jwt = { Issuer: string; Audience: string }
type Shop = { Name: string; Jwt: Jwt }

/// A service that takes its settings in its constructor, as ASP.NET Core code does.
type Greeter(options: IOptions<Shop>) =
    member _.Greet() = "welcome to " + options.Value.Name

let private configuration () =
    ConfigurationBuilder()
        .AddInMemoryCollection(
            dict [ "Name", "tea shop"; "Jwt:Issuer", "https://id.example"; "Jwt:Audience", "orders" ]
            |> Seq.map (fun kv -> KeyValuePair<string, string | null>(kv.Key, kv.Value))
        )
        .Build()

[<Fact>]
let ``IConfiguration and IOptions of the settings come from the context and from constructors`` () =
    let services =
        ServiceCollection()
            .AddAppSettings<Shop>(configuration ())
            .AddAppSettings<Jwt>(configuration (), "Jwt")
            .AddSingleton<Greeter>()

    let app =
        choose [
            route "/config" >=> warbler (fun ctx -> text (ctx.GetService<IConfiguration>()["Jwt:Issuer"]))
            route "/options" >=> warbler (fun ctx -> text (ctx.GetService<IOptions<Jwt>>().Value.Audience))
            route "/record" >=> warbler (fun ctx -> text (ctx.GetService<Shop>().Jwt.Issuer))
            route "/greet" >=> warbler (fun ctx -> text (ctx.GetService<Greeter>().Greet()))
        ]

    use server = serveAppWith { WebOptions.defaults with Services = Some(Services.provider services) } app
    Assert.Equal("https://id.example", (get server "/config").Body)
    Assert.Equal("orders", (get server "/options").Body)
    Assert.Equal("https://id.example", (get server "/record").Body)
    Assert.Equal("welcome to tea shop", (get server "/greet").Body)

[<Fact>]
let ``settings that do not bind fail when the services are made, naming every problem`` () =
    let e = Assert.Throws<ArgumentException>(fun () -> ServiceCollection().AddAppSettings<Jwt>(configuration (), "Nope") |> ignore)
    Assert.Contains("Nope: ", e.Message)
    Assert.Contains("Issuer is required", e.Message)
