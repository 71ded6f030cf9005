module Swoop.Tests.KnownFieldsTests

open System
open Xunit
open Swoop
open Swoop.KnownFields

let private classifyText (name: string) = classifyName (ReadOnlySpan(Support.ascii name))

let private known =
    [ "host", KnownField.Host
      "content-length", KnownField.ContentLength
      "transfer-encoding", KnownField.TransferEncoding
      "connection", KnownField.Connection
      "expect", KnownField.Expect ]

[<Fact>]
let ``known names are recognised in any case`` () =
    for name, field in known do
        Assert.Equal(field, classifyText name)
        Assert.Equal(field, classifyText (name.ToUpperInvariant()))
        // Every other letter upper case.
        let mixed = String(name.ToCharArray() |> Array.mapi (fun i c -> if i % 2 = 0 then Char.ToUpperInvariant c else c))
        Assert.Equal(field, classifyText mixed)

[<Fact>]
let ``a name one token byte away from a known name is Other`` () =
    // Each byte of each known name replaced by every other token byte that is not the same
    // letter in another case.
    let tchars = "!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"

    for name, _ in known do
        for i in 0 .. name.Length - 1 do
            for c in tchars do
                if Char.ToLowerInvariant c <> name[i] then
                    let changed = name.Substring(0, i) + string c + name.Substring(i + 1)
                    Assert.Equal(KnownField.Other, classifyText changed)

[<Fact>]
let ``names of other lengths are Other`` () =
    for name in [ "hos"; "hosts"; "content-lengths"; "transfer-encodings"; "connections"; "expects"; "x"; "" ] do
        Assert.Equal(KnownField.Other, classifyText name)
