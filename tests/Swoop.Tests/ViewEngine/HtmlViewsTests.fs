/// Swoop.ViewEngine over real sockets: the bytes are Giraffe's own rendering, a large page
/// included.
module Swoop.Tests.HtmlViewsTests

open Giraffe.ViewEngine
open Xunit
open Swoop.Web
open Swoop.ViewEngine
open Swoop.Tests.WebSupport

let page (name: string) =
    html [ _lang "en" ] [
        head [] [ title [] [ str "Hello" ]; meta [ _charset "utf-8" ] ]
        body [ _class "a&b\"<'"; _hidden ] [
            h1 [] [ encodedText ("Hello, " + name) ]
            rawText "<b>raw</b>"
            br []
            input [ _value "é\"ü€😀"; _disabled ]
            ul [] [ for i in 1..3 -> li [] [ str (string i) ] ]
        ]
    ]

[<Fact>]
let ``htmlView answers the document exactly as Giraffe renders it`` () =
    use server = serveApp (route "/" >=> htmlView (page "<Ada & Bob>"))
    let answer = get server "/"
    Assert.Equal(200, answer.Status)
    Assert.Equal("text/html; charset=utf-8", answer.Headers["content-type"])
    Assert.Equal(RenderView.AsString.htmlDocument (page "<Ada & Bob>"), answer.Body)

[<Fact>]
let ``htmlNodes answers a fragment without a doctype`` () =
    let nodes = [ li [] [ str "one" ]; li [ _id "2" ] [ str "two" ] ]
    use server = serveApp (route "/" >=> htmlNodes nodes)
    let answer = get server "/"
    Assert.Equal(RenderView.AsString.htmlNodes nodes, answer.Body)

[<Fact>]
let ``xmlView closes void elements as XML does`` () =
    let node = tag "feed" [ attr "xmlns" "urn:x" ] [ voidTag "entry" [ attr "id" "1" ] ]
    use server = serveApp (route "/" >=> xmlView node)
    let answer = get server "/"
    Assert.Equal("application/xml", answer.Headers["content-type"])
    Assert.Equal(RenderView.AsString.xmlNode node, answer.Body)

[<Fact>]
let ``a large page is rendered into the body in segments`` () =
    let big = div [] [ for i in 1..20_000 -> p [ _class "row" ] [ encodedText (sprintf "row %d <%d>" i i) ] ]
    use server = serveApp (route "/" >=> handleContext (fun ctx -> ctx.WriteHtmlView big; handled))
    let answer = get server "/"
    Assert.Equal(RenderView.AsString.htmlDocument big, answer.Body)

[<Fact>]
let ``a text larger than the builder keeps is written whole`` () =
    let huge = div [] [ p [] [ rawText (String.replicate 50_000 "é<>") ]; p [] [ str "after" ] ]
    use server = serveApp (route "/" >=> htmlView huge)
    let answer = get server "/"
    Assert.Equal(RenderView.AsString.htmlDocument huge, answer.Body)
    // and the next page on that thread starts from a clean builder
    let small = p [] [ str "small" ]
    use server2 = serveApp (route "/" >=> htmlNode small)
    Assert.Equal(RenderView.AsString.htmlNode small, (get server2 "/").Body)
