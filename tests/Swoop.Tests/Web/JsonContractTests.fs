/// JSON contracts (the native AOT path) behave as the reflection-based defaults do: the same
/// text written, the same F# rules, the same errors naming the field, the same OpenAPI schemas.
module Swoop.Tests.JsonContractTests

open System
open System.Buffers
open System.Text
open System.Text.Json
open Xunit
open Swoop.Web
open Swoop.Tests.WebSupport
open Swoop.Tests.BindingTests

type Pet = { Name: string; Age: int; Owner: string option; Tags: string list }
type Kennel = { Pets: Pet list; Best: Pet option; Ids: Guid[]; Labels: Set<string> }

let contracts =
    [ JsonContract.record<Order>
      JsonContract.union<Color>
      JsonContract.map<int>
      JsonContract.record<Search>
      JsonContract.record<Pet>
      JsonContract.list<Pet>
      JsonContract.option<Pet>
      JsonContract.set<string>
      JsonContract.array<Guid>
      JsonContract.record<Kennel> ]

let byContract = SystemTextJsonSerializer.WithContracts contracts :> IJsonSerializer
let byReflection = SystemTextJsonSerializer() :> IJsonSerializer

let write (serializer: IJsonSerializer) (value: 'T) =
    let buffer = ArrayBufferWriter<byte>()
    serializer.Serialize(buffer, value)
    Encoding.UTF8.GetString buffer.WrittenSpan

let read<'T> (serializer: IJsonSerializer) (text: string) = serializer.Deserialize<'T>(ReadOnlySpan(Encoding.UTF8.GetBytes text))

let kennel =
    { Pets = [ { Name = "Rex"; Age = 3; Owner = Some "Ada"; Tags = [ "dog" ] } ]
      Best = None
      Ids = [| Guid.Empty |]
      Labels = set [ "b"; "a" ] }

[<Fact>]
let ``a contract writes what reflection writes, and reads it back`` () =
    let text = write byContract kennel
    Assert.Equal(write byReflection kennel, text)
    Assert.Equal(kennel, read<Kennel> byContract text)
    Assert.Equal("""[{"name":"Rex","age":3,"owner":"Ada","tags":["dog"]}]""", write byContract kennel.Pets)

[<Fact>]
let ``the F# rules hold: option fields may be missing, others may not, and null is refused`` () =
    Assert.Equal({ Name = "Rex"; Age = 3; Owner = None; Tags = [] }, read<Pet> byContract """{"name":"Rex","age":3,"tags":[]}""")
    let missing = Assert.Throws<JsonException>(fun () -> read<Pet> byContract """{"name":"Rex","tags":[]}""" |> ignore)
    Assert.Contains("age", missing.Message)
    let nulled = Assert.ThrowsAny<JsonException>(fun () -> read<Pet> byContract """{"name":null,"age":3,"tags":[]}""" |> ignore)
    Assert.Contains("'name' must not be null", nulled.Message)

[<Fact>]
let ``a type without a contract names the contract to add`` () =
    let e = Assert.ThrowsAny<NotSupportedException>(fun () -> write byContract {| X = 1 |} |> ignore)
    Assert.Contains("no JSON contract for", e.Message)
    let r = Assert.ThrowsAny<NotSupportedException>(fun () -> write byContract { Url = "u"; Title = "t"; Stars = 1 } |> ignore)
    Assert.Contains("JsonContract.record<Bookmark>", r.Message)

let contractWeb = { WebOptions.defaults with Json = byContract }

[<Fact>]
let ``bound through contracts, bad JSON bodies get the same answers`` () =
    use server = serveAppWith contractWeb app
    let ok = postJson server "/order" """{"item":"tea","count":2,"tags":["a"],"sizes":[1,2],"extra":{"k":1},"color":"Green"}"""
    Assert.Equal("""{"item":"tea","count":2,"note":null,"tags":["a"],"sizes":[1,2],"extra":{"k":1},"color":"Green"}""", ok.Body)
    let missing = postJson server "/order" """{"item":"tea","tags":[],"sizes":[],"extra":{}}"""
    Assert.Contains("\"detail\":\"required fields are missing: 'count', 'color'\"", missing.Body)
    let wrongType = postJson server "/order" """{"item":"tea","count":"2","tags":[],"sizes":[],"extra":{},"color":"Red"}"""
    Assert.Contains("\"detail\":\"'count' must be an integer in range\"", wrongType.Body)
    let nested = postJson server "/order" """{"item":"tea","count":2,"tags":[],"sizes":[1,"x"],"extra":{"k":true},"color":"Red"}"""
    Assert.Contains("'sizes[1]' must be an integer in range", nested.Body)
    let inMap = postJson server "/order" """{"item":"tea","count":2,"tags":[],"sizes":[],"extra":{"k":true},"color":"Red"}"""
    Assert.Contains("'extra.k' must be an integer in range", inMap.Body)
    let nullString = postJson server "/order" """{"item":null,"count":2,"tags":[],"sizes":[],"extra":{},"color":"Red"}"""
    Assert.Contains("'item' must not be null", nullString.Body)
    let union = postJson server "/order" """{"item":"t","count":2,"tags":[],"sizes":[],"extra":{},"color":"Blue"}"""
    Assert.Contains("\"color\":[\"must be one of Red, Green\"]", union.Body)
    let array = postJson server "/order" "[1]"
    Assert.Contains("\"detail\":\"the body must be an object\"", array.Body)
    let invalid = postJson server "/order" """{"item":"t","count":0,"tags":[],"sizes":[],"extra":{},"color":"Red"}"""
    Assert.Equal(422, invalid.Status)

[<Fact>]
let ``OpenAPI describes a type the same through its contract`` () =
    let api =
        choose [
            POST >=> route "/order" >=> accepts<Order> >=> produces<Kennel> 200 >=> text "x"
        ]

    let info = { Title = "t"; Version = "1"; Description = None }
    let document (options: WebOptions) = OpenApi.documentWith options info api
    Assert.Equal(document WebOptions.defaults, document contractWeb)

type Shelf = { Books: Bookmark list }

[<Fact>]
let ``with contracts only, a declared body type without a contract fails when the app is built, naming the route and the contract`` () =
    let api = GET >=> route "/shelf" >=> produces<Shelf> 200 >=> text "x"
    let withShelf = SystemTextJsonSerializer.WithContracts [ JsonContract.record<Shelf>; JsonContract.list<Bookmark> ]
    let e = Assert.Throws<ArgumentException>(fun () -> Web.handler { WebOptions.defaults with Json = withShelf } api |> ignore)
    Assert.Contains("route \"/shelf\"", e.Message)
    Assert.Contains("JsonContract.record<Bookmark>", e.Message)
    let complete = SystemTextJsonSerializer.WithContracts [ JsonContract.record<Shelf>; JsonContract.list<Bookmark>; JsonContract.record<Bookmark> ]
    Web.handler { WebOptions.defaults with Json = complete } api |> ignore
    // The reflection-based default is not checked (it makes contracts on demand).
    Web.handler WebOptions.defaults api |> ignore

type Memo = { Body: string; Pins: Bookmark list }

[<Fact>]
let ``with contracts only, a bindJson body without a contract fails when the app is built, wherever it sits`` () =
    let withMemo = { WebOptions.defaults with Json = SystemTextJsonSerializer.WithContracts [ JsonContract.record<Memo>; JsonContract.list<Bookmark> ] }
    let fails (app: HttpHandler) = (Assert.Throws<ArgumentException>(fun () -> Web.handler withMemo app |> ignore)).Message
    let save (_: Memo) = text "saved"
    // After its route; behind a handler the router cannot see into; under a subRoute; alone.
    let direct = fails (POST >=> route "/memo" >=> bindJson<Memo> save)
    Assert.Contains("route \"/memo\" > bindJson<Memo>: no JSON contract for Bookmark: add JsonContract.record<Bookmark>", direct)
    let behind = fails (POST >=> route "/memo" >=> setHttpHeader "X-A" "1" >=> bindJson<Memo> save)
    Assert.Contains("bindJson<Memo>: no JSON contract for Bookmark", behind)
    let nested = fails (subRoute "/api" (choose [ GET >=> route "/x" >=> text "x"; POST >=> route "/memo" >=> bindJson<Memo> save ]))
    Assert.Contains("subRoute \"/api\" > route \"/memo\" > bindJson<Memo>", nested)
    Assert.Contains("bindJson<Memo>", fails (POST >=> bindJson<Memo> save))
    // With every contract, or the reflection-based default, the app is built.
    let complete = SystemTextJsonSerializer.WithContracts [ JsonContract.record<Memo>; JsonContract.list<Bookmark>; JsonContract.record<Bookmark> ]
    Web.handler { WebOptions.defaults with Json = complete } (POST >=> route "/memo" >=> bindJson<Memo> save) |> ignore
    Web.handler WebOptions.defaults (POST >=> route "/memo" >=> bindJson<Memo> save) |> ignore

[<Fact>]
let ``the missing contract is named as F# writes the type`` () =
    let message (value: 'T) =
        (Assert.ThrowsAny<NotSupportedException>(fun () -> write byContract value |> ignore)).Message

    Assert.Contains("no JSON contract for Int16 option: add JsonContract.option<Int16>", message (Some 1s))
    Assert.Contains("add JsonContract.list<Bookmark>", message [ { Url = "u"; Title = "t"; Stars = 1 } ])
    Assert.Contains("add JsonContract.map<Pet>", message (Map.empty<string, Pet>))

[<Fact>]
let ``a null for a number is refused as without contracts`` () =
    let text = """{"name":"Rex","age":null,"tags":[]}"""
    let byContracts = Assert.ThrowsAny<JsonException>(fun () -> read<Pet> byContract text |> ignore)
    let byReflections = Assert.ThrowsAny<JsonException>(fun () -> read<Pet> byReflection text |> ignore)
    Assert.Equal(fst (JsonErrors.describe (fun _ -> None) typeof<Pet> byReflections), fst (JsonErrors.describe (fun _ -> None) typeof<Pet> byContracts))
    use server = serveAppWith contractWeb app
    let nullCount = postJson server "/order" """{"item":"tea","count":null,"tags":[],"sizes":[],"extra":{},"color":"Red"}"""
    Assert.Equal(400, nullCount.Status)
    Assert.Contains("\"detail\":\"'count' must be an integer in range\"", nullCount.Body)
