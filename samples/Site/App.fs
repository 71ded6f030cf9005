/// The site's handlers and routes, made from its settings (so that tests start it in-process).
module Site.App

open System
open System.Threading.Tasks
open Swoop
open Swoop.Web
open Swoop.Site
open Swoop.Live
open Swoop.ViewEngine
open Site.Guestbook

type Settings =
    {
        /// The folder of the static files (CSS, script, image).
        WebRoot: string
        /// Signs the session cookie and the anti-forgery tokens; the first key signs.
        Keys: KeyRing
        /// Cookies only over HTTPS (set it behind a TLS proxy).
        SecureCookies: bool
    }

/// The signed cookie that remembers the visitor: a random id of their own, then the name they
/// typed (which two visitors may share).
let sessionCookie = "visitor"

/// The visitor's id and name from the cookie's value ("<id>|<name>").
let private splitVisitor (value: string) =
    match value.IndexOf '|' with
    | bar when bar > 0 -> Some(value.Substring(0, bar), value.Substring(bar + 1))
    | _ -> None

/// Server time for the live clock, once a second, until the client leaves.
let clock (stream: EventStream) =
    task {
        while not stream.IsClosed do
            do! stream.SendAsync(ServerSentEvent.Create(DateTimeOffset.UtcNow.ToString "o", eventType = "tick"))
            do! Task.Delay(1000, stream.Aborted)
    }
    :> Task

/// Browsers send cookies with a WebSocket handshake from any site: only this site's pages may
/// open the chat (a request without Origin is not from a browser, and carries no ambient cookie).
let sameOrigin: HttpHandler =
    fun next ctx ->
        match ctx.Header "Origin", ctx.Header "Host" with
        | ValueNone, _ -> next ctx
        | ValueSome origin, ValueSome host when
            (match Uri.TryCreate(origin, UriKind.Absolute) with
             | true, uri -> String.Equals(uri.Authority, host, StringComparison.OrdinalIgnoreCase)
             | _ -> false)
            ->
            next ctx
        | _ -> forbidden "This page's origin may not open the chat." next ctx

/// The site's options: its own error page for browsers, in its layout (API clients still get
/// problem+json). Fixed before the settings are read, so without the visitor's name.
let webOptions: WebOptions =
    let errorPage (_: HttpContext) (problem: ProblemDetails) =
        let page = { Views.Visitor = None; Views.CsrfField = "", "" }
        Giraffe.ViewEngine.RenderView.AsString.htmlDocument (Views.error page problem)

    { WebOptions.defaults with HtmlErrorPage = Some errorPage }

let create (settings: Settings) : HttpHandler =
    let cookies = { CookieOptions.defaults with Secure = settings.SecureCookies }
    let signedVisitor (ctx: HttpContext) =
        ctx.SignedCookie(settings.Keys, sessionCookie) |> Option.bind splitVisitor

    let visitor (ctx: HttpContext) = signedVisitor ctx |> Option.map snd
    // Tokens bound to the visitor's random id, never to the name they typed (another visitor
    // may type it too): a token and cookie fetched by someone else fail beside the visitor's
    // cookie. Behind HTTPS (Secure), the cookie is __Host-csrf.
    let csrf = Antiforgery(settings.Keys, cookieOptions = { cookies with SameSite = SameSite.Strict }, session = (signedVisitor >> Option.map fst))
    let store = Store()
    let room = Chat.Room()
    let pageContext ctx = { Views.Visitor = visitor ctx; Views.CsrfField = csrf.FieldName, csrf.GetToken ctx }

    let guestbookPage (form: NewEntry) errors : HttpHandler =
        warbler (fun ctx -> htmlView (Views.guestbook (pageContext ctx) (store.Latest 50) form errors))

    let signGuestbook (form: NewEntry) : HttpHandler =
        match check form with
        | Ok entry ->
            fun next ctx ->
                store.Add entry

                let id =
                    match signedVisitor ctx with
                    | Some(id, _) -> id
                    | None -> Buffers.Text.Base64Url.EncodeToString(Security.Cryptography.RandomNumberGenerator.GetBytes 16)

                ctx.SetSignedCookie(settings.Keys, sessionCookie, id + "|" + entry.Name, TimeSpan.FromDays 30.0, cookies)
                seeOther "/guestbook" next ctx
        | Error errors -> setStatusCode 422 >=> guestbookPage form errors

    let emptyForm: HttpHandler =
        warbler (fun ctx -> guestbookPage { Name = defaultArg (visitor ctx) ""; Message = "" } [])

    let forget: HttpHandler =
        fun next ctx ->
            ctx.DeleteCookie(sessionCookie, cookies)
            seeOther "/guestbook" next ctx

    let latest: HttpHandler =
        fun next ctx ->
            let count = ctx.QueryValue<int> "limit" |> Option.defaultValue 10 |> max 1 |> min 50
            json (store.Latest count) next ctx

    let chat (session: WebSocketSession) =
        room.Join(session, visitor session.Context |> Option.defaultValue "guest")

    let chatOptions = { WebSocketOptions.defaults with MaxMessageSize = 4096 }

    Compression.compress CompressionOptions.defaults (
        choose [
            GET >=> route "/" >=> warbler (fun ctx -> htmlView (Views.home (pageContext ctx)))
            GET >=> route "/guestbook" >=> emptyForm
            POST >=> route "/guestbook" >=> csrf.Validate >=> bindForm<NewEntry> signGuestbook
            POST >=> route "/forget" >=> csrf.Validate >=> forget
            GET >=> route "/api/entries" >=> latest
            GET >=> route "/clock" >=> eventStream clock
            GET >=> route "/chat" >=> sameOrigin >=> webSocket chatOptions chat
            GET >=> route "/healthz" >=> Health.live
            GET >=> route "/readyz" >=> Health.ready
            Files.serve StaticFileOptions.defaults "/static" settings.WebRoot
        ]
    )
