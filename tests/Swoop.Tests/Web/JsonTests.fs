module Swoop.Tests.JsonTests

open System
open System.Buffers
open System.Text
open System.Text.Json
open Xunit
open Swoop.Web

type Pet = { Name: string; Age: int; Owner: string option; Tags: string list }

let serializer = SystemTextJsonSerializer() :> IJsonSerializer

let write (value: 'T) =
    let buffer = ArrayBufferWriter<byte>()
    serializer.Serialize(buffer, value)
    Encoding.UTF8.GetString buffer.WrittenSpan

let read<'T> (text: string) = serializer.Deserialize<'T>(ReadOnlySpan(Encoding.UTF8.GetBytes text))

[<Fact>]
let ``an immutable record is written with camelCase names and read back`` () =
    let pet = { Name = "Rex"; Age = 3; Owner = None; Tags = [ "dog" ] }
    let text = write pet
    Assert.Equal("""{"name":"Rex","age":3,"owner":null,"tags":["dog"]}""", text)
    Assert.Equal(pet, read<Pet> text)

[<Fact>]
let ``an option field may be missing, any other field may not`` () =
    Assert.Equal({ Name = "Rex"; Age = 3; Owner = None; Tags = [] }, read<Pet> """{"name":"Rex","age":3,"tags":[]}""")
    let e = Assert.Throws<JsonException>(fun () -> read<Pet> """{"name":"Rex","tags":[]}""" |> ignore)
    Assert.Contains("age", e.Message)

[<Fact>]
let ``a null where the F# type has none is refused`` () =
    let e = Assert.ThrowsAny<JsonException>(fun () -> read<Pet> """{"name":null,"age":3,"tags":[]}""" |> ignore)
    Assert.Contains("'name' must not be null", e.Message)
