/// The site the Files.serve tests share (one server, started on first use): a Cache-Control
/// table, the site's root, and a GET against it.
module Swoop.Tests.FilesSite

open Swoop.Web
open Swoop.Tests.StaticSupport

let site = lazy (makeSite ())

let server =
    lazy
        (let _, root = site.Value
         serveSite { StaticFileOptions.defaults with CacheControl = [ "/assets/", "public, max-age=31536000, immutable"; "", "no-cache" ] } root)

let get target headers = getFile server.Value target headers
let root () = snd site.Value
