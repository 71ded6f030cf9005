/// Templates prepared at start-up: the same bytes as Giraffe's rendering of the same view
/// built per request, holes in text, attributes and lists, and views that cannot be prepared
/// refused when they are.
module Swoop.Tests.ViewEngineTemplateTests

open System
open Giraffe.ViewEngine
open Xunit
open Swoop.Web
open Swoop.ViewEngine
open Swoop.Tests.WebSupport

type Item = { Id: int; Name: string; Price: decimal; Tags: string list; Done: bool }

type Page = { Title: string; Items: Item list; Note: string }

let private items n =
    [ for i in 1..n ->
          { Id = i
            Name = (if i % 3 = 0 then "<b>Tom & 'Jerry'</b> é 😀" else "item " + string i)
            Price = decimal i * 1.25m
            Tags = [ for t in 1 .. i % 3 -> "t" + string t ]
            Done = i % 2 = 0 } ]

/// The view as a Giraffe user writes it, built per request.
let private perRequest (page: Page) =
    html [ _lang "en" ] [
        head [] [ title [] [ str page.Title ]; meta [ _charset "utf-8" ] ]
        body [ _class "catalogue" ] [
            h1 [ _title page.Title ] [ str ("Items: " + page.Title) ]
            ul [] [
                for item in page.Items ->
                    li [ _id ("item-" + string item.Id); if item.Done then _class "done" ] [
                        a [ _href ("/items/" + string item.Id + "?x=1&y=2") ] [ str item.Name ]
                        span [] [ str (item.Price.ToString "0.00") ]
                        if item.Price > 3m then em [] [ str "dear" ] else strong [] [ str "cheap" ]
                        for tag in item.Tags do
                            i [] [ str tag ]
                        br []
                    ]
            ]
            rawText page.Note
        ]
    ]

let private item (h: Holes<Item>) =
    li [ _id ("item-" + h.Format(fun i -> i.Id)); h.Attributes(fun i -> [ if i.Done then _class "done" ]) ] [
        a [ _href ("/items/" + h.Format(fun i -> i.Id) + "?x=1&y=2") ] [ h.Text(fun i -> i.Name) ]
        span [] [ str (h.Format((fun i -> i.Price), "0.00")) ]
        h.If((fun i -> i.Price > 3m), em [] [ str "dear" ], strong [] [ str "cheap" ])
        h.For((fun i -> i.Tags), fun t -> i [] [ t.Text id ])
        br []
    ]

let private prepared =
    Template.document (fun (h: Holes<Page>) ->
        html [ _lang "en" ] [
            head [] [ title [] [ h.Text(fun p -> p.Title) ]; meta [ _charset "utf-8" ] ]
            body [ _class "catalogue" ] [
                h1 [ _title (h.Value(fun p -> p.Title)) ] [ str ("Items: " + h.Value(fun p -> p.Title)) ]
                ul [] [ h.For((fun p -> p.Items), item) ]
                h.Raw(fun p -> p.Note)
            ]
        ])

let pages: obj[] seq =
    [ { Title = "Shop"; Items = []; Note = "" }
      { Title = "<Tom & Jerry's>"; Items = items 5; Note = "<p>note</p>" }
      { Title = "é\u00A0€😀"; Items = items 600; Note = "<hr>" } ]
    |> Seq.map (fun p -> [| box p |])

[<Theory; MemberData(nameof pages)>]
let ``a prepared document writes what Giraffe renders for the same view built per request`` (page: Page) =
    Assert.Equal(RenderView.AsString.htmlDocument (perRequest page), Template.renderToString prepared page)

[<Fact>]
let ``the view function runs once, when the template is prepared`` () =
    let calls = ref 0

    let counted =
        Template.fragment (fun (h: Holes<int>) ->
            calls.Value <- calls.Value + 1
            p [] [ str (h.Format id) ])

    for n in 1..3 do
        Assert.Equal("<p>" + string n + "</p>", Template.renderToString counted n)

    Assert.Equal(1, calls.Value)

[<Fact>]
let ``a fragment has no doctype`` () =
    let plain = Template.fragment (fun (_: Holes<unit>) -> p [ _class "x" ] [ str "a < b"; br [] ])
    Assert.Equal(RenderView.AsString.htmlNode (p [ _class "x" ] [ str "a < b"; br [] ]), Template.renderToString plain ())

[<Fact>]
let ``For walks lists, arrays, sequences and nothing`` () =
    let view (items: unit -> seq<int>) =
        Template.fragment (fun (h: Holes<unit>) -> ul [] [ h.For((fun () -> items ()), fun n -> li [] [ str (n.Format id) ]) ])

    Assert.Equal("<ul><li>1</li><li>2</li></ul>", Template.renderToString (view (fun () -> [ 1; 2 ])) ())
    Assert.Equal("<ul><li>1</li><li>2</li></ul>", Template.renderToString (view (fun () -> [| 1; 2 |])) ())
    Assert.Equal("<ul><li>1</li><li>2</li></ul>", Template.renderToString (view (fun () -> Seq.init 2 ((+) 1))) ())
    Assert.Equal("<ul></ul>", Template.renderToString (view (fun () -> null)) ())

[<Fact>]
let ``Node writes a Giraffe node built per page`` () =
    let view = Template.fragment (fun (h: Holes<string>) -> div [] [ h.Node(fun s -> p [ _title s ] [ str s ]) ])
    Assert.Equal("<div><p title=\"&lt;x&gt;\">&lt;x&gt;</p></div>", Template.renderToString view "<x>")

[<Fact>]
let ``If without otherwise writes nothing when the condition fails`` () =
    let view = Template.fragment (fun (h: Holes<bool>) -> div [] [ h.If(id, str "yes"); str "." ])
    Assert.Equal("<div>yes.</div>", Template.renderToString view true)
    Assert.Equal("<div>.</div>", Template.renderToString view false)

[<Fact>]
let ``text that only looks like a placeholder stays as it is`` () =
    let odd = "\u0001 1:2\u0002 \u00019:x\u0002 \u0001"
    let view = Template.fragment (fun (_: Holes<unit>) -> p [ _title odd ] [ rawText odd ])
    Assert.Equal(RenderView.AsString.htmlNode (p [ _title odd ] [ rawText odd ]), Template.renderToString view ())

[<Fact>]
let ``a hole where it cannot stand is refused when the template is prepared`` () =
    let refused (view: Holes<string> -> XmlNode) =
        Assert.Throws<ArgumentException>(fun () -> Template.fragment view |> ignore).Message

    Assert.Contains("attribute's value", refused (fun h -> a [ _href (h.Value id + (match h.Raw id with Text t -> t | _ -> "")) ] []))
    Assert.Contains("attribute list", refused (fun h -> p [] [ str (match h.Attributes(fun _ -> []) with Boolean n -> n | KeyValue(n, _) -> n) ]))
    Assert.Contains("another template", refused (fun h -> ul [] [ h.For((fun s -> [ s ]), fun _ -> li [] [ h.Text id ]) ]))
    Assert.Contains("tag name", refused (fun h -> tag (h.Value id) [] []))

type private First = { A: string }
type private Second = { B: string }

[<Fact>]
let ``holes of two models never share a number`` () =
    // The first Holes made for each of two new models: numbered by one counter, so the page's
    // hole used inside the item is still recognised as foreign.
    let refused () =
        Template.fragment (fun (h: Holes<First>) ->
            ul [] [ h.For((fun f -> [ { B = f.A } ]), fun (_: Holes<Second>) -> li [] [ h.Text(fun f -> f.A) ]) ])
        |> ignore

    Assert.Contains("another template", Assert.Throws<ArgumentException>(refused).Message)

[<Fact>]
let ``htmlTemplate answers the prepared page`` () =
    let page = { Title = "<Shop>"; Items = items 40; Note = "" }
    use server = serveApp (route "/" >=> htmlTemplate prepared page)
    let answer = get server "/"
    Assert.Equal(200, answer.Status)
    Assert.Equal("text/html; charset=utf-8", answer.Headers["content-type"])
    Assert.Equal(RenderView.AsString.htmlDocument (perRequest page), answer.Body)

[<Fact>]
let ``WriteHtmlTemplate writes a large page into the body in segments`` () =
    let page = { Title = "big"; Items = items 5_000; Note = "" }
    use server = serveApp (route "/" >=> handleContext (fun ctx -> ctx.WriteHtmlTemplate(prepared, page); handled))
    let answer = get server "/"
    Assert.Equal(RenderView.AsString.htmlDocument (perRequest page), answer.Body)

[<Fact>]
let ``a hole that throws leaves no half page behind`` () =
    let failing =
        Template.document (fun (h: Holes<int>) ->
            html [] [ body [] [ p [] [ str (String('x', 20_000)) ]; h.Text(fun n -> if n > 0 then failwith "no" else "ok") ] ])

    use server = serveApp (route "/" >=> htmlTemplate failing 1)
    let answer = get server "/"
    Assert.Equal(500, answer.Status)
    Assert.DoesNotContain("xxxx", answer.Body)
