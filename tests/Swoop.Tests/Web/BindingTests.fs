module Swoop.Tests.BindingTests

open System
open Xunit
open Swoop
open Swoop.Web
open Swoop.Tests.WebSupport

type Color =
    | Red
    | Green

type Order =
    { Item: string
      Count: int
      Note: string option
      Tags: string list
      Sizes: int[]
      Extra: Map<string, int>
      Color: Color }

type Search = { Q: string; Page: int option; Tag: string list }

let checkOrder (o: Order) =
    if o.Count > 0 then Ok o else Error [ "count", "must be positive" ]

let app =
    choose [
        POST >=> route "/order" >=> bindJson<Order> (validate checkOrder (fun o -> json o))
        POST >=> route "/form" >=> bindForm<Search> (fun s -> text (sprintf "%s|%A|%A" s.Q s.Page s.Tag))
        GET >=> route "/search" >=> bindQuery<Search> (fun s -> text (sprintf "%s|%A|%A" s.Q s.Page s.Tag))
        GET >=> route "/limit" >=> handleContext (fun ctx ->
            let limit = ctx.QueryValue<int> "limit" |> Option.defaultValue 10
            ctx.WriteString(string limit + "|" + String.Join(",", ctx.Query.GetAll "x"))
            handled)
        GET >=> route "/cookie" >=> handleContext (fun ctx ->
            ctx.WriteString(defaultArg (ctx.Cookie "session") "none")
            handled)
        GET >=> route "/boom" >=> handleContext (fun _ -> failwith "secret detail")
    ]

let postJson server path (body: string) =
    request server "POST" path [ "Content-Type: application/json" ] body

[<Fact>]
let ``a JSON body binds to a record with options, lists, arrays, maps and fieldless unions`` () =
    use server = serveApp app
    let a = postJson server "/order" """{"item":"tea","count":2,"tags":["a"],"sizes":[1,2],"extra":{"k":1},"color":"Green"}"""
    Assert.Equal(200, a.Status)
    Assert.Equal("""{"item":"tea","count":2,"note":null,"tags":["a"],"sizes":[1,2],"extra":{"k":1},"color":"Green"}""", a.Body)

[<Fact>]
let ``bad JSON bodies are 400, 415 or 422 with problem+json naming the field`` () =
    use server = serveApp app
    let missing = postJson server "/order" """{"item":"tea","tags":[],"sizes":[],"extra":{},"color":"Red"}"""
    Assert.Equal(400, missing.Status)
    Assert.Contains("\"count\":[\"is required\"]", missing.Body)
    let wrongType = postJson server "/order" """{"item":"tea","count":"2","tags":[],"sizes":[],"extra":{},"color":"Red"}"""
    Assert.Equal(400, wrongType.Status)
    Assert.Contains("\"count\"", wrongType.Body)
    let nullString = postJson server "/order" """{"item":null,"count":2,"tags":[],"sizes":[],"extra":{},"color":"Red"}"""
    Assert.Equal(400, nullString.Status)
    Assert.Contains("'item' must not be null", nullString.Body)
    let badUnion = postJson server "/order" """{"item":"t","count":2,"tags":[],"sizes":[],"extra":{},"color":"Blue"}"""
    Assert.Equal(400, badUnion.Status)
    Assert.Contains("Red, Green", badUnion.Body)
    Assert.Equal(400, (postJson server "/order" """{"item":""").Status)
    Assert.Equal(400, (postJson server "/order" "").Status)
    Assert.Equal(415, (request server "POST" "/order" [ "Content-Type: text/plain" ] "{}").Status)
    let invalid = postJson server "/order" """{"item":"t","count":0,"tags":[],"sizes":[],"extra":{},"color":"Red"}"""
    Assert.Equal(422, invalid.Status)
    Assert.Equal("application/problem+json", invalid.Headers["content-type"])
    Assert.Contains("\"count\":[\"must be positive\"]", invalid.Body)

[<Fact>]
let ``query values decode, repeat and parse with clear errors`` () =
    use server = serveApp app
    Assert.Equal("5|a b,c&d", (get server "/limit?limit=5&x=a+b&x=c%26d").Body)
    Assert.Equal("10|", (get server "/limit").Body)
    let bad = get server "/limit?limit=ten"
    Assert.Equal(400, bad.Status)
    Assert.Contains("'limit' must be an integer", bad.Body)
    Assert.Equal(400, (get server "/limit?x=%zz").Status)
    Assert.Equal("hi|Some 2|[\"a\"; \"b\"]", (get server "/search?q=hi&page=2&tag=a&tag=b").Body)
    let missing = get server "/search?page=x"
    Assert.Equal(400, missing.Status)
    Assert.Contains("\"Q\":[\"is required\"]", missing.Body)
    Assert.Contains("\"Page\":[\"must be an integer\"]", missing.Body)

[<Fact>]
let ``a repeated key bound to a single field reads its values joined with a comma, as Giraffe's`` () =
    use server = serveApp app
    Assert.Equal("bob,ada|None|[]", (get server "/search?q=bob&q=ada").Body)
    Assert.Equal("bob,ada|None|[]", (request server "POST" "/form" [ "Content-Type: application/x-www-form-urlencoded" ] "q=bob&q=ada").Body)
    // A list still takes each value; a number given twice is no number ("1,2"): 400 naming it.
    Assert.Equal("x|None|[\"a\"; \"b\"]", (get server "/search?q=x&tag=a&tag=b").Body)
    let twice = get server "/search?q=x&page=1&page=2"
    Assert.Equal(400, twice.Status)
    Assert.Contains("\"Page\":[\"must be an integer\"]", twice.Body)

[<Fact>]
let ``urlencoded forms bind, and other content types are 415`` () =
    use server = serveApp app
    let ok = request server "POST" "/form" [ "Content-Type: application/x-www-form-urlencoded" ] "q=caf%C3%A9&tag=x"
    Assert.Equal("café|None|[\"x\"]", ok.Body)
    Assert.Equal(415, (request server "POST" "/form" [ "Content-Type: application/json" ] "{}").Status)
    let many = String.Join("&", [ for i in 1..2000 -> sprintf "f%d=1" i ])
    Assert.Equal(400, (request server "POST" "/form" [ "Content-Type: application/x-www-form-urlencoded" ] many).Status)

[<Fact>]
let ``a form over its limit is 413`` () =
    use server = serveAppWith { WebOptions.defaults with MaxFormSize = 100L } app
    let big = "q=" + String('a', 200)
    Assert.Equal(413, (request server "POST" "/form" [ "Content-Type: application/x-www-form-urlencoded" ] big).Status)

[<Fact>]
let ``cookies are read from the Cookie header`` () =
    use server = serveApp app
    Assert.Equal("abc", (request server "GET" "/cookie" [ "Cookie: a=1; session=abc" ] "").Body)
    Assert.Equal("none", (get server "/cookie").Body)

[<Fact>]
let ``a failing handler is a generic 500, with details only in development`` () =
    use server = serveApp app
    let plain = get server "/boom"
    Assert.Equal(500, plain.Status)
    Assert.DoesNotContain("secret", plain.Body)
    use dev = serveAppWith { WebOptions.defaults with Development = true } app
    Assert.Contains("secret detail", (get dev "/boom").Body)

[<Fact>]
let ``a raw emoji beside a '+' decodes`` () =
    Assert.Equal(Some "a 😀", UrlEncoded.decode ("a+😀".AsSpan()))

type WithUri = { Link: Uri }

[<Fact>]
let ``handler mistakes show at once: a query type without a parser, a record that cannot be bound`` () =
    let app = route "/q" >=> handleContext (fun ctx -> ctx.WriteString(string (ctx.QueryValue<Uri> "u")); handled)
    use server = serveApp app
    Assert.Equal(500, (get server "/q").Status)
    Assert.Throws<ArgumentException>(fun () -> bindQuery<WithUri> (fun r -> text (string r.Link)) |> ignore) |> ignore

[<Fact>]
let ``cookie names are case-sensitive`` () =
    use server = serveApp app
    Assert.Equal("none", (request server "GET" "/cookie" [ "Cookie: SESSION=abc" ] "").Body)

[<Fact>]
let ``a JSON body bound twice reads the same body`` () =
    let twice = route "/twice" >=> bindJson<Search> (fun a -> bindJson<Search> (fun b -> text (a.Q + b.Q)))
    use server = serveApp twice
    Assert.Equal("xx", (request server "POST" "/twice" [ "Content-Type: application/json" ] """{"q":"x","tag":[]}""").Body)

/// What a client reads in a binding failure: the field and the problem, never .NET names.
let private noInternals (body: string) =
    for leak in [ "Swoop."; "BindingTests"; "+Order"; "LineNumber"; "BytePosition"; "System." ] do
        Assert.DoesNotContain(leak, body)

[<Fact>]
let ``a JSON binding failure names the field and the problem in JSON's terms`` () =
    use server = serveApp app
    let wrongType = postJson server "/order" """{"item":"tea","count":"2","tags":[],"sizes":[],"extra":{},"color":"Red"}"""
    Assert.Contains("\"detail\":\"'count' must be an integer in range\"", wrongType.Body)
    Assert.Contains("\"count\":[\"must be an integer in range\"]", wrongType.Body)
    noInternals wrongType.Body
    let nested = postJson server "/order" """{"item":"tea","count":2,"tags":[],"sizes":[1,"x"],"extra":{"k":true},"color":"Red"}"""
    Assert.Contains("'sizes[1]' must be an integer in range", nested.Body)
    noInternals nested.Body
    let inMap = postJson server "/order" """{"item":"tea","count":2,"tags":[],"sizes":[],"extra":{"k":true},"color":"Red"}"""
    Assert.Contains("'extra.k' must be an integer in range", inMap.Body)
    let missing = postJson server "/order" """{"item":"tea","tags":[],"sizes":[],"extra":{}}"""
    Assert.Contains("\"detail\":\"required fields are missing: 'count', 'color'\"", missing.Body)
    noInternals missing.Body
    let broken = postJson server "/order" """{"item":"tea","""
    Assert.Contains("\"detail\":\"the body is not well-formed JSON\"", broken.Body)
    noInternals broken.Body
    let array = postJson server "/order" "[1]"
    Assert.Contains("\"detail\":\"the body must be an object\"", array.Body)
    noInternals array.Body
    let union = postJson server "/order" """{"item":"t","count":2,"tags":[],"sizes":[],"extra":{},"color":"Blue"}"""
    Assert.Contains("\"color\":[\"must be one of Red, Green\"]", union.Body)

type Line = { Name: string; Qty: int }
type Basket = { Lines: Line list; Owner: string }

[<Fact>]
let ``a failure's detail and errors name the field alike, as the type declares it, whatever the client's casing`` () =
    use server = serveApp (POST >=> route "/basket" >=> bindJson<Basket> (fun b -> text b.Owner))
    let problem (body: string) = Text.Json.JsonDocument.Parse((postJson server "/basket" body).Body).RootElement

    let detailAndKeys (body: string) =
        let p = problem body
        p.GetProperty("detail").GetString(), [ for e in p.GetProperty("errors").EnumerateObject() -> e.Name ]

    // A case-insensitive read took "Owner" and "NAME": the answer says owner and name.
    Assert.Equal(("'owner' must not be null", [ "owner" ]), detailAndKeys """{"Lines":[],"Owner":null}""")
    Assert.Equal(("'lines[1].name' must not be null", [ "lines[1].name" ]), detailAndKeys """{"LINES":[{"name":"a","qty":1},{"NAME":null,"Qty":1}],"owner":"o"}""")
    Assert.Equal(("'lines[0].qty' must be an integer in range", [ "lines[0].qty" ]), detailAndKeys """{"Lines":[{"Name":"a","QTY":"x"}],"Owner":"o"}""")
    Assert.Equal(("required fields are missing in 'lines[0]': 'qty'", [ "lines[0].qty" ]), detailAndKeys """{"Lines":[{"Name":"a"}],"Owner":"o"}""")

type Bookmark = { Url: string; Title: string; Stars: int }

[<Fact>]
let ``each of Giraffe's looser JSON rules has its own switch`` () =
    let echo = POST >=> route "/b" >=> bindJson<Bookmark> (fun b -> text (sprintf "%s|%s|%d" b.Url b.Title b.Stars))
    let looseType = { WebOptions.defaults with RequireJsonContentType = false }
    use anyType = serveAppWith looseType echo
    Assert.Equal("u|t|1", (request anyType "POST" "/b" [ "Content-Type: text/plain" ] """{"url":"u","title":"t","stars":1}""").Body)
    Assert.Equal("u|t|1", (request anyType "POST" "/b" [] """{"url":"u","title":"t","stars":1}""").Body)

    let defaults = SystemTextJsonSerializer.DefaultOptions()
    defaults.RespectRequiredConstructorParameters <- false
    use missingOk = serveAppWith { WebOptions.defaults with Json = SystemTextJsonSerializer(defaults) } echo
    Assert.Equal("u||0", (postJson missingOk "/b" """{"url":"u"}""").Body)

    let caseSensitive = SystemTextJsonSerializer.DefaultOptions()
    caseSensitive.PropertyNameCaseInsensitive <- false
    use exact = serveAppWith { WebOptions.defaults with Json = SystemTextJsonSerializer(caseSensitive) } echo
    let pascal = postJson exact "/b" """{"Url":"u","Title":"t","Stars":1}"""
    Assert.Equal(400, pascal.Status)
    Assert.Contains("\"url\":[\"is required\"]", pascal.Body)
    Assert.Equal("u|t|1", (postJson exact "/b" """{"url":"u","title":"t","stars":1}""").Body)

[<Fact>]
let ``tryBindQuery hands what is wrong to the app's handler, as Giraffe's does`` () =
    let search = route "/s" >=> tryBindQuery<Search> RequestErrors.BAD_REQUEST None (fun s -> text s.Q)
    use server = serveApp search
    Assert.Equal("hi", (get server "/s?q=hi").Body)
    let bad = get server "/s?page=x"
    Assert.Equal(400, bad.Status)
    Assert.Equal("the query parameters are not valid: 'Q' is required; 'Page' must be an integer", Text.Json.JsonSerializer.Deserialize<string> bad.Body)
    // Tests run with invariant globalization: a culture that only says it is French.
    let french = { new Globalization.CultureInfo("") with member _.Name = "fr-FR" }
    Assert.Throws<ArgumentException>(fun () -> tryBindQuery<Search> RequestErrors.BAD_REQUEST (Some french) (fun s -> text s.Q) |> ignore) |> ignore

// ---- Giraffe's lenient query and form binding, one switch per rule ----

type Signup =
    { Name: string
      Age: int
      Newsletter: bool
      Score: float option
      Ids: int list }

let private show (s: Signup) =
    sprintf "%s|%d|%b|%A|%A" (if isNull s.Name then "<null>" else s.Name) s.Age s.Newsletter s.Score s.Ids

let private signupApp =
    choose [
        GET >=> route "/q" >=> bindQuery<Signup> (show >> text)
        POST >=> route "/f" >=> bindForm<Signup> (show >> text)
        GET >=> route "/try" >=> tryBindQuery<Signup> RequestErrors.BAD_REQUEST None (show >> text)
    ]

let private postForm server (body: string) =
    request server "POST" "/f" [ "Content-Type: application/x-www-form-urlencoded" ] body

let private withQuery binding = { WebOptions.defaults with QueryBinding = binding }
let private withForm binding = { WebOptions.defaults with FormBinding = binding }

[<Fact>]
let ``strict by default: an unparsable value, a missing field and a checkbox's on are 400 naming the field`` () =
    use server = serveApp signupApp
    let bad = get server "/q?name=a&age=x&newsletter=true"
    Assert.Equal(400, bad.Status)
    Assert.Contains("\"Age\":[\"must be an integer\"]", bad.Body)
    let missing = get server "/q?name=a&newsletter=true"
    Assert.Equal(400, missing.Status)
    Assert.Contains("\"Age\":[\"is required\"]", missing.Body)
    let on = postForm server "name=a&age=1&newsletter=on"
    Assert.Equal(400, on.Status)
    Assert.Contains("\"Newsletter\":[\"must be a boolean\"]", on.Body)
    Assert.Equal("a|1|true|None|[]", (get server "/q?name=a&age=1&newsletter=TRUE").Body)

[<Fact>]
let ``DropUnparsable: a value that does not parse is as if not sent`` () =
    let drop = { BindingOptions.strict with DropUnparsable = true }
    use server = serveAppWith (withQuery drop) signupApp
    // An option field is None, a list leaves the value out.
    Assert.Equal("a|1|false|None|[1; 3]", (get server "/q?name=a&age=1&newsletter=false&score=high&ids=1&ids=two&ids=3").Body)
    // A required field with nothing left is still an error (DefaultMissing is off): what was wrong is said.
    let bad = get server "/q?name=a&age=x&newsletter=true"
    Assert.Equal(400, bad.Status)
    Assert.Contains("\"Age\":[\"must be an integer\"]", bad.Body)
    // The form keeps its own (strict) rules.
    Assert.Equal(400, (postForm server "name=a&age=1&newsletter=false&score=high").Status)

[<Fact>]
let ``DefaultMissing: a missing field gets its type's default`` () =
    let defaults = { BindingOptions.strict with DefaultMissing = true }
    use server = serveAppWith (withForm defaults) signupApp
    Assert.Equal("<null>|0|false|None|[]", (postForm server "").Body)
    Assert.Equal("b|0|false|None|[]", (postForm server "name=b").Body)
    // A value that is there must still parse (DropUnparsable is off).
    Assert.Equal(400, (postForm server "name=b&age=x").Status)
    // The query keeps its own (strict) rules.
    Assert.Equal(400, (get server "/q?name=b").Status)

[<Fact>]
let ``CheckboxOn: a checked HTML checkbox's on is true, in any case`` () =
    let checkbox = { BindingOptions.strict with CheckboxOn = true }
    use server = serveAppWith (withForm checkbox) signupApp
    Assert.Equal("a|1|true|None|[]", (postForm server "name=a&age=1&newsletter=on").Body)
    Assert.Equal("a|1|true|None|[]", (postForm server "name=a&age=1&newsletter=ON").Body)
    Assert.Equal("a|1|false|None|[]", (postForm server "name=a&age=1&newsletter=false").Body)
    // Only for bool fields, and only "on".
    Assert.Equal(400, (postForm server "name=a&age=1&newsletter=off").Status)
    Assert.Equal(400, (postForm server "name=a&age=on&newsletter=true").Status)
    // An unchecked box sends nothing: still "is required" without DefaultMissing.
    Assert.Equal(400, (postForm server "name=a&age=1").Status)

[<Fact>]
let ``BindingOptions.lenient is Giraffe's model binding: an HTML form with an unchecked box binds`` () =
    use server = serveAppWith { WebOptions.defaults with QueryBinding = BindingOptions.lenient; FormBinding = BindingOptions.lenient } signupApp
    Assert.Equal("a|0|false|None|[]", (postForm server "name=a").Body)
    Assert.Equal("a|0|true|None|[2]", (postForm server "name=a&age=x&newsletter=on&score=&ids=2&ids=").Body)
    Assert.Equal("a|7|false|Some 1.5|[]", (get server "/q?name=a&age=7&score=1.5&newsletter=maybe").Body)
    // tryBindQuery follows the same rules: nothing left to report.
    Assert.Equal("<null>|0|false|None|[]", (get server "/try?age=x").Body)
    // A malformed query is still a 400: leniency is about values, not escapes.
    Assert.Equal(400, (get server "/q?name=%zz").Status)

[<Fact>]
let ``the presets say what they are`` () =
    Assert.Equal({ DropUnparsable = false; DefaultMissing = false; CheckboxOn = false }, BindingOptions.strict)
    Assert.Equal({ DropUnparsable = true; DefaultMissing = true; CheckboxOn = true }, BindingOptions.lenient)
    Assert.Equal(BindingOptions.strict, WebOptions.defaults.QueryBinding)
    Assert.Equal(BindingOptions.strict, WebOptions.defaults.FormBinding)
