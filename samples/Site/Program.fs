/// The "app" tier: an HTML site on Swoop, with static assets, a form, a JSON API, a live clock
/// (Server-Sent Events), a chat (WebSockets) and a signed session cookie.
module Site.Program

open System
open System.IO
open Swoop
open Swoop.Web
open Swoop.Site

let options =
    [ AppOption.secret "session-keys" "Base64 keys (32 bytes or more, comma-separated, the first signing) for the session cookie and the forms' tokens; none: a new key per start"
      AppOption.value "key-file" "A key file for the same (made when missing, owner-only, rotated every 90 days), instead of --session-keys" ""
      AppOption.flag "secure-cookies" "Send cookies over HTTPS only (behind a TLS proxy)" ]

/// The key ring; without configured keys a new one, said when the site is about to serve
/// (`serving`), not for `--routes`.
let keys (serving: bool) (configured: string) =
    if String.IsNullOrWhiteSpace configured then
        if serving then
            eprintfn "site: no --session-keys (SWOOP_SESSION_KEYS) or --key-file: a new key for this run; every visitor's session and form ends when it stops"

        KeyRing.ofBase64 [ KeyRing.newKey () ]
    else
        KeyRing.ofBase64 (configured.Split(',', StringSplitOptions.RemoveEmptyEntries ||| StringSplitOptions.TrimEntries))

[<EntryPoint>]
let main argv =
    // The app is made for --routes too (to print its table), and then serves nothing.
    Web.mainCustom options ServerOptions.defaults App.webOptions argv (fun config ->
        App.create
            { WebRoot = Path.Combine(AppContext.BaseDirectory, "wwwroot")
              Keys =
                match config.Value "key-file" with
                | "" -> keys (not (config.Flag "routes")) (config.Value "session-keys")
                | path -> KeyRing.fromFile path
              SecureCookies = config.Flag "secure-cookies" })
