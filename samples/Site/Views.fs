/// The pages, as Giraffe.ViewEngine views: F# functions the compiler checks, text escaped when
/// the node is made (`str`, `_value`), nothing parsed at run time.
module Site.Views

open Giraffe.ViewEngine
open Site.Guestbook

/// What every page needs to know about the request.
type PageContext =
    {
        /// The visitor's name, from the signed session cookie.
        Visitor: string option
        /// The anti-forgery field: its name and this client's token.
        CsrfField: string * string
    }

let private antiforgery (page: PageContext) =
    let name, token = page.CsrfField
    input [ _type "hidden"; _name name; _value token ]

let layout (page: PageContext) (pageTitle: string) (content: XmlNode list) =
    html [ _lang "en" ] [
        head [] [
            meta [ _charset "utf-8" ]
            meta [ _name "viewport"; _content "width=device-width, initial-scale=1" ]
            title [] [ str (pageTitle + " · Swoop site") ]
            link [ _rel "icon"; _type "image/svg+xml"; _href "/static/swoop.svg" ]
            link [ _rel "stylesheet"; _href "/static/site.css" ]
            script [ _src "/static/site.js"; _defer ] []
        ]
        body [] [
            header [] [
                a [ _class "brand"; _href "/" ] [
                    img [ _src "/static/swoop.svg"; _alt ""; _width "36"; _height "36" ]
                    str "Swoop site"
                ]
                nav [] [
                    a [ _href "/" ] [ str "Home" ]
                    a [ _href "/guestbook" ] [ str "Guestbook" ]
                    match page.Visitor with
                    | Some name -> span [ _class "visitor" ] [ str ("Signed as " + name) ]
                    | None -> ()
                ]
            ]
            main [] content
            footer [] [ str "samples/Site: a Swoop app with pages, a form, fetch, SSE and WebSockets." ]
        ]
    ]

let home (page: PageContext) =
    layout page "Home" [
        h1 [] [
            match page.Visitor with
            | Some name -> str ("Welcome back, " + name + "!")
            | None -> str "Welcome!"
        ]
        p [] [
            str "This page is HTML from F# views. Below, the guestbook comes from a JSON API "
            str "through fetch, the clock ticks over Server-Sent Events, and the chat is a WebSocket."
        ]
        section [ _class "card" ] [
            h2 [] [ str "Latest from the guestbook" ]
            ul [ _id "latest"; _class "entries" ] [ li [ _class "muted" ] [ str "Loading…" ] ]
            a [ _href "/guestbook" ] [ str "Sign the guestbook" ]
        ]
        section [ _class "card" ] [
            h2 [] [ str "Server time" ]
            p [ _class "clock" ] [ tag "time" [ _id "clock" ] [ str "--:--:--" ] ]
        ]
        section [ _class "card" ] [
            h2 [] [ str "Chat" ]
            p [ _id "chat-status"; _class "muted" ] [ str "connecting…" ]
            ul [ _id "chat-log" ] []
            form [ _id "chat-form"; _autocomplete "off" ] [
                input [ _id "chat-input"; _name "text"; _maxlength (string Chat.maxText); _placeholder "Say something"; attr "aria-label" "Message" ]
                button [ _type "submit" ] [ str "Send" ]
            ]
        ]
    ]

let private fieldError (errors: (string * string) list) (field: string) =
    [ for name, text in errors do
          if name = field then p [ _id (field + "-error"); _class "error" ] [ str text ] ]

/// The guestbook: its entries (rendered per request from the store) and the form, with the
/// values and errors of a rejected post.
let guestbook (page: PageContext) (entries: Entry list) (values: NewEntry) (errors: (string * string) list) =
    let invalid field = if List.exists (fun (name, _) -> name = field) errors then [ attr "aria-invalid" "true" ] else []

    layout page "Guestbook" [
        h1 [] [ str "Guestbook" ]
        section [ _class "card" ] [
            h2 [] [ str "Sign it" ]
            if not errors.IsEmpty then
                p [ _class "error"; attr "role" "alert" ] [ str "Please correct the fields below." ]
            form [ _method "post"; _action "/guestbook"; _id "entry-form" ] [
                antiforgery page
                label [ _for "name" ] [ str "Name" ]
                input ([ _id "name"; _name "name"; _value values.Name; _maxlength (string maxName) ] @ invalid "name")
                yield! fieldError errors "name"
                label [ _for "message" ] [ str "Message" ]
                textarea ([ _id "message"; _name "message"; _rows "3"; _maxlength (string maxMessage) ] @ invalid "message") [ str values.Message ]
                yield! fieldError errors "message"
                button [ _type "submit" ] [ str "Sign" ]
            ]
            match page.Visitor with
            | Some _ ->
                form [ _method "post"; _action "/forget"; _class "inline" ] [
                    antiforgery page
                    button [ _type "submit"; _class "link" ] [ str "Forget my name" ]
                ]
            | None -> ()
        ]
        section [ _class "card" ] [
            h2 [] [ str (if entries.Length = 1 then "1 entry" else sprintf "%d entries" entries.Length) ]
            ul [ _id "entries"; _class "entries" ] [
                for entry in entries do
                    li [] [
                        strong [] [ str entry.Name ]
                        str (": " + entry.Message)
                        tag "time" [ _datetime (entry.Posted.ToString "o") ] [ str (entry.Posted.ToString "yyyy-MM-dd HH:mm 'UTC'") ]
                    ]
            ]
        ]
    ]

/// The page of an error answer to a browser (a dead link, a form post without its token), in
/// the site's layout: WebOptions.HtmlErrorPage (App.webOptions).
let error (page: PageContext) (problem: Swoop.Web.ProblemDetails) =
    layout page problem.Title [
        h1 [] [ str (string problem.Status + " " + problem.Title) ]
        if problem.Detail <> "" then
            p [] [ str (string (System.Char.ToUpperInvariant problem.Detail[0]) + problem.Detail.Substring 1 + ".") ]
        a [ _href "/" ] [ str "Back to the home page" ]
    ]
