// The frame of ```fsharp fragment:testing blocks: an xunit test of the reader's app.
open System
open System.Net
open System.Net.Http
open Xunit
open Swoop
open Swoop.Web
open Swoop.Testing

type User = { Id: int; Name: string }

/// The app under test.
let app: HttpHandler = GET >=> routef "/users/%i" (fun (id: int) -> json { Id = id; Name = "Ada" })
