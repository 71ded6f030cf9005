// The frame of a ```fsharp fragment block in README.md and docs/*.md: the opens the docs
// take for granted (as docs/guide.md says at its start) and the names their text treats as
// the reader's own. A fragment is compiled after this text, in a module of its own.
open System
open System.IO
open System.Threading.Tasks
open Swoop
open Swoop.Web
open Swoop.Site
open Swoop.Live

type User = { Id: int; Name: string }
type Post = { Title: string }
type News = { Text: string }

/// One user by id.
let getUser (id: int) : HttpHandler = json { Id = id; Name = "Ada" }

/// The routes of the reader's app.
let api: HttpHandler = choose [ GET >=> routef "/users/%i" getUser ]

/// The reader's app (as made in the text before the fragment).
let app: HttpHandler = api

/// The server's request handler, for the core server (Server.start, Server.mainWith).
let handler: RequestHandler = Web.handler WebOptions.defaults app

/// A folder for uploads.
let uploads = Path.GetTempPath()

/// Lines of a report.
let rows: string seq = [ "a,b"; "1,2" ]

/// The key ring signing cookies (docs/guide.md, signed cookies).
let ring = KeyRing.ofBase64 [ KeyRing.newKey () ]

/// Saves a post.
let save (post: Post) : HttpHandler = text post.Title

/// The app's logging, as Microsoft.Extensions.Logging gives it.
let loggerFactory: Microsoft.Extensions.Logging.ILoggerFactory =
    Microsoft.Extensions.Logging.Abstractions.NullLoggerFactory.Instance
