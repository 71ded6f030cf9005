/// AcceptEncoding.choose as a table: header -> the coding sent.
module Swoop.Tests.AcceptEncodingTests

open System
open System.Text
open Xunit
open Swoop.Web

[<Theory>]
[<InlineData("", "identity")>]
[<InlineData("gzip", "gzip")>]
[<InlineData("br", "br")>]
[<InlineData("gzip, br", "br")>]
[<InlineData("br;q=0.9, gzip", "gzip")>]
[<InlineData("gzip;q=0.5, br;q=0.5", "br")>]
[<InlineData("gzip;q=0", "identity")>]
[<InlineData("br;q=0, gzip;q=0.001", "gzip")>]
[<InlineData("gzip;x=1;q=0, br;level=3;q=0", "identity")>]
[<InlineData("*", "br")>]
[<InlineData("*;q=0", "identity")>]
[<InlineData("*;q=0.5, br;q=0", "gzip")>]
[<InlineData("identity;q=0", "identity")>]
[<InlineData("x-gzip", "gzip")>]
[<InlineData(" GZip ; Q=0.7 ", "gzip")>]
[<InlineData("gzip;q=1.5", "identity")>]
[<InlineData("gzip;q=abc, br", "br")>]
[<InlineData("deflate, compress", "identity")>]
[<InlineData(",,,", "identity")>]
let ``the coding follows the q-values, br first among equals`` (header: string, expected: string) =
    let coding = AcceptEncoding.choose (ReadOnlySpan(Encoding.ASCII.GetBytes header)) true true

    let name =
        match coding with
        | Coding.Brotli -> "br"
        | Coding.Gzip -> "gzip"
        | _ -> "identity"

    Assert.Equal(expected, name)

[<Fact>]
let ``only offered codings are chosen`` () =
    Assert.Equal(Coding.Gzip, AcceptEncoding.choose (ReadOnlySpan(Encoding.ASCII.GetBytes "br, gzip")) false true)
    Assert.Equal(Coding.Identity, AcceptEncoding.choose (ReadOnlySpan(Encoding.ASCII.GetBytes "br")) false true)
