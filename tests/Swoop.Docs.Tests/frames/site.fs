// The frame of ```fsharp fragment:site blocks (docs/guide.md, "Building a site"): excerpts of
// samples/Site/App.fs, whose other names (its settings, store, views) stand in here.
open System
open System.Threading.Tasks
open Swoop
open Swoop.Web
open Swoop.Site
open Swoop.Live
open Swoop.ViewEngine

type NewEntry = { Name: string; Message: string }
type Settings = { WebRoot: string; Keys: KeyRing; SecureCookies: bool }

module Views =
    type Page = { Visitor: string option; CsrfField: string * string }
    let home (visitor: string option) = Giraffe.ViewEngine.HtmlElements.str (defaultArg visitor "")
    let error (_: Page) (problem: ProblemDetails) = Giraffe.ViewEngine.HtmlElements.str problem.Title

let settings = { WebRoot = "wwwroot"; Keys = KeyRing.ofBase64 [ KeyRing.newKey () ]; SecureCookies = false }
let sessionCookie = "visitor"
let cookies = CookieOptions.defaults
let visitor (ctx: HttpContext) = ctx.SignedCookie(settings.Keys, sessionCookie)
let pageContext (ctx: HttpContext) = visitor ctx
let csrf = Antiforgery(settings.Keys, session = visitor)

type Store() =
    let entries = Collections.Concurrent.ConcurrentQueue<NewEntry>()
    member _.Add(entry: NewEntry) = entries.Enqueue entry
    member _.Latest(count: int) = entries |> Seq.truncate count |> List.ofSeq

let store = Store()
let check (e: NewEntry) : Result<NewEntry, (string * string) list> = Ok e
let guestbookPage (form: NewEntry) (errors: (string * string) list) : HttpHandler = text (sprintf "%A %A" form errors)
let emptyForm: HttpHandler = guestbookPage { Name = ""; Message = "" } []
let signGuestbook (form: NewEntry) : HttpHandler = guestbookPage form []
let forget: HttpHandler = redirectTo false "/guestbook"
let latest: HttpHandler = warbler (fun _ -> json (store.Latest 10))
let clock (stream: EventStream) : Task = stream.Closed
let sameOrigin: HttpHandler = fun next ctx -> next ctx
let chatOptions = WebSocketOptions.defaults
let chat (session: WebSocketSession) : Task = session.CloseAsync(Net.WebSockets.WebSocketCloseStatus.NormalClosure, "bye")
